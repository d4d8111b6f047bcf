"""X1 — bias probes: every operator of :mod:`workbench.perturb` against several judges.

A probe is a paired perturbation of the same answer (STUDIES.md, "Cross-cutting"): the
effect is the paired score difference perturbed − baseline with a confidence interval and
a paired test (:func:`workbench.stats.perturbation_effect`); for pairwise judging it is the
rate of verdicts that flip when the two answers swap places, and the position consistency
of the judge in both orders (:func:`workbench.stats.position_consistency`). Three kinds of
probe (:func:`probe_kind`):

- ``answer``: the judged answer is altered — padding (verbosity), a fabricated citation
  (authority), "90% prefer this" (bandwagon), irrelevant sentences (distraction), an
  instruction to the judge (prompt injection), a claimed author (self-preference;
  by default the judge itself), swapped sex terms (demographic), an LLM tone rewrite
  (sentiment) or paraphrase;
- ``question``: a cognitive-bias cue (recency, frequency, status quo; seed 002) is put in
  the question, the answer models answer the cued question, the judges score those
  answers;
- ``pairwise``: the order of two answers is swapped (``position_swap``).

With ``llmbar_dir`` the same position analysis runs on the real judges' both-order
verdicts of an LLMBar release. The study keeps the contract of
:mod:`workbench.studies._contract`.

References
----------
Zheng, L., Chiang, W.-L., Sheng, Y., et al. (2023). Judging LLM-as-a-judge with MT-Bench
and Chatbot Arena. *NeurIPS Datasets and Benchmarks* (position, verbosity,
self-enhancement). Ye, J., Wang, Y., Huang, Y., et al. (2024). Justice or prejudice?
Quantifying biases in LLM-as-a-judge. arXiv:2410.02736 (authority, bandwagon,
distraction, sentiment). Zeng, Z., et al. (2024). Evaluating large language models at
evaluating instruction following. *ICLR* (LLMBar).
"""

from __future__ import annotations

import pandas as pd

from workbench.llm import model_backend
from workbench.studies._contract import StudyResults
from workbench.studies.common import generate_answers
from workbench.studies.common.parsing import with_parse_counts
from workbench.studies.x1_bias_probes._analysis import (
    EFFECT_COLUMNS,
    JUDGEBENCH_COLUMNS,
    POSITION_COLUMNS,
    judgebench_accuracy,
    llmbar_position,
    position_flips,
    position_table,
    score_effects,
)
from workbench.studies.x1_bias_probes._probes import (
    ALL_OPERATORS,
    STUDY,
    Config,
    answer_frame,
    coverage_row,
    cued_answers,
    judge_pairs,
    judge_scores,
    load_items,
    pair_items,
    perturb_answers,
    probe_kind,
)
from workbench.studies.x1_bias_probes._views import effect_view, headline, position_view

_SCORE_COLUMNS = [
    "item_id",
    "source_item",
    "answer_model",
    "answer_sample",
    "judge_model",
    "protocol",
    "perturbation",
    "temperature",
    "trial",
    "score",
    "parse_ok",
    "error",
    "backend",
    "cost_usd",
]
_VERDICT_COLUMNS = [
    "item_id",
    "model_a",
    "model_b",
    "judge_model",
    "temperature",
    "trial",
    "order",
    "verdict_shown",
    "verdict",
    "parse_ok",
    "error",
    "backend",
    "cost_usd",
]
_ANSWER_COLUMNS = [
    "item_id",
    "answer_model",
    "answer_sample",
    "ok",
    "error",
    "cache_key",
    "backend",
    "cost_usd",
]
_COVERAGE_COLUMNS = ["operator", "probe_kind", "n_items", "n_skipped", "operator_params", "error"]


def failure_table(
    answers: pd.DataFrame, scores: pd.DataFrame, verdicts: pd.DataFrame
) -> pd.DataFrame:
    """Calls per stage and model, with how many failed or did not parse.

    ``stage`` is ``answer`` (answer generation; failed answers are not judged),
    ``score`` (score probes, per judge and operator) or ``pairwise``; failed rows are kept
    in the result tables with ``parse_ok=False`` and a missing score, never scored 0.
    """
    # per stage: its frame, model column, operator (a constant, or None: the perturbation
    # column) and success column
    stages = (
        ("answer", answers, "answer_model", "", "ok"),
        ("score", scores, "judge_model", None, "parse_ok"),
        ("pairwise", verdicts, "judge_model", "position_swap", "parse_ok"),
    )
    frames = [
        frame.assign(
            stage=stage,
            model=frame[model],
            operator=frame["perturbation"] if operator is None else operator,
            _failed=~frame[ok].astype(bool),
        )
        for stage, frame, model, operator, ok in stages
        if len(frame)
    ]
    columns = ["stage", "model", "operator", "n_calls", "n_failed", "backend"]
    if not frames:
        return pd.DataFrame(columns=columns)
    both = pd.concat(
        [f[["stage", "model", "operator", "_failed"]] for f in frames], ignore_index=True
    )
    out = (
        both.groupby(["stage", "model", "operator"], sort=False)["_failed"]
        .agg(n_calls="size", n_failed="sum")
        .reset_index()
    )
    out["backend"] = out["model"].map(model_backend)
    return out[columns]


