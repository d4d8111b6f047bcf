"""Summaries of an S1 run: parse failures, mean scores per answer model, the seed's
published numbers beside this run's, and the headline numbers the notebook records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from workbench.studies.s1_judge_methods._checklist import (
    flagged_conversations,
    judge_disagreement,
    weakness_map,
)
from workbench.studies.s1_judge_methods._indices import method_correlations, reliability

#: Seed 000's published values (six real judges, judge temperature 0.0): table 3 and
#: §4.3. Facts to compare against, never results of this code.
PUBLISHED: dict[str, dict[Any, float]] = {
    "consistency_index": {"holistic": 0.095, "holistic_simple": 0.129, "checklist": 0.085},
    "variance_ratio": {"holistic": 0.076, "holistic_simple": 0.070, "checklist": 0.076},
    "pearson_r": {frozenset({"holistic", "holistic_simple"}): 0.80,
                  frozenset({"holistic_simple", "checklist"}): 0.68},
}
#: Judge temperature of the published values.
PUBLISHED_TEMPERATURE = 0.0

#: Columns of :func:`parse_failures`.
FAILURE_COLUMNS = ("protocol", "judge_model", "temperature", "n_calls", "n_call_failed",
                   "n_unparsed", "n_scores", "n_scores_missing", "backend")
#: Columns of :func:`model_means`.
MEANS_COLUMNS = ("temperature", "protocol", "answer_model", "mean", "sd", "n", "n_missing",
                 "rank", "backend")


def parse_failures(results: pd.DataFrame, *,
                   by: Sequence[str] = ("protocol", "judge_model", "temperature")) -> pd.DataFrame:
    """Failed and unparsed judge calls, and missing conversation scores, per group.

    ``n_calls`` counts judge calls (holistic: one per score; checklist: one per item);
    ``n_call_failed`` calls that returned no reply, ``n_unparsed`` replies that did not
    parse. ``n_scores_missing`` counts conversation-level scores left NaN by them (a
    checklist total is NaN when any of its items did not parse). None is dropped or
    scored 0. ``by`` names the grouping columns (default protocol x judge x
    temperature); the output has them, then the counts and ``backend``.
    """
    keys = list(by)
    calls = results[results["dimension"] != "total"]
    failed = ~calls["parse_ok"].astype(bool)
    no_reply = calls["raw_reply"].isna()
    counted = calls.assign(_failed=failed & no_reply, _unparsed=failed & ~no_reply).groupby(
        keys, sort=False).agg(n_calls=("parse_ok", "size"), n_call_failed=("_failed", "sum"),
                              n_unparsed=("_unparsed", "sum"))
    conv = results[results["dimension"].isin(["overall", "total"])]
    scored = conv.groupby(keys, sort=False)["score"].agg(
        n_scores="size", n_scores_missing=lambda s: int(s.isna().sum()))
    backend = results.groupby(keys, sort=False)["backend"].agg(
        lambda s: "+".join(sorted(set(s.dropna()))) or "unknown")
    out = counted.join(scored).join(backend).reset_index()
    return out.reindex(columns=[*keys, *FAILURE_COLUMNS[3:]])


def model_means(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean score of each answer model per method and temperature (over prompts, judges
    and trials), with its rank (1 = best) within the method."""
    keys = ["temperature", "protocol", "answer_model"]
    grouped = scores.groupby(keys, sort=False)["score"]
    out = grouped.agg(mean="mean", sd="std", n="count", n_total="size").reset_index()
    out["n_missing"] = out.pop("n_total") - out["n"]
    out["rank"] = out.groupby(["temperature", "protocol"], sort=False)["mean"].rank(
        ascending=False, method="min").astype("Int64")
    values = sorted(set(scores["backend"].dropna()))
    out["backend"] = "+".join(values) if values else "unknown"
    return out.reindex(columns=list(MEANS_COLUMNS))


