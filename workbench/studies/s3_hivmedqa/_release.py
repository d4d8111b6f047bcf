"""S3 on a downloaded HIVMedQA release, and the paper's Table 2 (private)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.datasets.hivmedqa import PAPER_CATEGORY, RELEASE_KEYS, SCORE_RANGE
from workbench.errors import DatasetError
from workbench.judges import parse_dimension_reply
from workbench.studies._contract import published
from workbench.studies.common import ANSWER_COLUMNS
from workbench.studies.s3_hivmedqa._data import F1_COLUMNS, SCORE_COLUMNS, STUDY, role_of

#: Display name of the paper's lower bound (Llama 3.2-1B-Instruct) in a release.
RELEASE_LOWER_BOUND = "Llama 3.2-1B-Instruct"
#: Judge of the release's replies (seed 002: GPT-4o at temperature 0) and its backend.
RELEASE_JUDGE = "gpt-4o"
RELEASE_BACKEND = "openai"
#: ``backend`` of the release's own MedSynF1 rows (its ``f1_raw.csv``).
RELEASE_F1_BACKEND = "hivmedqa_f1"
#: Release categories the paper's Table 2 pools: release 1-5 = the paper's 1-3, 5, 4
#: (release 6 is not in the paper).
RELEASE_CATEGORIES = (1, 2, 3, 4, 5)


def paper_table2() -> pd.DataFrame:
    """The published Table 2 of seed 002 (real models, GPT-4o judge), long format.

    Columns ``paper_model`` (the table's row label), ``display_name`` (the release
    importer's name of the same model), ``answer_role`` (``model``, ``lower_bound``,
    ``upper_bound``), ``dimension`` (five MedGPT dimensions and ``medsynf1``), ``mean``,
    ``sd`` (over five iterations), ``source``. Read from
    ``workbench/studies/published/s3_hivmedqa.csv``. These are published numbers for
    comparison, never results of a run.
    """
    return published(STUDY)


def _bias_sources(questions: pd.DataFrame) -> dict[str, str]:
    """Release item id of category 5 -> the category-3 vignette it was built from (the
    same position), when the two categories hold as many questions."""
    cat = questions["category"].astype(int)
    c3, c5 = questions[cat == 3], questions[cat == 5]
    if c5.empty or len(c3) != len(c5):
        return {}
    return dict(zip(c5.sort_values("question_index")["item_id"].astype(str),
                    c3.sort_values("question_index")["item_id"].astype(str), strict=True))


def _require_outputs(release: dict[str, pd.DataFrame]) -> None:
    """Raise `DatasetError` naming the release folders whose answers or judge replies
    are missing (a folder with only ``questions_files/`` has nothing to analyse)."""
    missing = []
    if release["answers"].empty:
        missing.append("model_answers/raw/<model>/ (the models' answers)")
    given = release["judgments"]["reference_given"] if len(release["judgments"]) else []
    if not any(given):
        missing.append("model_answers/results-GPT-score/<model>/ (judge replies with the "
                       "gold answer)")
    if not any(not g for g in given):
        missing.append("model_answers/results-unsupervised-GPT-score/<model>/ (judge replies "
                       "without it)")
    if missing:
        raise DatasetError("the HIVMedQA release holds no " + "; no ".join(missing)
                           + " — nothing to analyse")


def scope_label(categories) -> str:
    """The release categories analysed, with the paper's numbers (for captions).

    Examples
    --------
    >>> scope_label([1, 2, 3, 4, 5])
    'release categories 1, 2, 3, 4, 5 (= paper categories 1, 2, 3, 5, 4)'
    """
    cats = sorted(int(c) for c in categories)
    paper = ", ".join(str(PAPER_CATEGORY.get(c, "–")) for c in cats)
    return f"release categories {', '.join(map(str, cats))} (= paper categories {paper})"


def from_release(release: dict[str, pd.DataFrame], *,
                 categories=RELEASE_CATEGORIES) -> dict[str, pd.DataFrame]:
    """Turn :func:`workbench.datasets.hivmedqa.load_release` frames into the study's
    ``items``, ``answers`` and ``scores`` frames, keeping the release ``categories``.

    ``category`` is the paper's number (``paper_category``: release 5 is the paper's
    category 4, release 4 its category 5); release categories without a paper category
    (6) are always left out. Models are named by their display names; the judged
    rephrased gold answers are the upper bound and :data:`RELEASE_LOWER_BOUND` the lower
    bound. The release does not say which bias each category-4 question carries, so
    those items have ``perturbation = "bias"``; they are the category-3 vignettes in the
    same order, so question k of release category 5 has ``source_item`` = question k of
    release category 3 when both categories hold as many questions (else each is its own
    ``source_item``). Each judge reply is parsed dimension by dimension
    (:func:`workbench.judges.parse_dimension_reply`): an unparsed dimension is a NaN
    score with ``parse_ok=False`` and the reason in ``error``.
    """
    _require_outputs(release)
    keep = {int(c) for c in categories}
    release = {name: frame[frame["category"].astype(int).isin(keep)]
               if name in ("questions", "answers", "judgments") else frame
               for name, frame in release.items()}
    source = _bias_sources(release["questions"])
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
        "source_item": [source.get(i, i) for i in questions["item_id"].astype(str)],
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
    texts = [r if isinstance(r, str) else None for r in judg["raw_reply"]]  # NaN: no reply
    replies = {t: parse_dimension_reply(t, RELEASE_KEYS, SCORE_RANGE) for t in set(texts)}
    parsed = [replies[t][d] for t, d in zip(texts, judg["dimension"], strict=True)]
    errors = ["no reply in the release" if t is None else e or None
              for t, (_, _, e) in zip(texts, parsed, strict=True)]
    kind = dict(zip(items["item_id"], items["perturbation"], strict=True))
    scores = pd.DataFrame({
        "item_id": judg["item_id"].astype(str),
        "source_item": [source.get(i, i) for i in judg["item_id"].astype(str)],
        "category": judg["paper_category"].astype(int),
        "perturbation": [kind.get(i, "bias" if c == 4 else "none")
                         for i, c in zip(judg["item_id"], judg["paper_category"], strict=True)],
        "answer_model": judg["display_name"],
        "answer_role": [role_of(m, lower_bound=RELEASE_LOWER_BOUND, upper_bound=upper)
                 for m in judg["display_name"]],
        "answer_sample": judg["iteration"].astype(int),
        "judge_model": RELEASE_JUDGE,
        "supervision": np.where(judg["reference_given"], "supervised", "unsupervised"),
        "dimension": judg["dimension"],
        "score": np.array([score for score, _, _ in parsed], dtype=float),
        "parse_ok": np.array([ok for _, ok, _ in parsed], dtype=bool),
        "error": errors,
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


def table2_verdict(table2: pd.DataFrame) -> str:
    """One line computed from :func:`compare_table2`'s ``difference`` (release − paper)
    over the cells present on both sides.

    Examples
    --------
    >>> t = pd.DataFrame({"difference": [-0.2, -0.1, 0.05, float("nan")]})
    >>> table2_verdict(t)
    'the release is below the paper in 2 of 3 cells (above in 1), median difference -0.10 (release − paper)'
    """
    diff = table2["difference"].dropna()
    if diff.empty:
        return "no cell is in both the release and the paper"
    return (f"the release is below the paper in {int((diff < 0).sum())} of {len(diff)} cells "
            f"(above in {int((diff > 0).sum())}), median difference "
            f"{diff.median():+.2f} (release − paper)")


def release_f1(f1: pd.DataFrame | None, categories=RELEASE_CATEGORIES) -> pd.DataFrame | None:
    """The release's own MedSynF1 (:func:`workbench.datasets.hivmedqa.load_f1`) as the
    study's ``entity_f1`` frame (``backend`` = :data:`RELEASE_F1_BACKEND`; entity counts
    unknown: NaN),
    kept to the release ``categories`` with a paper category; None when there is none."""
    if f1 is None:
        return None
    part = f1[f1["category"].isin([int(c) for c in categories])
              & f1["paper_category"].notna()]
    out = pd.DataFrame({
        "item_id": part["item_id"].astype(str),
        "category": part["paper_category"].astype(int),
        "answer_model": part["display_name"],
        "answer_role": "model",
        "answer_sample": part["iteration"].astype(int),
        "precision": part["precision"],
        "recall": part["recall"],
        "f1": part["f1"],
        "n_reference": np.nan,
        "n_answer": np.nan,
        "backend": RELEASE_F1_BACKEND,
    }, columns=list(F1_COLUMNS))
    return out.reset_index(drop=True)
