"""Agreement analyses of public releases for study X2 (private): UniEval Topical-Chat
turn-level correlations and PandaLM annotator / judge kappas."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.datasets import pandalm, unieval
from workbench.stats import UNPARSED, cohen_kappa, correlate, fleiss_kappa


def unieval_correlations(path: str, *, n_boot: int = 1000,
                         rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Turn-level correlations of UniEval's predictions with the Topical-Chat human
    scores: one Pearson, Spearman and Kendall per dimension, pooled over all responses."""
    frame = unieval.load_release(path)
    out = correlate(frame, x="predicted", y="human", method="all", split="dimension",
                    level="pooled", n_boot=n_boot, rng=rng)
    return out.assign(backend="unieval_release")


def unieval_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Turn-level correlations as one row per dimension, one column per method, plus
    ``n`` (empty, with those columns, when no release was analysed)."""
    columns = ["pearson", "spearman", "kendall", "n"]
    if frame.empty:
        return pd.DataFrame(columns=["dimension", *columns])
    table = frame.pivot(index="dimension", columns="method", values="estimate")
    table["n"] = frame.groupby("dimension")["n"].max()
    table.columns.name = None
    return table[columns].reset_index()


def pandalm_agreement(path: str, *, n_boot: int = 1000,
                      rng: np.random.Generator | int | None = None) -> dict[str, pd.DataFrame]:
    """Agreement on the PandaLM test set (labels 0 tie, 1, 2).

    Returns ``annotators`` (Fleiss' kappa of the three annotators, items resampled for
    the CI) and ``judges``: per judge file (``judge_model``: the judge the file names),
    Cohen's kappa with the annotators' majority over the items that have one (an
    unparsed judge verdict is its own category, so it counts as a disagreement),
    ``accuracy``, ``n_unparsed`` and ``n_no_majority`` (items whose three annotators all
    differ, left out).
    """
    release = pandalm.load_release(path)
    items = release["items"]
    annotators = ["annotator1", "annotator2", "annotator3"]
    long = items.melt(id_vars="idx", value_vars=annotators, var_name="annotator",
                      value_name="label")
    fleiss = fleiss_kappa(long, item="idx", rater="annotator", label="label", n_boot=n_boot,
                          rng=rng).assign(backend="pandalm_release")
    votes = items[annotators]
    majority = votes.mode(axis=1)
    has_majority = majority.notna().sum(axis=1) == 1  # one most frequent label (2 or 3 votes)
    labels = items.loc[has_majority, ["idx"]].assign(
        majority=majority.loc[has_majority, 0].astype(int).astype(str))
    preds = release["predictions"].assign(verdict=lambda f: [
        UNPARSED if v is None or pd.isna(v) else str(int(v)) for v in f["verdict"]])
    data = preds.merge(labels, on="idx", how="inner")
    kappa = cohen_kappa(data, a="verdict", b="majority", by="judge",
                        categories=["0", "1", "2", UNPARSED])
    summary = data.groupby("judge").agg(
        accuracy=("verdict", lambda v: float((v == data.loc[v.index, "majority"]).mean())),
        n_unparsed=("verdict", lambda v: int((v == UNPARSED).sum())))
    judges = kappa[["judge", "estimate", "ci_low", "ci_high", "n"]].merge(
        summary.reset_index(), on="judge").assign(
        n_no_majority=int((~has_majority).sum()), backend="pandalm_release")
    return {"annotators": fleiss, "judges": judges.rename(columns={"judge": "judge_model"})}
