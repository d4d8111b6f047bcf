"""X1 analysis: paired effects per bias x judge, position consistency, LLMBar verdicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workbench import config as wb_config
from workbench.datasets import judgebench, llmbar
from workbench.llm import model_backend
from workbench.stats import perturbation_effect, position_consistency
from workbench.studies.x1_bias_probes._probes import probe_kind

#: Columns of the effects table (score probes and flip rates).
EFFECT_COLUMNS = [
    "judge_model",
    "operator",
    "probe_kind",
    "measure",
    "n",
    "n_missing",
    "n_incomplete",
    "estimate",
    "ci_low",
    "ci_high",
    "ci_level",
    "ci_method",
    "p_value",
    "p_value_wilcoxon",
    "cohen_dz",
    "mean_baseline",
    "mean_condition",
    "n_unparsed",
    "backend",
]
#: Columns of the position-consistency tables (probe and LLMBar).
POSITION_COLUMNS = [
    "source",
    "judge_model",
    "strategy",
    "subset",
    "n",
    "n_incomplete",
    "n_unparsed",
    "agreement",
    "agreement_ci_low",
    "agreement_ci_high",
    "flip_rate",
    "accuracy_order0",
    "accuracy_order1",
    "accuracy",
    "kappa_order0",
    "kappa_order1",
    "backend",
]


def score_effects(results: pd.DataFrame) -> pd.DataFrame:
    """Paired effect (perturbed − baseline) of every score probe, per judge.

    :func:`workbench.stats.perturbation_effect` with items paired on (``source_item``,
    ``answer_model``): trials are averaged within item first; unparsed scores are dropped
    and counted (``n_missing``). Empty (with the columns) when no perturbed row exists,
    e.g. question probes on a data set without cue-able questions.
    """
    if not (results["perturbation"] != "none").any():
        return pd.DataFrame(columns=EFFECT_COLUMNS)
    eff = perturbation_effect(
        results,
        score="score",
        item=["source_item", "answer_model"],
        condition="perturbation",
        baseline="none",
        by="judge_model",
    )
    if eff.empty:  # no score parsed at all (a judge that never answers in the format)
        return pd.DataFrame(columns=EFFECT_COLUMNS)
    eff = eff.rename(columns={"condition": "operator"})
    eff["probe_kind"] = eff["operator"].map(probe_kind)
    eff["backend"] = eff["judge_model"].map(model_backend)
    return eff.reindex(columns=EFFECT_COLUMNS)


def position_flips(pair_results: pd.DataFrame) -> pd.DataFrame:
    """Flip rate of pairwise verdicts when the two answers swap places, per judge.

    The verdict of the swapped order (``position_swap``) is compared with the original
    order's, both in the items' numbering; an unparsed verdict is a value of its own.
    Wilson interval. Rows in the :func:`score_effects` layout (``measure = flip_rate``).
    """
    frame = pair_results.assign(
        operator=np.where(pair_results["order"] == 0, "none", "position_swap")
    )
    eff = perturbation_effect(
        frame,
        score="verdict",
        item="item_id",
        condition="operator",
        baseline="none",
        by="judge_model",
        kind="verdict",
        pair_on=["temperature", "trial"],
    )
    eff = eff.rename(columns={"condition": "operator"})
    eff["probe_kind"] = "pairwise"
    eff["backend"] = eff["judge_model"].map(model_backend)
    return eff.reindex(columns=EFFECT_COLUMNS)


def _consistency(
    verdicts: pd.DataFrame, *, item: list[str], by: list[str], label: str | None
) -> pd.DataFrame:
    """position_consistency plus the agreement's Wilson interval (1 − the flip interval:
    the Wilson interval is symmetric under p → 1 − p)."""
    pc = position_consistency(
        verdicts, item=item, order="order", verdict="verdict", label=label, by=by
    )
    flips = perturbation_effect(
        verdicts.assign(
            _o=np.where(verdicts["order"] == verdicts["order"].min(), "first", "second")
        ),
        score="verdict",
        item=item[0],
        pair_on=item[1:] or None,
        condition="_o",
        baseline="first",
        by=by,
        kind="verdict",
    )
    flips = flips.rename(columns={"estimate": "flip_rate"})
    flips["agreement_ci_low"] = 1 - flips["ci_high"]
    flips["agreement_ci_high"] = 1 - flips["ci_low"]
    return pc.merge(
        flips[[*by, "flip_rate", "agreement_ci_low", "agreement_ci_high"]], on=by, how="left"
    )


def position_table(pair_results: pd.DataFrame) -> pd.DataFrame:
    """Position consistency of each judge on the pairwise probe (both orders).

    ``agreement``: share of pairs whose verdicts agree across the two orders, with a
    Wilson interval; no gold label (the sim answers have none), so the accuracy columns
    are empty. Columns as :func:`llmbar_position`, ``source = "this run"``.
    """
    out = _consistency(
        pair_results, item=["item_id", "temperature", "trial"], by=["judge_model"], label=None
    )
    out["source"] = "this run"
    out["strategy"] = "pairwise"
    out["subset"] = "all"
    out["backend"] = out["judge_model"].map(model_backend)
    return out.reindex(columns=POSITION_COLUMNS)


def resolve_path(path: str) -> Path:
    """A user-given folder: as given when it exists, else relative to the project root."""
    candidate = Path(path).expanduser()
    if candidate.exists() or candidate.is_absolute():
        return candidate
    return wb_config.root() / candidate


def llmbar_position(path: str) -> pd.DataFrame:
    """Position consistency of the real judges' verdicts of an LLMBar release.

    Reads every ``result.json`` (:func:`workbench.datasets.llmbar.load_release`, both
    orders, verdicts mapped to the original numbering, unparsed = None) and computes, per
    judge and strategy, for each subset and pooled (``subset = "all"``): agreement of the
    two orders with its Wilson interval, flip rate, accuracy and Cohen's kappa against
    the gold label per order (:func:`workbench.stats.position_consistency`).
    ``backend = "llmbar"`` (recorded verdicts of real judges).

    References
    ----------
    Zeng, Z., Yu, J., Gao, T., Meng, Y., Goyal, T., & Chen, D. (2024). Evaluating large
    language models at evaluating instruction following. *ICLR*.
    """
    verdicts = llmbar.load_release(resolve_path(path)).rename(columns={"judge": "judge_model"})
    if verdicts.empty:
        raise ValueError(f"llmbar_dir {path!r}: no evaluators/<Judge>/<Strategy>/result.json found")
    parts = [  # per subset, then pooled
        _consistency(frame, item=["item_id"], by=["judge_model", "strategy", "subset"], label="label")
        for frame in (verdicts, verdicts.assign(subset="all"))
    ]
    out = pd.concat(parts, ignore_index=True)
    out["source"] = "LLMBar release"
    out["backend"] = "llmbar"
    return out.reindex(columns=POSITION_COLUMNS)


#: Columns of :func:`judgebench_accuracy`.
JUDGEBENCH_COLUMNS = ["judge_name", "judge_model", "response_model", "category", "n",
                      "n_correct", "n_inconsistent", "n_unparsed", "pct_correct", "source",
                      "backend"]


def judgebench_accuracy(path: str) -> pd.DataFrame:
    """Accuracy of the real judges' recorded verdicts in a JudgeBench release, per judge,
    response model and category (and ``all``), with the release's rule for the two
    presentation orders (:func:`workbench.datasets.judgebench.accuracy`: inconsistent
    verdicts count as not correct). ``backend = "judgebench"``.

    References
    ----------
    Tan, S., Zhuang, S., Montgomery, K., et al. (2025). JudgeBench: A benchmark for
    evaluating LLM-based judges. *ICLR*.
    """
    verdicts = judgebench.load_release(resolve_path(path))["verdicts"]
    if verdicts.empty:
        raise ValueError(f"judgebench_dir {path!r}: no outputs/*.jsonl verdicts found")
    out = judgebench.accuracy(verdicts)
    out["source"] = "JudgeBench release"
    out["backend"] = "judgebench"
    return out[JUDGEBENCH_COLUMNS]
