"""Summaries of an S1 run: parse failures, mean scores per answer model, and the seed's
published numbers beside this run's (private)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from workbench.studies._contract import published
from workbench.studies.s1_judge_methods._run import STUDY

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
                      temperature: float | None = None) -> pd.DataFrame:
    """The seed's published values (real judges) beside this run's, at one temperature.

    The published values are ``workbench/studies/published/s1_judge_methods.csv`` (seed
    000, table 3 and §4.3); ``temperature`` defaults to theirs (0.0).

    Returns
    -------
    DataFrame
        ``quantity`` (consistency_index, variance_ratio, pearson_r), ``method`` (a method
        or a pair), ``reading`` (indices: which grouping; ``-`` for r),
        ``published_real_judges``, ``this_run`` and ``backend`` of this run. The seed
        does not say which reading its indices used.
    """
    paper = published(STUDY)
    if temperature is None:
        temperature = float(paper["temperature"].iloc[0])
    paper = paper[paper["temperature"] == temperature]
    indices = paper[paper["pair"].isna()].set_index(["measure", "protocol"])["estimate"]
    pairs = {frozenset(p.split(" ~ ")): v for p, v in zip(
        paper["pair"].dropna(), paper.loc[paper["pair"].notna(), "estimate"], strict=True)}
    rows = []
    rel = reliability[reliability["temperature"] == temperature]
    for _, row in rel.iterrows():
        value = indices.get((row["measure"], row["protocol"]))
        if value is not None:
            rows.append({"quantity": row["measure"], "method": row["protocol"],
                         "reading": row["reading"], "published_real_judges": value,
                         "this_run": row["estimate"], "backend": row["backend"]})
    corr = correlations[correlations["temperature"] == temperature]
    for _, row in corr.iterrows():
        value = pairs.get(frozenset({row["method_x"], row["method_y"]}))
        if value is not None:
            rows.append({"quantity": "pearson_r", "method": row["pair"], "reading": "-",
                         "published_real_judges": value, "this_run": row["estimate"],
                         "backend": row["backend"]})
    return pd.DataFrame(rows, columns=["quantity", "method", "reading", "published_real_judges",
                                       "this_run", "backend"])
