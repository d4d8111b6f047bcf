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
verdicts of an LLMBar release. ``run(config)`` returns tidy frames (no plotting); the
notebook ``notebooks/x1_bias_probes.ipynb`` draws them.

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

from workbench.studies.common import backend_of, generate_answers
from workbench.studies.x1_bias_probes._analysis import (
    EFFECT_COLUMNS,
    POSITION_COLUMNS,
    llmbar_position,
    position_flips,
    position_table,
    resolve_path,
    score_effects,
)
from workbench.studies.x1_bias_probes._probes import (
    ALL_OPERATORS,
    DEFAULT_JUDGES,
    SCORE_PROTOCOLS,
    STUDY,
    Config,
    answer_frame,
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


def failure_table(
    answers: pd.DataFrame, scores: pd.DataFrame, verdicts: pd.DataFrame
) -> pd.DataFrame:
    """Calls per stage and model, with how many failed or did not parse.

    ``stage`` is ``answer`` (answer generation; failed answers are not judged),
    ``score`` (score probes, per judge and operator) or ``pairwise``; failed rows are kept
    in the result tables with ``parse_ok=False`` and a missing score, never scored 0.
    """
    frames = []
    if len(answers):
        frames.append(
            answers.assign(
                stage="answer",
                model=answers["answer_model"],
                operator="",
                _failed=~answers["ok"].astype(bool),
            )
        )
    if len(scores):
        frames.append(
            scores.assign(
                stage="score",
                model=scores["judge_model"],
                operator=scores["perturbation"],
                _failed=~scores["parse_ok"].astype(bool),
            )
        )
    if len(verdicts):
        frames.append(
            verdicts.assign(
                stage="pairwise",
                model=verdicts["judge_model"],
                operator="position_swap",
                _failed=~verdicts["parse_ok"].astype(bool),
            )
        )
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
    out["backend"] = out["model"].map(backend_of)
    return out[columns]


def run(config: Config | None = None) -> dict[str, pd.DataFrame]:
    """Run every probe and return the tables (no plotting, nothing written).

    Returns
    -------
    dict of DataFrame
        ``answers`` (answer calls, baseline and cued), ``scores`` (score-probe judgments),
        ``verdicts`` (pairwise judgments, both orders), ``effects`` (paired effect with CI
        per operator x judge; ``flip_rate`` rows for ``position_swap``), ``position``
        (position consistency per judge), ``llmbar_position`` (the release's judges;
        empty without ``llmbar_dir``), ``coverage`` (rows probed / skipped per operator,
        errors of LLM operators), ``failures`` (:func:`failure_table`).
    """
    config = config or Config()
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
            {
                "operator": "self_label",
                "kind": "answer",
                "n_items": len(base),
                "n_skipped": 0,
                "error": None,
                "params": repr({"author": config.self_label_author}),
            }
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
        coverage.append(
            {
                "operator": "position_swap",
                "kind": "pairwise",
                "n_items": len(pairs),
                "n_skipped": 0,
                "error": None,
                "params": "{}",
            }
        )
    llmbar = (
        llmbar_position(config.llmbar_dir)
        if config.llmbar_dir
        else pd.DataFrame(columns=POSITION_COLUMNS)
    )
    all_answers = (
        pd.concat([answers, cued_calls], ignore_index=True) if len(cued_calls) else answers
    )
    return {
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
        "coverage": pd.DataFrame(
            coverage, columns=["operator", "kind", "n_items", "n_skipped", "params", "error"]
        ),
        "failures": failure_table(all_answers, scores, verdicts),
    }


__all__ = [
    "ALL_OPERATORS",
    "Config",
    "DEFAULT_JUDGES",
    "EFFECT_COLUMNS",
    "POSITION_COLUMNS",
    "SCORE_PROTOCOLS",
    "STUDY",
    "answer_frame",
    "cued_answers",
    "effect_view",
    "failure_table",
    "headline",
    "judge_pairs",
    "judge_scores",
    "llmbar_position",
    "load_items",
    "pair_items",
    "perturb_answers",
    "position_flips",
    "position_table",
    "position_view",
    "probe_kind",
    "resolve_path",
    "run",
    "score_effects",
]
