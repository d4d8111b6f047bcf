"""Study S3: configuration, the run and the headline numbers (private)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.datasets import hivmedqa, load_dataset
from workbench.studies._contract import StudyConfig, StudyResults, at_least, in_range, one_of, param
from workbench.studies.common.parsing import attempt, headline_parse, with_parse_counts
from workbench.studies.s3_hivmedqa import _analysis, _data, _release


@dataclass
class Config(StudyConfig):
    """Parameters of study S3: the notebook's ``parameters`` cell (:class:`StudyConfig`).

    ``lower_bound_model`` is answered and judged like the others (added to
    ``answer_models`` when missing); the rephrased references are judged as answer model
    ``rephrased_reference``. With ``release_dir`` the models, judge and generation
    settings are unused, and MedSynF1 is the release's own (its ``f1_raw.csv``,
    ``synonyms_lemmatized_f1_dict``) when the release holds that file, else this
    workbench's recomputation on the release's answers (``entity_method``,
    ``synonym_model``); the Table 2 row label says which.
    """

    dataset: str = "s3_hiv_en"
    answer_models: list[str] = param(["sim/answer-strong", "sim/answer-concise", "sim/answer-mid",
                                      "sim/answer-verbose", "sim/answer-weak"])
    lower_bound_model: str = "sim/answer-tiny"
    rephrase_model: str = "sim/paraphraser"
    judge_model: str = "sim/judge-a"
    judge_temperature: float = 0.0
    iterations: int = at_least(5, 1)
    answer_temperature: float = 1.0
    bias_types: list[str] = param(list(_data.BIAS_TYPES))
    items_per_category: int = at_least(0, 0)
    test_dimension: str = one_of("comprehension", _data.DIMENSIONS)
    alpha: float = in_range(0.05, 0, 1, ends="()")
    entity_method: str = one_of("phrases", ("phrases", "content_words", "llm"))
    extractor_model: str = "sim/extractor"
    synonym_model: str = "sim/extractor"
    release_dir: str = ""
    release_categories: list[int] = param(list(_release.RELEASE_CATEGORIES))

    @property
    def models(self) -> list[str]:
        """``answer_models`` plus the lower bound, without duplicates, in order."""
        out = list(dict.fromkeys(self.answer_models))
        if self.lower_bound_model and self.lower_bound_model not in out:
            out.append(self.lower_bound_model)
        return out


def _collect(config: Config) -> dict[str, pd.DataFrame]:
    """``items`` (categories 1-4), ``answers``, ``scores``, ``entity_f1``: generated through
    the cached client, or read from ``config.release_dir`` (then also ``release_issues``)."""
    out: dict[str, pd.DataFrame] = {}
    if config.release_dir:
        release = hivmedqa.load_release(config.release_dir)
        frames = _release.from_release(release, categories=config.release_categories)
        items, answers, scores = frames["items"], frames["answers"], frames["scores"]
        lower = _release.RELEASE_LOWER_BOUND
        out["release_issues"] = release["issues"]
    else:
        lower = config.lower_bound_model
        items = _data.build_items(load_dataset(config.dataset)["items"],
                                  bias_types=config.bias_types,
                                  items_per_category=config.items_per_category)
        answers = _data.make_answers(items, config.models, iterations=config.iterations,
                                     temperature=config.answer_temperature,
                                     rephrase_model=config.rephrase_model,
                                     progress=config.progress)
        scores = _data.judge_answers(items, answers, judge_model=config.judge_model,
                                     temperature=config.judge_temperature, lower_bound=lower,
                                     progress=config.progress)
    own = (_release.release_f1(hivmedqa.load_f1(config.release_dir), config.release_categories)
           if config.release_dir else None)
    f1 = own if own is not None else _data.entity_f1(
        items, answers, method=config.entity_method, extractor_model=config.extractor_model,
        synonym_model=config.synonym_model, lower_bound=lower, progress=config.progress)
    if config.release_dir:  # roles by the release's display names
        roles = scores.drop_duplicates("answer_model").set_index("answer_model")["answer_role"]
        f1["answer_role"] = [roles.get(m, "model") for m in f1["answer_model"]]
    out.update(items=items, answers=answers, scores=scores, entity_f1=f1)
    return out


def _release_label(config: Config, f1: pd.DataFrame) -> str:
    if len(f1) and (f1["backend"] == _release.RELEASE_F1_BACKEND).all():
        medsynf1 = "MedSynF1 from the release's f1_raw.csv (synonyms_lemmatized_f1_dict)"
    else:
        synonyms = config.synonym_model or "no synonym dictionary"
        medsynf1 = f"MedSynF1 recomputed here ({config.entity_method}, {synonyms})"
    return f"release judge replies, {_release.scope_label(config.release_categories)}; {medsynf1}"


def run(config: Config) -> StudyResults:
    """Run study S3; every frame the notebook shows, no plotting.

    The data: ``items`` (categories 1-4), ``answers`` (one row per answer call, failures
    kept), ``scores`` (one row per answer, supervision and dimension), ``entity_f1``
    (MedSynF1 per answer) — generated through the cached client, or read from
    ``config.release_dir`` (then also ``release_issues``: files the importer skipped).
    The analyses: ``failures``, ``model_summary`` (Table 2), ``iteration_means`` (its
    per-iteration means, for the plot), ``tests`` (best model vs each other, Bonferroni
    and Holm, subject question x iteration), ``tests_question_means`` (the same with
    iterations averaged per question), ``tests_pairings`` (both side by side),
    ``category_trend``, ``trend_counts``, ``bias_drop``, ``supervision_gap``,
    ``table2_side_by_side`` (the paper's Table 2 beside this run's); with a release also
    ``table2`` (both, long, with their difference, release − paper — for MedSynF1 only
    when it is the release's own ``f1_raw.csv``, not this workbench's recomputation; its
    one-line verdict is :func:`table2_verdict`).
    """
    data = _collect(config)
    scores = data["scores"]
    summary = _analysis.model_summary(scores, data["entity_f1"])
    test_columns = ("a", "b", "padjust", "significant", "p_value", "p_adjusted", "dimension")
    tests = attempt("tests", lambda: _analysis.best_model_tests(
        scores, dimension=config.test_dimension, alpha=config.alpha), scores, test_columns)
    by_question = attempt("tests_question_means", lambda: _analysis.best_model_tests(
        scores, dimension=config.test_dimension, alpha=config.alpha, best=tests["a"].iloc[0],
        pairing="question_mean"), scores, test_columns)
    trend = _analysis.category_trend(scores)
    out = {
        **data,
        "failures": _analysis.failure_counts(data["answers"], scores),
        "model_summary": summary,
        "iteration_means": _analysis.iteration_means(scores),
        "tests": tests,
        "tests_question_means": by_question,
        "tests_pairings": attempt("tests_pairings", lambda: _analysis.pairing_comparison(
            tests, by_question), scores, ("b", "differs")),
        "category_trend": trend,
        "trend_counts": _analysis.trend_counts(trend),
        "bias_drop": _analysis.bias_drop(scores, per_iteration=bool(config.release_dir)),
        "supervision_gap": _analysis.supervision_gap(scores),
        "table2_side_by_side": _analysis.table2_side_by_side(
            summary, _release.paper_table2(),
            label=_release_label(config, data["entity_f1"]) if config.release_dir else None),
    }
    if config.release_dir:
        table2 = _release.compare_table2(summary)
        if not (data["entity_f1"]["backend"] == _release.RELEASE_F1_BACKEND).all():
            # MedSynF1 recomputed here (not the release's own f1_raw.csv): not a release
            # number, so it stays out of the difference and the verdict
            table2.loc[table2["dimension"] == "medsynf1", "difference"] = float("nan")
        out["table2"] = table2
    return StudyResults(out, config=config)


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV (:func:`_tables`) and ``parse_counts``, the parsed and
    unparsed judge rows per cell."""
    return with_parse_counts(_tables(results), results, names=["scores"])


