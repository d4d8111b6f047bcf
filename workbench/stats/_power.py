"""Variance components from a pilot, and power by simulation."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from workbench.stats._columns import tidy
from workbench.stats._util import (
    as_list,
    as_rng,
    check_frame,
    check_level,
    check_unique,
    numeric,
    wilson_interval,
)

COMPONENTS = ("item", "judge", "residual", "trial")
DESIGNS = ("paired", "independent")
_CHUNK = 4_000_000  # simulated values per chunk


def variance_components(
    data: pd.DataFrame,
    *,
    score: str,
    item: str | Sequence[str],
    judge: str | None = None,
    trial: str | None = "trial",
    incomplete: str = "raise",
) -> pd.DataFrame:
    """Variance components of judge scores (item, judge, residual, trial) from a pilot.

    Parameters
    ----------
    data : DataFrame
        One row per score of a *balanced* pilot: every item scored by every judge in
        the same number of trials.
    score : str
        Numeric score column.
    item : str or list of str
        Item columns (one response per item).
    judge : str, optional
        Judge column. Without it the pilot has one judge and the residual
        (item x judge) component cannot be told apart from the item component.
    trial : str or None, default "trial"
        Trial (repeat) column. ``None``: one score per item and judge, and trial noise
        is part of the residual.
    incomplete : {"raise", "drop"}, default "raise"
        What to do with items lacking a score (missing rows, NaN scores, or a trial
        count differing from the most common one): raise naming the first such item,
        or drop them (counted in ``n_skipped``).

    Returns
    -------
    DataFrame
        One row per component (``item``, ``judge``, ``residual``, ``trial``):
        ``component``, ``variance`` (truncated at 0), ``variance_raw`` (the
        method-of-moments value), ``share`` (of the total), ``n_items``,
        ``n_judges``, ``n_trials``, ``n_skipped``. ``dict(zip(res.component,
        res.variance))`` feeds :func:`power_by_simulation`.

    Notes
    -----
    Random-effects model :math:`y_{ijt} = \\mu + a_i + b_j + (ab)_{ij} + e_{ijt}` for
    :math:`I` items, :math:`J` judges and :math:`T` trials, estimated by the ANOVA
    (method-of-moments) estimator: equating mean squares to their expectations,
    :math:`E[MS_W]=\\sigma^2_t`, :math:`E[MS_{IJ}]=\\sigma^2_t+T\\sigma^2_{r}`,
    :math:`E[MS_I]=\\sigma^2_t+T\\sigma^2_r+JT\\sigma^2_a`,
    :math:`E[MS_J]=\\sigma^2_t+T\\sigma^2_r+IT\\sigma^2_b`, so
    :math:`\\hat\\sigma^2_t=MS_W`, :math:`\\hat\\sigma^2_r=(MS_{IJ}-MS_W)/T`,
    :math:`\\hat\\sigma^2_a=(MS_I-MS_{IJ})/(JT)`,
    :math:`\\hat\\sigma^2_b=(MS_J-MS_{IJ})/(IT)` (Searle, Casella & McCulloch 1992,
    ch. 4; the G-study of generalisability theory, Brennan 2001). Negative estimates
    are set to 0, as is customary. Kept by hand: statsmodels' ``MixedLM`` fits crossed
    random effects by (RE)ML, another estimator, and pingouin's ANOVAs give no
    variance components.

    References
    ----------
    .. [1] Searle, S. R., Casella, G., & McCulloch, C. E. (1992). *Variance
       Components*. Wiley.
    .. [2] Brennan, R. L. (2001). *Generalizability Theory*. Springer.

    Examples
    --------
    >>> import pandas as pd
    >>> from workbench.stats import variance_components
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "trial": [0, 1] * 3,
    ...                    "score": [2.0, 4.0, 5.0, 5.0, 8.0, 6.0]})
    >>> vc = variance_components(df, score="score", item="item")
    >>> vc[["component", "variance"]].round(3)
      component  variance
    0      item     3.333
    1     judge     0.000
    2  residual     0.000
    3     trial     1.333
    """
    if incomplete not in ("raise", "drop"):
        raise ValueError(f"incomplete must be 'raise' or 'drop', got {incomplete!r}")
    item_cols = as_list(item)
    judge_cols, trial_cols = as_list(judge), as_list(trial)
    check_frame(data, [score, *item_cols, *judge_cols, *trial_cols])
    check_unique(
        data, item_cols + judge_cols + trial_cols, why="one score per item, judge and trial"
    )
    items, labels = pd.MultiIndex.from_frame(data[item_cols]).factorize()
    judges = pd.MultiIndex.from_frame(data[judge_cols]).factorize()[0] if judge_cols else 0
    frame = pd.DataFrame({"_i": items, "_j": judges, "_y": numeric(data, score)})
    n_j = int(frame["_j"].max()) + 1 if len(frame) else 0
    # balance: an item is complete when every judge has the modal number of scored trials
    scored = frame.loc[frame["_y"].notna()]
    cells = scored.groupby(["_i", "_j"]).size()
    n_t = int(cells.mode().iloc[0]) if len(cells) else 0
    full = (cells == n_t).groupby(level="_i").sum()
    complete = set(full.index[full == n_j])
    bad = [labels[i] for i in range(len(labels)) if i not in complete]
    if bad and incomplete == "raise":
        raise ValueError(
            f"item {bad[0]!r} is incomplete (every item needs every judge with {n_t} "
            "non-missing trials); pass incomplete='drop' to leave such items out"
        )
    frame = scored.loc[scored["_i"].isin(complete)]
    codes = pd.factorize(frame["_i"])[0]
    n_i = int(codes.max()) + 1 if len(codes) else 0
    if n_i < 2:
        raise ValueError("variance_components needs at least two complete items")
    y = np.empty((n_i, n_j, n_t))
    order = np.lexsort((np.arange(len(frame)), frame["_j"].to_numpy(), codes))
    y[:] = frame["_y"].to_numpy(dtype=float)[order].reshape(n_i, n_j, n_t)

    grand = y.mean()
    m_i, m_j, m_ij = y.mean((1, 2)), y.mean((0, 2)), y.mean(2)
    ms_i = n_j * n_t * ((m_i - grand) ** 2).sum() / (n_i - 1)
    ms_j = n_i * n_t * ((m_j - grand) ** 2).sum() / (n_j - 1) if n_j > 1 else np.nan
    inter = m_ij - m_i[:, None] - m_j[None, :] + grand
    ms_ij = n_t * (inter**2).sum() / ((n_i - 1) * (n_j - 1)) if n_j > 1 else np.nan
    ms_w = ((y - m_ij[..., None]) ** 2).sum() / (n_i * n_j * (n_t - 1)) if n_t > 1 else 0.0
    if n_j > 1:
        raw = {
            "item": (ms_i - ms_ij) / (n_j * n_t),
            "judge": (ms_j - ms_ij) / (n_i * n_t),
            "residual": (ms_ij - ms_w) / n_t,
            "trial": ms_w,
        }
    else:
        raw = {"item": (ms_i - ms_w) / n_t, "judge": 0.0, "residual": 0.0, "trial": ms_w}
    est = {k: max(float(v), 0.0) for k, v in raw.items()}
    total = sum(est.values())
    rows = [
        {
            "component": k,
            "variance": est[k],
            "variance_raw": float(raw[k]),
            "share": est[k] / total if total > 0 else np.nan,
            "n_items": n_i,
            "n_judges": n_j,
            "n_trials": n_t,
            "n_skipped": len(bad),
        }
        for k in COMPONENTS
    ]
    return tidy(pd.DataFrame(rows))


def _grid(value) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        return [value]
    return list(value)


def power_by_simulation(
    *,
    variance_components: Mapping[str, float] | pd.DataFrame,
    effect: float | Sequence[float],
    n_items: int | Sequence[int],
    n_trials: int | Sequence[int] = 1,
    n_judges: int | Sequence[int] = 1,
    alpha: float = 0.05,
    n_sim: int = 2000,
    rng: np.random.Generator | int | None,
    design: str = "independent",
    test: str = "t",
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Power to detect a difference between two versions, by simulation.

    Parameters
    ----------
    variance_components : mapping or DataFrame
        Variances ``item``, ``judge``, ``residual``, ``trial`` (missing keys are 0),
        e.g. from :func:`variance_components` on a pilot.
    effect : float or sequence
        True difference of the two versions' mean scores, in score units.
    n_items, n_trials, n_judges : int or sequence
        Items per version, trials per item and judge, judges; the grid is their
        product (with ``effect``).
    alpha : float, default 0.05
        Two-sided significance level.
    n_sim : int, default 2000
        Simulated studies per grid cell.
    rng : numpy.random.Generator or int
        Required.
    design : {"independent", "paired"}, default "independent"
        ``independent``: each version is scored on its own items (seed 003: two
        pipeline versions compared by the scores of the reports each produced);
        ``paired``: both versions answer the same items.
    test : {"t", "welch"}, default "t"
        Paired t test (paired design) or Student's two-sample t test on item means
        (independent design); ``"welch"``: Welch's test (independent design).
    ci_level : float, default 0.95
        Level of the Monte Carlo interval of the power.

    Returns
    -------
    DataFrame
        One row per grid cell: ``measure`` (``"power"``), ``design``, ``test``,
        ``effect``, ``n_items``, ``n_trials``, ``n_judges``, ``estimate``
        (rejection rate), ``ci_low``, ``ci_high`` (Wilson interval of the Monte Carlo
        error), ``ci_level``, ``ci_method``, ``power_analytic`` (noncentral t),
        ``effect_size_d``, ``alpha``, ``n_sim``.

    Notes
    -----
    Each simulated study draws, for version :math:`v`, item :math:`i`, judge
    :math:`j` and trial :math:`t`,
    :math:`y_{vijt} = \\delta[v=1] + a_{vi} + b_j + r_{vij} + e_{vijt}` with normal
    components of the given variances. Items are shared by both versions in the
    paired design (:math:`a_{0i}=a_{1i}`) and drawn anew for each version in the
    independent one; the judge panel is shared, so judge leniency cancels. Scores are
    averaged over judges and trials per item, and the item means are tested. The
    analysed per-item variance is :math:`\\sigma^2_a+\\sigma^2_r/J+\\sigma^2_t/(JT)`
    (independent) and the paired difference has variance
    :math:`2(\\sigma^2_r/J+\\sigma^2_t/(JT))`; ``effect_size_d`` is the effect over
    the square root of the first (or of the second, paired), and ``power_analytic``
    the corresponding noncentral-t power (Cohen 1988), which ``statsmodels``'
    ``TTestIndPower`` / ``TTestPower`` reproduce.

    References
    ----------
    .. [1] Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*
       (2nd ed.). Lawrence Erlbaum.
    .. [2] Arnold, B. F., Hogan, D. R., Colford, J. M., & Hubbard, A. E. (2011).
       Simulation methods to estimate design power: an overview for applied research.
       *BMC Medical Research Methodology*, 11, 94.

    Examples
    --------
    >>> from workbench.stats import power_by_simulation
    >>> res = power_by_simulation(
    ...     variance_components={"item": 1.0, "residual": 0.5, "trial": 0.5},
    ...     effect=1.0, n_items=[5, 20], n_trials=2, n_sim=400, rng=0)
    >>> res[["n_items", "estimate", "power_analytic"]].round(2)
       n_items  estimate  power_analytic
    0        5      0.22            0.18
    1       20      0.65            0.64
    """
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    if test not in ("t", "welch"):
        raise ValueError(f"test must be 't' or 'welch', got {test!r}")
    if test == "welch" and design == "paired":
        raise ValueError("test='welch' applies to the independent design only")
    ci_level = check_level(ci_level)
    comp = _components(variance_components)
    gen = as_rng(rng, needed_for="power_by_simulation")
    rows = []
    for eff, n_i, n_t, n_j in itertools.product(
        _grid(effect), _grid(n_items), _grid(n_trials), _grid(n_judges)
    ):
        n_i, n_t, n_j = int(n_i), int(n_t), int(n_j)
        if n_i < 2 or n_t < 1 or n_j < 1:
            raise ValueError("n_items must be >= 2, n_trials and n_judges >= 1")
        p = _simulate(comp, float(eff), n_i, n_t, n_j, n_sim, gen, design, test)
        hits = int((p < alpha).sum())
        low, high = wilson_interval(hits, n_sim, ci_level)
        analytic, d = _analytic(comp, float(eff), n_i, n_t, n_j, alpha, design)
        rows.append(
            {
                "measure": "power",
                "design": design,
                "test": "paired_t" if design == "paired" else test,
                "effect": float(eff),
                "n_items": n_i,
                "n_trials": n_t,
                "n_judges": n_j,
                "estimate": hits / n_sim,
                "ci_low": low,
                "ci_high": high,
                "ci_level": ci_level,
                "ci_method": "wilson",
                "power_analytic": analytic,
                "effect_size_d": d,
                "alpha": alpha,
                "n_sim": n_sim,
            }
        )
    return tidy(pd.DataFrame(rows))


