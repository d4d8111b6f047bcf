"""S5 — gist/detail and excess/missing detection in QA answers (seed 004, STUDIES S5).

An LLM splits each reference answer into meaning units labelled *gist* (趣旨) or
*detail* (補足), then compares an output answer with the reference and flags *excess*
(不適: in the answer, not in the reference) and *missing* (不足: in the reference, not
in the answer) content, each attached to gist or detail: four classes. This module runs
that protocol (``JudgeSpec(protocol="decompose")``) on the bundled accounting QA set and
validates the flagged spans against the human spans at the character level
(:func:`workbench.stats.span_match`), in the seed's two conditions:

- ``split="human"``: the detection step is given the human gist/detail units;
- ``split="llm"``: the model first splits the reference itself (its own units).

The study keeps the contract of :mod:`workbench.studies._contract`. The seed's published
numbers are in ``published/s5_gist_detail.csv``.

References
----------
Iida, S., Hayashi, Y., & Shishido, R. (Yayoi Co., Ltd.). QA タスク回答中の趣旨・補足に対する
不適・不足検出への LLM 適用 [Applying LLMs to detecting excess and missing content in the
gist and detail of QA answers] (seed 004): §5 (per-class metric), §7.1 (span matching),
tables 1 and 2 (published results with GPT).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.studies._contract import StudyResults
from workbench.studies.common.parsing import attempt, with_parse_counts
from workbench.studies.s5_gist_detail._data import (
    CLASSES,
    PUBLISHED_LABEL,
    STUDY,
    Config,
    detect,
    load_answers,
    predicted_spans,
)
from workbench.studies.s5_gist_detail._match import (
    call_summary,
    class_rates,
    compare_published,
    f1_intervals,
    match_spans,
    neither_table,
    unit_match,
)
from workbench.studies.s5_gist_detail._views import f1_view, headline, neither_view, rates_view

_JUDGMENT_COLUMNS = [
    "split",
    "item_id",
    "answer_model",
    "answer_sample",
    "judge_model",
    "temperature",
    "trial",
    "dimension",
    "score",
    "n_units",
    "parse_ok",
    "error",
    "prep_model",
    "backend",
    "cost_usd",
]
_SPAN_COLUMNS = [
    "split",
    "answer_id",
    "item_id",
    "answer_model",
    "judge_model",
    "temperature",
    "trial",
    "class",
    "pred_unit",
    "unit_id",
    "text_source",
    "start",
    "end",
    "found",
    "text",
]


def run(config: Config) -> StudyResults:
    """Run S5 and return its tables (no plotting, nothing written).

    The bootstrap draws come from ``numpy.random.default_rng(config.seed)``.

    Returns
    -------
    StudyResults
        ``judgments`` (decompose rows: the seed's per-class metric per answer),
        ``spans`` (flagged texts located as spans), ``calls`` (:func:`call_summary`),
        ``match`` (span_match summary per split, judge and class, with bootstrap
        ``f1_ci_low``/``f1_ci_high``), ``match_answers`` (per answer and class),
        ``unit_match`` (:func:`unit_match`), ``neither`` (:func:`neither_table`),
        ``class_rates`` (:func:`class_rates`), ``published`` (:func:`compare_published`).
    """
    rng = np.random.default_rng(config.seed)
    answers, gold = load_answers(config.dataset, max_items=config.max_items)
    runs = [
        detect(
            answers,
            judge_model=judge,
            split=split,
            decomposer_model=config.decomposer_model,
            temperature=config.temperature,
            trials=config.trials,
            progress=config.progress,
        )
        for split in config.splits
        for judge in config.judge_models
    ]
    results = pd.concat(runs, ignore_index=True)
    spans = predicted_spans(results, answers)
    summary, per_answer = match_spans(results, spans, gold, pairing=config.pairing)
    if config.n_boot:  # none when no detection parsed (no answer has a per-class count)
        cis = attempt("f1_intervals", lambda: f1_intervals(per_answer, n_boot=config.n_boot, rng=rng),
                      results, ())
        if "note" not in cis:
            summary = summary.merge(
                cis, on=["split", "judge_model", "temperature", "trial", "class"], how="left"
            )
        else:
            summary = summary.assign(f1_ci_low=np.nan, f1_ci_high=np.nan, note=cis["note"].iloc[0])
    frames = {
        "judgments": results[_JUDGMENT_COLUMNS],
        "spans": spans[_SPAN_COLUMNS],
        "calls": call_summary(results, spans),
        "match": summary,
        "match_answers": per_answer,
        "unit_match": unit_match(results, answers, gold, pairing=config.pairing),
        "neither": neither_table(per_answer),
        "class_rates": class_rates(results, gold, answers),
        "published": compare_published(summary),
    }
    return StudyResults(frames, config=config)


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV (:func:`_tables`) and ``parse_counts``, the parsed and
    unparsed judge rows per cell."""
    return with_parse_counts(_tables(results), results, names=["judgments"])


def _tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The tables written as CSV: every frame of ``results``, by name."""
    return dict(results)


__all__ = [
    "CLASSES",
    "Config",
    "PUBLISHED_LABEL",
    "STUDY",
    "class_rates",
    "f1_view",
    "headline",
    "match_spans",
    "neither_view",
    "rates_view",
    "run",
    "tables",
]
