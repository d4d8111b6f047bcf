"""S5 views: frames shaped for the notebook's figures, and the headline numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.llm import model_backend
from workbench.studies.common.parsing import headline_parse
from workbench.studies.s5_gist_detail._data import (
    CLASSES,
    PUBLISHED_LABEL,
    SPLITS,
    published_neither,
    published_scores,
)


def f1_view(match: pd.DataFrame) -> pd.DataFrame:
    """F per class beside the published F, one row per (split, class, source), for the
    figure: ``row`` (``"<class> · <split> split"``), ``source``, ``f1``, ``f1_ci_low``,
    ``f1_ci_high`` (NaN for the published values, which have no interval), ``backend``.
    Trials are averaged (their CI bounds too)."""
    cols = ["f1", "f1_ci_low", "f1_ci_high"]
    have = [c for c in cols if c in match.columns]
    mine = (
        match.groupby(["split", "class", "judge_model"], sort=False)[have]
        .mean()
        .reset_index()
        .rename(columns={"judge_model": "source"})
    )
    mine["backend"] = mine["source"].map(model_backend)
    published = published_scores()[["split", "class", "f1"]].assign(
        source=PUBLISHED_LABEL, backend="published"
    )
    published = published[published["split"].isin(mine["split"])]
    out = pd.concat([mine, published], ignore_index=True).reindex(
        columns=["split", "class", "source", *cols, "backend"]
    )
    out["row"] = out["class"] + " · " + out["split"] + " split"
    order = {(sp, c): k for k, (sp, c) in enumerate((sp, c) for sp in SPLITS for c in CLASSES)}
    out["_o"] = [order[(sp, c)] for sp, c in zip(out["split"], out["class"], strict=True)]
    return out.sort_values("_o", kind="stable").drop(columns="_o").reset_index(drop=True)


def neither_view(neither: pd.DataFrame) -> pd.DataFrame:
    """Table 1 of the seed beside this run: ``source`` (``"<judge> · <split> split"`` or
    the published label), ``n_classes`` (0–4), ``n_answers`` (trials averaged), ``backend``."""
    mine = neither.groupby(["split", "judge_model", "n_classes"], sort=False)["n_answers"].mean()
    mine = mine.reset_index()
    mine["source"] = mine["judge_model"] + " · " + mine["split"] + " split"
    mine["backend"] = mine["judge_model"].map(model_backend)
    table1 = published_neither()
    published = table1.assign(
        source=PUBLISHED_LABEL + " · " + table1["split"] + " split", backend="published"
    )
    published = published[published["split"].isin(mine["split"])]
    cols = ["source", "n_classes", "n_answers", "backend"]
    return pd.concat([mine[cols], published[cols]], ignore_index=True)


def rates_view(rates: pd.DataFrame) -> pd.DataFrame:
    """The seed's per-class metric for the heat map: ``source`` (``human annotation`` or
    ``"<judge> · <split> split"``), ``column`` (``"<answer_model>: <class>"``), ``rate``,
    ``backend``."""
    out = rates.copy()
    out["source"] = np.where(
        out["annotator"] == "human",
        "human annotation",
        out["annotator"] + " · " + out["split"] + " split",
    )
    out["column"] = out["answer_model"] + ": " + out["class"]
    return out[["source", "column", "rate", "backend"]]


def headline(results: dict[str, pd.DataFrame]) -> dict:
    """The numbers the notebook records (:func:`_headline`), with the share of judge rows
    parsed, their counts and the structured-reply form each judge used."""
    return {**_headline(results), **headline_parse(results, names=["judgments"])}


def _headline(results: dict[str, pd.DataFrame]) -> dict:
    """The numbers the notebook records: F per split, judge and class (trial mean), the
    published F, unit-split F, the per-class metric per annotator and answer model, the
    table-1 counts, and the counts of answers, failed runs and unlocated spans."""
    match, calls = results["match"], results["calls"]
    f1 = match.groupby(["split", "judge_model", "class"], sort=False)["f1"].mean()
    rates = results["class_rates"].assign(
        key=lambda d: np.where(
            d["annotator"] == "human", "human", d["annotator"] + " · " + d["split"]
        )
    )
    neither = results["neither"].groupby(["split", "judge_model", "n_classes"])["n_answers"].mean()
    return {
        "f1": {
            sp: {j: f1[sp][j].to_dict() for j in f1[sp].index.get_level_values(0).unique()}
            for sp in f1.index.get_level_values(0).unique()
        },
        "published_f1": {
            sp: g.set_index("class")["f1"].to_dict()
            for sp, g in published_scores().groupby("split")
        },
        "unit_f1": {
            j: g.set_index("class")["f1"].to_dict()
            for j, g in results["unit_match"].groupby("judge_model", sort=False)
        },
        "rates": {
            k: {
                m: g2.set_index("class")["rate"].to_dict()
                for m, g2 in g.groupby("answer_model", sort=False)
            }
            for k, g in rates.groupby("key", sort=False)
        },
        "neither": {
            sp: {
                j: [float(v) for v in neither[sp][j].to_numpy()]
                for j in neither[sp].index.get_level_values(0).unique()
            }
            for sp in neither.index.get_level_values(0).unique()
        },
        "n_answers": int(
            results["judgments"][["item_id", "answer_model", "answer_sample"]]
            .drop_duplicates()
            .shape[0]
        ),
        "n_runs": int(calls["n_runs"].sum()),
        "n_runs_failed": int(calls["n_runs_failed"].sum()),
        "n_flagged_unlocated": int(calls["n_flagged_unlocated"].sum()),
        "backend": sorted(set(calls["backend"])),
    }
