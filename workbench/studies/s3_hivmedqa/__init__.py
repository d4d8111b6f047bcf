"""Study S3 (seed 002, HIVMedQA): supervised vs unsupervised MedGPT judging and the
cognitive-bias categories.

``run(Config())`` builds categories 1-3 of the bundled ``s3_hiv_en`` set plus category 4
(the category-3 vignettes with a recency, frequency or status-quo cue from
:mod:`workbench.perturb`), has every answer model answer each question ``iterations``
times at temperature 1, rewrites each reference with a paraphraser (the upper bound),
judges every answer on the five MedGPT dimensions with and without the reference, and
computes the entity F1 with synonym sets. With ``Config(release_dir=...)`` the same
analyses run on a downloaded HIVMedQA release (its answers and its judge's replies)
instead, and ``table2`` compares them with the paper's Table 2.

The analysis functions (``model_summary``, ``best_model_tests``, ``category_trend``,
``trend_counts``, ``bias_drop``, ``supervision_gap``, ``failure_counts``) take the long
``scores`` frame and return tidy frames; ``headline`` picks the numbers the notebook
records. On the sim backend the numbers show the pipeline works, never how real LLMs
behave.

References
----------
Cardenal-Antolin, G., Fellay, J., Jaha, B., Kouyos, R., Beerenwinkel, N. & Duroux, D.
HIVMedQA: benchmarking large language models for HIV medical decision support (seed 002).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.studies.s3_hivmedqa._analysis import (
    DROP_DIMENSIONS,
    SUMMARY_COLUMNS,
    best_model,
    best_model_tests,
    bias_drop,
    category_trend,
    failure_counts,
    format_table2,
    iteration_means,
    model_summary,
    supervision_gap,
    table2_side_by_side,
    trend_counts,
)
from workbench.studies.s3_hivmedqa._data import (
    BIAS_TYPES,
    DIMENSIONS,
    F1_COLUMNS,
    SCORE_COLUMNS,
    STUDY,
    UPPER_BOUND,
    build_items,
    entity_f1,
    judge_answers,
    make_answers,
    rephrase_references,
    role_of,
)
from workbench.studies.s3_hivmedqa._release import (
    RELEASE_BACKEND,
    RELEASE_JUDGE,
    RELEASE_LOWER_BOUND,
    compare_table2,
    from_release,
    paper_table2,
)

__all__ = [
    "BIAS_TYPES",
    "Config",
    "DIMENSIONS",
    "DROP_DIMENSIONS",
    "F1_COLUMNS",
    "RELEASE_BACKEND",
    "RELEASE_JUDGE",
    "RELEASE_LOWER_BOUND",
    "SCORE_COLUMNS",
    "STUDY",
    "SUMMARY_COLUMNS",
    "UPPER_BOUND",
    "analyze",
    "best_model",
    "best_model_tests",
    "bias_drop",
    "build_items",
    "category_trend",
    "collect",
    "compare_table2",
    "entity_f1",
    "failure_counts",
    "format_table2",
    "from_release",
    "headline",
    "iteration_means",
    "judge_answers",
    "make_answers",
    "model_summary",
    "paper_table2",
    "rephrase_references",
    "role_of",
    "run",
    "supervision_gap",
    "table2_side_by_side",
    "trend_counts",
]


def _default_models() -> list[str]:
    return ["sim/answer-strong", "sim/answer-concise", "sim/answer-mid", "sim/answer-verbose",
            "sim/answer-weak"]


@dataclass
class Config:
    """Parameters of study S3 (defaults = the notebook's defaults).

    Attributes
    ----------
    dataset : str
        Bundled items with categories 1-3 and a ``wrong_answer`` per category-3 vignette.
    answer_models : list of str
        Answering models (litellm strings).
    lower_bound_model : str
        The quality-control lower bound (the paper's Llama 3.2-1B), answered and judged
        like the others; added to ``answer_models`` when missing.
    rephrase_model : str
        Rewrites each reference: the upper bound, judged as answer model
        ``rephrased_reference`` (``""``: no upper bound).
    judge_model : str
        The MedGPT judge (seed 002: GPT-4o at temperature 0).
    judge_temperature : float
    iterations : int
        Answers per model and question (seed 002: 5), each a separate sample.
    answer_temperature : float
        Sampling temperature of the answers and the rephrasings.
    bias_types : list of str
        Cognitive-bias operators applied to every category-3 vignette (category 4).
    items_per_category : int
        0 = every item; n = the first n items of each of categories 1-3.
    test_dimension : str
        Dimension of the best-model paired t tests (seed 002: comprehension).
    alpha : float
        Significance level of the tests (after Bonferroni or Holm adjustment).
    entity_method : str
        ``phrases``, ``content_words`` or ``llm`` (:func:`workbench.metrics.extract_entities`).
    extractor_model : str
        Entity extractor for ``entity_method="llm"``.
    synonym_model : str
        Builds the synonym dictionary from the references' entities (``""``: none).
    release_dir : str
        A downloaded HIVMedQA release: analyse its answers and judge replies instead of
        generating them (the models, judge and generation settings above are then unused).
    progress : bool
        Progress bars of the LLM calls.
    budget_usd : float or None
        Spending cap per stage (real providers).
    """

    dataset: str = "s3_hiv_en"
    answer_models: list[str] = field(default_factory=_default_models)
    lower_bound_model: str = "sim/answer-tiny"
    rephrase_model: str = "sim/paraphraser"
    judge_model: str = "sim/judge-a"
    judge_temperature: float = 0.0
    iterations: int = 5
    answer_temperature: float = 1.0
    bias_types: list[str] = field(default_factory=lambda: list(BIAS_TYPES))
    items_per_category: int = 0
    test_dimension: str = "comprehension"
    alpha: float = 0.05
    entity_method: str = "phrases"
    extractor_model: str = "sim/extractor"
    synonym_model: str = "sim/extractor"
    release_dir: str = ""
    progress: bool = False
    budget_usd: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.iterations, int) or self.iterations < 1:
            raise ValueError(f"Config.iterations must be an integer >= 1, got {self.iterations!r}")
        if self.test_dimension not in DIMENSIONS:
            raise ValueError(f"Config.test_dimension must be one of {DIMENSIONS}, "
                             f"got {self.test_dimension!r}")
        if self.entity_method not in ("phrases", "content_words", "llm"):
            raise ValueError("Config.entity_method must be phrases, content_words or llm, "
                             f"got {self.entity_method!r}")
        if isinstance(self.answer_models, str):
            raise ValueError("Config.answer_models must be a list of model strings")

    @property
    def models(self) -> list[str]:
        """``answer_models`` plus the lower bound, without duplicates, in order."""
        out = list(dict.fromkeys(self.answer_models))
        if self.lower_bound_model and self.lower_bound_model not in out:
            out.append(self.lower_bound_model)
        return out


def collect(config: Config) -> dict[str, pd.DataFrame]:
    """The data of study S3: ``items`` (categories 1-4), ``answers`` (one row per answer
    call, failures kept), ``scores`` (:data:`SCORE_COLUMNS`: one row per answer,
    supervision and dimension) and ``entity_f1`` (:data:`F1_COLUMNS`) — generated through
    the cached client, or read from ``config.release_dir`` (then also ``release_issues``:
    files the importer skipped)."""
    out: dict[str, pd.DataFrame] = {}
    if config.release_dir:
        from workbench.datasets import hivmedqa

        release = hivmedqa.load_release(config.release_dir)
        frames = from_release(release)
        items, answers, scores = frames["items"], frames["answers"], frames["scores"]
        lower = RELEASE_LOWER_BOUND
        out["release_issues"] = release["issues"]
    else:
        from workbench.datasets import load_dataset

        lower = config.lower_bound_model
        items = build_items(load_dataset(config.dataset)["items"], bias_types=config.bias_types,
                            items_per_category=config.items_per_category)
        answers = make_answers(items, config.models, iterations=config.iterations,
                               temperature=config.answer_temperature,
                               rephrase_model=config.rephrase_model, progress=config.progress,
                               budget_usd=config.budget_usd)
        scores = judge_answers(items, answers, judge_model=config.judge_model,
                               temperature=config.judge_temperature, lower_bound=lower,
                               progress=config.progress, budget_usd=config.budget_usd)
    f1 = entity_f1(items, answers, method=config.entity_method,
                   extractor_model=config.extractor_model, synonym_model=config.synonym_model,
                   lower_bound=lower, progress=config.progress)
    if config.release_dir:  # roles by the release's display names
        roles = scores.drop_duplicates("answer_model").set_index("answer_model")["role"]
        f1["role"] = [roles.get(m, "model") for m in f1["answer_model"]]
    out.update(items=items, answers=answers, scores=scores, entity_f1=f1)
    return out


def analyze(data: dict[str, pd.DataFrame], config: Config) -> dict[str, pd.DataFrame]:
    """Every analysis of S3 on the frames of :func:`collect`: ``model_summary`` (Table 2),
    ``tests`` (best model vs each other, Bonferroni and Holm), ``category_trend``,
    ``trend_counts``, ``bias_drop``, ``supervision_gap``, ``failures``; with a release
    also ``table2`` (the paper's Table 2 beside the release's, long)."""
    scores = data["scores"]
    summary = model_summary(scores, data["entity_f1"])
    trend = category_trend(scores)
    out = {
        "model_summary": summary,
        "tests": best_model_tests(scores, dimension=config.test_dimension, alpha=config.alpha),
        "category_trend": trend,
        "trend_counts": trend_counts(trend),
        "bias_drop": bias_drop(scores),
        "supervision_gap": supervision_gap(scores),
        "failures": failure_counts(data["answers"], scores),
    }
    if config.release_dir:
        out["table2"] = compare_table2(summary)
    return out


def run(config: Config) -> dict[str, pd.DataFrame]:
    """Run study S3 (:func:`collect`, then :func:`analyze`); return every frame, no plotting."""
    data = collect(config)
    return {**data, **analyze(data, config)}


def _num(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def headline(results: dict[str, pd.DataFrame], *, dimension: str = "comprehension",
             alpha: float = 0.05) -> dict[str, Any]:
    """The numbers the S3 notebook records (plain Python values).

    ``mean_score`` (per model, ``dimension``, supervised), ``best_model``,
    ``lower_bound_mean`` / ``upper_bound_mean`` (NaN -> None when absent),
    ``n_comparisons``, ``n_significant_bonf`` / ``n_significant_holm``, ``mean_gap``
    (unsupervised - supervised, mean over models without the upper bound), ``gap_min`` /
    ``gap_max``, ``mean_drop`` (category 3 -> 4, all bias types pooled, mean over models
    without the upper bound), ``drop_by_bias`` (mean over models per bias type),
    ``mean_f1`` per model, call and parse counts, ``backend`` and ``judge_model``.
    """
    summary, scores = results["model_summary"], results["scores"]
    dim = summary[summary["dimension"] == dimension]
    mean_score = {m: _num(v) for m, v in zip(dim["answer_model"], dim["mean"], strict=True)}
    by_role = dim.groupby("role")["mean"].mean()
    tests = results["tests"]
    gap = results["supervision_gap"]
    gap = gap[gap["role"] != "upper_bound"]
    drop = results["bias_drop"]
    drop = drop[drop["role"] != "upper_bound"]
    pooled = drop[drop["bias_type"] == ("all" if (drop["bias_type"] == "all").any() else
                                        drop["bias_type"].iloc[0])] if len(drop) else drop
    f1 = summary[summary["dimension"] == "medsynf1"]
    answers = results["answers"]
    return {
        "backend": "+".join(sorted(set(scores["backend"]))) if len(scores) else "",
        "judge_model": "+".join(sorted(set(scores["judge_model"]))) if len(scores) else "",
        "release": "release_issues" in results,
        "dimension": dimension,
        "mean_score": mean_score,
        "best_model": best_model(summary, dimension=dimension),
        "lower_bound_mean": _num(by_role.get("lower_bound", math.nan)),
        "upper_bound_mean": _num(by_role.get("upper_bound", math.nan)),
        "n_comparisons": int((tests["padjust"] == "bonf").sum()),
        "n_significant_bonf": int(tests.loc[tests["padjust"] == "bonf", "significant"].sum()),
        "n_significant_holm": int(tests.loc[tests["padjust"] == "holm", "significant"].sum()),
        "alpha": alpha,
        "mean_gap": _num(gap["estimate"].mean()) if len(gap) else None,
        "gap_min": _num(gap["estimate"].min()) if len(gap) else None,
        "gap_max": _num(gap["estimate"].max()) if len(gap) else None,
        "n_models_gap_positive": int((gap["estimate"] > 0).sum()),
        "n_models_gap": len(gap),
        "mean_drop": _num(pooled["estimate"].mean()) if len(pooled) else None,
        "drop_by_bias": {b: _num(v) for b, v in drop.groupby("bias_type")["estimate"].mean().items()},
        "mean_f1": {m: _num(v) for m, v in zip(f1["answer_model"], f1["mean"], strict=True)},
        "n_answers": len(answers),
        "n_failed_answers": int((~answers["ok"].astype(bool)).sum()),
        "n_scores": len(scores),
        "n_unparsed": int((~scores["parse_ok"].astype(bool)).sum()),
        "answer_backend": "+".join(sorted(set(answers["backend"].dropna()))),
    }
