"""S5 analysis: span matching (seed 004 §7.1), table 1, the per-class metric (§5)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.judges import units_table
from workbench.llm import model_backend
from workbench.stats import span_match
from workbench.studies.s5_gist_detail._data import (
    CLASSES,
    PUBLISHED_LABEL,
    _place_unlocated,
    answer_id,
    published_scores,
)


def _runs(results: pd.DataFrame) -> list[tuple]:
    keys = ["split", "judge_model", "temperature", "trial"]
    return list(results[keys].drop_duplicates().itertuples(index=False, name=None))


def match_spans(
    results: pd.DataFrame, pred: pd.DataFrame, gold: pd.DataFrame, *, pairing: str = "greedy"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 004 §7.1: character-level recall, precision and F per class, per run.

    One :func:`workbench.stats.span_match` per (split, judge, temperature, trial) over the
    answers whose detection parsed; answers whose call failed are left out and counted
    (``n_answers_failed``), not scored as "nothing flagged".

    Returns
    -------
    summary : DataFrame
        ``split, judge_model, temperature, trial`` + the span_match summary columns
        (``class, recall, precision, f1, n_items`` …) + ``n_answers`` (evaluated),
        ``n_answers_failed``, ``n_pred_unlocated``, ``backend``.
    per_answer : DataFrame
        The span_match per-item rows with the run keys (``answer_id`` as the item).
    """
    gold = gold[gold["label"] != "unit"]
    summaries, per_item = [], []
    for split, judge, temp, trial in _runs(results):
        run = results[
            (results["split"] == split)
            & (results["judge_model"] == judge)
            & (results["temperature"] == temp)
            & (results["trial"] == trial)
        ]
        ok = run.groupby(answer_id(run), sort=False)["parse_ok"].all()
        evaluated = list(ok.index[ok.to_numpy()])
        mine = pred[
            (pred["split"] == split)
            & (pred["judge_model"] == judge)
            & (pred["temperature"] == temp)
            & (pred["trial"] == trial)
            & pred["answer_id"].isin(evaluated)
        ]
        res = span_match(
            mine.rename(columns={"pred_unit": "span_unit"}),
            gold[gold["answer_id"].isin(evaluated)].rename(columns={"unit_id": "span_unit"}),
            classes=CLASSES,
            items=evaluated,
            item="answer_id",
            unit="span_unit",
            pairing=pairing,
        )
        keys = {"split": split, "judge_model": judge, "temperature": temp, "trial": trial}
        lost = mine.groupby("class")["found"].apply(lambda f: int((~f.astype(bool)).sum()))
        summary = res.summary.assign(
            **keys,
            n_answers=len(evaluated),
            n_answers_failed=int((~ok).sum()),
            n_pred_unlocated=res.summary["class"].map(lost).fillna(0).astype(int),
            backend=model_backend(judge),
        )
        summaries.append(summary)
        per_item.append(res.items.assign(**keys))
    order = ["split", "judge_model", "temperature", "trial"]
    summary = pd.concat(summaries, ignore_index=True)
    summary = summary[order + [c for c in summary.columns if c not in order]]
    items = pd.concat(per_item, ignore_index=True)
    return summary, items[order + [c for c in items.columns if c not in order]]


def unit_match(
    results: pd.DataFrame, answers: pd.DataFrame, gold: pd.DataFrame, *, pairing: str = "greedy"
) -> pd.DataFrame:
    """How well the model's own gist/detail split matches the human one (seed 004 fig. 2).

    For each ``llm``-split run, the units of the reference (``units_table``) are matched
    with the human units by :func:`workbench.stats.span_match` with classes ``gist`` and
    ``detail`` over the items. A unit not copied verbatim overlaps nothing (a wrong unit).

    Returns
    -------
    DataFrame
        ``judge_model, temperature, trial, class, recall, precision, f1, n_items,
        n_gold_units, n_pred_units, n_pairs, n_pred_unlocated, backend``; empty when no
        ``llm`` split was run.
    """
    columns = [
        "judge_model",
        "temperature",
        "trial",
        "class",
        "recall",
        "precision",
        "f1",
        "n_items",
        "n_gold_units",
        "n_pred_units",
        "n_pairs",
        "n_pred_unlocated",
        "backend",
    ]
    own = results[results["split"] == "llm"]
    if own.empty:
        return pd.DataFrame(columns=columns)
    refs = answers.drop_duplicates("item_id")[["item_id", "reference"]]
    units = units_table(own, refs)
    human = gold[gold["label"] == "unit"].rename(columns={"unit_id": "span_unit"})
    items = list(refs["item_id"])
    rows = []
    for (judge, temp, trial), part in units.groupby(
        ["judge_model", "temperature", "trial"], sort=False
    ):
        part = _place_unlocated(part.assign(**{"class": part["role"]}))
        res = span_match(
            part.rename(columns={"unit_id": "span_unit"}),
            human,
            classes=["gist", "detail"],
            items=items,
            unit="span_unit",
            pairing=pairing,
        )
        lost = part.groupby("class")["found"].apply(lambda f: int((~f.astype(bool)).sum()))
        rows.append(
            res.summary.assign(
                judge_model=judge,
                temperature=temp,
                trial=trial,
                backend=model_backend(judge),
                n_pred_unlocated=res.summary["class"].map(lost).fillna(0).astype(int),
            )
        )
    if not rows:
        return pd.DataFrame(columns=columns)
    return pd.concat(rows, ignore_index=True)[columns]


