"""Live standing of a labelling study: agreement between people, and the judge beside them.

The same functions the studies use: :func:`workbench.stats.krippendorff_alpha`,
:func:`workbench.stats.fleiss_kappa`, :func:`workbench.stats.cohen_kappa` and
:func:`workbench.qualify.leave_one_out_agreement` (the judge's agreement beside the human
ceiling, leave one rater out). Recomputed from the store whenever labels arrive.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from workbench.labels._rules import when
from workbench.labels.store import current
from workbench.qualify import alt_test, leave_one_out_agreement
from workbench.stats import cohen_kappa, fleiss_kappa, krippendorff_alpha

__all__ = ["standing"]


def standing(labels: pd.DataFrame, *, judge: pd.Series | None = None, kind: str = "score",
             n_boot: int = 200, epsilon: float = 0.2, fdr: float = 0.05, min_items: int = 30,
             rng: np.random.Generator | int | None = None) -> dict[str, pd.DataFrame]:
    """Agreement tables from the labels in force (corrections applied).

    Parameters
    ----------
    labels : DataFrame
        :meth:`workbench.labels.LabelStore.labels` (or the same columns).
    judge : Series, optional
        The judge's value per ``item_id`` (its score, or its preference for A).
    kind : str
        ``score`` (Krippendorff's alpha at the interval level, Cohen's kappa with
        quadratic weights) or ``pairwise`` (nominal alpha, unweighted kappa).

    Returns
    -------
    dict of DataFrame
        ``reliability``: Krippendorff's alpha (bootstrap CI) and Fleiss' kappa over the
        items with the most common number of labels; ``pairs``: Cohen's kappa of every
        two annotators on the items both labelled (with CI); ``ceiling``: the judge and
        each annotator against the mean of the others, beside the human ceiling
        (Pearson r, on items with every annotator's label; empty with fewer than three
        annotators or no such items); ``alt_test``: the alternative annotator test
        (Calderon et al. 2025, :func:`workbench.qualify.alt_test`, allowance ``epsilon``,
        Benjamini-Yekutieli level ``fdr``) per annotator with ``omega`` and ``passed`` on
        every row, for scores by ``neg_rmse`` after standardising each annotator and the
        judge (as study X3 does), for pairs by ``accuracy``; empty without a judge or with
        fewer than ``min_items`` items labelled by two or more annotators.
    """
    part = current(labels[labels["kind"] == kind])
    # the newest label of each annotator and item, by time (not by the text of given_at,
    # whose UTC offsets may differ)
    part = part.sort_values("given_at", key=lambda col: col.map(when), kind="stable")
    part = part.drop_duplicates(["item_id", "annotator"], keep="last")
    level = "interval" if kind == "score" else "nominal"
    out = {"reliability": pd.DataFrame(), "pairs": pd.DataFrame(), "ceiling": pd.DataFrame(),
           "alt_test": pd.DataFrame()}
    if part["item_id"].duplicated().any():
        rel = [krippendorff_alpha(part, item="item_id", rater="annotator", value="value",
                                  level=level, n_boot=n_boot, rng=rng)]
        counts = part.groupby("item_id").size()
        common = counts[counts == counts[counts >= 2].mode().iloc[0]].index
        if len(common) >= 2:
            rel.append(fleiss_kappa(part[part["item_id"].isin(common)], item="item_id",
                                    rater="annotator", label="value", n_boot=n_boot, rng=rng))
        out["reliability"] = pd.concat(rel, ignore_index=True)
    wide = part.pivot(index="item_id", columns="annotator", values="value")
    rows = []
    for a, b in combinations(wide.columns, 2):
        both = wide[[a, b]].dropna()
        if len(both) >= 2 and both[a].nunique() > 1 and both[b].nunique() > 1:
            k = cohen_kappa(both.rename(columns={a: "a", b: "b"}), a="a", b="b",
                            weights="quadratic" if kind == "score" else None)
            rows.append(k.assign(annotator_a=a, annotator_b=b))
    out["pairs"] = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    full = wide.dropna()
    if wide.shape[1] >= 3 and len(full) >= 3:
        judges = None if judge is None else pd.DataFrame({"judge": judge.reindex(full.index)})
        out["ceiling"] = leave_one_out_agreement(full, judges, measure="pearson",
                                                 n_boot=n_boot, rng=rng)
    shared = wide[wide.notna().sum(axis=1) >= 2]
    if judge is not None and len(shared) >= min_items:
        verdicts = judge.reindex(shared.index)
        if kind == "score":
            shared = (shared - shared.mean()) / shared.std(ddof=0).replace(0, 1)
            verdicts = (verdicts - verdicts.mean()) / (verdicts.std(ddof=0) or 1)
        table, summary = alt_test(shared, verdicts.to_numpy(dtype=float), epsilon=epsilon,
                                  alpha=fdr, metric="neg_rmse" if kind == "score" else "accuracy",
                                  min_items=min_items)
        out["alt_test"] = table.assign(omega=summary["omega"], passed=summary["passed"])
    return out
