"""The pairwise measures of a judge table: the leaderboard and Bradley-Terry.

References
----------
Zeng, Z. et al. (2024). Evaluating large language models at evaluating instruction
following. *ICLR* (accuracy in both orders, positional agreement).
Li, J. et al. (2024). Generative judge for evaluating alignment (Auto-J). *ICLR*
(agreement counted only when both orders are right; consistency).
Bradley, R. A. & Terry, M. E. (1952). Rank analysis of incomplete block designs: I. The
method of paired comparisons. *Biometrika*, 39(3/4), 324-345.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from workbench.qualify._bradley_terry import bradley_terry
from workbench.qualify._tables import _judges, _validated, human_reference
from workbench.stats import kappa_from_labels, position_consistency
from workbench.stats._columns import tidy

__all__ = ["pairwise_bradley_terry", "pairwise_leaderboard", "pairwise_position"]


def pairwise_leaderboard(table: pd.DataFrame, *, by: str | Sequence[str] | None = None,
                         judge: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Accuracy in each order, in both orders, consistency and kappa, per judge and group,
    with an overall row per judge.

    Parameters
    ----------
    table : DataFrame
        A pairwise table (:func:`workbench.datasets.load_pairwise`).
    by : str or list of str, optional
        Groups (e.g. ``"group"``); each judge gets one row per group and one with the
        group ``"all"`` (pooled over items, not a mean of groups).
    judge : str or list, optional
        The judges to report (default: all).

    Returns
    -------
    DataFrame
        ``judge``, the ``by`` columns, then :func:`workbench.stats.position_consistency`'s
        columns: ``n`` (labelled items with both orders), ``n_incomplete``,
        ``n_unparsed``, ``n_missing`` (items without a human label, left out),
        ``accuracy_order0``, ``accuracy_order1``, ``accuracy``, ``accuracy_both``
        (correct in both orders, the headline of pairwise leaderboards),
        ``agreement`` (consistency: the two verdicts equal), ``kappa_order0``,
        ``kappa_order1``. With one order only, the order-1 and two-order columns are NaN
        (and a warning says so).

    Examples
    --------
    >>> t = pd.DataFrame({"item_id": [1, 1, 2, 2], "order": [0, 1, 0, 1], "judge": "j",
    ...                   "verdict": ["A", "A", "A", "B"], "label": ["A", "A", "B", "B"],
    ...                   "group": ["x", "x", "y", "y"]})
    >>> from workbench.datasets import validate_pairwise
    >>> board = pairwise_leaderboard(validate_pairwise(t, second_order="original"), by="group")
    >>> board[["group", "accuracy_order0", "accuracy_both", "agreement"]]
      group  accuracy_order0  accuracy_both  agreement
    0     x              1.0            1.0        1.0
    1     y              0.0            0.0        0.0
    2   all              0.5            0.5        0.5
    """
    table, kind = _validated(table)
    if kind != "pairwise":
        raise ValueError("pairwise_leaderboard needs a pairwise table (verdicts), not scores")
    by_cols = [by] if isinstance(by, str) else list(by or [])
    missing = [c for c in by_cols if c not in table]
    if missing:
        raise ValueError(f"by: no column {missing} in the table")
    ref = human_reference(table)[["item_id", "human"]]
    frames = []
    for name in _judges(table, judge):
        rows = table[table["judge"] == name].merge(ref, on="item_id", how="left")
        unlabeled = rows.loc[rows["human"].isna(), "item_id"]
        n_missing = unlabeled.nunique()
        rows = rows[rows["human"].notna()]
        if rows.empty:
            raise ValueError(f"judge {name!r}: no item with a human label")
        if rows["order"].nunique() == 2:
            out = position_consistency(rows, item="item_id", order="order", verdict="verdict",
                                       label="human", by=by_cols or None, orders=(0, 1),
                                       overall=bool(by_cols))
        else:
            warnings.warn(f"judge {name!r}: one presentation order only; accuracy in the other "
                          "order, in both orders and consistency cannot be measured (NaN)",
                          stacklevel=2)
            out = _one_order(rows, by_cols)
        frames.append(out.assign(judge=name, n_missing=n_missing))
    return tidy(pd.concat(frames, ignore_index=True), keys=["judge", *by_cols])


def _one_order(rows: pd.DataFrame, by_cols: list[str]) -> pd.DataFrame:
    parts = [(dict(zip(by_cols, k if isinstance(k, tuple) else (k,), strict=True)), g)
             for k, g in rows.groupby(by_cols, sort=False)] if by_cols else []
    parts.append(({c: "all" for c in by_cols}, rows))
    out = []
    for key, g in parts:
        v = g["verdict"].astype(object).where(g["verdict"].notna(), "<unparsed>").tolist()
        gold = g["human"].tolist()
        out.append({**key, "n": len(g), "n_incomplete": len(g), "n_unparsed":
                    int(g["verdict"].isna().sum()),
                    "accuracy_order0": float(np.mean([x == y for x, y in zip(v, gold,
                                                                             strict=True)])),
                    "accuracy_order1": np.nan, "accuracy": np.nan, "accuracy_both": np.nan,
                    "agreement": np.nan, "kappa_order1": np.nan,
                    "kappa_order0": kappa_from_labels(v, gold)["estimate"]})
    return pd.DataFrame(out)