def neither_table(per_answer: pd.DataFrame) -> pd.DataFrame:
    """Seed 004 table 1: answers by the number of classes (0–4) that neither side flags.

    Returns one row per (split, judge, temperature, trial, n_classes) with ``n_answers``
    (all five counts present, zeros included).
    """
    keys = ["split", "judge_model", "temperature", "trial"]
    empty = (per_answer["n_gold_units"] == 0) & (per_answer["n_pred_units"] == 0)
    counts = (
        per_answer.assign(_empty=empty)
        .groupby(keys + ["answer_id"], sort=False)["_empty"]
        .sum()
        .rename("n_classes")
        .reset_index()
    )
    table = (
        counts.groupby(keys + ["n_classes"], sort=False)
        .size()
        .rename("n_answers")
        .unstack("n_classes")
        .reindex(columns=range(len(CLASSES) + 1))
        .fillna(0)
        .astype(int)
        .stack()
        .rename("n_answers")
        .reset_index()
    )
    table["backend"] = table["judge_model"].map(model_backend)
    return table


def class_rates(results: pd.DataFrame, gold: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Seed 004 §5: flagged units of a class / the reference's units of that role.

    Per answer, the human annotation's rate (human units as the denominator) and each
    run's rate (the ``score`` of the decompose rows: its own units in the ``llm`` split);
    then the mean per answer model. Closer to 0 is a better answer.

    Returns
    -------
    DataFrame
        ``annotator`` (``human`` or the judge model), ``split`` (``human`` for the human
        annotation), ``answer_model``, ``class``, ``rate`` (mean over answers),
        ``n_answers`` (answers with a defined rate), ``n_failed`` (unparsed rows),
        ``backend`` (``human`` for the annotation).
    """
    units = gold[gold["label"] == "unit"]
    n_units = units.groupby(["item_id", "role"]).size()
    flagged = gold[gold["label"] != "unit"]
    count = flagged.groupby(["answer_id", "class"])["unit_id"].nunique()
    rows = []
    for rec in answers.itertuples(index=False):
        for cls in CLASSES:
            role = cls.split("_", 1)[1]
            denom = n_units.get((rec.item_id, role), 0)
            rate = count.get((rec.answer_id, cls), 0) / denom if denom else np.nan
            rows.append(
                {
                    "annotator": "human",
                    "split": "human",
                    "answer_model": rec.answer_model,
                    "class": cls,
                    "rate": rate,
                    "parse_ok": True,
                }
            )
    human = pd.DataFrame(rows)
    judged = results.rename(columns={"dimension": "class", "score": "rate"}).assign(
        annotator=results["judge_model"]
    )
    cols = ["annotator", "split", "answer_model", "class", "rate", "parse_ok"]
    both = pd.concat([human[cols], judged[cols]], ignore_index=True)
    both["failed"] = ~both["parse_ok"].astype(bool)
    out = (
        both.groupby(["annotator", "split", "answer_model", "class"], sort=False)
        .agg(rate=("rate", "mean"), n_answers=("rate", "count"), n_failed=("failed", "sum"))
        .reset_index()
    )
    out["backend"] = out["annotator"].map(lambda s: "human" if s == "human" else model_backend(s))
    return out


def f1_intervals(
    per_answer: pd.DataFrame, *, n_boot: int, rng: np.random.Generator, ci_level: float = 0.95
) -> pd.DataFrame:
    """Percentile-bootstrap CIs of the macro F of each run and class (seed 004 §7.1).

    Answers are resampled with replacement, jointly for every run (one draw serves all
    judges and splits, so their intervals are comparable); each replicate recomputes the
    macro recall and precision over the answers where they are defined, and F from them,
    as :func:`workbench.stats.span_match` does. Vectorised: a replicate is a vector of
    draw counts per answer, and a macro average is a count-weighted mean. The draws are
    those of :func:`workbench.stats.bootstrap_ci` (``by="answer_id"``) with the same
    generator, so both give the same interval (checked in the tests).

    Returns
    -------
    DataFrame
        ``split, judge_model, temperature, trial, class, f1_ci_low, f1_ci_high, n_boot,
        n_boot_failed`` (replicates where F was undefined, left out).

    References
    ----------
    Efron, B., & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 13
    (percentile intervals). Chapman & Hall/CRC.
    """
    keys = ["split", "judge_model", "temperature", "trial", "class"]
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    ids = pd.unique(per_answer["answer_id"])
    wide = per_answer.set_index(["answer_id", *keys])[["recall", "precision"]].unstack(keys)
    wide = wide.reindex(ids)
    groups = wide["recall"].columns
    n = len(ids)
    draws = np.stack([rng.integers(0, n, size=n) for _ in range(n_boot)])
    counts = np.stack([np.bincount(row, minlength=n) for row in draws]).astype(float)

    def macro(values: pd.DataFrame) -> np.ndarray:
        v = values[groups].to_numpy(dtype=float)
        defined = np.isfinite(v)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (counts @ np.where(defined, v, 0.0)) / (counts @ defined)

    r, p = macro(wide["recall"]), macro(wide["precision"])
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(p + r > 0, 2 * p * r / (p + r), np.where((p == 0) & (r == 0), 0.0, np.nan))
    alpha = 1 - ci_level
    rows = []
    for j, group in enumerate(groups):
        reps = f[:, j][np.isfinite(f[:, j])]
        low, high = np.quantile(reps, [alpha / 2, 1 - alpha / 2]) if reps.size else (np.nan, np.nan)
        rows.append(
            {
                **dict(zip(keys, group, strict=True)),
                "f1_ci_low": float(low),
                "f1_ci_high": float(high),
                "n_boot": n_boot,
                "n_boot_failed": int(n_boot - reps.size),
            }
        )
    return pd.DataFrame(rows, columns=[*keys, "f1_ci_low", "f1_ci_high", "n_boot", "n_boot_failed"])


def compare_published(summary: pd.DataFrame) -> pd.DataFrame:
    """This run's recall, precision and F (mean over trials) beside seed 004 table 2.

    Rows ``annotator`` = each judge model (``backend`` sim or its provider) and
    :data:`PUBLISHED_LABEL` (``backend = "published"``, GPT in the seed).
    """
    mine = (
        summary.groupby(["split", "judge_model", "class"], sort=False)[
            ["recall", "precision", "f1"]
        ]
        .mean()
        .reset_index()
        .rename(columns={"judge_model": "annotator"})
    )
    mine["backend"] = mine["annotator"].map(model_backend)
    published = published_scores().assign(annotator=PUBLISHED_LABEL, backend="published")
    out = pd.concat([published, mine], ignore_index=True)
    return out[["split", "class", "annotator", "recall", "precision", "f1", "backend"]]


def call_summary(results: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """Per split and judge: answers judged, rows whose call or parse failed, cost, and
    flagged texts that could not be located verbatim."""
    keys = ["split", "judge_model"]
    answers = (
        results.groupby(keys, sort=False)
        .apply(
            lambda g: answer_id(g).nunique() * g["trial"].nunique() * g["temperature"].nunique(),
            include_groups=False,
        )
        .rename("n_runs")
    )
    failed = (
        results.assign(_f=~results["parse_ok"].astype(bool))
        .groupby(
            keys + ["item_id", "answer_model", "answer_sample", "temperature", "trial"], sort=False
        )["_f"]
        .any()
        .groupby(keys, sort=False)
        .sum()
        .rename("n_runs_failed")
    )
    cost = results.groupby(keys, sort=False)[["cost_usd", "prep_cost_usd"]].sum().sum(axis=1)
    flagged = spans.groupby(keys, sort=False).size().rename("n_flagged")
    lost = spans.assign(_l=~spans["found"].astype(bool)).groupby(keys, sort=False)["_l"].sum()
    out = pd.concat(
        [answers, failed, flagged, lost.rename("n_flagged_unlocated"), cost.rename("cost_usd")],
        axis=1,
    ).reset_index()
    out[["n_flagged", "n_flagged_unlocated"]] = (
        out[["n_flagged", "n_flagged_unlocated"]].fillna(0).astype(int)
    )
    out["backend"] = out["judge_model"].map(model_backend)
    return out
