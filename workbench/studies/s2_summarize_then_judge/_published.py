"""Seed 001's published table 3 beside a run (private)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from workbench.studies._contract import published

STUDY = "s2_summarize_then_judge"


def method_label(method: str, judge_model: str) -> str:
    """``<method>/<judge>``: the name of an LLM method's scores (judge without provider).

    Examples
    --------
    >>> method_label("summarize_then", "sim/judge-a"), method_label("geval_adapted", "gpt-4o")
    ('summarize_then/judge-a', 'geval_adapted/gpt-4o')
    """
    return f"{method}/{judge_model.rsplit('/', 1)[-1]}"


def published_comparison(rho: pd.DataFrame, *, judge_models: Sequence[str]) -> pd.DataFrame:
    """Seed 001 table 3 (real judges) beside this run's values, pooled and mean.

    The published values are ``workbench/studies/published/s2_summarize_then_judge.csv``
    (Spearman rho with the human score; real models, judges and raters). The first judge
    plays GPT-4, the second Gemini-Pro (seed table 2); metrics this run did not compute
    are left out. Only the model-independent columns are compared: the pooled value
    (全体評価) and the mean over answer models (平均).
    """
    paper = published(STUDY)
    paper = paper[paper["level"] != "per_group"].set_index(["metric", "level"])["estimate"]
    names = {"bleu": "BLEU", "rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L",
             "bertscore": "BERTScore"}
    for judge, suffix in zip(judge_models, ("gpt4", "gemi"), strict=False):
        names[method_label("geval_adapted", judge)] = f"G-Eval-{suffix}"
        names[method_label("summarize_then", judge)] = f"Proposed-{suffix}"
    if judge_models:
        names[method_label("geval_original", judge_models[0])] = "G-Eval"
    rows = []
    for metric, seed_name in names.items():
        if metric not in rho.index or (seed_name, "pooled") not in paper.index:
            continue
        for column, level in (("pooled", "pooled"), ("mean", "per_group_mean")):
            rows.append({"metric": metric, "seed_method": seed_name, "column": column,
                         "published_real_judges": float(paper[(seed_name, level)]),
                         "this_run": float(rho.loc[metric, column])})
    return pd.DataFrame(rows, columns=["metric", "seed_method", "column",
                                       "published_real_judges", "this_run"])