def _tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV under ``data/results/s3_hivmedqa/``."""
    return {name: results[name] for name in (
        "model_summary", "tests", "tests_pairings", "category_trend", "bias_drop",
        "supervision_gap", "entity_f1", "scores")}


def _best_or_none(summary: pd.DataFrame, dimension: str) -> str | None:
    """The best model, or None when no model has a score on ``dimension`` (no reply parsed)."""
    try:
        return _analysis.best_model(summary, dimension=dimension)
    except ValueError:
        return None


def _num(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records (:func:`_headline`), with the share of judge rows
    parsed, their counts and the structured-reply form each judge used."""
    return {**_headline(results), **headline_parse(results, names=["scores"])}


def _headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the S3 notebook records (plain Python values).

    ``mean_score`` (per model, ``config.test_dimension``, supervised), ``best_model``,
    ``lower_bound_mean`` / ``upper_bound_mean`` (NaN -> None when absent),
    ``n_comparisons``, ``n_significant_bonf`` / ``n_significant_holm`` (at
    ``config.alpha``), ``mean_gap`` (unsupervised - supervised, mean over models without
    the upper bound), ``gap_min`` / ``gap_max``, ``mean_drop`` (category 3 -> 4, all bias
    types pooled, mean over models without the upper bound), ``drop_by_bias`` (mean over
    models per bias type), ``mean_f1`` per model, call and parse counts, ``backend`` and
    ``judge_model``; with a release also its ``release_categories``, the
    ``table2_verdict`` and its counts, and how many best-model tests change significance
    with the pairing.
    """
    dimension, alpha = results.config.test_dimension, results.config.alpha
    summary, scores = results["model_summary"], results["scores"]
    dim = summary[summary["dimension"] == dimension]
    mean_score = {m: _num(v) for m, v in zip(dim["answer_model"], dim["mean"], strict=True)}
    by_role = dim.groupby("answer_role")["mean"].mean()
    tests = results["tests"]
    gap = results["supervision_gap"]
    gap = gap[gap["answer_role"] != "upper_bound"]
    drop = results["bias_drop"]
    drop = drop[drop["answer_role"] != "upper_bound"]
    pooled = drop[drop["bias_type"] == ("all" if (drop["bias_type"] == "all").any() else
                                        drop["bias_type"].iloc[0])] if len(drop) else drop
    f1 = summary[summary["dimension"] == "medsynf1"]
    answers = results["answers"]
    release = {}
    if "table2" in results:  # a release run: its scope and how it compares with the paper
        diff = results["table2"]["difference"].dropna()
        release = {
            "release_categories": sorted(int(c) for c in results.config.release_categories),
            "table2_verdict": _release.table2_verdict(results["table2"]),
            "n_cells_compared": len(diff),
            "n_cells_below_paper": int((diff < 0).sum()),
            "median_difference": _num(diff.median()) if len(diff) else None,
            "n_tests_pairing_differs": int(results["tests_pairings"]["differs"].sum()),
        }
    return {
        "backend": "+".join(sorted(set(scores["backend"]))) if len(scores) else "",
        "judge_model": "+".join(sorted(set(scores["judge_model"]))) if len(scores) else "",
        "release": "release_issues" in results,
        "dimension": dimension,
        "mean_score": mean_score,
        "best_model": _best_or_none(summary, dimension),
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
        **release,
    }
