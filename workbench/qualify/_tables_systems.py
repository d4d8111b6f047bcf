"""System-level answers from pairwise verdicts: head-to-head points per system pair, and
whether a judge ranks the systems, and names the winner, as people do.

Each verdict gives the system that wrote response A 1 point (B: the other system; a tie
0.5 each); a judge's points on an item are the mean over its verdicts in both orders,
people's come from the item's human reference (label, or the annotators' majority). A
system's win rate is the mean of its points over its items. The judge's win rates are
compared with people's by Kendall's tau-b (:func:`scipy.stats.kendalltau`) with the
permutation p-value over the systems' orderings
(:func:`~workbench.qualify._system_level.system_p_value`, exact up to 8 systems) and a
percentile bootstrap over items (Efron & Tibshirani 1993): it says how much the
*items* move the answer for *these* systems, not how it would generalise to others.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from workbench.qualify._system_level import system_p_value
from workbench.qualify._tables import _judges, _validated, human_reference

__all__ = ["pairwise_systems"]

_POINTS = {"A": 1.0, "B": 0.0, "tie": 0.5}


def _points(table: pd.DataFrame, judge: str) -> pd.Series:
    rows = table[(table["judge"] == judge) & table["verdict"].notna()]
    return rows.assign(p=rows["verdict"].map(_POINTS)).groupby("item_id")["p"].mean()


def _win_rates(points: pd.Series, items: pd.DataFrame) -> pd.Series:
    joined = items.join(points.rename("p"), how="inner")
    long = pd.concat([pd.DataFrame({"system": joined["system_a"], "p": joined["p"]}),
                      pd.DataFrame({"system": joined["system_b"], "p": 1 - joined["p"]})])
    return long.groupby("system")["p"].mean()


def _rates(counts: np.ndarray, points: pd.Series, items: pd.DataFrame, systems: list
           ) -> np.ndarray:
    """Win rates per resample (rows of ``counts``: how often each item is drawn)."""
    a = (items["system_a"].to_numpy()[:, None] == np.array(systems)[None, :]).astype(float)
    b = (items["system_b"].to_numpy()[:, None] == np.array(systems)[None, :]).astype(float)
    p = points.to_numpy(float)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts @ (a * p + b * (1 - p))) / (counts @ (a + b))


def _head_to_head(points: pd.Series, items: pd.DataFrame, who: str) -> pd.DataFrame:
    joined = items.join(points.rename("p"), how="inner")
    a, b = joined["system_a"], joined["system_b"]
    first = np.where(a <= b, a, b)
    share = np.where(a <= b, joined["p"], 1 - joined["p"])
    d = pd.DataFrame({"system_x": first, "system_y": np.where(a <= b, b, a), "points_x": share})
    out = d.groupby(["system_x", "system_y"], sort=True).agg(
        points_x=("points_x", "mean"), n_items=("points_x", "size")).reset_index()
    return out.assign(rater=who)[["rater", "system_x", "system_y", "points_x", "n_items"]]


def pairwise_systems(table: pd.DataFrame, *, judge: str | Sequence[str] | None = None,
                     n_boot: int = 1000, ci_level: float = 0.95,
                     rng: np.random.Generator | int | None = 0) -> dict[str, pd.DataFrame]:
    """Head-to-head points and the system ranking of each judge against people's.

    Returns
    -------
    dict
        ``head_to_head``: ``rater`` (``people`` or a judge), ``system_x``, ``system_y``,
        ``points_x`` (x's share of the points), ``n_items``. ``ranking``: per judge,
        ``n_systems``, ``tau`` (Kendall tau-b of the win rates), ``p_value``,
        ``test``, ``ci_low``, ``ci_high`` (bootstrap over items), ``judge_winner``,
        ``people_winner``, ``same_winner``, ``same_winner_share`` (in the resamples),
        ``n_items``.

    Raises
    ------
    ValueError
        Without ``system_a``/``system_b``, or with fewer than 3 systems.
    """
    table, kind = _validated(table)
    if kind != "pairwise" or not {"system_a", "system_b"} <= set(table.columns):
        raise ValueError("system-level answers need a pairwise table with system_a and "
                         "system_b (map them)")
    items = table.groupby("item_id")[["system_a", "system_b"]].first()
    systems = sorted((set(items["system_a"]) | set(items["system_b"])) - {""})
    if len(systems) < 3:
        raise ValueError(f"a system ranking needs at least 3 systems; the table has "
                         f"{len(systems)}")
    ref = human_reference(table).set_index("item_id")["human"].map(_POINTS).dropna()
    people = _win_rates(ref, items).reindex(systems)
    gen = np.random.default_rng(rng)
    h2h, rows = [_head_to_head(ref, items, "people")], []
    for name in _judges(table, judge):
        points = _points(table, name)
        h2h.append(_head_to_head(points, items, name))
        shared = points.index.intersection(ref.index)
        own = _win_rates(points.loc[shared], items).reindex(systems)
        hum = _win_rates(ref.loc[shared], items).reindex(systems)
        ranked = own.notna() & hum.notna()
        if ranked.sum() < 3:
            raise ValueError(f"judge {name!r}: fewer than 3 systems have items with both its "
                             "verdict and a human label; no system ranking")
        own, hum = own[ranked], hum[ranked]
        tau = sps.kendalltau(own, hum).statistic
        p, how = system_p_value(own.to_numpy(), hum.to_numpy(), "kendall")
        counts = np.stack([np.bincount(gen.integers(0, len(shared), len(shared)),
                                       minlength=len(shared)) for _ in range(n_boot)]) \
            if n_boot else np.zeros((0, len(shared)))
        used = list(own.index)
        o_boot = _rates(counts, points.loc[shared], items.loc[shared], used)
        h_boot = _rates(counts, ref.loc[shared], items.loc[shared], used)
        taus = [sps.kendalltau(o, h, nan_policy="omit").statistic
                for o, h in zip(o_boot, h_boot, strict=True)]
        same = [np.nanargmax(o) == np.nanargmax(h) for o, h in zip(o_boot, h_boot, strict=True)]
        tail = (1 - ci_level) / 2
        low, high = (np.nanquantile(taus, [tail, 1 - tail]) if n_boot else (np.nan, np.nan))
        rows.append({"judge": name, "n_systems": len(used), "tau": tau, "p_value": p,
                     "test": how, "ci_low": low, "ci_high": high,
                     "ci_method": "bootstrap over items (these systems)",
                     "judge_winner": own.idxmax(), "people_winner": hum.idxmax(),
                     "same_winner": bool(own.idxmax() == hum.idxmax()),
                     "same_winner_share": float(np.mean(same)) if n_boot else np.nan,
                     "n_items": len(shared)})
    return {"head_to_head": pd.concat(h2h, ignore_index=True),
            "ranking": pd.DataFrame(rows), "people_win_rate": people.rename("win_rate")
            .rename_axis("system").reset_index()}