def run(config: Config) -> StudyResults:
    """Run every probe and return the tables (no plotting, nothing written).

    Draws nothing from ``config.seed``: the operators are seeded by ``perturb_seed``.

    Returns
    -------
    StudyResults
        ``answers`` (answer calls, baseline and cued), ``scores`` (score-probe judgments),
        ``verdicts`` (pairwise judgments, both orders), ``effects`` (paired effect with CI
        per operator x judge; ``flip_rate`` rows for ``position_swap``), ``position``
        (position consistency per judge), ``llmbar_position`` (the release's judges;
        empty without ``llmbar_dir``), ``judgebench_accuracy`` (accuracy of a JudgeBench
        release's judges per category; empty without ``judgebench_dir``), ``coverage`` (rows probed / skipped per operator,
        errors of LLM operators), ``failures`` (:func:`failure_table`).
    """
    items = load_items(config.dataset, items_per_category=config.items_per_category)
    answers = generate_answers(
        items, config.answer_models, temperature=config.answer_temperature, progress=config.progress
    )
    base = answer_frame(items, answers)
    frames, coverage = perturb_answers(base, config)
    cued, cued_calls, cued_cov = cued_answers(items, config)
    coverage += cued_cov
    if len(cued):
        frames.append(cued)
    if "self_label" in config.operators:
        coverage.append(
            coverage_row("self_label", len(base), params={"author": config.self_label_author})
        )
    score_ops = [op for op in config.operators if probe_kind(op) != "pairwise"]
    scores = pd.DataFrame(columns=_SCORE_COLUMNS)
    effects = []
    if score_ops:
        scores = judge_scores(frames, base, config)
        effects.append(score_effects(scores))
    verdicts = pd.DataFrame(columns=_VERDICT_COLUMNS)
    position = pd.DataFrame(columns=POSITION_COLUMNS)
    if "position_swap" in config.operators:
        pairs = pair_items(base, config.answer_models)
        verdicts = judge_pairs(pairs, config)
        effects.append(position_flips(verdicts))
        position = position_table(verdicts)
        coverage.append(coverage_row("position_swap", len(pairs)))
    llmbar = (
        llmbar_position(config.llmbar_dir)
        if config.llmbar_dir
        else pd.DataFrame(columns=POSITION_COLUMNS)
    )
    all_answers = (
        pd.concat([answers, cued_calls], ignore_index=True) if len(cued_calls) else answers
    )
    frames = {
        "answers": all_answers[_ANSWER_COLUMNS],
        "scores": scores.reindex(columns=_SCORE_COLUMNS),
        "verdicts": verdicts.reindex(columns=_VERDICT_COLUMNS),
        "effects": (
            pd.concat(effects, ignore_index=True)
            if effects
            else pd.DataFrame(columns=EFFECT_COLUMNS)
        ),
        "position": position,
        "llmbar_position": llmbar,
        "judgebench_accuracy": (
            judgebench_accuracy(config.judgebench_dir)
            if config.judgebench_dir
            else pd.DataFrame(columns=JUDGEBENCH_COLUMNS)
        ),
        "coverage": pd.DataFrame(coverage, columns=_COVERAGE_COLUMNS),
        "failures": failure_table(all_answers, scores, verdicts),
    }
    return StudyResults(frames, config=config)


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV (:func:`_tables`) and ``parse_counts``, the parsed and
    unparsed judge rows per cell."""
    return with_parse_counts(_tables(results), results, names=["scores", "verdicts"])


def _tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The tables written as CSV: every frame of ``results``, by name (the JudgeBench
    table only when a release was analysed)."""
    return {name: frame for name, frame in results.items()
            if name != "judgebench_accuracy" or len(frame)}


__all__ = [
    "ALL_OPERATORS",
    "Config",
    "STUDY",
    "effect_view",
    "headline",
    "judgebench_accuracy",
    "llmbar_position",
    "position_flips",
    "position_table",
    "position_view",
    "probe_kind",
    "run",
    "tables",
]
