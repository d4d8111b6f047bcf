"""Each judging protocol written once, as a list of stages (DESIGN §4).

A :class:`Stage` plans a round of calls from what the protocol has read so far, has them
sent together, then reads the replies back into the protocol. :func:`walk` goes through
the stages with a *sender* ``send(stage, calls) -> results``:
:func:`~workbench.judges.run_judging` sends through one ``complete_many`` per stage, and
:func:`~workbench.judges.estimate` answers from the cache and stands in a guess for a
reply that is not cached yet (:attr:`Stage.guess`), so an estimate walks exactly the
calls a run makes.

=================  ==========================================================
protocol           stages
=================  ==========================================================
single-answer      judge; judge (G-Eval ``auto``: samples for replies that came
                   back without log-probabilities)
``summarize_then`` summary; then the single-answer stages on the summaries
``pairwise``       judge (both orders)
``decompose``      decompose (units of the reference, unless the items give them);
                   judge (excess/missing detection)
=================  ==========================================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from workbench.errors import ParseError
from workbench.judges import _interpret as ip
from workbench.judges._interpret import Result
from workbench.judges._items import record_lang, where
from workbench.judges._plan import (
    Call,
    base_row,
    detect_call,
    geval_sample_calls,
    item_units,
    plan_pairwise,
    plan_single,
    plan_summaries,
    plan_units,
    system_prompt_for,
)
from workbench.judges._spec import JudgeSpec
from workbench.judges._units import parse_units
from workbench.llm import CallFailure, Completion, cache_key
from workbench.prompts import load_template

#: Completion tokens assumed per call kind when estimating (a rough guess, documented).
COMPLETION_TOKENS = {"score": 100, "multi": 150, "checklist": 80, "geval_lp": 1,
                     "geval_sample": 2, "verdict": 250}


def estimate_tokens(text: str) -> int:
    """Rough token count: ASCII characters / 4 plus other characters / 1.5 (Japanese and
    Chinese take about one token per 1-1.5 characters in GPT-4-class tokenizers).

    Examples
    --------
    >>> estimate_tokens("abcd" * 10), estimate_tokens("橋梁設計")
    (10, 3)
    """
    n_ascii = sum(1 for c in text if ord(c) < 128)
    return math.ceil(n_ascii / 4 + (len(text) - n_ascii) / 1.5)


def _guess_judge(call: Call) -> tuple[str, int]:
    return "", COMPLETION_TOKENS.get(call.kind, 100)


@dataclass(frozen=True)
class Stage:
    """One round of calls of a protocol.

    Attributes
    ----------
    name : str
        ``summary``, ``decompose`` or ``judge`` (the stage an estimate reports).
    plan : callable
        ``plan() -> list[Call]``: the calls of the round, from the replies read so far
        (may be empty).
    interpret : callable
        ``interpret(calls, results)``: read the replies (one result per call, in order).
    guess : callable
        ``guess(call) -> (text, completion_tokens)``: for an estimate, the stand-in reply
        to a call that is not cached yet (later stages are planned from its text) and
        the completion tokens it is expected to cost.
    """

    name: str
    plan: Callable[[], list[Call]]
    interpret: Callable[[list[Call], list[Result]], None]
    guess: Callable[[Call], tuple[str, int]] = _guess_judge


#: ``send(stage, calls) -> results``, one result per call, in order.
Sender = Callable[[Stage, list[Call]], list[Result]]


class Protocol:
    """A protocol's stages and the rows it has read (:meth:`rows`, after :func:`walk`)."""

    stages: list[Stage]

    def rows(self) -> list[dict]:  # pragma: no cover - every protocol overrides it
        raise NotImplementedError


def walk(protocol: Protocol, send: Sender) -> None:
    """Plan, send and interpret each stage of ``protocol`` in turn (a stage without calls
    sends nothing)."""
    for stage in protocol.stages:
        calls = stage.plan()
        stage.interpret(calls, send(stage, calls) if calls else [])


def protocol_for(records: list[dict], spec: JudgeSpec, rubric: pd.DataFrame | None = None) -> Protocol:
    """The stages of ``spec.protocol`` over ``records`` (non-empty, from ``to_records``)."""
    if spec.protocol == "summarize_then":
        return SummarizeThen(records, spec, rubric)
    if spec.protocol == "decompose":
        return Decompose(records, spec)
    if spec.protocol == "pairwise":
        return Pairwise(records, spec)
    return Single(records, spec, rubric)


_READERS = {"score": ip.rows_score, "multi": ip.rows_multi, "checklist": ip.rows_checklist}


