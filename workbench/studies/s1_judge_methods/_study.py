"""Study S1: the run, its tables and the headline numbers (private)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from workbench.datasets import load_dataset
from workbench.studies._contract import StudyResults
from workbench.studies.common.parsing import attempt, headline_parse, with_parse_counts
from workbench.studies.s1_judge_methods._checklist import (
    DISAGREEMENT_COLUMNS,
    FLAG_COLUMNS,
    WEAKNESS_COLUMNS,
    flagged_conversations,
    judge_disagreement,
    weakness_map,
)
from workbench.studies.s1_judge_methods._indices import (
    CORRELATION_COLUMNS,
    RELIABILITY_COLUMNS,
    method_correlations,
    reliability,
)
from workbench.studies.s1_judge_methods._report import (
    MEANS_COLUMNS,
    compare_published,
    model_means,
    parse_failures,
)
from workbench.studies.s1_judge_methods._run import Config, collect


def run(config: Config) -> StudyResults:
    """Run study S1: the calls of :func:`collect`, then every analysis table, no plotting.

    The bootstrap draws from ``numpy.random.default_rng(config.seed)``: first the
    reliability indices, then the method correlations.

    Returns
    -------
    StudyResults
        The frames of :func:`collect` (``answers``, ``judgments``, ``scores``,
        ``criteria``), then ``failures`` (per method, judge and temperature),
        ``failures_by_method`` (per method and temperature), ``model_means``,
        ``reliability``, ``correlations``, ``weakness_map``, ``disagreement``, ``flagged``
        and ``published`` (the seed's values beside this run's).
    """
    rng = np.random.default_rng(config.seed)
    data = collect(config)
    scores, criteria, judged = data["scores"], data["criteria"], data["judgments"]

    def tried(label, compute, columns):  # a row saying why, when unparsed replies stop it
        return attempt(label, compute, judged, columns)

    rel = tried("reliability", lambda: reliability(scores, n_boot=config.n_boot, rng=rng),
                RELIABILITY_COLUMNS)
    corr = tried("correlations", lambda: method_correlations(scores, n_boot=config.n_boot, rng=rng),
                 CORRELATION_COLUMNS)
    rubric = load_dataset(config.dataset)["rubric"]
    return StudyResults({
        **data,
        "failures": parse_failures(judged),
        "failures_by_method": parse_failures(judged, by=["protocol", "temperature"]),
        "model_means": tried("model_means", lambda: model_means(scores), MEANS_COLUMNS),
        "reliability": rel,
        "correlations": corr,
        "weakness_map": tried("weakness_map", lambda: weakness_map(criteria, rubric), WEAKNESS_COLUMNS),
        "disagreement": tried("disagreement", lambda: judge_disagreement(criteria), DISAGREEMENT_COLUMNS),
        "flagged": tried("flagged", lambda: flagged_conversations(criteria, scores, share=config.flag_share),
                         FLAG_COLUMNS),
        "published": tried("published", lambda: compare_published(rel, corr), ()),
    }, config=config)


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV (:func:`_tables`) and ``parse_counts``, the parsed and
    unparsed judge rows per cell."""
    return with_parse_counts(_tables(results), results)


def _tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV under ``data/results/s1_judge_methods/``."""
    return {name: results[name] for name in (
        "answers", "scores", "reliability", "correlations", "model_means", "weakness_map",
        "disagreement", "flagged", "failures")}


def _nested(frame: pd.DataFrame, outer: str, inner: str, value: str) -> dict:
    return {str(k): {str(a): float(b) for a, b in zip(g[inner], g[value], strict=True)}
            for k, g in frame.groupby(outer, sort=False)}


def headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records (:func:`_headline`), with the share of judge rows
    parsed, their counts and the structured-reply form each judge used."""
    return {**_headline(results), **headline_parse(results)}


def _headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records, at the first judge temperature of the config.

    Keys: ``backend``, ``temperature``, ``n_conversations``, ``n_judge_calls``,
    ``n_answer_failures``, ``consistency_index`` and ``variance_ratio`` (method ->
    reading -> estimate), ``pearson_r`` (pair -> r), ``n_flagged``, ``n_call_failed``,
    ``n_unparsed`` and ``n_scores_missing`` (method -> count, all temperatures),
    ``model_means`` (method -> answer model -> mean score).
    """
    temperature = float(results.config.temperatures[0])
    scores, judgments = results["scores"], results["judgments"]
    rel, corr = results["reliability"], results["correlations"]
    at = rel[rel["temperature"] == temperature]
    corr = corr[corr["temperature"] == temperature]
    fails = results["failures"].groupby("protocol", sort=False)[
        ["n_call_failed", "n_unparsed", "n_scores_missing"]].sum()
    means = results["model_means"]
    means = means[means["temperature"] == temperature]
    flags = results["flagged"]
    answers = results["answers"]
    backends = sorted(set(scores["backend"].dropna()))
    return {
        "backend": "+".join(backends) if backends else "unknown",
        "temperature": temperature,
        "n_conversations": int(scores["conversation"].nunique()),
        "n_judge_calls": int((judgments["dimension"] != "total").sum()),
        "n_answer_failures": int((~answers["ok"].astype(bool)).sum()),
        "consistency_index": _nested(at[at["measure"] == "consistency_index"], "protocol",
                                     "reading", "estimate"),
        "variance_ratio": _nested(at[at["measure"] == "variance_ratio"], "protocol", "reading",
                                  "estimate"),
        "pearson_r": {str(p): float(r) for p, r in zip(corr["pair"], corr["estimate"],
                                                       strict=True)},
        "n_flagged": int(flags.loc[flags["temperature"] == temperature, "flagged"].sum()),
        "n_call_failed": {str(k): int(v) for k, v in fails["n_call_failed"].items()},
        "n_unparsed": {str(k): int(v) for k, v in fails["n_unparsed"].items()},
        "n_scores_missing": {str(k): int(v) for k, v in fails["n_scores_missing"].items()},
        "model_means": _nested(means, "protocol", "answer_model", "mean"),
    }
