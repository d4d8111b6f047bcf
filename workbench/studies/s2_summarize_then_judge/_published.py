"""Seed 001's published table 3 and the side-by-side comparison with a run (private)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

#: Seed 001 table 3: Spearman rho with the human score (real models, judges and raters).
PUBLISHED_COLUMNS = ("Llama2", "GPT-3.5", "GPT-4", "PaLM2", "pooled", "mean")
PUBLISHED_TABLE3 = {
    "BLEU": (0.41, 0.02, -0.35, 0.02, 0.15, 0.02),
    "ROUGE-1": (0.34, 0.41, -0.09, 0.32, 0.20, 0.25),
    "ROUGE-2": (0.38, 0.31, 0.04, 0.15, 0.20, 0.22),
    "ROUGE-L": (0.23, 0.52, 0.00, 0.35, 0.13, 0.28),
    "BERTScore": (0.38, 0.34, 0.00, 0.16, 0.38, 0.22),
    "G-Eval": (0.15, 0.35, 0.32, 0.47, -0.04, 0.32),
    "G-Eval-gpt4": (0.24, 0.36, 0.25, 0.49, 0.05, 0.34),
    "G-Eval-gemi": (0.19, 0.31, 0.12, 0.12, 0.12, 0.19),
    "Proposed-gpt4": (0.02, 0.48, 0.41, 0.39, 0.02, 0.32),
    "Proposed-gemi": (0.23, 0.29, 0.34, 0.09, 0.04, 0.24),
}


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

    The first judge plays GPT-4, the second Gemini-Pro (seed table 2); metrics this run
    did not compute are left out. Only the model-independent columns are compared: the
    pooled value (全体評価) and the mean over answer models (平均).
    """
    names = {"bleu": "BLEU", "rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L",
             "bertscore": "BERTScore"}
    for judge, suffix in zip(judge_models, ("gpt4", "gemi"), strict=False):
        names[method_label("geval_adapted", judge)] = f"G-Eval-{suffix}"
        names[method_label("summarize_then", judge)] = f"Proposed-{suffix}"
    if judge_models:
        names[method_label("geval_original", judge_models[0])] = "G-Eval"
    rows = []
    for metric, seed_name in names.items():
        if metric not in rho.index or seed_name not in PUBLISHED_TABLE3:
            continue
        published = dict(zip(PUBLISHED_COLUMNS, PUBLISHED_TABLE3[seed_name], strict=True))
        for column in ("pooled", "mean"):
            rows.append({"metric": metric, "seed_method": seed_name, "column": column,
                         "published_real_judges": published[column],
                         "this_run": float(rho.loc[metric, column])})
    return pd.DataFrame(rows, columns=["metric", "seed_method", "column",
                                       "published_real_judges", "this_run"])