class Single(Protocol):
    """holistic, holistic_simple, checklist, dimensions and geval: one round of judge
    calls, then (geval ``auto``) n samples for each reply without log-probabilities."""

    def __init__(self, records: list[dict], spec: JudgeSpec, rubric: pd.DataFrame | None):
        self.records, self.spec, self.rubric = records, spec, rubric
        self.skip: dict[int, str] = {}  # record index -> why its calls are not sent
        self.prep: dict[int, dict] = {}  # record index -> preparatory-call columns
        self.basis: dict[int, Result] = {}  # record index -> the reply its text comes from
        self.calls: list[Call] = []
        self.results: list[Result] = []
        self.slots: list[list[dict] | None] = []
        self.fallback: list[int] = []
        self.samples: list[list[Call]] = []
        self.stages = [Stage("judge", self._plan_judge, self._read_judge),
                       Stage("judge", self._plan_samples, self._read_samples)]

    def _plan_judge(self) -> list[Call]:
        self.calls = plan_single(self.records, self.spec, rubric=self.rubric)
        for call in self.calls:
            if call.info["rec"] in self.basis:
                call.depends_on = (self.basis[call.info["rec"]],)
        return [call for call in self.calls if call.info["rec"] not in self.skip]

    def _read_judge(self, sent: list[Call], results: list[Result]) -> None:
        replies = iter(results)
        self.results = [next(replies) if call.info["rec"] not in self.skip else
                        CallFailure(cache_key(call.request), "not_run", self.skip[call.info["rec"]], 0,
                                    call.request.model) for call in self.calls]
        self.slots = [None] * len(self.calls)
        samples: dict[int, list[int]] = {}
        for k, (call, res) in enumerate(zip(self.calls, self.results, strict=True)):
            if call.kind == "geval_lp":
                if self.spec.geval_mode == "auto" and isinstance(res, Completion) and not res.logprobs:
                    self.fallback.append(k)
                else:
                    self.slots[k] = ip.rows_geval_lp(call, res)
            elif call.kind == "geval_sample":
                samples.setdefault(id(call.row), []).append(k)
            else:
                self.slots[k] = _READERS[call.kind](call, res)
        for ks in samples.values():
            self.slots[ks[0]] = ip.rows_geval_samples([self.calls[k] for k in ks],
                                                      [self.results[k] for k in ks])

    def _plan_samples(self) -> list[Call]:
        """Auto mode: the provider returned no log-probabilities -> samples."""
        self.samples = [geval_sample_calls(self.calls[k], self.spec, self.results[k]) for k in self.fallback]
        return [call for group in self.samples for call in group]

    def _read_samples(self, sent: list[Call], results: list[Result]) -> None:
        pos = 0
        for k, group in zip(self.fallback, self.samples, strict=True):
            self.slots[k] = ip.rows_geval_samples(group, results[pos: pos + len(group)])
            pos += len(group)

    def rows(self) -> list[dict]:
        rows = [row for slot in self.slots if slot for row in slot]
        if self.prep:
            call_of_row = [k for k, slot in enumerate(self.slots) if slot for _ in slot]
            firsts: set[str] = set()
            for row, k in zip(rows, call_of_row, strict=True):
                extra = self.prep.get(self.calls[k].info["rec"], {})
                row.update(extra)
                key = extra.get("prep_key")
                if key is not None and key not in firsts:
                    firsts.add(key)
                else:
                    row["prep_cost_usd"] = 0.0
        if self.spec.protocol == "checklist":
            rows.extend(ip.checklist_totals(rows))
        return rows


