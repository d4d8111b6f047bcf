"""Judge-vs-human agreement beside the human ceiling, and the alternative annotator test.

:func:`leave_one_out_agreement` scores every judge and every person against the other
people, one held-out person at a time, so a judge's agreement and the human ceiling are
measured on the same footing. :func:`alt_test` is the alternative annotator test of
Calderon et al. (2025): can the judge replace one of the annotators?

References
----------
Calderon, N., Reichart, R. & Dror, R. (2025). The Alternative Annotator Test for
LLM-as-a-Judge: how to statistically justify replacing human annotators with LLMs.
*ACL 2025*. arXiv:2501.10970.
Benjamini, Y. & Yekutieli, D. (2001). The control of the false discovery rate in multiple
testing under dependency. *Annals of Statistics*, 29(4), 1165-1188.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from workbench.stats import bootstrap_ci, kappa_from_labels

__all__ = ["MEASURES", "alt_test", "leave_one_out_agreement"]


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r by :func:`numpy.corrcoef` (NaN below 3 items or for a constant side).

    Not :func:`scipy.stats.pearsonr`: it also computes a p-value, 32 vs 265 µs a call
    (200 items), which made the bootstrap of X3's agreement table 4.9 s -> 13.2 s.
    """
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    return float(np.corrcoef(x, y)[0, 1])


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """:func:`scipy.stats.spearmanr` (NaN below 3 items or for a constant side)."""
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    return float(sps.spearmanr(x, y).statistic)


def _kendall(x: np.ndarray, y: np.ndarray) -> float:
    """:func:`scipy.stats.kendalltau` (tau-b; NaN below 3 items or for a constant side)."""
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    return float(sps.kendalltau(x, y).statistic)


def _kappa(x: np.ndarray, y: np.ndarray) -> float:
    """Unweighted Cohen's kappa (``workbench.stats``' estimate)."""
    return kappa_from_labels(x, y)["estimate"]


def _accuracy(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(x == y))


#: Agreement measures: name -> (function of two aligned arrays, scale). ``numeric``
#: measures compare one scorer with the mean of the other raters; ``nominal`` ones with
#: each other rater in turn (then averaged).
MEASURES: dict[str, tuple[Callable[[np.ndarray, np.ndarray], float], str]] = {
    "pearson": (_pearson, "numeric"), "spearman": (_spearman, "numeric"),
    "kendall": (_kendall, "numeric"),
    "cohen_kappa": (_kappa, "nominal"), "accuracy": (_accuracy, "nominal"),
}


