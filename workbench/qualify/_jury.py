"""Juries of judges against their best member, on held-out human labels.

Several judges' scores of the same items are aggregated (mean, median, majority of the
rounded scores, mean weighted by each judge's agreement with people on a calibration
split); on the held-out items each jury and each judge is scored against the human
label, and the jury is compared with the member that was best on the calibration split
by a paired test of their absolute errors (so the best member is not picked on the
items it is tested on).

References
----------
Verga, P. et al. (2024). Replacing judges with juries: evaluating LLM generations with a
panel of diverse models. arXiv:2404.18796.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from workbench.stats import correlate

__all__ = ["AGGREGATES", "jury_scores", "jury_vs_best"]

#: Jury aggregates, in report order.
AGGREGATES = ("mean", "median", "majority", "weighted")


def _majority(row: np.ndarray) -> float:
    values = np.round(row[~np.isnan(row)])
    if not len(values):
        return np.nan
    labels, counts = np.unique(values, return_counts=True)
    top = labels[counts == counts.max()]
    return float(top[0]) if len(top) == 1 else float(np.round(np.median(values)))


def jury_scores(scores: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    """The jury aggregates of a wide frame of scores (one column per judge).

    ``majority`` is the most common rounded score (a tie: the rounded median);
    ``weighted`` the mean weighted by ``weights`` (per judge; equal when None).

    Examples
    --------
    >>> s = pd.DataFrame({"a": [1.0, 4.2], "b": [2.0, 4.4], "c": [2.2, 1.0]})
    >>> jury_scores(s, pd.Series({"a": 0.5, "b": 0.5, "c": 0.0}))
           mean  median  majority  weighted
    0  1.733333     2.0       2.0       1.5
    1  3.200000     4.2       4.0       4.3
    """
    values = scores.to_numpy(dtype=float)
    w = np.ones(values.shape[1]) if weights is None else weights.reindex(scores.columns).to_numpy(float)
    mask = ~np.isnan(values)
    wsum = (mask * w).sum(axis=1)
    weighted = np.where(wsum > 0, np.nansum(values * w, axis=1) / np.where(wsum > 0, wsum, 1),
                        np.nan)
    return pd.DataFrame({"mean": np.nanmean(values, axis=1),
                         "median": np.nanmedian(values, axis=1),
                         "majority": [_majority(r) for r in values],
                         "weighted": weighted}, index=scores.index)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson r over the items where both are present (``workbench.stats.correlate``)."""
    frame = pd.DataFrame({"x": x, "y": y})
    return float(correlate(frame, x="x", y="y", method="pearson")["estimate"].iloc[0])


def jury_vs_best(scores: pd.DataFrame, human: pd.Series, calibration: np.ndarray) -> pd.DataFrame:
    """Each judge and each jury on the held-out items, and each jury against the best member.

    Parameters
    ----------
    scores : DataFrame
        Wide: one row per item, one column per judge.
    human : Series
        The human score per item (same index).
    calibration : bool array
        True for the calibration items (weights and the best member are chosen there);
        the rest are held out.

    Returns
    -------
    DataFrame
        One row per judge, then per aggregate: ``who``, ``kind`` (``judge`` | ``jury``),
        ``weight`` (judges: the calibration Pearson r, clipped at 0, the ``weighted``
        jury uses), ``estimate`` (held-out Pearson r with the human score), ``mae``
        (held-out mean absolute error); juries also ``b`` (the best member),
        ``mean_diff`` (mean of |jury error| - |best error|, negative when the jury is
        closer), ``test_statistic`` and ``p_value`` (two-sided paired t-test of the
        absolute errors), ``p_value_wilcoxon``, ``n_items`` (held-out items).
    """
    calibration = np.asarray(calibration, dtype=bool)
    y = human.to_numpy(dtype=float)
    cal_r = pd.Series({c: _pearson(scores[c].to_numpy(float)[calibration], y[calibration])
                       for c in scores.columns})
    weights = cal_r.clip(lower=0).fillna(0)
    best = str(cal_r.idxmax())
    test = ~calibration
    juries = jury_scores(scores, weights if weights.sum() > 0 else None)
    rows = []
    for name in scores.columns:
        x = scores[name].to_numpy(float)[test]
        rows.append({"who": str(name), "kind": "judge", "weight": float(weights[name]),
                     "estimate": _pearson(x, y[test]),
                     "mae": float(np.nanmean(np.abs(x - y[test]))),
                     "n_items": int(test.sum())})
    best_err = np.abs(scores[best].to_numpy(float)[test] - y[test])
    for name in AGGREGATES:
        x = juries[name].to_numpy(float)[test]
        err = np.abs(x - y[test])
        ok = ~np.isnan(err) & ~np.isnan(best_err)
        diff = err[ok] - best_err[ok]
        t = sps.ttest_rel(err[ok], best_err[ok]) if np.any(diff != 0) else None
        w = sps.wilcoxon(err[ok], best_err[ok]) if np.any(diff != 0) else None
        rows.append({"who": f"jury: {name}", "kind": "jury", "estimate": _pearson(x, y[test]),
                     "mae": float(np.nanmean(err)), "b": best, "mean_diff": float(diff.mean()),
                     "test_statistic": float(t.statistic) if t else np.nan,
                     "p_value": float(t.pvalue) if t else 1.0,
                     "p_value_wilcoxon": float(w.pvalue) if w else 1.0,
                     "n_items": int(test.sum())})
    return pd.DataFrame(rows, columns=["who", "kind", "weight", "estimate", "mae", "b",
                                       "mean_diff", "test_statistic", "p_value",
                                       "p_value_wilcoxon", "n_items"])
