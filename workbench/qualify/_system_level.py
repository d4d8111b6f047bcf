"""System-level correlations over a handful of systems: a permutation p-value, exact over
every ordering of up to 8 systems, and no interval where so few systems cannot give one.

With ``n`` systems a rank correlation can take only a few values (3 systems: Kendall's
tau is -1, -1/3, 1/3 or 1), so a Fisher-z interval is meaningless: it is [1, 1] whenever
the sample correlation is 1. The p-value here counts the orderings of the judge's
system means, against the people's, whose correlation is at least the observed one (and
at most), two-sided as twice the smaller share, by :func:`scipy.stats.permutation_test`
with ``permutation_type="pairings"``; for Kendall's tau without ties it equals
:func:`scipy.stats.kendalltau` with ``method="exact"`` (Kendall 1938; the smallest
p-value with 3 systems is 2/6).

References
----------
Kendall, M. G. (1938). A new measure of rank correlation. *Biometrika*, 30(1/2), 81-93.
Deutsch, D., Dror, R. & Roth, D. (2021). A statistical analysis of summarization
evaluation metrics using resampling methods. *TACL* 9 (system-level CIs need many
systems).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = ["EXACT_UP_TO", "MIN_SYSTEMS_FOR_CI", "system_level", "system_p_value"]

#: Up to this many systems the permutation p-value enumerates every ordering (8! = 40320).
EXACT_UP_TO = 8
#: Fewer systems than this get no interval (only the estimate and the p-value).
MIN_SYSTEMS_FOR_CI = 10
_RESAMPLES = 9999


def _statistic(method: str):
    if method == "kendall":
        return lambda x, y: sps.kendalltau(x, y).statistic
    if method == "spearman":
        return lambda x, y: sps.spearmanr(x, y).statistic
    return lambda x, y: sps.pearsonr(x, y).statistic


def system_p_value(x: np.ndarray, y: np.ndarray, method: str, *, rng: int = 0
                   ) -> tuple[float, str]:
    """Two-sided permutation p-value of the ``method`` correlation of ``x`` and ``y``, and
    how it was obtained (``exact permutation (all n! orderings)`` or ``permutation (9999 resamples)``).

    Examples
    --------
    >>> p, how = system_p_value(np.array([1., 2., 3.]), np.array([10., 20., 30.]), "kendall")
    >>> round(p, 4), how
    (0.3333, 'exact permutation (all 6 orderings)')
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan, "none (fewer than 3 systems or a constant side)"
    fn = _statistic(method)
    exact = len(x) <= EXACT_UP_TO
    res = sps.permutation_test((x,), lambda a: fn(a, y), permutation_type="pairings",
                               n_resamples=np.inf if exact else _RESAMPLES,
                               alternative="two-sided", rng=np.random.default_rng(rng))
    how = (f"exact permutation (all {math.factorial(len(x))} orderings)" if exact
           else f"permutation ({_RESAMPLES} resamples)")
    return float(res.pvalue), how


def system_level(res: pd.DataFrame, means: pd.DataFrame) -> pd.DataFrame:
    """:func:`workbench.stats.correlate`'s rows of the per-system means, made honest for few
    systems: ``p_value`` by :func:`system_p_value` (``test`` says which), and no interval
    (``ci_low``/``ci_high`` NaN, ``ci_method`` says why) below :data:`MIN_SYSTEMS_FOR_CI`
    systems or where the correlation is +-1 (a Fisher-z interval would have zero width).
    ``level`` is ``system``; ``n`` is the number of systems."""
    out = res.assign(level="system").reset_index(drop=True)
    p_values, tests = [], []
    for row in out.itertuples():
        g = means[(means["judge"] == row.judge) & (means["dimension"] == row.dimension)]
        p, how = system_p_value(g["score"].to_numpy(), g["human"].to_numpy(), row.method)
        p_values.append(p)
        tests.append(how)
    out["p_value"], out["test"] = p_values, tests
    few = out["n"] < MIN_SYSTEMS_FOR_CI
    edge = out["estimate"].abs() >= 1 - 1e-12
    out.loc[few | edge, ["ci_low", "ci_high"]] = np.nan
    out["ci_method"] = out["ci_method"].astype(object)
    out.loc[edge, "ci_method"] = "none: a correlation of +-1 gives no Fisher-z interval"
    out.loc[few, "ci_method"] = f"none: fewer than {MIN_SYSTEMS_FOR_CI} systems"
    return out
