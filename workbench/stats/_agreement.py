"""Chance-corrected agreement of labels: Cohen's kappa and Fleiss' kappa."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.stats._bootstrap import boot_reps
from workbench.stats._columns import tidy
from workbench.stats._util import (
    Columns,
    as_list,
    as_rng,
    check_frame,
    check_level,
    check_unique,
    group_items,
    percentile_ci,
)

WEIGHTS = ("none", "linear", "quadratic")


def _sorted_categories(values) -> list:
    uniq = list(pd.unique(pd.Series(list(values), dtype=object)))
    try:
        return sorted(uniq)
    except TypeError:
        return sorted(uniq, key=repr)


def kappa_from_labels(
    a, b, *, weights: str = "none", categories=None, ci_level: float = 0.95
) -> dict:
    """Cohen's kappa of two equal-length label sequences (no missing values).

    The kappa, its standard errors and z test are statsmodels'
    ``statsmodels.stats.inter_rater.cohens_kappa`` on the contingency table; its
    interval is fixed at 95%, so ``ci_low``/``ci_high`` are built here from its
    standard error at ``ci_level``. Empty tables and tables whose expected agreement is
    1 (statsmodels divides by zero there) give NaN.
    """
    from scipy import stats as sps
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    a, b = list(a), list(b)
    cats = list(categories) if categories is not None else _sorted_categories(a + b)
    index = {c: i for i, c in enumerate(cats)}
    unknown = [v for v in a + b if v not in index]
    if unknown:
        raise ValueError(f"labels {unknown[:3]} are not among categories {cats}")
    k, n = len(cats), len(a)
    table = np.zeros((k, k))
    np.add.at(table, ([index[v] for v in a], [index[v] for v in b]), 1)
    out = {"n": n, "n_categories": k}
    if n == 0:
        return {**out, "estimate": np.nan}
    p = table / n
    i, j = np.indices((k, k))
    if weights == "none" or k == 1:
        w = (i == j).astype(float)
    elif weights == "linear":
        w = 1 - np.abs(i - j) / (k - 1)
    else:
        w = 1 - (i - j) ** 2 / (k - 1) ** 2
    po = float((w * p).sum())
    pe = float((w * np.outer(p.sum(1), p.sum(0))).sum())
    if pe >= 1:
        return {**out, "estimate": np.nan, "p_observed": po, "p_expected": pe}
    with np.errstate(invalid="ignore", divide="ignore"):  # its z when the null SE is 0
        res = sm_kappa(table, wt=None if weights == "none" else weights)
    kappa = float(res["kappa"])
    se = float(np.sqrt(max(res["var_kappa"], 0.0)))
    se0 = float(np.sqrt(max(res["var_kappa0"], 0.0)))
    q = sps.norm.ppf(0.5 + ci_level / 2)
    z = kappa / se0 if se0 > 0 else np.nan
    return {
        **out,
        "estimate": kappa,
        "se": se,
        "ci_low": kappa - q * se,
        "ci_high": kappa + q * se,
        "ci_level": ci_level,
        "ci_method": "asymptotic",
        "test": "z",
        "test_statistic": z,
        "p_value": float(2 * sps.norm.sf(abs(z))) if np.isfinite(z) else np.nan,
        "p_observed": po,
        "p_expected": pe,
    }


def cohen_kappa(
    data: pd.DataFrame,
    *,
    a: str,
    b: str,
    weights: str | None = None,
    categories=None,
    by: Columns | None = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Cohen's kappa (unweighted, linear or quadratic) between two raters.

    Parameters
    ----------
    data : DataFrame
        One row per rated item, the two raters' labels in columns ``a`` and ``b``.
    a, b : str
        Label columns. Rows missing either label are dropped and counted.
    weights : {None, "none", "linear", "quadratic"}, default None
        Disagreement weighting for ordered categories.
    categories : sequence, optional
        All categories in order (default: the sorted labels seen). Weighted kappa
        uses category positions in this order, as scikit-learn does.
    by : str or list of str, optional
        One kappa per group.
    ci_level : float, default 0.95
        Confidence level.

    Returns
    -------
    DataFrame
        One row per group: ``by`` columns, ``measure`` (``"cohen_kappa"``),
        ``weights``, ``estimate``, ``se`` (asymptotic), ``ci_low``, ``ci_high``,
        ``ci_level``, ``ci_method``, ``test`` (``"z"``), ``test_statistic`` (kappa
        over its standard error under independence), ``p_value``, ``p_observed``,
        ``p_expected``, ``n``, ``n_missing``, ``n_categories``.

    Notes
    -----
    With agreement weights :math:`w_{ij}` (1 on the diagonal; linear
    :math:`1-|i-j|/(k-1)`, quadratic :math:`1-(i-j)^2/(k-1)^2`), cell proportions
    :math:`p_{ij}` and margins :math:`p_{i.}, p_{.j}`:
    :math:`p_o=\\sum w_{ij}p_{ij}`, :math:`p_e=\\sum w_{ij}p_{i.}p_{.j}`,
    :math:`\\kappa=(p_o-p_e)/(1-p_e)` (Cohen 1960, 1968). Standard errors (non-null for
    the CI, null for the z test) follow Fleiss, Cohen & Everitt (1969). Checked
    against :func:`sklearn.metrics.cohen_kappa_score` and
    ``statsmodels.stats.inter_rater.cohens_kappa``.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       *Educational and Psychological Measurement*, 20(1), 37-46.
    .. [2] Cohen, J. (1968). Weighted kappa. *Psychological Bulletin*, 70(4), 213-220.
    .. [3] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. *Psychological Bulletin*, 72(5), 323-327.

    Examples
    --------
    50 items, both raters "yes" on 20, both "no" on 15, disagreeing on 15:
    :math:`p_o = 0.7`, :math:`p_e = 0.5 \\cdot 0.6 + 0.5 \\cdot 0.4 = 0.5`, so
    :math:`\\kappa = 0.4`.

    >>> import pandas as pd
    >>> from workbench.stats import cohen_kappa
    >>> df = pd.DataFrame({"r1": ["yes"] * 25 + ["no"] * 25,
    ...                    "r2": ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15})
    >>> res = cohen_kappa(df, a="r1", b="r2")
    >>> res[["estimate", "p_observed", "p_expected", "n"]].round(3)
       estimate  p_observed  p_expected   n
    0       0.4         0.7         0.5  50
    """
    weights = "none" if weights is None else weights
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS} or None, got {weights!r}")
    by_cols = as_list(by)
    check_frame(data, [a, b, *by_cols])
    ci_level = check_level(ci_level)
    rows = []
    for key, part in group_items(data, by_cols):
        ok = part[a].notna() & part[b].notna()
        res = kappa_from_labels(
            part.loc[ok, a],
            part.loc[ok, b],
            weights=weights,
            categories=categories,
            ci_level=ci_level,
        )
        rows.append(
            {
                **key,
                "measure": "cohen_kappa",
                "weights": weights,
                "n_missing": int((~ok).sum()),
                **res,
            }
        )
    return tidy(pd.DataFrame(rows), keys=by_cols)


