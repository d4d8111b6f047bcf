"""``run_judging``: plan the calls, send each stage through one ``complete_many``, read
the replies into the result frame (DESIGN §4)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.errors import BudgetExceeded, ParseError
from workbench.judges import _interpret as ip
from workbench.judges._columns import results_frame
from workbench.judges._items import record_lang, to_records
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
from workbench.judges._templates import load_template


@dataclass
class _NotRun:
    """Stands in for a call that was not sent because an earlier stage failed."""

    key: None
    error_type: str
    message: str
    ok: bool = False


class _Executor:
    """Sends each stage through one ``complete_many``; keeps the budget across stages."""

    def __init__(self, spec: JudgeSpec, progress: bool):
        self.spec = spec
        self.progress = progress
        self.spent = 0.0
        self.stopped: BudgetExceeded | None = None
        self.requests_sent = 0

    def run(self, calls: list[Call]) -> list[Any]:
        if not calls:
            return []
        from workbench.llm import CallFailure, cache_key, complete_many

        requests = [c.request for c in calls]
        if self.stopped is not None:
            return [CallFailure(cache_key(r), "budget", "not run: the budget was reached in an "
                                "earlier stage", 0, r.model) for r in requests]
        budget = None if self.spec.budget_usd is None else max(self.spec.budget_usd - self.spent, 0.0)
        self.requests_sent += len(requests)
        try:
            results = complete_many(requests, concurrency=self.spec.concurrency,
                                    progress=self.progress, budget_usd=budget)
        except BudgetExceeded as exc:
            results = list(exc.partial)
            self.stopped = exc
        self.spent += sum(float(r.cost_usd or 0.0) for r in results
                          if getattr(r, "ok", False) and not r.cached)
        return results


def run_judging(items: pd.DataFrame, spec: JudgeSpec, *, rubric: pd.DataFrame | None = None,
                progress: bool = True) -> pd.DataFrame:
    """Judge every item with one protocol (fixed API, DESIGN §4).

    Parameters
    ----------
    items : DataFrame
        One row per judged answer: ``item_id, question, reference, response,
        answer_model`` and optionally ``answer_sample, lang, keywords, perturbation,
        perturbation_params, source_item, author`` (self-preference probe), ``axis``,
        ``criteria`` (holistic: list of ``{kind, text}``), ``good_example, bad_example``,
        ``rubric`` (checklist: list of ``{criterion_id, text, weight}``), ``units``
        (decompose: given gist/detail units), ``domain``; pairwise: ``response_a,
        response_b`` (or ``response, response_other``) and ``model_a, model_b``.
    spec : JudgeSpec
        The protocol and its settings.
    rubric : DataFrame, optional
        The canonical rubric table (``item_id, criterion_id, text, weight, kind``): rows of
        kind ``must/bonus/penalty`` are the holistic evaluation points, rows of kind
        ``item`` the checklist items.
    progress : bool
        Show the progress bar of ``complete_many``.

    Returns
    -------
    DataFrame
        Columns :data:`~workbench.judges.RESULT_COLUMNS` (documented in
        :data:`~workbench.judges.COLUMN_DOCS`): one row per judge call and score. Rows
        whose call failed or whose reply did not parse have ``parse_ok=False``, a NaN
        score, the raw reply and an ``error``; they are never dropped and never 0.

    Raises
    ------
    ValueError
        Malformed items (naming the row, item and field) or spec.
    BudgetExceeded
        The budget stopped the run; ``.results`` holds the frame of every row so far
        (calls not run have ``error`` starting with ``budget``).

    Notes
    -----
    Each stage goes through ONE ``complete_many`` (concurrency, progress bar, budget):
    summaries before judging (``summarize_then``), decomposition before detection
    (``decompose``), and, for ``geval`` in ``auto`` mode, samples for replies that came
    back without log-probabilities. Trial ``k`` is sent as ``Request.sample = k``.

    Protocols:

    - ``holistic`` / ``holistic_simple`` (seed 000 A.1/A.2): one call, ``{explanation, score}``.
    - ``checklist`` (seed 000 A.3, HealthBench): one call per rubric item, ``{explanation,
      criteriaMet}``; criterion rows (dimension = criterion_id, verdict = met, score 1/0)
      and a ``total`` row per conversation from :func:`checklist_scores`.
    - ``dimensions``: several scores from one call (MedGPT, seed 002) or one call per
      dimension with the shared system prompt (seed 003, ``per_call=True``).
    - ``geval`` (Liu et al. 2023): ``sum p(s)·s`` from log-probabilities, else from samples;
      ``geval_mode`` says which.
    - ``summarize_then`` (seed 001): the inner protocol applied to a summary of the answer.
    - ``pairwise`` (MT-Bench): both orders; ``verdict`` in the items' numbering.
    - ``decompose`` (seed 004): gist/detail units of the reference, then excess/missing.

    A reply is read field by field: a score row is ``parse_ok`` when its score field holds
    an allowed value; a missing explanation only leaves ``explanation`` empty (noted in
    ``error``).
    """
    if not isinstance(spec, JudgeSpec):
        raise TypeError(f"spec must be a JudgeSpec, got {type(spec).__name__}")
    records = to_records(items)
    executor = _Executor(spec, progress)
    if not records:
        rows: list[dict] = []
    elif spec.protocol == "summarize_then":
        rows = _run_summarize_then(records, spec, executor, rubric)
    elif spec.protocol == "decompose":
        rows = _run_decompose(records, spec, executor)
    elif spec.protocol == "pairwise":
        calls = plan_pairwise(records, spec)
        rows = [r for call, res in zip(calls, executor.run(calls), strict=True)
                for r in ip.rows_verdict(call, res)]
    else:
        rows = _run_single(records, spec, executor, rubric)
    frame = results_frame(rows)
    if executor.stopped is not None:
        exc = BudgetExceeded(
            f"{executor.stopped} — run_judging stopped; the rows so far are in .results",
            partial=rows, spent_usd=executor.spent)
        exc.results = frame  # type: ignore[attr-defined]
        raise exc
    return frame


def _run_single(records, spec, executor, rubric, *, skip=None, prep=None) -> list[dict]:
    """Single-answer protocols; ``skip`` maps record index -> reason the call is not sent
    (summary failed), ``prep`` record index -> preparatory-call columns."""
    calls = plan_single(records, spec, rubric=rubric)
    record_of = _record_index(records, calls)
    send = [k for k, _ in enumerate(calls) if not skip or record_of[k] not in skip]
    sent = executor.run([calls[k] for k in send])
    results: list[Any] = [None] * len(calls)
    for k, res in zip(send, sent, strict=True):
        results[k] = res
    for k in range(len(calls)):
        if results[k] is None:
            results[k] = _NotRun(None, "not_run", skip[record_of[k]])
    slots: list[list[dict] | None] = [None] * len(calls)
    fallback: list[int] = []
    samples: dict[int, list[int]] = {}
    for k, (call, res) in enumerate(zip(calls, results, strict=True)):
        if call.kind == "geval_lp":
            if (spec.geval_mode == "auto" and getattr(res, "ok", False) and not res.logprobs):
                fallback.append(k)
            else:
                slots[k] = ip.rows_geval_lp(call, res)
        elif call.kind == "geval_sample":
            samples.setdefault(id(call.row), []).append(k)
        else:
            slots[k] = {"score": ip.rows_score, "multi": ip.rows_multi,
                        "checklist": ip.rows_checklist}[call.kind](call, res)
    for ks in samples.values():
        slots[ks[0]] = ip.rows_geval_samples([calls[k] for k in ks], [results[k] for k in ks])
    if fallback:  # auto mode: the provider returned no log-probabilities -> samples
        extra = [geval_sample_calls(calls[k], spec) for k in fallback]
        flat = [c for group in extra for c in group]
        res_flat = executor.run(flat)
        pos = 0
        for k, group in zip(fallback, extra, strict=True):
            chunk = res_flat[pos: pos + len(group)]
            pos += len(group)
            slots[k] = ip.rows_geval_samples(group, chunk)
    rows = [row for slot in slots if slot for row in slot]
    if prep:
        firsts: set[str] = set()
        for row, k in zip(rows, _row_calls(slots), strict=True):
            extra = prep.get(record_of[k], {})
            row.update(extra)
            key = extra.get("prep_key")
            if key is not None and key not in firsts:
                firsts.add(key)
            else:
                row["prep_cost_usd"] = 0.0
    if spec.protocol == "checklist" or (spec.protocol == "summarize_then" and spec.inner.protocol == "checklist"):
        rows.extend(ip.checklist_totals(rows))
    return rows


def _row_calls(slots: list[list[dict] | None]) -> list[int]:
    return [k for k, slot in enumerate(slots) if slot for _ in slot]


def _record_index(records: list[dict], calls: list[Call]) -> list[int]:
    """Record index of each call (set by the planner)."""
    return [call.info["rec"] for call in calls]


def _run_summarize_then(records, spec, executor, rubric) -> list[dict]:
    """Summarise each answer (one stage), then judge the summaries with ``spec.inner``."""
    sum_calls = plan_summaries(records, spec)
    sum_results = executor.run(sum_calls)
    judged, skip, prep = [], {}, {}
    for i, (rec, res) in enumerate(zip(records, sum_results, strict=True)):
        info = {"prep_model": spec.summarizer_model, "prep_key": getattr(res, "key", None),
                "prep_cost_usd": float(getattr(res, "cost_usd", 0.0) or 0.0),
                "protocol": "summarize_then", "inner_protocol": spec.inner.protocol}
        text = res.text.strip() if getattr(res, "ok", False) else ""
        if getattr(res, "ok", False) and text:
            info["prep_text"] = text
            judged.append(dict(rec, response=text))
        else:
            why = (f"summary failed: {res.error_type}: {res.message}" if not getattr(res, "ok", False)
                   else "summary failed: empty summary")
            skip[i] = why
            judged.append(dict(rec))
        prep[i] = info
    inner = spec.inner.replace(study=spec.study, concurrency=spec.concurrency, budget_usd=spec.budget_usd)
    return _run_single(judged, inner, executor, rubric, skip=skip, prep=prep)


def _run_decompose(records, spec, executor) -> list[dict]:
    """Decompose the reference into gist/detail units (stage 1, unless the items give
    units), then detect excess and missing information (stage 2)."""
    unit_calls = plan_units(records, spec)
    unit_results = dict(zip(unit_calls, executor.run(list(unit_calls.values())), strict=True))
    detect_calls, prep_of, failed = [], [], []
    seen_keys: set[str] = set()
    for i, rec in enumerate(records):
        where = f"items row {i} (item_id {rec.get('item_id')!r})"
        given = item_units(rec, where)
        for temp in spec.temperatures:
            for trial in range(spec.trials):
                if given is not None:
                    prep = {"prep_model": "items", "prep_key": None, "prep_cost_usd": 0.0,
                            "prep_text": json.dumps(given, ensure_ascii=False)}
                    detect_calls.append(detect_call(rec, spec, given, temp=temp, trial=trial))
                    prep_of.append(prep)
                    continue
                call = unit_calls[(i, float(temp), trial)]
                res = unit_results[(i, float(temp), trial)]
                key = getattr(res, "key", None)
                prep = {"prep_model": call.request.model, "prep_key": key,
                        "prep_cost_usd": float(getattr(res, "cost_usd", 0.0) or 0.0)
                        if key not in seen_keys else 0.0}
                seen_keys.add(key)
                if getattr(res, "ok", False):
                    prep["prep_text"] = res.text
                    try:
                        units = ip.parse_units(res.text)
                        prep["prep_text"] = json.dumps(units, ensure_ascii=False)
                    except ParseError as exc:
                        failed.append(_failed_detect_rows(rec, spec, temp, trial, f"decomposition parse: {exc}", prep))
                        continue
                    detect_calls.append(detect_call(rec, spec, units, temp=temp, trial=trial))
                    prep_of.append(prep)
                else:
                    failed.append(_failed_detect_rows(
                        rec, spec, temp, trial, f"decomposition failed: {res.error_type}: {res.message}", prep))
    results = executor.run(detect_calls)
    rows = [r for call, res, prep in zip(detect_calls, results, prep_of, strict=True)
            for r in ip.rows_detect(call, res, prep=prep)]
    return rows + [r for group in failed for r in group]


def _failed_detect_rows(rec, spec, temp, trial, error, prep) -> list[dict]:
    lang = record_lang(rec, spec.lang)
    tpl = load_template(spec.template_id, lang=lang)
    _, label = system_prompt_for(spec, lang)
    base = base_row(rec, spec, judge_model=spec.judge_model, tpl=tpl, lang=lang, system_label=label)
    base.update(prep, temperature=float(temp), trial=trial, parse_ok=False, score=math.nan, error=error)
    rows = []
    for k, dim in enumerate(("excess_gist", "excess_detail", "missing_gist", "missing_detail")):
        rows.append(dict(base, dimension=dim, prep_cost_usd=base["prep_cost_usd"] if k == 0 else 0.0))
    return rows
