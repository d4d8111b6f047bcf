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
)

PADJUST = ("bonf", "holm", "fdr_bh", "none")
_MULTIPLETESTS = {"bonf": "bonferroni", "holm": "holm", "fdr_bh": "fdr_bh"}


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
    :func:`statsmodels.stats.multitest.multipletests` on the non-missing p-values
    (``bonf`` is its ``bonferroni``); it does not accept NaN, so missing p-values stay
    NaN and do not count in the family size.

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
    from statsmodels.stats.multitest import multipletests

    if method not in PADJUST:
        raise ValueError(f"padjust must be one of {PADJUST}, got {method!r}")
    p = np.asarray(p_values, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    if not ok.any() or method == "none":
        out[ok] = p[ok]
        return out
    out[ok] = multipletests(p[ok], method=_MULTIPLETESTS[method])[1]
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
    (Kerby 2014). Computed by :func:`scipy.stats.ttest_rel` (t, p, CI) and
    ``pingouin.wilcoxon`` (W, p, rank-biserial); the adjustment by
    ``statsmodels.stats.multitest.multipletests``. ``pingouin.pairwise_tests`` gives
    the same t and p-values (tested) but has no reference level, no interval of the
    mean difference and no :math:`d_z`, so only the pairing and families are ours.

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
    ok = np.isfinite(va) & np.isfinite(vb)
    a, b = va[ok], vb[ok]
    row = {
        "measure": "mean_difference",
        "n_missing": int((~ok).sum()),
        "mean_a": float(a.mean()) if a.size else np.nan,
        "mean_b": float(b.mean()) if b.size else np.nan,
        **paired_difference(a, b, ci_level),
    }
    if parametric:
        return {**row, "test": "paired_t"}
    w = wilcoxon(a - b)
    return {**row, "test": "wilcoxon", "test_statistic": w["W_val"], "df": np.nan,
            "p_value": w["p_val"], "rank_biserial": w["RBC"]}


def paired_difference(a: np.ndarray, b: np.ndarray, ci_level: float) -> dict:
    """Mean of ``a - b`` with its t interval, paired t test and Cohen's d_z.

    :func:`scipy.stats.ttest_rel` (statistic, p-value, ``confidence_interval``); a
    difference with no spread (or fewer than two pairs) has no test (NaN) rather than
    scipy's infinite t, and its interval is the point itself (one pair: NaN).
    """
    from scipy import stats as sps

    d = a - b
    n = d.size
    mean = float(d.mean()) if n else np.nan
    sd = float(d.std(ddof=1)) if n > 1 else np.nan
    out = {"n": int(n), "estimate": mean, "se": sd / np.sqrt(n) if n > 1 else np.nan,
           "ci_low": mean if n > 1 else np.nan, "ci_high": mean if n > 1 else np.nan,
           "ci_level": ci_level, "test_statistic": np.nan, "df": float(n - 1) if n else np.nan,
           "p_value": np.nan, "cohen_dz": np.nan}
    if n > 1 and sd > 0:
        res = sps.ttest_rel(a, b)
        ci = res.confidence_interval(ci_level)
        out.update(ci_low=float(ci.low), ci_high=float(ci.high), cohen_dz=mean / sd,
                   test_statistic=float(res.statistic), p_value=float(res.pvalue))
    return out


def wilcoxon(d: np.ndarray) -> dict:
    """``pingouin.wilcoxon`` of paired differences: ``W_val``, ``p_val`` and the
    matched-pairs rank-biserial ``RBC`` (Kerby 2014); NaN when all differences are 0 (or
    none), where scipy raises. pingouin turns the continuity correction on by default;
    ``correction=False`` keeps the p-value of :func:`scipy.stats.wilcoxon`'s defaults."""
    import pingouin as pg

    if d.size == 0 or not np.any(d != 0):
        return {"W_val": np.nan, "p_val": np.nan, "RBC": np.nan}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pg.wilcoxon(d, correction=False).iloc[0]
    return {k: float(res[k]) for k in ("W_val", "p_val", "RBC")}