def fleiss_kappa(
    data: pd.DataFrame,
    *,
    item: Columns,
    rater: str,
    label: str,
    by: Columns | None = None,
    n_boot: int = 0,
    rng: np.random.Generator | int | None = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Fleiss' kappa for several raters assigning nominal labels.

    Parameters
    ----------
    data : DataFrame
        Long format, one row per item and rater.
    item : str or list of str
        Item columns.
    rater : str
        Rater column (rows must be unique on item and rater; rater identities may
        differ between items, as Fleiss 1971 allows).
    label : str
        Label column. Rows with a missing label are dropped and counted.
    by : str or list of str, optional
        One kappa per group.
    n_boot : int, default 0
        Bootstrap resamples of items for a percentile CI.
    rng : numpy.random.Generator or int, optional
        Required when ``n_boot > 0``.
    ci_level : float, default 0.95
        Confidence level.

    Returns
    -------
    DataFrame
        ``by`` columns, ``measure`` (``"fleiss_kappa"``), ``estimate``, ``test``
        (``"z"``), ``test_statistic``, ``p_value`` (z test of kappa = 0 with the null
        standard error of Fleiss, Nee & Landis 1979), ``p_observed``, ``p_expected``,
        ``n`` (items used), ``n_raters`` (ratings per item), ``n_categories``,
        ``n_missing`` (rows without a label), ``n_skipped`` (items with fewer ratings
        than the others, left out), and with ``n_boot`` the CI columns.

    Notes
    -----
    With :math:`N` items, :math:`n` ratings per item and :math:`n_{ij}` ratings of
    item :math:`i` in category :math:`j`: :math:`p_j=\\sum_i n_{ij}/(Nn)`,
    :math:`P_i=(\\sum_j n_{ij}^2-n)/(n(n-1))`, :math:`\\bar P = \\frac1N\\sum_i P_i`,
    :math:`\\bar P_e=\\sum_j p_j^2`, :math:`\\kappa=(\\bar P-\\bar P_e)/(1-\\bar P_e)`
    (Fleiss 1971). Null variance:
    :math:`\\frac{2}{Nn(n-1)}\\frac{(\\sum p_jq_j)^2-\\sum p_jq_j(q_j-p_j)}
    {(\\sum p_jq_j)^2}` with :math:`q_j=1-p_j`. Fleiss' (1971) example of 30 patients
    and 6 psychiatrists gives :math:`\\kappa = 0.430` (z = 17.65), reproduced in the
    tests and matching ``statsmodels.stats.inter_rater.fleiss_kappa``.

    References
    ----------
    .. [1] Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
       *Psychological Bulletin*, 76(5), 378-382.
    .. [2] Fleiss, J. L., Nee, J. C. M., & Landis, J. R. (1979). Large sample variance
       of kappa in the case of different sets of raters. *Psychological Bulletin*,
       86(5), 974-977.

    Examples
    --------
    >>> import pandas as pd
    >>> from workbench.stats import fleiss_kappa
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...                    "rater": ["r1", "r2", "r3"] * 3,
    ...                    "label": ["x", "x", "x", "y", "y", "x", "y", "y", "y"]})
    >>> round(float(fleiss_kappa(df, item="item", rater="rater", label="label")
    ...             .loc[0, "estimate"]), 4)
    0.55
    """
    item_cols, by_cols = as_list(item), as_list(by)
    check_frame(data, [*item_cols, rater, label, *by_cols])
    ci_level = check_level(ci_level)
    gen = as_rng(rng) if n_boot else None
    check_unique(data, by_cols + item_cols + [rater], why="one label per item and rater")
    rows = []
    for key, part in group_items(data, by_cols):
        ok = part[label].notna()
        part = part.loc[ok]
        counts = count_table(part, item_cols, label)
        per_item = counts.sum(axis=1)
        n_r = int(per_item.max()) if len(per_item) else 0
        keep = (per_item == n_r).to_numpy()
        table = counts.to_numpy(dtype=float)[keep]
        res = _fleiss(table)
        row = {
            **key,
            "measure": "fleiss_kappa",
            **res,
            "n_raters": n_r,
            "n_missing": int((~ok).sum()),
            "n_skipped": int((~keep).sum()),
        }
        if n_boot and table.shape[0]:
            p_i = _agreement_rows(table)
            reps = boot_reps(
                table.shape[0],
                n_boot,
                gen,
                lambda c, t=table, p=p_i, m=n_r: _fleiss_batch(c @ t, c @ p, t.shape[0], m),
            )
            row.update(percentile_ci(reps, ci_level, n_boot))
        rows.append(row)
    return tidy(pd.DataFrame(rows), keys=by_cols)


def count_table(part: pd.DataFrame, item_cols: list[str], column: str) -> pd.DataFrame:
    """Items x categories table of counts (categories sorted)."""
    counts = (
        part.groupby([*item_cols, column], dropna=False, observed=True)
        .size()
        .unstack(column, fill_value=0)
    )
    return counts.reindex(columns=_sorted_categories(counts.columns), fill_value=0)


def _agreement_rows(table: np.ndarray) -> np.ndarray:
    n_r = table.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((table**2).sum(1) - n_r) / (n_r * (n_r - 1))


def _fleiss_batch(cat_totals, p_sum, n_items, n_r):
    """Kappa from (B, k) category totals and (B,) sums of P_i (vectorised bootstrap)."""
    p_j = cat_totals / (n_items * n_r)
    pe = (p_j**2).sum(1)
    pbar = p_sum / n_items
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1, (pbar - pe) / (1 - pe), np.nan)


def _fleiss(table: np.ndarray) -> dict:
    from scipy import stats as sps
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    big_n, k = table.shape
    out = {"n": int(big_n), "n_categories": int(k)}
    if big_n == 0 or table.sum(1)[0] < 2:
        return {**out, "estimate": np.nan}
    n_r = table.sum(1)[0]
    p_j = table.sum(0) / (big_n * n_r)
    pbar = float(_agreement_rows(table).mean())
    pe = float((p_j**2).sum())
    if pe >= 1:
        return {**out, "estimate": np.nan, "p_observed": pbar, "p_expected": pe}
    kappa = float(sm_fleiss(table, method="fleiss"))
    pq = p_j * (1 - p_j)  # the null variance (z test), which statsmodels does not give
    s = pq.sum()
    var0 = 2 / (big_n * n_r * (n_r - 1)) * (s**2 - (pq * (1 - 2 * p_j)).sum()) / s**2
    z = kappa / np.sqrt(var0)
    return {
        **out,
        "estimate": kappa,
        "test": "z",
        "test_statistic": float(z),
        "p_value": float(2 * sps.norm.sf(abs(z))),
        "p_observed": pbar,
        "p_expected": pe,
    }
