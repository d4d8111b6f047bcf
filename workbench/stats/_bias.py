"""Bias probes: paired perturbation effects and length (verbosity) bias."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.stats._columns import tidy
from workbench.stats._comparison import paired_difference, wilcoxon
from workbench.stats._position import UNPARSED
from workbench.stats._util import (
    Columns,
    as_list,
    check_frame,
    check_level,
    check_unique,
    group_items,
    numeric,
    wilson_interval,
)

KINDS = ("auto", "score", "verdict")


def perturbation_effect(
    data: pd.DataFrame,
    *,
    score: str,
    item: Columns,
    condition: str,
    baseline,
    by: Columns | None = None,
    kind: str = "auto",
    pair_on: Columns | None = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Effect of a perturbation: paired difference (scores) or flip rate (verdicts).

    Parameters
    ----------
    data : DataFrame
        Long format, one row per item, condition (and trial, judge ...).
    score : str
        Score column (numeric) or verdict column (any hashable; missing = unparsed).
    item : str or list of str
        Item columns: the pairing unit.
    condition : str
        Condition column (e.g. ``"perturbation"``).
    baseline
        The baseline value of ``condition``; every other value is compared with it.
    by : str or list of str, optional
        Separate analyses (e.g. ``"judge_model"``).
    kind : {"auto", "score", "verdict"}, default "auto"
        ``auto``: numeric non-boolean columns are scores, anything else verdicts
        (pass ``kind="verdict"`` for verdicts coded 1/2).
    pair_on : str or list of str, optional
        Extra pairing columns (e.g. ``"trial"`` to pair verdicts trial by trial).
    ci_level : float, default 0.95
        Confidence level.

    Returns
    -------
    DataFrame
        One row per ``by`` group and non-baseline condition: ``by`` columns,
        ``measure`` (``"mean_difference"`` or ``"flip_rate"``), ``kind``,
        ``condition``, ``baseline``, ``n`` (paired items), ``n_incomplete`` (items
        present in only one of the two conditions), ``n_missing`` (rows with a missing
        score, scores only), ``estimate``, ``ci_low``, ``ci_high``, ``ci_level``,
        ``ci_method``; for scores also ``se``, ``test`` (``"paired_t"``),
        ``test_statistic``, ``df``, ``p_value``, ``p_value_wilcoxon``, ``cohen_dz``,
        ``rank_biserial``, ``mean_baseline``, ``mean_condition``; for verdicts
        ``n_unparsed``.

    Notes
    -----
    *Scores.* Rows with a missing score (e.g. an unparsed reply) are dropped and
    counted; the remaining trials (and judges) of an item are **averaged within the
    item and condition first**, so the unit of analysis is the item. With
    :math:`d_i` = perturbed - baseline: estimate :math:`\\bar d`, t interval
    :math:`\\bar d \\pm t_{1-\\alpha/2,n-1}s_d/\\sqrt n`, paired t test, Wilcoxon
    signed-rank p-value and :math:`d_z=\\bar d/s_d` (Lakens 2013).

    *Verdicts.* Verdicts are paired one to one on item (and ``pair_on``); an unparsed
    verdict is a value of its own, so a change from a verdict to "unparsed" is a flip.
    The flip rate is the share of pairs whose verdicts differ, with a Wilson (1927)
    score interval. Flip rates under an order swap are the position-bias measure of
    Zheng et al. (2023).

    References
    ----------
    .. [1] Lakens, D. (2013). Calculating and reporting effect sizes to facilitate
       cumulative science. *Frontiers in Psychology*, 4, 863.
    .. [2] Wilson, E. B. (1927). Probable inference, the law of succession, and
       statistical inference. *JASA*, 22(158), 209-212.
    .. [3] Zheng, L., Chiang, W.-L., Sheng, Y., et al. (2023). Judging LLM-as-a-judge
       with MT-Bench and Chatbot Arena. *NeurIPS Datasets and Benchmarks*.

    Examples
    --------
    >>> import pandas as pd
    >>> from workbench.stats import perturbation_effect
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 4, 4],
    ...                    "cond": ["orig", "padded"] * 4,
    ...                    "score": [5, 6, 3, 5, 4, 4, 2, 4]})
    >>> res = perturbation_effect(df, score="score", item="item", condition="cond",
    ...                           baseline="orig")
    >>> res[["condition", "n", "estimate", "cohen_dz"]].round(3)
      condition  n  estimate  cohen_dz
    0    padded  4      1.25     1.306
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    item_cols, by_cols, pair_cols = as_list(item), as_list(by), as_list(pair_on)
    check_frame(data, [score, *item_cols, condition, *by_cols, *pair_cols])
    ci_level = check_level(ci_level)
    if kind == "auto":
        dtype = data[score].dtype
        is_num = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        kind = "score" if is_num else "verdict"
    if baseline not in set(data[condition].dropna()):
        raise ValueError(f"baseline {baseline!r} is not a value of {condition!r}")
    keys = item_cols + pair_cols
    if kind == "verdict":
        check_unique(
            data,
            by_cols + keys + [condition],
            why="one verdict per item and condition; name trials in pair_on=",
        )
        frame = data.assign(_v=data[score].astype(object).where(data[score].notna(), UNPARSED))
    else:
        frame = data.assign(_v=numeric(data, score))

    rows = []
    for key, part in group_items(frame, by_cols):
        n_missing = 0
        if kind == "score":
            n_missing = int(part["_v"].isna().sum())
            part = part.loc[part["_v"].notna()]
            wide = part.pivot_table(
                index=keys, columns=condition, values="_v", aggfunc="mean", observed=True
            )
        else:
            wide = part.pivot(index=keys, columns=condition, values="_v")
        if baseline not in wide.columns:  # this group has no baseline rows: nothing pairs
            wide[baseline] = np.nan
        conditions = [c for c in wide.columns if c != baseline]
        for cond in conditions:
            pair = wide[[baseline, cond]]
            complete = pair.notna().all(axis=1)
            present = pair.notna().any(axis=1)
            base = {
                **key,
                "kind": kind,
                "condition": cond,
                "baseline": baseline,
                "n_incomplete": int((present & ~complete).sum()),
            }
            x0, x1 = pair.loc[complete, baseline], pair.loc[complete, cond]
            if kind == "score":
                rows.append(
                    {
                        **base,
                        "n_missing": n_missing,
                        **_score_effect(
                            x0.to_numpy(dtype=float, copy=True),
                            x1.to_numpy(dtype=float, copy=True),
                            ci_level,
                        ),
                    }
                )
            else:
                flips = int((x0 != x1).sum())
                n = int(complete.sum())
                low, high = wilson_interval(flips, n, ci_level)
                rows.append(
                    {
                        **base,
                        "measure": "flip_rate",
                        "n": n,
                        "estimate": flips / n if n else np.nan,
                        "ci_low": low,
                        "ci_high": high,
                        "ci_level": ci_level,
                        "ci_method": "wilson",
                        "n_unparsed": int((x0 == UNPARSED).sum() + (x1 == UNPARSED).sum()),
                    }
                )
    return tidy(pd.DataFrame(rows), keys=by_cols)


def _score_effect(x0: np.ndarray, x1: np.ndarray, ci_level: float) -> dict:
    w = wilcoxon(x1 - x0)
    return {
        "measure": "mean_difference",
        **paired_difference(x1, x0, ci_level),
        "ci_method": "t",
        "test": "paired_t",
        "p_value_wilcoxon": w["p_val"],
        "rank_biserial": w["RBC"],
        "mean_baseline": float(x0.mean()) if x0.size else np.nan,
        "mean_condition": float(x1.mean()) if x1.size else np.nan,
    }


def length_bias(
    data: pd.DataFrame,
    *,
    score: str,
    length: str,
    by: Columns | None = None,
    item: Columns | None = None,
    per: float = 100.0,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Slope of score on response length, standardised and raw, with CI and p.

    Parameters
    ----------
    data : DataFrame
        One row per scored response.
    score, length : str
        Numeric columns (length in characters, tokens ...). Rows missing either are
        dropped and counted.
    by : str or list of str, optional
        One slope per group (e.g. ``"judge_model"``).
    item : str or list of str, optional
        With item columns, both variables are centred within item first (a
        fixed-effects regression): the slope then compares longer and shorter
        responses *to the same question*, not easy questions with hard ones.
    per : float, default 100
        Length units the raw slope refers to.
    ci_level : float, default 0.95
        Confidence level.

    Returns
    -------
    DataFrame
        ``by`` columns, ``measure`` (``"standardized_slope"``), ``estimate`` (the
        slope of z-scored score on z-scored length, i.e. the Pearson r, or the partial
        r given item), ``se``, ``ci_low``, ``ci_high``, ``ci_level``, ``ci_method``
        (``"t"``), ``test`` (``"t"``), ``test_statistic``, ``df``, ``p_value``,
        ``raw_slope`` (score units per ``per`` length units), ``raw_slope_ci_low``,
        ``raw_slope_ci_high``, ``per``, ``n``, ``n_missing``, ``n_units`` (items, with
        ``item``).

    Notes
    -----
    Ordinary least squares of score on length. With both variables z-scored, the
    slope equals the Pearson correlation :math:`r`, with standard error
    :math:`\\sqrt{(1-r^2)/\\nu}` and :math:`t = r/SE` on :math:`\\nu = n-2` df
    (:math:`\\nu = n - g - 1` after centring within :math:`g` items). The raw slope
    :math:`b = S_{xy}/S_{xx}` has SE :math:`\\sqrt{SSE/(\\nu S_{xx})}` and the same
    t statistic. Checked against ``statsmodels`` OLS (with item dummies for ``item``);
    kept by hand because the within-item df :math:`n-g-1` is not
    :func:`scipy.stats.linregress`'s, and OLS would build an n x g dummy matrix per group.

    References
    ----------
    .. [1] Dubois, Y., Galambosi, B., Liang, P., & Hashimoto, T. B. (2024).
       Length-controlled AlpacaEval: a simple way to debias automatic evaluators.
       *COLM*.
    .. [2] Wooldridge, J. M. (2010). *Econometric Analysis of Cross Section and Panel
       Data* (2nd ed.), ch. 10 (fixed-effects estimation). MIT Press.

    Examples
    --------
    >>> import pandas as pd
    >>> from workbench.stats import length_bias
    >>> df = pd.DataFrame({"length": [100, 200, 300, 400, 500],
    ...                    "score": [2, 3, 3, 4, 5]})
    >>> res = length_bias(df, score="score", length="length")
    >>> res[["estimate", "raw_slope", "n"]].round(3)
       estimate  raw_slope  n
    0     0.971        0.7  5
    """
    from scipy import stats as sps

    by_cols, item_cols = as_list(by), as_list(item)
    check_frame(data, [score, length, *by_cols, *item_cols])
    ci_level = check_level(ci_level)
    frame = data.assign(_y=numeric(data, score), _x=numeric(data, length))
    rows = []
    for key, part in group_items(frame, by_cols):
        ok = part["_y"].notna() & part["_x"].notna()
        part = part.loc[ok]
        y = part["_y"].to_numpy(dtype=float, copy=True)
        x = part["_x"].to_numpy(dtype=float, copy=True)
        n = y.size
        if item_cols:
            g = part.groupby(item_cols, dropna=False, observed=True)
            y = y - g["_y"].transform("mean").to_numpy(dtype=float, copy=True)
            x = x - g["_x"].transform("mean").to_numpy(dtype=float, copy=True)
            groups = g.ngroups
            dfree = n - groups - 1
        else:
            y, x = y - y.mean() if n else y, x - x.mean() if n else x
            groups = None
            dfree = n - 2
        row = {
            **key,
            "measure": "standardized_slope",
            "n": int(n),
            "n_missing": int((~ok).sum()),
            "per": per,
            "ci_level": ci_level,
            "ci_method": "t",
            "test": "t",
            "df": float(dfree),
        }
        if groups is not None:
            row["n_units"] = int(groups)
        sxx, syy, sxy = (x * x).sum(), (y * y).sum(), (x * y).sum()
        if dfree < 1 or sxx == 0 or syy == 0:
            rows.append({**row, "estimate": np.nan})
            continue
        r = sxy / np.sqrt(sxx * syy)
        se_r = np.sqrt(max(1 - r * r, 0.0) / dfree)
        b = sxy / sxx
        sse = max(syy - b * sxy, 0.0)
        se_b = np.sqrt(sse / dfree / sxx)
        q = sps.t.ppf(0.5 + ci_level / 2, dfree)
        t = r / se_r if se_r > 0 else np.inf * np.sign(r)
        rows.append(
            {
                **row,
                "estimate": float(r),
                "se": float(se_r),
                "ci_low": float(r - q * se_r),
                "ci_high": float(r + q * se_r),
                "test_statistic": float(t),
                "p_value": float(2 * sps.t.sf(abs(t), dfree)),
                "raw_slope": float(b * per),
                "raw_slope_ci_low": float((b - q * se_b) * per),
                "raw_slope_ci_high": float((b + q * se_b) * per),
            }
        )
    return tidy(pd.DataFrame(rows), keys=by_cols)
