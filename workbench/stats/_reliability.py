"""Seed 000's consistency index (eq. 1) and variance ratio (eq. 2)."""

from __future__ import annotations

import warnings

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
    label,
    numeric,
    percentile_ci,
)

_SEED000 = (
    "Ota, M., Saigusa, K., Igarashi, K., Tameoka, A., & Kazama, M. (Ubie, Inc.). "
    "医療系対話 AI における評価基準の策定と自動評価手法の比較検証 [Building evaluation "
    "criteria for medical dialogue AI and comparing automatic evaluation methods], "
    "section 4, equations (1) and (2)."
)


def _codes(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, int]:
    codes, uniques = pd.MultiIndex.from_frame(frame[columns]).factorize()
    return np.asarray(codes), len(uniques)


def _sums(codes: np.ndarray, y: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    """Count, sum and sum of squares of ``y`` per code."""
    n = np.bincount(codes, minlength=size).astype(float)
    s1 = np.bincount(codes, weights=y, minlength=size)
    s2 = np.bincount(codes, weights=y * y, minlength=size)
    return n, s1, s2


def _sd(n, s1, s2, ddof):
    """Standard deviation from counts and sums (NaN where n <= ddof)."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ss = np.asarray(s2) - np.asarray(s1) ** 2 / n
        var = np.where(n > ddof, np.maximum(ss, 0.0) / (n - ddof), np.nan)
    return np.sqrt(var)


def _check_within(data, keys, within, by):
    if within:
        check_unique(
            data,
            by + keys + within,
            why="a factor not listed in within= varies inside a unit; list it in within= "
            "or in the unit/by columns",
        )


def _overlap(**named):
    seen: dict[str, str] = {}
    for arg, cols in named.items():
        for col in cols:
            if col in seen:
                raise ValueError(f"column {col!r} is given both in {seen[col]}= and {arg}=")
            seen[col] = arg


def consistency_index(
    data: pd.DataFrame,
    *,
    score: str,
    unit: Columns,
    ddof: int = 1,
    within: Columns | None = None,
    by: Columns | None = None,
    n_boot: int = 0,
    rng: np.random.Generator | int | None = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Consistency index: mean within-unit standard deviation over the overall one.

    Parameters
    ----------
    data : DataFrame
        Long format, one row per score.
    score : str
        Score column (NaN scores, e.g. unparsed replies, are left out and counted).
    unit : str or list of str
        Columns defining one unit, e.g. ``["item_id", "answer_model"]`` (a conversation).
    ddof : int, default 1
        Delta degrees of freedom of every standard deviation.
    within : str or list of str, optional
        The factors that vary inside a unit, e.g. ``"trial"`` or
        ``["trial", "judge_model"]``. When given, rows must be unique on
        ``by + unit + within`` (otherwise some other factor varies inside a unit and an
        error says so); the output records it. ``None`` records ``"unchecked"``.
    by : str or list of str, optional
        One index per group (e.g. ``"protocol"``, ``["protocol", "temperature"]``).
    n_boot : int, default 0
        Bootstrap resamples of units for a percentile CI (0: no CI).
    rng : numpy.random.Generator or int, optional
        Required when ``n_boot > 0``.
    ci_level : float, default 0.95
        Confidence level.

    Returns
    -------
    DataFrame
        One row per ``by`` group: the ``by`` columns, ``measure``
        (``"consistency_index"``), ``unit``, ``within`` (the declared factors joined by
        ``+``), ``estimate``, ``numerator`` (mean within-unit sd), ``denominator`` (sd
        of all scores), ``n`` (scores used), ``n_missing`` (NaN scores),
        ``n_skipped`` (units with too few scores for an sd), ``n_units``, and with
        ``n_boot > 0`` also ``ci_low``, ``ci_high``, ``ci_level``, ``ci_method``,
        ``n_boot``.

    Notes
    -----
    Seed 000, equation (1)::

        CI = mean_u sd(scores of unit u) / sd(all scores)

    Lower is better (repeat judgments of a unit agree, relative to the spread of all
    scores). What varies inside a unit decides what the index measures; the seed's
    wording allows two readings for conversation-level units, and both are computed by
    naming the factors:

    * *reading 1, trials only*: ``unit=["item_id", "answer_model", "judge_model"],
      within="trial"`` (or ``unit=["item_id", "answer_model"], within="trial",
      by="judge_model"`` for one index per judge);
    * *reading 2, trials and judges*: ``unit=["item_id", "answer_model"],
      within=["trial", "judge_model"]``.

    The bootstrap resamples units with replacement inside each ``by`` group and
    recomputes both the numerator and the denominator from per-unit sums.

    References
    ----------
    .. [1] {seed}

    Examples
    --------
    Two conversations, each scored by two judges in two trials (the test suite
    recomputes these numbers by hand):

    >>> import pandas as pd
    >>> from workbench.stats import consistency_index
    >>> df = pd.DataFrame({
    ...     "conv": ["c1"] * 4 + ["c2"] * 4,
    ...     "judge": ["j1", "j1", "j2", "j2"] * 2,
    ...     "trial": [0, 1] * 4,
    ...     "score": [4, 6, 6, 8, 1, 1, 3, 3],
    ... })
    >>> r1 = consistency_index(df, score="score", unit=["conv", "judge"], within="trial")
    >>> r2 = consistency_index(df, score="score", unit="conv", within=["trial", "judge"])
    >>> pd.concat([r1, r2])[["unit", "within", "numerator", "denominator", "estimate"]].round(3)
             unit       within  numerator  denominator  estimate
    0  conv+judge        trial      0.707        2.507     0.282
    0        conv  trial+judge      1.394        2.507     0.556
    """
    keys, within_cols, by_cols = as_list(unit), as_list(within), as_list(by)
    if not keys:
        raise ValueError("unit must name at least one column")
    _overlap(unit=keys, within=within_cols, by=by_cols, score=[score])
    check_frame(data, [score, *keys, *within_cols, *by_cols])
    ci_level = check_level(ci_level)
    gen = as_rng(rng) if n_boot else None
    _check_within(data, keys, within_cols, by_cols)
    y_all = numeric(data, score)

    rows = []
    for key, frame in group_items(data.assign(_y=y_all), by_cols):
        y = frame["_y"].to_numpy(dtype=float, copy=True)
        ok = ~np.isnan(y)
        frame, y = frame.loc[ok], y[ok]
        codes, size = _codes(frame, keys)
        y = y - y.mean() if y.size else y  # centre for numerically stable sums
        n, s1, s2 = _sums(codes, y, size)
        sd_u = _sd(n, s1, s2, ddof)
        valid = np.isfinite(sd_u)
        num = float(sd_u[valid].mean()) if valid.any() else np.nan
        den = float(_sd(n.sum(), s1.sum(), s2.sum(), ddof))
        row = {
            **key,
            "measure": "consistency_index",
            "unit": label(keys),
            "within": label(within_cols) or "unchecked",
            "estimate": num / den if den > 0 else np.nan,
            "numerator": num,
            "denominator": den,
            "n": int(y.size),
            "n_missing": int((~ok).sum()),
            "n_skipped": int((~valid).sum()),
            "n_units": int(valid.sum()),
        }
        if n_boot:

            def ratio(counts, n=n, s1=s1, s2=s2, sd_u=sd_u, valid=valid):
                cv = counts[:, valid]
                with np.errstate(invalid="ignore", divide="ignore"):
                    b_num = (cv @ sd_u[valid]) / cv.sum(axis=1)
                    b_den = _sd(counts @ n, counts @ s1, counts @ s2, ddof)
                    return np.where(b_den > 0, b_num / b_den, np.nan)

            reps = boot_reps(size, n_boot, gen, ratio)
            row.update(percentile_ci(reps, ci_level, n_boot))
        rows.append(row)
    return tidy(pd.DataFrame(rows), keys=by_cols)


def variance_ratio(
    data: pd.DataFrame,
    *,
    score: str,
    system: Columns,
    ddof: int = 1,
    within: Columns | None = None,
    replicate: Columns | None = None,
    by: Columns | None = None,
    cluster: Columns | None = None,
    n_boot: int = 0,
    rng: np.random.Generator | int | None = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Variance ratio (noise over signal): within-system sd over the sd of system means.

    Parameters
    ----------
    data : DataFrame
        Long format, one row per score.
    score : str
        Score column (NaN scores are left out and counted).
    system : str or list of str
        Columns defining a system, e.g. ``"answer_model"``.
    ddof : int, default 1
        Delta degrees of freedom of every standard deviation.
    within : str or list of str, optional
        Factors that vary inside a system, e.g. ``["item_id", "trial"]`` or
        ``["item_id", "trial", "judge_model"]``; checked as in
        :func:`consistency_index` and recorded.
    replicate : str or list of str, optional
        Alternative reading of the numerator: the sd, across replicates (e.g.
        ``"trial"``), of the system's mean score in each replicate (averaged over the
        other factors), instead of the sd of all the system's scores. See Notes.
    by : str or list of str, optional
        One ratio per group.
    cluster : str or list of str, optional
        The resampled unit of the bootstrap (e.g. ``"item_id"``: an item is drawn with
        all its rows, for every system). Required when ``n_boot > 0``.
    n_boot : int, default 0
        Bootstrap resamples for a percentile CI (0: no CI).
    rng : numpy.random.Generator or int, optional
        Required when ``n_boot > 0``.
    ci_level : float, default 0.95
        Confidence level.

    Returns
    -------
    DataFrame
        One row per ``by`` group: the ``by`` columns, ``measure``
        (``"variance_ratio"``), ``unit`` (the system columns), ``within``,
        ``replicate`` (``"none"`` for the default reading), ``estimate``,
        ``numerator`` (mean within-system sd), ``denominator`` (sd of the system
        means), ``n``, ``n_missing``, ``n_skipped`` (systems without an sd),
        ``n_units`` (systems), and with ``n_boot > 0`` the CI columns.

    Notes
    -----
    Seed 000, equation (2): "within-model variation" is the mean over answering models
    of the sd of the evaluation scores of that model, "between-model variation" the sd
    of the models' mean scores::

        VR = mean_s sd(scores of system s) / sd_s(mean score of system s)

    Lower is better: the systems are told apart relative to the noise. With
    ``replicate="trial"`` the numerator is instead
    ``mean_s sd_r(mean score of system s in replicate r)``: the run-to-run noise of a
    system's aggregate score, a reading under which noise that averages out over items
    does not count (the seed's discussion says the simple method's random noise
    "cancels when averaged over many conversations"). Report which reading is used.

    References
    ----------
    .. [1] {seed}

    Examples
    --------
    >>> import pandas as pd
    >>> from workbench.stats import variance_ratio
    >>> df = pd.DataFrame({
    ...     "answer_model": ["A"] * 4 + ["B"] * 4,
    ...     "item_id": ["i1", "i1", "i2", "i2"] * 2,
    ...     "trial": [0, 1] * 4,
    ...     "score": [4, 6, 6, 8, 1, 1, 3, 3],
    ... })
    >>> r = variance_ratio(df, score="score", system="answer_model",
    ...                    within=["item_id", "trial"])
    >>> r[["numerator", "denominator", "estimate"]].round(3)
       numerator  denominator  estimate
    0      1.394        2.828     0.493
    >>> r = variance_ratio(df, score="score", system="answer_model",
    ...                    within=["item_id", "trial"], replicate="trial")
    >>> r[["replicate", "numerator", "estimate"]].round(3)
      replicate  numerator  estimate
    0     trial      0.707      0.25
    """
    keys, within_cols, by_cols = as_list(system), as_list(within), as_list(by)
    rep_cols, clus_cols = as_list(replicate), as_list(cluster)
    if not keys:
        raise ValueError("system must name at least one column")
    _overlap(system=keys, by=by_cols, score=[score], replicate=rep_cols)
    _overlap(system=keys, within=within_cols, by=by_cols)
    check_frame(data, [score, *keys, *within_cols, *by_cols, *rep_cols, *clus_cols])
    ci_level = check_level(ci_level)
    if n_boot and not clus_cols:
        raise ValueError("the bootstrap of variance_ratio needs cluster= (e.g. 'item_id')")
    gen = as_rng(rng) if n_boot else None
    _check_within(data, keys, within_cols, by_cols)
    y_all = numeric(data, score)

    rows = []
    for key, frame in group_items(data.assign(_y=y_all), by_cols):
        ok = frame["_y"].notna().to_numpy()
        n_missing = int((~ok).sum())
        frame = frame.loc[ok]
        y = frame["_y"].to_numpy(dtype=float, copy=True)
        y = y - y.mean() if y.size else y
        sys_codes, n_sys = _codes(frame, keys)
        rep_codes, n_rep = _codes(frame, rep_cols) if rep_cols else (np.zeros(len(y), int), 1)
        cell = sys_codes * n_rep + rep_codes
        clus_codes, n_clus = _codes(frame, clus_cols) if clus_cols else (np.zeros(len(y), int), 1)
        # per (cluster, system x replicate) sums: bootstrap = counts @ these matrices
        flat = clus_codes * (n_sys * n_rep) + cell
        size = n_clus * n_sys * n_rep
        n, s1, s2 = (m.reshape(n_clus, n_sys * n_rep) for m in _sums(flat, y, size))
        point = _vr_from_sums(
            n.sum(0)[None], s1.sum(0)[None], s2.sum(0)[None], n_sys, n_rep, ddof, bool(rep_cols)
        )
        est, num, den, n_skipped = (v[0] for v in point)
        row = {
            **key,
            "measure": "variance_ratio",
            "unit": label(keys),
            "within": label(within_cols) or "unchecked",
            "replicate": label(rep_cols) or "none",
            "estimate": est,
            "numerator": num,
            "denominator": den,
            "n": int(y.size),
            "n_missing": n_missing,
            "n_skipped": int(n_skipped),
            "n_units": int(n_sys - n_skipped),
        }
        if n_boot:

            def ratio(c, n=n, s1=s1, s2=s2, n_sys=n_sys, n_rep=n_rep):
                by_rep = bool(rep_cols)
                return _vr_from_sums(c @ n, c @ s1, c @ s2, n_sys, n_rep, ddof, by_rep)[0]

            reps = boot_reps(n_clus, n_boot, gen, ratio)
            row.update(percentile_ci(reps, ci_level, n_boot))
        rows.append(row)
    return tidy(pd.DataFrame(rows), keys=by_cols)


def _vr_from_sums(n, s1, s2, n_sys, n_rep, ddof, by_replicate):
    """Variance ratio from (B, systems x replicates) count/sum matrices, row-wise."""
    b = n.shape[0]
    n3, s13, s23 = (m.reshape(b, n_sys, n_rep) for m in (n, s1, s2))
    n_s, s1_s = n3.sum(2), s13.sum(2)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.where(n_s > 0, s1_s / n_s, np.nan)
        if by_replicate:
            rep_means = np.where(n3 > 0, s13 / n3, np.nan)
            sd_s = np.nanstd(rep_means, axis=-1, ddof=ddof)
        else:
            sd_s = _sd(n_s, s1_s, s23.sum(2), ddof)
        valid = np.isfinite(sd_s)
        num = np.nanmean(np.where(valid, sd_s, np.nan), axis=1)
        den = np.nanstd(means, axis=-1, ddof=ddof)
        est = np.where(den > 0, num / den, np.nan)
    return est, num, den, (~valid).sum(1)


for _f in (consistency_index, variance_ratio):
    _f.__doc__ = _f.__doc__.replace("{seed}", _SEED000)