class SummarizeThen(Single):
    """Summarise each answer (stage ``summary``), then judge the summaries with
    ``spec.inner`` (the single-answer stages); an answer whose summary failed or came
    back empty is not judged (its rows say why, ``not_run``)."""

    def __init__(self, records: list[dict], spec: JudgeSpec, rubric: pd.DataFrame | None):
        inner = spec.inner.replace(study=spec.study, concurrency=spec.concurrency,  # type: ignore[union-attr]
                                   budget_usd=spec.budget_usd)
        super().__init__(records, inner, rubric)
        self.outer = spec
        self.answers = records
        self.stages = [Stage("summary", self._plan_summaries, self._read_summaries, self._guess_summary),
                       *self.stages]

    def _plan_summaries(self) -> list[Call]:
        return plan_summaries(self.answers, self.outer)

    def _guess_summary(self, call: Call) -> tuple[str, int]:
        """The answer itself stands in for its summary."""
        response = str(self.answers[call.info["rec"]]["response"])
        return response, min(300, estimate_tokens(response) // 2 + 10)

    def _read_summaries(self, calls: list[Call], results: list[Result]) -> None:
        judged = []
        for i, (rec, res) in enumerate(zip(self.answers, results, strict=True)):
            ok = isinstance(res, Completion)
            info = {"prep_model": self.outer.summarizer_model, "prep_key": res.key,
                    "prep_cost_usd": float(res.cost_usd or 0.0) if ok else 0.0,
                    "protocol": "summarize_then", "inner_protocol": self.spec.protocol}
            text = ip.reply_text(res).strip() if ok else ""
            if ok and text:
                info["prep_text"] = text
                judged.append(dict(rec, response=text))
            else:
                self.skip[i] = (f"summary failed: {res.error_type}: {res.message}" if not ok
                                else "summary failed: empty summary")
                judged.append(dict(rec))
            self.prep[i] = info
            self.basis[i] = res
        self.records = judged


class Pairwise(Protocol):
    """MT-Bench pairwise: one round, both orders; verdicts in the items' numbering."""

    def __init__(self, records: list[dict], spec: JudgeSpec):
        self.records, self.spec = records, spec
        self.read: list[dict] = []
        self.stages = [Stage("judge", self._plan, self._read)]

    def _plan(self) -> list[Call]:
        return plan_pairwise(self.records, self.spec)

    def _read(self, calls: list[Call], results: list[Result]) -> None:
        self.read = [row for call, res in zip(calls, results, strict=True) for row in ip.rows_verdict(call, res)]

    def rows(self) -> list[dict]:
        return self.read


class Decompose(Protocol):
    """Decompose the reference into gist/detail units (stage ``decompose``, unless the
    items give units), then detect excess and missing information (stage ``judge``)."""

    def __init__(self, records: list[dict], spec: JudgeSpec):
        self.records, self.spec = records, spec
        self.unit_calls: dict[tuple[int, float, int], Call] = {}
        self.detect_calls: list[Call] = []
        self.prep_of: list[dict] = []
        self.failed: list[list[dict]] = []
        self.detected: list[dict] = []
        self.stages = [Stage("decompose", self._plan_units, self._read_units, self._guess_units),
                       Stage("judge", self._plan_detect, self._read_detect, self._guess_detect)]

    def _plan_units(self) -> list[Call]:
        self.unit_calls = plan_units(self.records, self.spec)
        return list(self.unit_calls.values())

    def _guess_units(self, call: Call) -> tuple[str, int]:
        """The whole reference stands in as one gist unit."""
        reference = str(self.records[call.info["rec"]]["reference"])
        units = [{"id": "u1", "role": "gist", "text": reference}]
        return json.dumps({"units": units}), int(1.5 * estimate_tokens(reference)) + 20

    def _read_units(self, calls: list[Call], results: list[Result]) -> None:
        """The units of each (record, temperature, trial): its detection call, or failed
        rows when the decomposition failed or did not parse."""
        spec = self.spec
        unit_results = dict(zip(self.unit_calls, results, strict=True))
        seen_keys: set[str] = set()
        for i, rec in enumerate(self.records):
            given = item_units(rec, where(i, rec))
            for temp in spec.temperatures:
                for trial in range(spec.trials):
                    if given is not None:
                        self.detect_calls.append(detect_call(rec, spec, given, temp=temp, trial=trial, index=i))
                        self.prep_of.append({"prep_model": "items", "prep_key": None, "prep_cost_usd": 0.0,
                                             "prep_text": json.dumps(given, ensure_ascii=False)})
                        continue
                    call = self.unit_calls[(i, float(temp), trial)]
                    res = unit_results[(i, float(temp), trial)]
                    ok = isinstance(res, Completion)
                    prep = {"prep_model": call.request.model, "prep_key": res.key,
                            "prep_cost_usd": float(res.cost_usd or 0.0) if ok and res.key not in seen_keys
                            else 0.0}
                    seen_keys.add(res.key)
                    if not ok:
                        self.failed.append(_failed_detect_rows(
                            rec, spec, temp, trial, f"decomposition failed: {res.error_type}: {res.message}", prep))
                        continue
                    prep["prep_text"] = ip.reply_text(res)
                    try:
                        units = parse_units(prep["prep_text"])
                    except ParseError as exc:
                        self.failed.append(_failed_detect_rows(rec, spec, temp, trial,
                                                               f"decomposition parse: {exc}", prep))
                        continue
                    prep["prep_text"] = json.dumps(units, ensure_ascii=False)
                    self.detect_calls.append(detect_call(rec, spec, units, temp=temp, trial=trial, index=i,
                                                         depends_on=(res,)))
                    self.prep_of.append(prep)

    def _plan_detect(self) -> list[Call]:
        return self.detect_calls

    def _guess_detect(self, call: Call) -> tuple[str, int]:
        return "", estimate_tokens(str(self.records[call.info["rec"]]["response"])) // 2 + 20

    def _read_detect(self, calls: list[Call], results: list[Result]) -> None:
        self.detected = [row for call, res, prep in zip(calls, results, self.prep_of, strict=True)
                         for row in ip.rows_detect(call, res, prep=prep)]

    def rows(self) -> list[dict]:
        return self.detected + [row for group in self.failed for row in group]


def _failed_detect_rows(rec: dict, spec: JudgeSpec, temp: float, trial: int, error: str,
                        prep: dict) -> list[dict]:
    """The four rows of a detection that was not sent (its decomposition failed)."""
    lang = record_lang(rec, spec.lang)
    tpl = load_template(spec.template_id, lang=lang)
    _, label = system_prompt_for(spec, lang)
    base = base_row(rec, spec, judge_model=spec.judge_model, tpl=tpl, lang=lang, system_label=label)
    base.update(prep, temperature=float(temp), trial=trial, parse_ok=False, score=math.nan, error=error)
    return [dict(base, dimension=dim, prep_cost_usd=base["prep_cost_usd"] if k == 0 else 0.0)
            for k, dim in enumerate(("excess_gist", "excess_detail", "missing_gist", "missing_detail"))]
