"""S5 data: constants, the study config, the answers and human spans, detection runs."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.datasets import load_dataset
from workbench.judges import JudgeSpec, detection_spans, run_judging
from workbench.studies._contract import StudyConfig, at_least, listed, published

STUDY = "s5_gist_detail"
#: The four classes of seed 004 §4, in the seed's table order.
CLASSES = ("excess_gist", "excess_detail", "missing_gist", "missing_detail")
#: The two conditions of seed 004 table 2: who made the gist/detail split.
SPLITS = ("human", "llm")
#: Offset given to a flagged text that cannot be found verbatim in its source text: far
#: beyond any answer, so it overlaps nothing and counts as a wrong prediction.
UNLOCATED_OFFSET = 10_000_000

#: How this run's tables name the published model (seed 004: GPT, real judges).
PUBLISHED_LABEL = "published (GPT, seed 004)"


def published_scores() -> pd.DataFrame:
    """Seed 004 table 2 (GPT, real judges): ``split, class, recall, precision, f1``.

    From ``workbench/studies/published/s5_gist_detail.csv``
    (:func:`workbench.studies.published`).
    """
    rows = published(STUDY)
    rows = rows[rows["source"].str.startswith("seed 004, table 2")]
    return rows[["split", "class", "recall", "precision", "f1"]].reset_index(drop=True)


def published_neither() -> pd.DataFrame:
    """Seed 004 table 1: answers (of 50) by the number of classes that neither the humans
    nor the LLM flagged: ``split, n_classes, n_answers``."""
    rows = published(STUDY)
    rows = rows[rows["source"].str.startswith("seed 004, table 1")]
    return pd.DataFrame(
        {
            "split": rows["split"].tolist(),
            "n_classes": rows["n_classes"].astype(int).tolist(),
            "n_answers": rows["n_answers"].astype(int).tolist(),
        }
    )


@dataclass
class Config(StudyConfig):
    """Parameters of the S5 study: the notebook's ``parameters`` cell (:class:`StudyConfig`)."""

    dataset: str = "s5_accounting_ja"
    judge_models: list[str] = listed(
        ["sim/judge-a", "sim/judge-c", "sim/judge-f", "sim/decomposer"], least=1)
    decomposer_model: str = ""
    splits: list[str] = listed(list(SPLITS), least=1, within=SPLITS)
    temperature: float = 0.0
    trials: int = at_least(1, 1)
    max_items: int = at_least(0, 0)
    pairing: str = "greedy"
    n_boot: int = at_least(1000, 0)


def answer_id(frame: pd.DataFrame) -> pd.Series:
    """The key of one judged answer: ``item_id|answer_model|answer_sample``."""
    sample = frame["answer_sample"] if "answer_sample" in frame.columns else 0
    return (
        frame["item_id"].astype(str)
        + "|"
        + frame["answer_model"].astype(str)
        + "|"
        + pd.Series(sample, index=frame.index).astype(int).astype(str)
    )


