"""Paired comparisons of conditions with multiple-comparison adjustment."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd

from workbench.stats._columns import tidy
from workbench.stats._util import (
    Columns,
    as_list,
    check_frame,
    check_level,
    check_unique,
    group_items,
    numeric,
    t_interval,
)

PADJUST = ("bonf", "holm", "fdr_bh", "none")


def p_adjust(p_values, method: str = "bonf") -> np.ndarray:
    """Adjust p-values for multiple comparisons (NaN entries are left out of the family).

    Parameters
    ----------
    p_values : array-like
        Raw p-values of one family of comparisons.
    method : {"bonf", "holm", "fdr_bh", "none"}
        Bonferroni, Holm (1979) step-down, Benjamini & Hochberg (1995) step-up.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, clipped at 1, in the input order.

    Notes
    -----
    With :math:`m` non-missing p-values sorted ascending,
    Bonferroni gives :math:`\\min(1, m p_i)`; Holm gives
    :math:`\\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})`; Benjamini-Hochberg gives
    :math:`\\min_{j \\ge i} \\min(1, m p_{(j)} / j)`.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics*, 6(2), 65-70.
    .. [2] Benjamini, Y., & Hochberg, Y. (1995). Controlling the false discovery rate.
       *Journal of the Royal Statistical Society B*, 57(1), 289-300.

    Examples
    --------
    >>> from workbench.stats import p_adjust
    >>> p_adjust([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    if method not in PADJUST:
        raise ValueError(f"padjust must be one of {PADJUST}, got {method!r}")
    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    q = p[ok]
    m = q.size
    if m == 0 or method == "none":
        out[ok] = q
        return out
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    if method == "bonf":
        adj = np.minimum(1.0, q * m)
        out[ok] = adj
        return out
    if method == "holm":
        step = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:  # fdr_bh
        step = np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[::-1])[::-1]
    adj = np.empty(m)
    adj[order] = np.minimum(1.0, step)
    out[ok] = adj
    return out


def paired_tests(
    data: pd.DataFrame,
    *,
    dv: str,
    within: str,
    subject: Columns,
    reference=None,
    parametric: bool = True,
    padjust: str = "bonf",
    alpha: float = 0.05,
    by: Columns | None = None,
    aggregate: str | None = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Paired t (or Wilcoxon) tests between levels of a within-subject factor.

    Parameters
    ----------
    data : DataFrame
        Long format, one row per subject and level.
    dv : str
        Dependent variable (numeric).
    within : str
        Factor whose levels are compared (e.g. ``"answer_model"``).
    subject : str or list of str
        Columns identifying the matched unit (e.g. ``["question", "iteration"]``).
    reference : optional
        A level of ``within``: compare it with each other level (seed 002: the best
        model against each other model). ``None``: all pairs.
    parametric : bool, default True
        Paired t test; ``False``: Wilcoxon signed-rank test
        (:func:`scipy.stats.wilcoxon` defaults).
    padjust : {"bonf", "holm", "fdr_bh", "none"}, default "bonf"
        Adjustment over the comparisons of each ``by`` group (see :func:`p_adjust`).
    alpha : float, default 0.05
        Level for ``significant``.
    by : str or list of str, optional
        Separate families (e.g. ``"dimension"``).
    aggregate : {None, "mean"}, optional
        Several rows for one subject and level raise an error, unless ``"mean"``
        averages them first.
    ci_level : float, default 0.95
        Confidence level of the mean difference.

    Returns
    -------
    DataFrame
        One row per comparison: the ``by`` columns, ``measure``
        (``"mean_difference"``), ``a``, ``b`` (``a`` is the reference when given),
        ``test`` (``"paired_t"`` or ``"wilcoxon"``), ``n`` (subjects with both values),
        ``n_missing`` (subjects lacking a or b), ``estimate`` (mean of a - b),
        ``se``, ``ci_low``, ``ci_high`` (t interval of the mean difference, also for
        Wilcoxon), ``ci_level``, ``test_statistic`` (t, or Wilcoxon's W), ``df``,
        ``p_value``, ``p_adjusted``, ``padjust``, ``alpha``, ``significant``,
        ``cohen_dz``, ``rank_biserial`` (Wilcoxon only), ``mean_a``, ``mean_b``.

    Notes
    -----
    With differences :math:`d_i = a_i - b_i` over the :math:`n` subjects that have
    both values (missing values are dropped pair by pair):
    :math:`t = \\bar d / (s_d/\\sqrt n)` with :math:`n - 1` df,
    CI :math:`\\bar d \\pm t_{1-\\alpha/2,n-1} s_d/\\sqrt n`, and
    :math:`d_z = \\bar d / s_d` (Cohen 1988; Lakens 2013). The Wilcoxon effect size is
    the matched-pairs rank-biserial correlation :math:`(R^+ - R^-)/(R^+ + R^-)`
    (Kerby 2014). Checked against ``pingouin.pairwise_tests`` and
    :func:`scipy.stats.ttest_rel` / :func:`scipy.stats.wilcoxon`.

    References
    ----------
    .. [1] Cardenal-Antolin, G., Fellay, J., Jaha, B., Kouyos, R., Beerenwinkel, N., &
       Duroux, D. HIVMedQA: benchmarking large language models for HIV medical
       decision support (paired t tests, Bonferroni-corrected).
    .. [2] Lakens, D. (2013). Calculating and reporting effect sizes to facilitate
       cumulative science. *Frontiers in Psychology*, 4, 863.
    .. [3] Kerby, D. S. (2014). The simple difference formula: an approach to teaching
       nonparametric correlation. *Comprehensive Psychology*, 3, 11.IT.3.1.
    .. [4] Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*
       (2nd ed.). Lawrence Erlbaum.

    Examples
    --------
    >>> import pandas as pd
    >>> from workbench.stats import paired_tests
    >>> df = pd.DataFrame({"q": [1, 2, 3, 4] * 3,
    ...                    "model": ["best"] * 4 + ["m2"] * 4 + ["m3"] * 4,
    ...                    "score": [5, 4, 5, 4, 4, 4, 5, 3, 2, 3, 2, 2]})
    >>> res = paired_tests(df, dv="score", within="model", subject="q", reference="best")
    >>> res[["a", "b", "n", "estimate", "p_value", "p_adjusted", "significant"]].round(3)
          a   b  n  estimate  p_value  p_adjusted  significant
    0  best  m2  4      0.50    0.182       0.363        False
    1  best  m3  4      2.25    0.018       0.036         True
    """
    by_cols, subj_cols = as_list(by), as_list(subject)
    check_frame(data, [dv, within, *subj_cols, *by_cols])
    ci_level = check_level(ci_level)
    if padjust not in PADJUST:
        raise ValueError(f"padjust must be one of {PADJUST}, got {padjust!r}")
    if aggregate not in (None, "mean"):
        raise ValueError(f"aggregate must be None or 'mean', got {aggregate!r}")
    frame = data.assign(_dv=numeric(data, dv))
    if frame[within].isna().any():
        row = frame.index[frame[within].isna().to_numpy()][0]
        raise ValueError(f"column {within!r} is missing at row {row!r}")
    if aggregate is None:
        check_unique(
            frame,
            by_cols + subj_cols + [within],
            why="one value per subject and level; pass aggregate='mean' to average",
        )

    rows = []
    for key, part in group_items(frame, by_cols):
        wide = part.pivot_table(
            index=subj_cols,
            columns=within,
            values="_dv",
            aggfunc="mean",
            dropna=False,
            observed=True,
        )
        levels = list(wide.columns)
        if reference is not None:
            if reference not in levels:
                raise ValueError(f"reference {reference!r} is not a level of {within!r}: {levels}")
            pairs = [(reference, lev) for lev in levels if lev != reference]
        else:
            pairs = list(itertools.combinations(levels, 2))
        family = [
            {
                **key,
                **_pair(
                    wide[a].to_numpy(dtype=float, copy=True),
                    wide[b].to_numpy(dtype=float, copy=True),
                    parametric,
                    ci_level,
                ),
                "a": a,
                "b": b,
            }
            for a, b in pairs
        ]
        adj = p_adjust([r["p_value"] for r in family], padjust)
        for r, p in zip(family, adj, strict=True):
            r.update(
                p_adjusted=p,
                padjust=padjust,
                alpha=alpha,
                significant=bool(p < alpha) if np.isfinite(p) else False,
            )
        rows.extend(family)
    return tidy(pd.DataFrame(rows), keys=by_cols)


def _pair(va: np.ndarray, vb: np.ndarray, parametric: bool, ci_level: float) -> dict:
    from scipy import stats as sps

    ok = np.isfinite(va) & np.isfinite(vb)
    a, b = va[ok], vb[ok]
    d = a - b
    n = d.size
    mean = float(d.mean()) if n else np.nan
    sd = float(d.std(ddof=1)) if n > 1 else np.nan
    se = sd / np.sqrt(n) if n > 1 else np.nan
    low, high = t_interval(mean, sd, n, ci_level)
    row = {
        "measure": "mean_difference",
        "n": int(n),
        "n_missing": int((~ok).sum()),
        "mean_a": float(a.mean()) if n else np.nan,
        "mean_b": float(b.mean()) if n else np.nan,
        "estimate": mean,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "ci_level": ci_level,
        "cohen_dz": mean / sd if n > 1 and sd > 0 else np.nan,
    }
    if parametric:
        t = mean / se if n > 1 and se > 0 else np.nan
        p = float(2 * sps.t.sf(abs(t), n - 1)) if np.isfinite(t) else np.nan
        row.update(test="paired_t", test_statistic=t, df=float(n - 1), p_value=p)
    else:
        w, p = wilcoxon(d)
        row.update(
            test="wilcoxon", test_statistic=w, df=np.nan, p_value=p, rank_biserial=rank_biserial(d)
        )
    return row


def wilcoxon(d: np.ndarray) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank (W, p) with scipy's defaults; NaN if undefined."""
    from scipy import stats as sps

    if d.size == 0 or not np.any(d != 0):
        return np.nan, np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.wilcoxon(d)
    return float(res.statistic), float(res.pvalue)


def rank_biserial(d: np.ndarray) -> float:
    """Matched-pairs rank-biserial correlation of differences (zeros dropped)."""
    from scipy import stats as sps

    d = d[d != 0]
    if d.size == 0:
        return np.nan
    ranks = sps.rankdata(np.abs(d))
    plus, minus = ranks[d > 0].sum(), ranks[d < 0].sum()
    return float((plus - minus) / (plus + minus))
