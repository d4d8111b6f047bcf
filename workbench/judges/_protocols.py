"""The judging protocols, each one generator read top to bottom, and ``run_judging``.

A protocol yields each round of calls and receives their results, one per call in
order (``results = yield calls``), keeping what it has read in local variables; it
returns its rows. :func:`drive` runs a protocol with a *sender* ``send(calls) ->
results``: :func:`run_judging` sends each round through one ``complete_many``, and
:func:`~workbench.judges.estimate` answers from the cache, standing in
:attr:`Call.guess` for a reply not cached yet, so an estimate walks exactly the calls a
run makes.

=================  ==========================================================
protocol           rounds
=================  ==========================================================
:func:`single`     judge; samples for the G-Eval ``auto`` replies that came back
                   without log-probabilities
``summarize_then`` summary; then :func:`single` on the summaries
``pairwise``       judge (both orders)
``decompose``      decomposition (units of the reference, unless the items give
                   them); excess/missing detection
=================  ==========================================================
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Generator
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from workbench import llm
from workbench.errors import BudgetExceeded, ParseError
from workbench.judges import _interpret as ip
from workbench.judges._columns import results_frame
from workbench.judges._interpret import Result
from workbench.judges._items import record_lang, to_records, where
from workbench.judges._parse import parse_units
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
from workbench.llm import CallFailure, Completion, cache_key
from workbench.prompts import load_template

#: A protocol: yields rounds of calls, receives their results, returns its rows.
Protocol = Generator[list[Call], list[Result], list[dict]]
#: ``send(calls) -> results``, one result per call, in order.
Sender = Callable[[list[Call]], list[Result]]

_READERS = {"score": ip.rows_score, "multi": ip.rows_multi, "checklist": ip.rows_checklist,
            "geval_lp": ip.rows_geval_lp}


def drive(protocol: Protocol, send: Sender) -> list[dict]:
    """Run ``protocol``: send each round of calls, hand back the results, return its rows
    (a round without calls sends nothing)."""
    calls = next(protocol)
    while True:
        try:
            calls = protocol.send(send(calls) if calls else [])
        except StopIteration as done:
            return done.value


def protocol_for(records: list[dict], spec: JudgeSpec, rubric: pd.DataFrame | None = None) -> Protocol:
    """The protocol ``spec.protocol`` over ``records`` (non-empty, from ``to_records``)."""
    if spec.protocol == "summarize_then":
        return summarize_then(records, spec, rubric)
    if spec.protocol == "decompose":
        return decompose(records, spec)
    if spec.protocol == "pairwise":
        return pairwise(records, spec)
    return single(records, spec, rubric)


class Summary(NamedTuple):
    """One record's summary, as :func:`summarize_then` hands it to :func:`single`."""

    reply: Result  #: the summary call's result (the judge calls are built from it)
    prep: dict  #: the ``prep_*`` and ``protocol`` columns of the record's rows
    why_not: str | None  #: why the record is not judged (its rows are ``not_run``), else None


def single(records: list[dict], spec: JudgeSpec, rubric: pd.DataFrame | None = None, *,
           summaries: list[Summary] | None = None) -> Protocol:
    """holistic, holistic_simple, checklist, dimensions and geval: one round of judge
    calls, then (geval ``auto``) n samples for each reply without log-probabilities;
    ``summaries``, one per record, when the records' answers are summaries."""
    calls = plan_single(records, spec, rubric=rubric)
    skip = {i: s.why_not for i, s in enumerate(summaries or []) if s.why_not}
    if summaries:
        for call in calls:
            call.depends_on = (summaries[call.info["rec"]].reply,)
    replies = iter((yield [call for call in calls if call.info["rec"] not in skip]))
    results = [CallFailure(cache_key(call.request), "not_run", skip[call.info["rec"]], 0, call.request.model)
               if call.info["rec"] in skip else next(replies) for call in calls]

    slots: list[list[dict] | None] = [None] * len(calls)  # the rows of each call
    no_logprobs, samples = [], {}
    for k, (call, res) in enumerate(zip(calls, results, strict=True)):
        if (call.kind == "geval_lp" and spec.geval_mode == "auto" and isinstance(res, Completion)
                and not res.logprobs):
            no_logprobs.append(k)
        elif call.kind == "geval_sample":
            samples.setdefault(id(call.row), []).append(k)
        else:
            slots[k] = _READERS[call.kind](call, res)
    for ks in samples.values():
        slots[ks[0]] = ip.rows_geval_samples([calls[k] for k in ks], [results[k] for k in ks])

    groups = [geval_sample_calls(calls[k], spec, results[k]) for k in no_logprobs]
    replies = iter((yield [call for group in groups for call in group]))
    for k, group in zip(no_logprobs, groups, strict=True):
        slots[k] = ip.rows_geval_samples(group, [next(replies) for _ in group])

    rows, firsts = [], set()
    for call, slot in zip(calls, slots, strict=True):
        for row in slot or []:
            if summaries:  # the summary's cost on the first row made from it
                prep = summaries[call.info["rec"]].prep
                row.update(prep)
                if prep["prep_key"] is not None and prep["prep_key"] not in firsts:
                    firsts.add(prep["prep_key"])
                else:
                    row["prep_cost_usd"] = 0.0
            rows.append(row)
    if spec.protocol == "checklist":
        rows.extend(ip.checklist_totals(rows))
    return rows


