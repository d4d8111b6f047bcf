"""``run_judging``: walk the protocol's stages, sending each stage's calls through one
``complete_many``, and read the replies into the result frame (DESIGN §4)."""

from __future__ import annotations

import pandas as pd

from workbench import llm
from workbench.errors import BudgetExceeded
from workbench.judges._columns import results_frame
from workbench.judges._items import to_records
from workbench.judges._plan import Call
from workbench.judges._protocols import Result, Stage, protocol_for, walk
from workbench.judges._spec import JudgeSpec


class _Sender:
    """Sends each stage through one ``complete_many``; keeps the budget across stages."""

    def __init__(self, spec: JudgeSpec, progress: bool):
        self.spec = spec
        self.progress = progress
        self.spent = 0.0
        self.stopped: BudgetExceeded | None = None

    def __call__(self, stage: Stage, calls: list[Call]) -> list[Result]:
        requests = [c.request for c in calls]
        if self.stopped is not None:
            return [llm.CallFailure(llm.cache_key(r), "budget", "not run: the budget was reached in an "
                                    "earlier stage", 0, r.model) for r in requests]
        budget = None if self.spec.budget_usd is None else max(self.spec.budget_usd - self.spent, 0.0)
        try:
            results = llm.complete_many(requests, concurrency=self.spec.concurrency,
                                        progress=self.progress, budget_usd=budget)
        except BudgetExceeded as exc:
            results = list(exc.partial)
            self.stopped = exc
        self.spent += sum(float(r.cost_usd or 0.0) for r in results
                          if isinstance(r, llm.Completion) and not r.cached)
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
    Each protocol is a list of stages (``workbench/judges/_protocols.py``), the same list
    :func:`~workbench.judges.estimate` walks against the cache. Each stage goes through
    ONE ``complete_many`` (concurrency, progress bar, budget kept across stages):
    summaries before judging (``summarize_then``), decomposition before detection
    (``decompose``), and, for ``geval`` in ``auto`` mode, samples for replies that came
    back without log-probabilities. A call not sent because its earlier stage failed is
    a row with ``error`` ``not_run: …``. Trial ``k`` is sent as ``Request.sample = k``.

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
    sender = _Sender(spec, progress)
    rows: list[dict] = []
    if records:
        protocol = protocol_for(records, spec, rubric)
        walk(protocol, sender)
        rows = protocol.rows()
    frame = results_frame(rows)
    if sender.stopped is not None:
        raise BudgetExceeded(
            f"{sender.stopped} — run_judging stopped; the rows so far are in .results",
            partial=rows, spent_usd=sender.spent, results=frame)
    return frame