def _others_means(humans: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per rater ``k``: each item's mean of the other raters' labels, and whether it has
    one (numeric measures). A row's mean depends on that row alone, so a bootstrap
    replicate takes its rows from these instead of averaging again."""
    out = []
    for k in range(humans.shape[1]):
        others = np.delete(humans, k, axis=1)
        has = ~np.all(np.isnan(others), axis=1)
        means = np.full(len(humans), np.nan)
        means[has] = np.nanmean(others[has], axis=1)
        out.append((means, has))
    return out


def _loo_numeric(own: np.ndarray, means: np.ndarray, has: np.ndarray, fn) -> float:
    """Agreement of ``own`` with the other raters' mean (from :func:`_others_means`)."""
    ok = ~np.isnan(own) & has
    return fn(own[ok], means[ok])


def _loo(humans: np.ndarray, scorer: np.ndarray | None, k: int, fn) -> float:
    """Agreement of ``scorer`` (None: rater ``k`` itself) with each rater other than ``k``
    in turn, averaged (nominal measures)."""
    own = humans[:, k] if scorer is None else scorer
    others = np.delete(humans, k, axis=1)
    values = []
    for j in range(others.shape[1]):
        ok = ~pd.isna(own) & ~pd.isna(others[:, j])
        values.append(fn(own[ok], others[ok, j]))
    return float(np.nanmean(values)) if values else np.nan


def leave_one_out_agreement(humans: pd.DataFrame, judges: pd.DataFrame | None = None, *,
                            measure: str = "pearson", n_boot: int = 1000,
                            ci_level: float = 0.95,
                            rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Agreement of each judge and of each person with the other people, leave one rater out.

    For each rater ``k``: a judge's agreement with the raters other than ``k`` (their
    mean for a ``numeric`` measure; each of them, averaged, for a ``nominal`` one), and
    rater ``k``'s own agreement with them. A judge's ``estimate`` is its mean over ``k``;
    the ``human ceiling`` row is the raters' mean, so both rest on ``n_raters - 1``
    people. Percentile bootstrap CIs (:func:`workbench.stats.bootstrap_ci`) resample
    items (rows). Missing labels (NaN/None) are
    left out pairwise, so each row reports how many items it rests on: ``n_used`` (items
    the scorer labelled that have a label from another rater; the ceiling: items with
    at least two labels) and ``n_missing`` (items without the scorer's label; the
    ceiling: items with fewer than two) beside ``n_items``.

    Parameters
    ----------
    humans : DataFrame
        Wide: one row per item, one column per rater (NaN where a rater gave no label).
    judges : DataFrame, optional
        Wide, same rows: one column per judge.
    measure : str
        A key of :data:`MEASURES`.
    n_boot, ci_level, rng
        Bootstrap resamples (0: no CI), confidence level and generator.

    Returns
    -------
    DataFrame
        One row per judge, then one per rater, then ``human ceiling``: ``who``, ``kind``
        (``judge`` | ``rater`` | ``ceiling``), ``measure``, ``estimate``, ``ci_low``,
        ``ci_high``, ``ci_level``, ``n_items``, ``n_used``, ``n_missing``, ``n_raters``,
        ``n_boot``.

    Examples
    --------
    >>> h = pd.DataFrame({"r1": [1, 2, 3, 4, 5], "r2": [1, 2, 3, 5, 4], "r3": [2, 2, 3, 4, 5]})
    >>> out = leave_one_out_agreement(h, pd.DataFrame({"j": [1, 2, 3, 4, 5]}), n_boot=0)
    >>> out[["who", "kind", "estimate"]].round(3)
                 who     kind  estimate
    0              j    judge     0.979
    1             r1    rater     0.969
    2             r2    rater     0.883
    3             r3    rater     0.933
    4  human ceiling  ceiling     0.928
    """
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {sorted(MEASURES)}, got {measure!r}")
    fn, scale = MEASURES[measure]
    if humans.shape[1] < 2:
        raise ValueError("leave_one_out_agreement: needs at least two raters")
    judges = pd.DataFrame(index=humans.index) if judges is None else judges
    h = humans.to_numpy(dtype=float if scale == "numeric" else object)
    j = judges.to_numpy(dtype=float if scale == "numeric" else object)
    n_raters = h.shape[1]

    means = _others_means(h) if scale == "numeric" else []

    def estimates(rows: np.ndarray) -> np.ndarray:
        hh, jj = h[rows], j[rows]
        if scale == "numeric":
            per_k = []
            for k, (m, has) in enumerate(means):
                m, has = m[rows], has[rows]
                per_k.append([_loo_numeric(jj[:, c], m, has, fn) for c in range(jj.shape[1])]
                             + [_loo_numeric(hh[:, k], m, has, fn)])
            per_k = np.array(per_k)
        else:
            per_k = np.array([[_loo(hh, jj[:, c], k, fn) for c in range(jj.shape[1])]
                              + [_loo(hh, None, k, fn)] for k in range(n_raters)])
        judge_means = np.nanmean(per_k[:, :-1], axis=0) if jj.shape[1] else np.array([])
        raters = per_k[:, -1]
        return np.concatenate([judge_means, raters, [np.nanmean(raters)]])

    point = estimates(np.arange(len(h)))
    low = high = np.full(len(point), np.nan)
    if n_boot:
        boot = bootstrap_ci(pd.DataFrame({"row": np.arange(len(h))}), n_boot=n_boot,
                            statistic=lambda d: dict(enumerate(estimates(d["row"].to_numpy()))),
                            rng=np.random.default_rng(rng), ci_level=ci_level)
        low, high = boot["ci_low"].to_numpy(), boot["ci_high"].to_numpy()
    labelled = ~pd.isna(h)
    n_labels = labelled.sum(axis=1)
    used = [~pd.isna(j[:, c]) & (n_labels >= 1) for c in range(j.shape[1])]
    used += [labelled[:, k] & (n_labels >= 2) for k in range(n_raters)] + [n_labels >= 2]
    missing = [int(pd.isna(j[:, c]).sum()) for c in range(j.shape[1])]
    missing += [int((~labelled[:, k]).sum()) for k in range(n_raters)]
    missing += [int((n_labels < 2).sum())]
    who = [*map(str, judges.columns), *map(str, humans.columns), "human ceiling"]
    kind = ["judge"] * judges.shape[1] + ["rater"] * n_raters + ["ceiling"]
    return pd.DataFrame({"who": who, "kind": kind, "measure": measure, "estimate": point,
                         "ci_low": low, "ci_high": high, "ci_level": ci_level,
                         "n_items": len(h), "n_used": [int(u.sum()) for u in used],
                         "n_missing": missing, "n_raters": n_raters, "n_boot": n_boot})


def _alignment(value: np.ndarray, others: np.ndarray, metric: str) -> np.ndarray:
    """Per item: a scorer's alignment with the other annotators (higher is better)."""
    ok = ~pd.isna(others)
    if metric == "accuracy":
        hits = np.where(ok, others == value[:, None], False)
        return hits.sum(axis=1) / ok.sum(axis=1)
    diff = np.where(ok, others.astype(float) - value.astype(float)[:, None], 0.0)
    return -np.sqrt((diff ** 2).sum(axis=1) / ok.sum(axis=1))


def alt_test(humans: pd.DataFrame, judge: pd.Series | np.ndarray, *, epsilon: float = 0.2,
             alpha: float = 0.05, metric: str = "accuracy",
             min_items: int = 30) -> tuple[pd.DataFrame, dict]:
    """The alternative annotator test (Calderon et al. 2025, Algorithm 1).

    For each annotator ``j``, on the items ``j`` labelled that have at least one other
    label (``n_items``): the judge's alignment with the other annotators, ``S(f, i, j)``, and ``j``'s,
    ``S(h_j, i, j)`` (``accuracy``: share of the others with the same label;
    ``neg_rmse``: minus the root mean squared difference from them). ``W_f = 1`` where
    the judge aligns at least as well, ``W_h = 1`` where ``j`` does; ``rho_f`` and
    ``rho_h`` are their means (the judge's and the annotator's winning probabilities).
    A one-sided paired t-test of H0: ``rho_h - rho_f >= epsilon`` against H1: ``<
    epsilon`` per annotator; the Benjamini-Yekutieli procedure at level ``alpha`` over
    the annotators; the **winning rate** ``omega`` is the share of annotators whose H0
    is rejected, and the judge passes when ``omega >= 0.5``. ``epsilon`` is the cost-benefit
    allowance (the authors suggest 0.2 with experts, 0.15 with skilled annotators, 0.1 with
    crowd workers). Where every difference ``W_h - W_f`` is the same the t statistic is
    undefined; the test then rejects exactly when that constant is below ``epsilon``
    (the authors' code leaves such an annotator unrejected). A missing judge label
    (NaN/None) on such an item counts as a loss for the judge (``W_f = 0``, ``W_h = 1``),
    so a judge cannot pass by abstaining; ``n_judge_missing`` counts them.

    Parameters
    ----------
    humans : DataFrame
        Wide: one row per item, one column per annotator (NaN/None: no label).
    judge : Series or array
        The judge's label or score per row of ``humans``.
    epsilon, alpha : float
        Allowance and FDR level.
    metric : str
        ``accuracy`` (labels) or ``neg_rmse`` (scores).
    min_items : int
        Annotators with fewer usable items are left out (the paper asks for >= 30).

    Raises
    ------
    ValueError
        With fewer than two annotators (there is no "other" to align with). When no
        annotator has ``min_items`` usable items a warning says so (``omega`` NaN).

    Returns
    -------
    (per_annotator, summary)
        ``per_annotator``: ``rater``, ``n_items``, ``n_judge_missing``, ``rho_f``, ``rho_h``, ``test_statistic``,
        ``p_value``, ``p_adjusted``, ``significant``; ``summary``: ``omega``, ``passed``,
        ``advantage`` (mean ``rho_f``, the average advantage probability),
        ``n_raters``, ``epsilon``, ``alpha``.

    Examples
    --------
    >>> h = pd.DataFrame({"a": [1, 1, 0, 0] * 10, "b": [1, 1, 0, 1] * 10,
    ...                   "c": [1, 0, 0, 0] * 10})
    >>> table, summary = alt_test(h, h["a"].to_numpy(), epsilon=0.2)
    >>> summary["omega"], summary["passed"]
    (1.0, True)
    """
    if metric not in ("accuracy", "neg_rmse"):
        raise ValueError(f"metric must be 'accuracy' or 'neg_rmse', got {metric!r}")
    if humans.shape[1] < 2:
        raise ValueError(f"alt_test needs at least two annotators (columns of humans), got "
                         f"{humans.shape[1]}: the judge is compared with each annotator on "
                         "how well both agree with the others")
    values = humans.to_numpy(dtype=object if metric == "accuracy" else float)
    f = np.asarray(judge, dtype=object if metric == "accuracy" else float)
    rows = []
    for k, name in enumerate(humans.columns):
        others = np.delete(values, k, axis=1)
        use = ~pd.isna(values[:, k]) & (~pd.isna(others)).any(axis=1)
        if use.sum() < min_items:
            continue
        absent = pd.isna(f[use])
        s_f = np.where(absent, -np.inf, _alignment(f[use], others[use], metric))
        s_h = _alignment(values[use, k], others[use], metric)
        w_f, w_h = (s_f >= s_h).astype(float), (s_h >= s_f).astype(float)
        d = w_h - w_f - epsilon
        if np.std(d) == 0:
            t, p = (-np.inf, 0.0) if d.mean() < 0 else (np.inf, 1.0)
        else:
            t, p = sps.ttest_1samp(d, 0.0, alternative="less")
        rows.append({"rater": str(name), "n_items": int(use.sum()),
                     "n_judge_missing": int(absent.sum()), "rho_f": w_f.mean(),
                     "rho_h": w_h.mean(), "test_statistic": float(t), "p_value": float(p)})
    table = pd.DataFrame(rows, columns=["rater", "n_items", "n_judge_missing", "rho_f",
                                        "rho_h", "test_statistic", "p_value"])
    if len(table):
        reject, adjusted, _, _ = multipletests(table["p_value"], alpha=alpha, method="fdr_by")
        table["p_adjusted"], table["significant"] = adjusted, reject
    else:
        table["p_adjusted"], table["significant"] = [], []
        warnings.warn(f"alt_test: no annotator has {min_items} items that another annotator "
                      "also labelled; omega is NaN and the judge does not pass", stacklevel=2)
    omega = float(table["significant"].mean()) if len(table) else np.nan
    summary = {"omega": omega, "passed": bool(omega >= 0.5) if len(table) else False,
               "advantage": float(table["rho_f"].mean()) if len(table) else np.nan,
               "n_raters": len(table), "epsilon": epsilon, "alpha": alpha}
    return table, summary
