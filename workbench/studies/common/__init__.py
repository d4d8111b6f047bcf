"""Pieces the studies share: answer generation, per-answer judge scores, table writing."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from workbench.config import results_dir
from workbench.judges import JudgeSpec, run_judging
from workbench.llm import CallFailure, Request, complete_many, model_backend
from workbench.prompts import render

#: Columns of :func:`generate_answers`.
ANSWER_COLUMNS = (
    "item_id", "answer_model", "answer_sample", "response", "ok", "error",
    "cache_key", "backend", "cost_usd",
)
#: Columns that identify one judged answer.
ANSWER_KEYS = ["item_id", "answer_model", "answer_sample"]
#: Columns of the long per-answer score frame (one row per answer and scorer: a metric or
#: a judge), as :func:`judge_scores` returns it.
SCORE_COLUMNS = [*ANSWER_KEYS, "metric", "family", "judge_model", "score", "parse_ok", "error",
                 "backend"]


def selected(frame: pd.DataFrame, column: str, ids: Sequence, *, field: str, what: str,
             dataset: str) -> pd.DataFrame:
    """The rows of ``frame`` whose ``column`` is one of ``ids`` (every row when ``ids`` is
    empty); an id that is not there raises ``ValueError`` naming ``Config.<field>``."""
    if not ids:
        return frame
    unknown = sorted(set(ids) - set(frame[column]))
    if unknown:
        raise ValueError(f"Config.{field}: {unknown} are not {what} of data set {dataset!r}")
    return frame[frame[column].isin(ids)].reset_index(drop=True)


def generate_answers(items: pd.DataFrame, answer_models: Sequence[str], *,
                     temperature: float = 1.0, samples: int = 1, template: str = "answer",
                     concurrency: int | None = None, progress: bool = True,
                     budget_usd: float | None = None) -> pd.DataFrame:
    """Ask each answer model each item's question through the cached client.

    One row per (item, model, sample) in :data:`ANSWER_COLUMNS`. A failed call is a
    row with ``ok=False``, ``response`` missing and the error kept — never dropped.
    The question goes into the ``answer`` template's ``<question>`` block in the
    item's language (``lang`` column, default ``en``).
    """
    if items.empty:
        raise ValueError("generate_answers: items is empty")
    for column in ("item_id", "question"):
        if column not in items.columns:
            raise ValueError(f"generate_answers: items has no column {column!r}")
    keys, requests = [], []
    for item in items.itertuples(index=False):
        lang = getattr(item, "lang", "en") or "en"
        messages = render(template, lang=lang, question=item.question)
        for model in answer_models:
            for sample in range(samples):
                keys.append((item.item_id, model, sample))
                requests.append(Request(model=model, messages=messages,
                                        temperature=temperature, sample=sample))
    results = complete_many(requests, concurrency=concurrency, progress=progress,
                            budget_usd=budget_usd)
    rows = []
    for (item_id, model, sample), result in zip(keys, results, strict=True):
        failed = isinstance(result, CallFailure)
        rows.append({
            "item_id": item_id, "answer_model": model, "answer_sample": sample,
            "response": None if failed else result.text,
            "ok": not failed,
            "error": f"{result.error_type}: {result.message}" if failed else None,
            "cache_key": result.key,
            "backend": model_backend(model) if failed else result.backend,
            "cost_usd": 0.0 if failed else result.cost_usd,
        })
    return pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))


def judge_scores(answers: pd.DataFrame, judges: Sequence[tuple[str, JudgeSpec]], *,
                 fields: Sequence[str] = ("question", "reference", "response", "lang"),
                 progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judge every answer with every spec, and one score per answer and spec.

    Parameters
    ----------
    answers : DataFrame
        :data:`ANSWER_KEYS`, ``ok`` and ``fields`` (the item columns the judge sees).
        Answers whose call failed (``ok`` False) are not judged.
    judges : sequence of (label, JudgeSpec)
        The scorers; ``label`` names the scorer in the ``metric`` column (unique).
    fields : sequence of str
        Columns of ``answers`` passed to :func:`workbench.judges.run_judging` besides
        :data:`ANSWER_KEYS`.
    progress : bool
        Progress bars of the LLM calls.

    Returns
    -------
    (judgments, scores)
        ``judgments``: the ``run_judging`` rows of every scorer with a ``metric`` column
        (empty when nothing was judged). ``scores``: the long :data:`SCORE_COLUMNS` frame,
        one row per answer and scorer (``family`` = ``llm``): the mean score over the
        answer's judge rows (trials, samples), ``parse_ok`` when all of them parsed, the
        first error and backend; a failed answer is a row with a NaN score,
        ``parse_ok=False`` and error ``answer call failed`` — never dropped, never 0.
    """
    labels = [label for label, _ in judges]
    if len(set(labels)) != len(labels):
        raise ValueError(f"judge_scores: scorer labels repeat: {labels}")
    ok = answers["ok"].astype(bool)
    items = answers.loc[ok, [*ANSWER_KEYS, *fields]]
    failed = answers.loc[~ok, ANSWER_KEYS]
    frames, rows = [], []
    for label, spec in judges:
        if len(items):
            result = run_judging(items, spec, progress=progress)
            frames.append(result.assign(metric=label))
            per = (result.groupby(ANSWER_KEYS, sort=False)
                   .agg(score=("score", "mean"), parse_ok=("parse_ok", "all"),
                        error=("error", "first"), backend=("backend", "first"))
                   .reset_index())
            rows.append(per.assign(metric=label, family="llm", judge_model=spec.judge_model))
        rows.append(failed.assign(metric=label, family="llm", judge_model=spec.judge_model,
                                  score=math.nan, parse_ok=False, error="answer call failed",
                                  backend=model_backend(spec.judge_model)))
    judgments = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    scores = (pd.concat(rows, ignore_index=True)[SCORE_COLUMNS] if rows
              else pd.DataFrame(columns=SCORE_COLUMNS))
    return judgments, scores


def write_tables(study: str, **frames: pd.DataFrame) -> dict[str, str]:
    """Write each frame as ``<results>/<study>/<name>.csv``; return name → relative path."""
    folder = results_dir(study)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, frame in frames.items():
        path = folder / f"{name}.csv"
        frame.to_csv(path, index=False)
        written[name] = f"{study}/{path.name}"
    return written