def pairwise_bradley_terry(table: pd.DataFrame, *, judge: str | None = None,
                           covariates: Sequence[str] = ("length", "self"),
                           reference: str | None = None, ci_level: float = 0.95
                           ) -> pd.DataFrame:
    """Bradley-Terry strengths of the systems with position, length and self-preference
    terms, from the verdicts of one judge (:func:`bradley_terry`; pairs clustered).

    The table needs ``system_a`` and ``system_b``. Each verdict becomes one comparison
    of the system shown first against the one shown second (ties and unparsed verdicts
    left out). ``"length"`` (when ``length_a`` / ``length_b`` are given): the first
    minus the second response's length, in hundreds; ``"self"``: +1 when the judge's
    name equals the first system's, -1 the second's (left out when it never does).

    Returns
    -------
    DataFrame
        :func:`bradley_terry`'s rows (``term``, ``a``, ``estimate`` ...) with ``judge``.
    """
    table, kind = _validated(table)
    if kind != "pairwise":
        raise ValueError("pairwise_bradley_terry needs a pairwise table")
    if not {"system_a", "system_b"} <= set(table.columns):
        raise ValueError("Bradley-Terry needs the systems: map system_a and system_b")
    names = _judges(table, judge)
    if len(names) > 1:
        raise ValueError(f"give judge= (one of {names}): strengths are fitted per judge")
    rows = table[table["judge"] == names[0]]
    swapped = rows["order"] == 1
    shown_first = np.where(swapped, "B", "A")
    d = pd.DataFrame({
        "first": np.where(swapped, rows["system_b"], rows["system_a"]),
        "second": np.where(swapped, rows["system_a"], rows["system_b"]),
        "first_wins": [np.nan if v not in ("A", "B") else float(v == s)
                       for v, s in zip(rows["verdict"], shown_first, strict=True)],
        "item_id": rows["item_id"].to_numpy()})
    if d[["first", "second"]].stack().nunique() < 2:
        raise ValueError("Bradley-Terry needs at least two systems")
    used = []
    if "length" in covariates and {"length_a", "length_b"} <= set(rows.columns):
        la, lb = rows["length_a"].to_numpy(float), rows["length_b"].to_numpy(float)
        d["length"] = np.where(swapped, lb - la, la - lb) / 100
        used.append("length")
    if "self" in covariates:
        own = (d["first"] == names[0]).astype(float) - (d["second"] == names[0]).astype(float)
        if own.abs().sum() > 0:
            d["self"] = own.to_numpy()
            used.append("self")
    out = bradley_terry(d, covariates=used, reference=reference, groups=["item_id"],
                        ci_level=ci_level)
    return out.assign(judge=names[0])


def pairwise_position(table: pd.DataFrame, *, judge: str | Sequence[str] | None = None,
                      ci_level: float = 0.95) -> pd.DataFrame:
    """How much the order of presentation moves each judge: the flip rate and the
    first-position preference, with intervals.

    ``flip_rate``: among items with a parsed verdict in both orders, the share whose two
    verdicts (in order 0's numbering) differ; Wilson interval (Wilson 1927; items are
    independent). ``first_position``: among the decisive (A/B) verdicts of those items,
    the share that picks the response shown first (0.5: no preference); an item's two
    verdicts are not independent, so its Wilson interval takes half the verdicts as the
    sample size (two per item: a design effect of at most 2, Kish 1965), conservative.

    Returns
    -------
    DataFrame
        One row per judge and measure: ``judge``, ``measure`` (``flip_rate`` |
        ``first_position``), ``estimate``, ``ci_low``, ``ci_high``, ``ci_level``,
        ``ci_method``, ``n`` (items; first position: decisive verdicts), ``n_items``.

    Raises
    ------
    ValueError
        When the table holds one presentation order only.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. *JASA* 22(158), 209-212. Kish, L. (1965). *Survey Sampling*. Wiley
    (the design effect of clustered samples).
    """
    from statsmodels.stats.proportion import proportion_confint

    table, kind = _validated(table)
    if kind != "pairwise":
        raise ValueError("position needs a pairwise table (verdicts)")
    if table["order"].nunique() < 2:
        raise ValueError("position bias needs both presentation orders (order 0 and 1)")
    rows = []
    for name in _judges(table, judge):
        wide = table[table["judge"] == name].pivot_table(
            index="item_id", columns="order", values="verdict", aggfunc="first")
        both = wide.reindex(columns=[0, 1]).dropna()
        n = len(both)
        if n == 0:
            raise ValueError(f"judge {name!r}: no item with a parsed verdict in both orders")
        flips = int((both[0] != both[1]).sum())
        low, high = proportion_confint(flips, n, alpha=1 - ci_level, method="wilson")
        rows.append({"judge": name, "measure": "flip_rate", "estimate": flips / n,
                     "ci_low": low, "ci_high": high, "ci_method": "wilson", "n": n})
        first = int((both[0] == "A").sum() + (both[1] == "B").sum())
        decisive = int(both[0].isin(["A", "B"]).sum() + both[1].isin(["A", "B"]).sum())
        est = low = high = np.nan
        if decisive:
            # two verdicts per item: a design effect of at most 2 (Kish 1965), so the
            # Wilson interval on half the verdicts is conservative, and never of zero width
            est = first / decisive
            low, high = proportion_confint(est * decisive / 2, decisive / 2,
                                           alpha=1 - ci_level, method="wilson")
        rows.append({"judge": name, "measure": "first_position", "estimate": est,
                     "ci_low": low, "ci_high": high,
                     "ci_method": "wilson, effective n = verdicts / 2", "n": decisive})
    out = pd.DataFrame(rows)
    out["ci_level"] = ci_level
    out["n_items"] = out.groupby("judge")["n"].transform("first")
    return out