def _components(vc) -> dict[str, float]:
    if isinstance(vc, pd.DataFrame):
        check_frame(vc, ["component", "variance"], name="variance_components")
        vc = dict(zip(vc["component"], vc["variance"], strict=True))
    unknown = set(vc) - set(COMPONENTS)
    if unknown:
        raise ValueError(f"unknown variance components {sorted(unknown)}; use {list(COMPONENTS)}")
    out = {k: float(vc.get(k, 0.0)) for k in COMPONENTS}
    if any(v < 0 or not np.isfinite(v) for v in out.values()):
        raise ValueError(f"variance components must be finite and >= 0, got {out}")
    return out


def _simulate(comp, eff, n_i, n_t, n_j, n_sim, gen, design, test) -> np.ndarray:
    """p-values of n_sim simulated studies (scipy's t tests, vectorised over studies)."""
    from scipy import stats as sps

    sd = {k: np.sqrt(v) for k, v in comp.items()}
    per_sim = 2 * n_i * n_j * n_t
    step = max(1, _CHUNK // per_sim)
    out = np.empty(n_sim)
    for start in range(0, n_sim, step):
        b = min(n_sim, start + step) - start
        items0 = gen.normal(0, sd["item"], (b, n_i, 1, 1))
        items1 = items0 if design == "paired" else gen.normal(0, sd["item"], (b, n_i, 1, 1))
        judges = gen.normal(0, sd["judge"], (b, 1, n_j, 1))
        means = []
        for v, items in ((0, items0), (1, items1)):
            y = (
                eff * v
                + items
                + judges
                + gen.normal(0, sd["residual"], (b, n_i, n_j, 1))
                + gen.normal(0, sd["trial"], (b, n_i, n_j, n_t))
            )
            means.append(y.mean(axis=(2, 3)))
        m0, m1 = means
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore")  # scipy's warning on constant simulated data
            if design == "paired":
                p = sps.ttest_rel(m1, m0, axis=1).pvalue
            else:
                p = sps.ttest_ind(m1, m0, axis=1, equal_var=test != "welch").pvalue
        out[start : start + b] = np.where(np.isnan(p), 1.0, p)
    return out


def _analytic(comp, eff, n_i, n_t, n_j, alpha, design) -> tuple[float, float]:
    """Noncentral-t power of the analysed test: statsmodels' ``TTestPower`` (paired) or
    ``TTestIndPower`` (independent, equal groups), and the standardised effect."""
    from statsmodels.stats.power import TTestIndPower, TTestPower

    noise = comp["residual"] / n_j + comp["trial"] / (n_j * n_t)
    sd = np.sqrt(2 * noise) if design == "paired" else np.sqrt(comp["item"] + noise)
    if sd == 0:
        return (1.0 if eff != 0 else np.nan), np.nan
    d = eff / sd
    if design == "paired":
        power = TTestPower().power(effect_size=d, nobs=n_i, alpha=alpha)
    else:
        power = TTestIndPower().power(effect_size=d, nobs1=n_i, alpha=alpha, ratio=1.0)
    return float(power), float(d)
