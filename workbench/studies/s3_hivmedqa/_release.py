"""S3 on a downloaded HIVMedQA release, and the paper's Table 2 (private)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workbench.studies.common import ANSWER_COLUMNS
from workbench.studies.s3_hivmedqa._data import SCORE_COLUMNS, role_of

#: Display name of the paper's lower bound (Llama 3.2-1B-Instruct) in a release.
RELEASE_LOWER_BOUND = "Llama 3.2-1B-Instruct"
#: Judge of the release's replies (seed 002: GPT-4o at temperature 0) and its backend.
RELEASE_JUDGE = "gpt-4o"
RELEASE_BACKEND = "openai"
_TABLE2 = Path(__file__).resolve().parent.parent / "data" / "hivmedqa_table2.csv"


def paper_table2() -> pd.DataFrame:
    """The published Table 2 of seed 002 (real models, GPT-4o judge), long format.

    Columns ``paper_model`` (the table's row label), ``display_name`` (the release
    importer's name of the same model), ``role`` (``model``, ``lower_bound``,
    ``upper_bound``), ``dimension`` (five MedGPT dimensions and ``medsynf1``), ``mean``,
    ``sd`` (over five iterations). Read from ``workbench/studies/data/hivmedqa_table2.csv``.
    These are published numbers for comparison, never results of a run.
    """
    return pd.read_csv(_TABLE2, comment="#")


def from_release(release: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Turn :func:`workbench.datasets.hivmedqa.load_release` frames into the study's
    ``items``, ``answers`` and ``scores`` frames.

    Release category 5 is the paper's category 4 (``paper_category``); release
    categories without a paper category (4, 6) are left out. Models are named by their
    display names; the judged rephrased gold answers are the upper bound and
    :data:`RELEASE_LOWER_BOUND` the lower bound. The release does not say which bias each
    category-4 question carries nor which vignette it came from, so those items have
    ``perturbation = "bias"`` and are their own ``source_item``. Judge replies keep the
    importer's parse result: an unparsed reply is a NaN score with ``parse_ok=False``.
    """
    upper = "Rephrased gold answers"
    names = dict(zip(release["display_names"]["answer_model"],
                     release["display_names"]["display_name"], strict=True))
    upper = names.get("rephrased_true_answers", upper)
    questions = release["questions"].dropna(subset=["paper_category"])
    items = pd.DataFrame({
        "item_id": questions["item_id"].astype(str),
        "lang": "en",
        "category": questions["paper_category"].astype(int),
        "question": questions["question"],
        "reference": questions["true_answer"],
        "perturbation": np.where(questions["paper_category"] == 4, "bias", "none"),
        "source_item": questions["item_id"].astype(str),
    }).reset_index(drop=True)
    ans = release["answers"].dropna(subset=["paper_category"])
    answers = pd.DataFrame({
        "item_id": ans["item_id"].astype(str),
        "answer_model": ans["display_name"],
        "answer_sample": ans["iteration"].astype(int),
        "response": ans["answer"],
        "ok": ans["answer"].notna() & ans["answer"].fillna("").str.strip().ne(""),
        "error": np.where(ans["answer"].isna(), "no answer in the release", None),
        "cache_key": None,
        "backend": "release",
        "cost_usd": 0.0,
    }, columns=list(ANSWER_COLUMNS)).reset_index(drop=True)
    judg = release["judgments"].dropna(subset=["paper_category"])
    kind = dict(zip(items["item_id"], items["perturbation"], strict=True))
    scores = pd.DataFrame({
        "item_id": judg["item_id"].astype(str),
        "source_item": judg["item_id"].astype(str),
        "category": judg["paper_category"].astype(int),
        "perturbation": [kind.get(i, "bias" if c == 4 else "none")
                         for i, c in zip(judg["item_id"], judg["paper_category"], strict=True)],
        "answer_model": judg["display_name"],
        "role": [role_of(m, lower_bound=RELEASE_LOWER_BOUND, upper_bound=upper)
                 for m in judg["display_name"]],
        "answer_sample": judg["iteration"].astype(int),
        "judge_model": RELEASE_JUDGE,
        "supervision": np.where(judg["reference_given"], "supervised", "unsupervised"),
        "dimension": judg["dimension"],
        "score": judg["score"].astype(float),
        "parse_ok": judg["parse_ok"].astype(bool),
        "error": judg["error"].where(judg["error"].astype(str) != "", None),
        "backend": RELEASE_BACKEND,
    }, columns=list(SCORE_COLUMNS)).reset_index(drop=True)
    return {"items": items, "answers": answers, "scores": scores, "upper_bound": upper}


def compare_table2(summary: pd.DataFrame, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper's Table 2 beside the same table computed here, per model and dimension.

    Rows are matched on the release display name (``answer_model`` of ``summary`` =
    ``display_name`` of the paper table); a model on one side only keeps NaN on the
    other. Columns: ``paper_model, answer_model, dimension, paper_mean, paper_sd,
    this_mean, this_sd, difference`` (this minus paper).
    """
    paper = paper_table2() if paper is None else paper
    left = paper.rename(columns={"display_name": "answer_model", "mean": "paper_mean",
                                 "sd": "paper_sd"})[["paper_model", "answer_model", "dimension",
                                                     "paper_mean", "paper_sd"]]
    right = summary.rename(columns={"mean": "this_mean", "sd": "this_sd"})[
        ["answer_model", "dimension", "this_mean", "this_sd"]]
    out = left.merge(right, on=["answer_model", "dimension"], how="outer")
    out["difference"] = out["this_mean"] - out["paper_mean"]
    return out.sort_values(["paper_model", "answer_model", "dimension"],
                           na_position="last").reset_index(drop=True)