def load_answers(
    dataset: str = "s5_accounting_ja", *, max_items: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The answers to judge and the human spans of a data set with span annotations.

    Returns
    -------
    answers : DataFrame
        One row per answer: ``answer_id, item_id, answer_model, answer_sample, lang,
        question, reference, response, human_units`` (the human gist/detail units of the
        reference, a JSON list ``[{"id", "role", "text"}]``).
    spans : DataFrame
        The human spans (``label`` unit / excess / missing) of those answers' items,
        with ``class`` (``<label>_<role>`` for excess/missing) and ``answer_id``.

    Raises
    ------
    ValueError
        The data set has no spans, an item has no unit spans, or an answer model has
        several samples of one item (the spans do not say which sample they annotate).
    """
    data = load_dataset(dataset)
    items, responses, spans = data["items"], data["responses"], data["spans"]
    if spans.empty or responses.empty:
        raise ValueError(f"data set {dataset!r} has no spans or no responses; S5 needs both")
    if max_items:
        keep = set(items["item_id"].head(max_items))
        items = items[items["item_id"].isin(keep)]
        responses = responses[responses["item_id"].isin(keep)]
        spans = spans[spans["item_id"].isin(keep)]
    dup = responses.duplicated(["item_id", "answer_model"])
    if dup.any():
        row = responses[dup].iloc[0]
        raise ValueError(
            f"{dataset}/responses.csv: {row['answer_model']!r} has several samples "
            f"of item {row['item_id']!r}; spans.csv cannot tell them apart"
        )
    units = spans[spans["label"] == "unit"]
    human_units = {
        item: json.dumps(
            [
                {"id": r.unit_id, "role": r.role, "text": r.text}
                for r in group.sort_values("start").itertuples()
            ],
            ensure_ascii=False,
        )
        for item, group in units.groupby("item_id", sort=False)
    }
    lacking = sorted(set(items["item_id"]) - set(human_units))
    if lacking:
        raise ValueError(f"{dataset}/spans.csv: item {lacking[0]!r} has no unit spans")
    answers = responses.merge(
        items[["item_id", "lang", "question", "reference"]], on="item_id"
    )
    answers["human_units"] = answers["item_id"].map(human_units)
    answers.insert(0, "answer_id", answer_id(answers))
    flagged = spans[spans["label"] != "unit"].copy()
    flagged["answer_sample"] = 0
    flagged["answer_id"] = answer_id(flagged)
    flagged["class"] = flagged["label"] + "_" + flagged["role"]
    units = units.assign(answer_id=np.nan, **{"class": units["role"]})
    return answers.reset_index(drop=True), pd.concat([units, flagged], ignore_index=True)


def detect(
    answers: pd.DataFrame,
    *,
    judge_model: str,
    split: str,
    decomposer_model: str = "",
    temperature: float = 0.0,
    trials: int = 1,
    progress: bool = False,
) -> pd.DataFrame:
    """Run the decompose protocol on every answer for one judge and one split condition.

    Returns the ``run_judging`` rows (one per answer, trial and class; ``score`` is the
    seed's per-class metric: flagged units / reference units of that role) with a
    ``split`` column. A failed or unparsed reply is a row with ``parse_ok=False``.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    items = answers.drop(columns=["human_units"])
    if split == "human":
        items = items.assign(units=answers["human_units"])
    spec = JudgeSpec(
        protocol="decompose",
        judge_model=judge_model,
        temperature=temperature,
        trials=trials,
        decomposer_model=decomposer_model or None,
        study=STUDY,
    )
    results = run_judging(items, spec, progress=progress)
    results.insert(0, "split", split)
    return results


def predicted_spans(results: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """The flagged texts of decompose results as spans (``detection_spans``) with keys.

    Adds ``split``, ``class``, ``answer_id`` and ``pred_unit`` (``p1``, ``p2`` … per
    answer, class and run). A text not found verbatim in its source (``found=False``) gets
    offsets from :data:`UNLOCATED_OFFSET` on, so it overlaps nothing and counts as a wrong
    prediction in :func:`match_spans`, never as a silent drop.
    """
    frames = []
    for split, part in results.groupby("split", sort=False):
        spans = detection_spans(part, answers)
        spans.insert(0, "split", split)
        frames.append(spans)
    spans = pd.concat(frames, ignore_index=True) if frames else detection_spans(results, answers)
    if "split" not in spans.columns:
        spans.insert(0, "split", pd.Series(dtype=object))
    spans["class"] = spans["label"] + "_" + spans["role"]
    spans["answer_id"] = answer_id(spans)
    keys = ["split", "judge_model", "temperature", "trial", "answer_id", "class"]
    spans["pred_unit"] = "p" + (spans.groupby(keys, sort=False).cumcount() + 1).astype(str)
    return _place_unlocated(spans)


def _place_unlocated(frame: pd.DataFrame) -> pd.DataFrame:
    lost = ~frame["found"].astype(bool)
    frame = frame.copy()
    if lost.any():
        size = frame.loc[lost, "text"].fillna("").str.len().clip(lower=1)
        start = UNLOCATED_OFFSET + (size.cumsum() - size)
        frame.loc[lost, "start"] = start
        frame.loc[lost, "end"] = start + size
    return frame