def summarize_then(records: list[dict], spec: JudgeSpec, rubric: pd.DataFrame | None = None) -> Protocol:
    """Summarise each answer, then judge the summaries with ``spec.inner``
    (:func:`single`); an answer whose summary failed or came back empty is not judged
    (its rows say why, ``not_run``)."""
    inner = spec.inner.replace(study=spec.study, concurrency=spec.concurrency,  # type: ignore[union-attr]
                               budget_usd=spec.budget_usd)
    results = yield plan_summaries(records, spec)
    judged, summaries = [], []
    for rec, res in zip(records, results, strict=True):
        ok = isinstance(res, Completion)
        text = ip.reply_text(res).strip() if ok else ""
        prep = {"prep_model": spec.summarizer_model, "prep_key": res.key,
                "prep_cost_usd": float(res.cost_usd or 0.0) if ok else 0.0,
                "protocol": "summarize_then", "inner_protocol": inner.protocol}
        why = None
        if text:
            prep["prep_text"] = text
        else:
            why = f"summary failed: {res.error_type}: {res.message}" if not ok else "summary failed: empty summary"
        judged.append(dict(rec, response=text) if text else dict(rec))
        summaries.append(Summary(res, prep, why))
    return (yield from single(judged, inner, rubric, summaries=summaries))


def pairwise(records: list[dict], spec: JudgeSpec) -> Protocol:
    """MT-Bench pairwise: one round, both orders; verdicts in the items' numbering."""
    calls = plan_pairwise(records, spec)
    results = yield calls
    return [row for call, res in zip(calls, results, strict=True) for row in ip.rows_verdict(call, res)]


def decompose(records: list[dict], spec: JudgeSpec) -> Protocol:
    """Decompose the reference into gist/detail units (unless the items give them), then
    detect excess and missing information; a failed or unparsed decomposition gives
    failed rows instead of a detection."""
    unit_calls = plan_units(records, spec)  # (record, temperature, trial) -> call
    units_of = dict(zip(unit_calls, (yield list(unit_calls.values())), strict=True))
    detect, preps, failed, seen = [], [], [], set()
    for i, rec in enumerate(records):
        given = item_units(rec, where(i, rec))
        for temp in spec.temperatures:
            for trial in range(spec.trials):
                if given is not None:
                    detect.append(detect_call(rec, spec, given, temp=temp, trial=trial, index=i))
                    preps.append({"prep_model": "items", "prep_key": None, "prep_cost_usd": 0.0,
                                  "prep_text": json.dumps(given, ensure_ascii=False)})
                    continue
                call, res = unit_calls[(i, float(temp), trial)], units_of[(i, float(temp), trial)]
                ok = isinstance(res, Completion)
                prep = {"prep_model": call.request.model, "prep_key": res.key,
                        "prep_cost_usd": float(res.cost_usd or 0.0) if ok and res.key not in seen else 0.0}
                seen.add(res.key)
                if not ok:
                    error = f"decomposition failed: {res.error_type}: {res.message}"
                    failed += _failed_detect_rows(rec, spec, temp, trial, error, prep)
                    continue
                prep["prep_text"] = ip.reply_text(res)
                try:
                    units = parse_units(prep["prep_text"])
                except ParseError as exc:
                    failed += _failed_detect_rows(rec, spec, temp, trial, f"decomposition parse: {exc}", prep)
                    continue
                prep["prep_text"] = json.dumps(units, ensure_ascii=False)
                detect.append(detect_call(rec, spec, units, temp=temp, trial=trial, index=i, depends_on=(res,)))
                preps.append(prep)
    results = yield detect
    return [row for call, res, prep in zip(detect, results, preps, strict=True)
            for row in ip.rows_detect(call, res, prep=prep)] + failed


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


