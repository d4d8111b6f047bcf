"""Bradley-Terry strengths with bias covariates, and the length-controlled win rate.

One logistic GLM (statsmodels, Binomial family, logit link) over pairwise verdicts: the
log-odds that the answer shown first wins is the difference of the two systems'
strengths, plus a position effect (the intercept: shown first), plus the covariates'
effects (e.g. length difference, self-preference), fitted jointly. Ties are left out.
A pair judged in both orders gives two verdicts that are not independent (the same two
answers): given ``groups``, standard errors are cluster-robust by pair (statsmodels'
``cov_type="cluster"``); the point estimates are the same. The length-controlled win
rate is a simplified form of Dubois et al. (2024): one system against a baseline with
only a (tanh-squashed) length difference, the win rate predicted at zero length
difference.

References
----------
Bradley, R. A. & Terry, M. E. (1952). Rank analysis of incomplete block designs: I. The
method of paired comparisons. *Biometrika*, 39(3/4), 324-345.
Dubois, Y., Galambosi, B., Liang, P. & Hashimoto, T. B. (2024). Length-controlled
AlpacaEval: a simple way to debias automatic evaluators. arXiv:2404.04475.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy.special import expit
from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

__all__ = ["bradley_terry", "bt_design", "length_controlled_win_rate"]


def bt_design(data: pd.DataFrame, *, first: str = "first", second: str = "second",
              covariates: Sequence[str] = (), reference: str | None = None
              ) -> tuple[pd.DataFrame, list[str]]:
    """The design matrix: ``position`` (1), one column per system but ``reference``
    (+1 shown first, -1 shown second), then ``covariates`` as given (each a difference
    first minus second). Returns the matrix and the systems in order (reference first)."""
    systems = sorted(set(data[first]) | set(data[second]))
    reference = systems[0] if reference is None else reference
    if reference not in systems:
        raise ValueError(f"bt_design: reference {reference!r} is not among the systems")
    others = [s for s in systems if s != reference]
    x = pd.DataFrame({"position": 1.0}, index=data.index)
    for s in others:
        x[s] = (data[first] == s).astype(float) - (data[second] == s).astype(float)
    for c in covariates:
        x[c] = data[c].astype(float)
    return x, [reference, *others]


def _glm(y, x, groups, ci_level: float) -> pd.DataFrame:
    """Binomial GLM: per term ``estimate``, ``se``, ``ci_low``, ``ci_high`` (Wald) and
    ``p_value``; cluster-robust by ``groups`` (None: model-based). With fewer than two
    clusters, or no more verdicts than terms, the cluster-robust covariance is undefined:
    the inference columns are then NaN."""
    model = sm.GLM(y, x, family=sm.families.Binomial())
    if groups is None:
        fit = model.fit()
    else:
        codes = pd.factorize(np.asarray(groups))[0]
        if codes.max(initial=0) < 1 or len(codes) <= np.shape(x)[1]:
            fit = model.fit()
            return pd.DataFrame({"estimate": np.asarray(fit.params), "se": np.nan,
                                 "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan},
                                index=getattr(x, "columns", None))
        fit = model.fit(cov_type="cluster", cov_kwds={"groups": codes})
    ci = np.asarray(fit.conf_int(alpha=1 - ci_level))
    return pd.DataFrame({"estimate": np.asarray(fit.params), "se": np.asarray(fit.bse),
                         "ci_low": ci[:, 0], "ci_high": ci[:, 1],
                         "p_value": np.asarray(fit.pvalues)}, index=getattr(x, "columns", None))


def bradley_terry(data: pd.DataFrame, *, first: str = "first", second: str = "second",
                  outcome: str = "first_wins", covariates: Sequence[str] = (),
                  reference: str | None = None, groups: Sequence[str] | None = None,
                  ci_level: float = 0.95) -> pd.DataFrame:
    """Fit Bradley-Terry with a position effect and covariates jointly (logistic GLM).

    Parameters
    ----------
    data : DataFrame
        One row per verdict: the systems shown ``first`` and ``second``, ``outcome``
        (1 first won, 0 second won; NaN rows, e.g. ties, are left out) and the
        ``covariates`` (first minus second, e.g. length difference in 100s of
        characters; self-preference +1 when the judge wrote the first answer, -1 the
        second, 0 neither).
    reference : str, optional
        System whose strength is fixed at 0 (default: the first in sorted order).
    groups : list of str, optional
        Columns that identify a cluster of verdicts, e.g. the pair shown in both orders:
        the standard errors (and CIs, p-values) are then cluster-robust by it (NaN with
        fewer than two clusters or no more verdicts than terms); None: every verdict
        independent (model-based).

    Returns
    -------
    DataFrame
        One row per term: ``term`` (``strength`` | ``position`` | a covariate),
        ``a`` (the system, for strengths), ``estimate`` (log-odds), ``se``, ``ci_low``,
        ``ci_high`` (Wald), ``p_value``, ``n`` (verdicts used), ``ci_level``; the
        reference system's row has estimate 0 and no interval.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n = 3000
    >>> d = pd.DataFrame({"first": rng.choice(["x", "y", "z"], n)})
    >>> d["second"] = [rng.choice([s for s in "xyz" if s != f]) for f in d["first"]]
    >>> strength = {"x": 0.0, "y": 1.0, "z": -1.0}
    >>> eta = 0.5 + d["first"].map(strength) - d["second"].map(strength)
    >>> d["first_wins"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    >>> bt = bradley_terry(d)
    >>> bt.set_index(["term", "a"])["estimate"].round(1).tolist()
    [0.0, 1.0, -1.0, 0.5]
    """
    data = data.dropna(subset=[outcome, *covariates])
    x, systems = bt_design(data, first=first, second=second, covariates=covariates,
                           reference=reference)
    clusters = None if groups is None else data[list(groups)].astype(str).agg("|".join, axis=1)
    fit = _glm(data[outcome].astype(float), x, clusters, ci_level)
    rows = [{"term": "strength", "a": systems[0], "estimate": 0.0, "se": np.nan,
             "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan}]
    for name in x.columns:
        is_system = name in systems
        rows.append({"term": "strength" if is_system else name,
                     "a": name if is_system else None, **fit.loc[name].astype(float)})
    out = pd.DataFrame(rows)
    order = out["term"].map(lambda t: 0 if t == "strength" else 1)
    out = out.loc[order.sort_values(kind="stable").index].reset_index(drop=True)
    return out.assign(n=len(data), ci_level=ci_level)


def length_controlled_win_rate(wins: np.ndarray, length_diff: np.ndarray, *,
                               groups: np.ndarray | None = None,
                               ci_level: float = 0.95) -> dict[str, float]:
    """Raw and length-controlled win rate of a system against a baseline (Dubois et al. 2024).

    Fits ``logit P(win) = theta + phi * tanh(length_diff / sd(length_diff))``; the
    length-controlled win rate is ``sigmoid(theta)``, the win rate predicted when both
    answers are equally long (its CI: the Wald interval of ``theta`` through the
    sigmoid). ``wins``: 1 the system won, 0 it lost; ``length_diff``: its answer's length
    minus the baseline's; ``groups`` (optional): a cluster label per verdict (e.g. the
    pair, judged in both orders) for cluster-robust standard errors.

    Unlike Dubois et al., the model has no instruction-difficulty term (their per-
    instruction effect, fitted across many systems on one instruction set) and no
    system-specific length slope shared with a leaderboard: it is fitted per system and
    judge on this run's pairs only. Ties are left out (NaN), where AlpacaEval counts a
    tie as half a win; ``win_rate`` is over the decided comparisons.

    Returns
    -------
    dict
        ``win_rate``, ``estimate`` (the length-controlled win rate), ``ci_low``,
        ``ci_high``, ``length_coef`` (phi), ``n``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)   # as good as the baseline, but usually longer
    >>> diff = rng.normal(80, 100, 4000)
    >>> win = rng.random(4000) < 1 / (1 + np.exp(-1.5 * np.tanh(diff / np.std(diff))))
    >>> out = length_controlled_win_rate(win.astype(float), diff)
    >>> out["win_rate"] > 0.6, abs(out["estimate"] - 0.5) < 0.05
    (True, True)
    """
    wins, diff = np.asarray(wins, dtype=float), np.asarray(length_diff, dtype=float)
    ok = ~np.isnan(wins) & ~np.isnan(diff)
    wins, diff = wins[ok], diff[ok]
    clusters = None if groups is None else np.asarray(groups)[ok]
    sd = float(np.std(diff))
    x = np.column_stack([np.ones(len(diff)), np.tanh(diff / sd) if sd > 0 else np.zeros(len(diff))])
    out = {"win_rate": float(wins.mean()) if len(wins) else np.nan, "estimate": np.nan,
           "ci_low": np.nan, "ci_high": np.nan, "length_coef": np.nan, "n": int(len(wins))}
    if len(wins) < 3 or wins.min() == wins.max():
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfectSeparationWarning)
        try:
            fit = _glm(wins, x if sd > 0 else x[:, :1], clusters, ci_level)
        except PerfectSeparationWarning:
            return out
    theta = fit.iloc[0]
    return {**out, "estimate": float(expit(theta["estimate"])),
            "ci_low": float(expit(theta["ci_low"])), "ci_high": float(expit(theta["ci_high"])),
            "length_coef": float(fit.iloc[1]["estimate"]) if sd > 0 else np.nan}