def compare_published(reliability: pd.DataFrame, correlations: pd.DataFrame, *,
                      temperature: float = PUBLISHED_TEMPERATURE) -> pd.DataFrame:
    """The seed's published values (real judges) beside this run's, at one temperature.

    Returns
    -------
    DataFrame
        ``quantity`` (consistency_index, variance_ratio, pearson_r), ``method`` (a method
        or a pair), ``reading`` (indices: which grouping; ``-`` for r),
        ``published_real_judges``, ``this_run`` and ``backend`` of this run. The seed
        does not say which reading its indices used.
    """
    rows = []
    rel = reliability[reliability["temperature"] == temperature]
    for _, row in rel.iterrows():
        published = PUBLISHED.get(row["measure"], {}).get(row["protocol"])
        if published is not None:
            rows.append({"quantity": row["measure"], "method": row["protocol"],
                         "reading": row["reading"], "published_real_judges": published,
                         "this_run": row["estimate"], "backend": row["backend"]})
    corr = correlations[correlations["temperature"] == temperature]
    for _, row in corr.iterrows():
        published = PUBLISHED["pearson_r"].get(frozenset({row["method_x"], row["method_y"]}))
        if published is not None:
            rows.append({"quantity": "pearson_r", "method": row["pair"], "reading": "-",
                         "published_real_judges": published, "this_run": row["estimate"],
                         "backend": row["backend"]})
    return pd.DataFrame(rows, columns=["quantity", "method", "reading", "published_real_judges",
                                       "this_run", "backend"])


def _nested(frame: pd.DataFrame, outer: str, inner: str, value: str) -> dict:
    return {str(k): {str(a): float(b) for a, b in zip(g[inner], g[value], strict=True)}
            for k, g in frame.groupby(outer, sort=False)}


def headline(data: dict[str, pd.DataFrame], *, reliability: pd.DataFrame,
             correlations: pd.DataFrame, flags: pd.DataFrame,
             temperature: float | None = None) -> dict[str, Any]:
    """The numbers the notebook records (at one judge temperature, default the first).

    Keys: ``backend``, ``temperature``, ``n_conversations``, ``n_judge_calls``,
    ``n_answer_failures``, ``consistency_index`` and ``variance_ratio`` (method ->
    reading -> estimate), ``pearson_r`` (pair -> r), ``n_flagged``, ``n_call_failed``,
    ``n_unparsed`` and ``n_scores_missing`` (method -> count, all temperatures),
    ``model_means`` (method -> answer model -> mean score).
    """
    scores = data["scores"]
    if temperature is None:
        temperature = float(scores["temperature"].iloc[0])
    at = reliability[reliability["temperature"] == temperature]
    corr = correlations[correlations["temperature"] == temperature]
    fails = parse_failures(data["results"]).groupby("protocol", sort=False)[
        ["n_call_failed", "n_unparsed", "n_scores_missing"]].sum()
    means = model_means(scores)
    means = means[means["temperature"] == temperature]
    answers = data["answers"]
    backends = sorted(set(scores["backend"].dropna()))
    return {
        "backend": "+".join(backends) if backends else "unknown",
        "temperature": float(temperature),
        "n_conversations": int(scores["conversation"].nunique()),
        "n_judge_calls": int((data["results"]["dimension"] != "total").sum()),
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


def analyze(data: dict[str, pd.DataFrame], *, n_boot: int = 1000,
            rng: np.random.Generator | int | None = 0,
            flag_share: float = 0.5) -> dict[str, pd.DataFrame]:
    """Every analysis table of the notebook, in the notebook's order (same ``rng`` use).

    Parameters
    ----------
    data : dict of DataFrame
        What :func:`~workbench.studies.s1_judge_methods.run` returned.
    n_boot : int
        Bootstrap resamples per interval.
    rng : numpy.random.Generator or int
        Source of the resamples (``Config.seed`` in batch use).
    flag_share : float
        See :func:`~workbench.studies.s1_judge_methods.flagged_conversations`.

    Returns
    -------
    dict of DataFrame
        ``failures``, ``model_means``, ``reliability``, ``correlations``,
        ``weakness_map``, ``disagreement``, ``flagged`` and ``published``.
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    scores, criteria = data["scores"], data["criteria"]
    rel = reliability(scores, n_boot=n_boot, rng=gen)
    corr = method_correlations(scores, n_boot=n_boot, rng=gen)
    return {
        "failures": parse_failures(data["results"]),
        "model_means": model_means(scores),
        "reliability": rel,
        "correlations": corr,
        "weakness_map": weakness_map(criteria),
        "disagreement": judge_disagreement(criteria),
        "flagged": flagged_conversations(criteria, scores, share=flag_share),
        "published": compare_published(rel, corr),
    }