def run_judging(items: pd.DataFrame, spec: JudgeSpec, *, rubric: pd.DataFrame | None = None,
                progress: bool = True, parts: str | os.PathLike | None = None,
                part_items: int = 10_000) -> pd.DataFrame:
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
    parts : path, optional
        Write the results in parts instead of holding them: the items are judged
        ``part_items`` rows at a time, each part's frame written to this folder as
        ``part-00000.parquet``, ``part-00001.parquet``, ... (``pd.read_parquet(parts)``
        reads them back as one frame), and an empty frame with the result columns is
        returned. Memory then holds one part. Not with ``spec.budget_usd``.

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
    Each round of calls of the protocol's generator (module docstring) goes through ONE
    ``complete_many`` (concurrency, progress bar, budget kept across rounds). A call not
    sent because its earlier round failed is a row with ``error`` ``not_run: …``. Trial
    ``k`` is sent as ``Request.sample = k``.

    Protocols:

    - ``holistic`` / ``holistic_simple`` (seed 000 A.1/A.2): one call, ``{explanation, score}``.
    - ``checklist`` (seed 000 A.3, HealthBench): one call per rubric item, ``{explanation,
      criteriaMet}``; criterion rows (dimension = criterion_id, verdict = met, score 1/0)
      and a ``total`` row per conversation (:func:`~workbench.judges._interpret.checklist_totals`).
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
    if parts is not None:
        return _in_parts(items, spec, rubric, progress, Path(parts), part_items)
    records = to_records(items)
    spent, stopped = 0.0, None

    def send(calls: list[Call]) -> list[Result]:
        """One ``complete_many``, within what is left of the budget."""
        nonlocal spent, stopped
        requests = [c.request for c in calls]
        if stopped is not None:
            return [CallFailure(cache_key(r), "budget", "not run: the budget was reached in an earlier stage",
                                0, r.model) for r in requests]
        budget = None if spec.budget_usd is None else max(spec.budget_usd - spent, 0.0)
        try:
            results = llm.complete_many(requests, concurrency=spec.concurrency, progress=progress,
                                        budget_usd=budget)
        except BudgetExceeded as exc:
            results, stopped = list(exc.partial), exc
        spent += sum(float(r.cost_usd or 0.0) for r in results if isinstance(r, Completion) and not r.cached)
        return results

    rows = drive(protocol_for(records, spec, rubric), send) if records else []
    frame = results_frame(rows)
    if stopped is not None:
        raise BudgetExceeded(f"{stopped} — run_judging stopped; the rows so far are in .results",
                             partial=rows, spent_usd=spent, results=frame)
    return frame


def _in_parts(items: pd.DataFrame, spec: JudgeSpec, rubric: pd.DataFrame | None,
              progress: bool, folder: Path, size: int) -> pd.DataFrame:
    """``run_judging`` ``size`` items at a time, each part's frame written as Parquet."""
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"part_items={size!r}: expected an integer >= 1")
    if spec.budget_usd is not None:
        raise ValueError("parts=... with spec.budget_usd: a budget needs the whole run; "
                         "judge without parts, or without a budget")
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("part-*.parquet"):  # an earlier run's parts
        stale.unlink()
    for number, start in enumerate(range(0, len(items), size)):
        frame = run_judging(items.iloc[start:start + size], spec, rubric=rubric,
                            progress=progress)
        frame.to_parquet(folder / f"part-{number:05d}.parquet", index=False)
    return results_frame([])
