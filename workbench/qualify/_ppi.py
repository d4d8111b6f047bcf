"""Prediction-powered inference of a mean from many judge labels and few human labels.

The interval comes from ``ppi-python`` (``ppi_py.ppi_mean_ci``), the package of the
method's authors; this module adds the classical (human labels only) interval beside it,
and answers "how many human labels for a CI of width w" by resampling (with replacement)
the user's own pilot data, where every item has both labels.

References
----------
Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023).
Prediction-powered inference. *Science*, 382(6671), 669-674.
Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++: efficient prediction-powered
inference. arXiv:2311.01453.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy import stats as sps
from statsmodels.stats.weightstats import DescrStatsW

__all__ = ["classical_mean_intervals", "labels_needed", "ppi_mean", "ppi_mean_intervals",
           "ppi_simulation"]


def _classical(y: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """Mean and normal interval of the labelled sample (statsmodels' ``zconfint_mean``)."""
    low, high = DescrStatsW(y).zconfint_mean(alpha=alpha)
    return float(np.mean(y)), float(low), float(high)


def _ppi(y, yhat, yhat_unlabeled, alpha, lam):
    low, high = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=alpha, lam=lam)
    est = ppi_mean_pointestimate(y, yhat, yhat_unlabeled, lam=lam)
    return float(np.ravel(est)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0])


def ppi_mean_intervals(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, *,
                       alpha: float = 0.05, lam: float | None = None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PPI++ intervals of a mean for many samples at once, one per row of ``y``:
    ``ppi_py.ppi_mean_ci`` (and ``ppi_mean_pointestimate``) of each row, without a Python
    loop over the rows (simulations draw thousands; tests/qualify/test_qualify.py holds
    each row equal to ppi-python's).

    With ``n`` labels and ``N`` unlabelled predictions per row, unweighted: ``lam`` (unless
    given) is ``cov(y, yhat) / ((1 + n / N) var(yhat, yhat_unlabeled))`` clipped to
    [0, 1] (``cov`` over the labelled items with divisor ``n``, ``var`` over all ``n + N``
    predictions with divisor ``n + N - 1``, both centred at the ``lam = 1`` estimate as
    ppi-python does); the estimate is ``mean(lam yhat_unlabeled) + mean(y - lam yhat)``,
    its standard error ``sqrt(sd(lam yhat_unlabeled)^2 / N + sd(y - lam yhat)^2 / n)``
    (divisors ``N``, ``n``), and the interval is normal.

    Parameters
    ----------
    y, yhat : array, shape (S, n)
        Human labels and the judge's labels of the labelled items, one sample per row.
    yhat_unlabeled : array, shape (N,) or (S, N)
        The judge's labels of the unlabelled items: one set for every row, or one per row.
    alpha : float
        1 - confidence level.
    lam : float, optional
        Fixed power tuning (``1``: PPI, ``0``: classical); ``None`` tunes it per row.

    Returns
    -------
    (low, high, estimate) : arrays of shape (S,)

    References
    ----------
    Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++: efficient
    prediction-powered inference. arXiv:2311.01453 (ppi-python 0.2, ``ppi_mean_ci``).
    """
    y, f = np.atleast_2d(np.asarray(y, dtype=float)), np.atleast_2d(np.asarray(yhat, dtype=float))
    fu = np.broadcast_to(np.atleast_2d(np.asarray(yhat_unlabeled, dtype=float)),
                         (y.shape[0], np.shape(yhat_unlabeled)[-1]))
    n, big_n = y.shape[1], fu.shape[1]
    if lam is None:
        p1 = fu.mean(axis=1, keepdims=True) + (y - f).mean(axis=1, keepdims=True)  # lam = 1
        g, gh = y - p1, f - p1
        cov = 2 * ((g - g.mean(axis=1, keepdims=True))
                   * (gh - gh.mean(axis=1, keepdims=True))).sum(axis=1) / n
        var = np.concatenate([gh, fu - p1], axis=1).var(axis=1, ddof=1)
        tuned = np.clip(cov / (2 * (1 + n / big_n) * var), 0.0, 1.0)[:, None]
    else:
        tuned = np.full((y.shape[0], 1), float(lam))
    imputed, rectifier = tuned * fu, y - tuned * f
    estimate = imputed.mean(axis=1) + rectifier.mean(axis=1)
    se = np.sqrt((imputed.std(axis=1) / np.sqrt(big_n)) ** 2
                 + (rectifier.std(axis=1) / np.sqrt(n)) ** 2)
    z = sps.norm.ppf(1 - alpha / 2)
    return estimate - z * se, estimate + z * se, estimate


def classical_mean_intervals(y: np.ndarray, *, alpha: float = 0.05
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normal intervals of the mean of each row of ``y`` (shape (S, n)): statsmodels'
    ``DescrStatsW(row).zconfint_mean(alpha)`` for every row at once, ``mean +- z sd /
    sqrt(n - 1)`` with ``sd`` of divisor ``n``. Returns ``(low, high, mean)``."""
    y = np.atleast_2d(np.asarray(y, dtype=float))
    mean = y.mean(axis=1)
    se = np.sqrt(((y - mean[:, None]) ** 2).sum(axis=1) / y.shape[1]) / np.sqrt(y.shape[1] - 1)
    z = sps.norm.ppf(1 - alpha / 2)
    return mean - z * se, mean + z * se, mean


def ppi_mean(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, *,
             alpha: float = 0.05, lam: float | None = None) -> pd.DataFrame:
    """Prediction-powered estimate and CI of the mean human label, and the classical one.

    Parameters
    ----------
    y, yhat : array
        Human labels and the judge's labels of the same (few) items.
    yhat_unlabeled : array
        The judge's labels of the (many) items without a human label.
    alpha : float
        1 - confidence level.
    lam : float, optional
        PPI++ power tuning: ``None`` estimates it (never worse than the classical
        interval asymptotically), ``1`` is the original PPI, ``0`` the classical interval.

    Returns
    -------
    DataFrame
        Two rows, ``method`` ``ppi`` and ``classical`` (human labels only): ``estimate``,
        ``ci_low``, ``ci_high``, ``width``, ``ci_level``, ``n_labeled``, ``n_unlabeled``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(3, 1, 1100)
    >>> judge = truth + rng.normal(0.3, 0.3, 1100)      # a biased but informative judge
    >>> out = ppi_mean(truth[:100], judge[:100], judge[100:])
    >>> bool(out.loc[0, "width"] < out.loc[1, "width"])  # PPI is narrower
    True
    """
    y, yhat, unl = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabeled))
    rows = []
    for method, (est, low, high) in (("ppi", _ppi(y, yhat, unl, alpha, lam)),
                                     ("classical", _classical(y, alpha))):
        rows.append({"method": method, "estimate": est, "ci_low": low, "ci_high": high,
                     "width": high - low, "ci_level": 1 - alpha, "n_labeled": len(y),
                     "n_unlabeled": len(unl)})
    return pd.DataFrame(rows)


def ppi_simulation(y: np.ndarray, yhat: np.ndarray, n_labeled: list[int], *, n_rep: int = 200,
                   alpha: float = 0.05, lam: float | None = None,
                   rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Coverage and width of the PPI and classical intervals by resampling pilot data.

    ``y`` and ``yhat`` label the same ``N`` items (the pilot, every item labelled by
    both). The pilot is treated as a population to sample from (a bootstrap population,
    whose mean human label is the pilot's): for each size ``n`` in ``n_labeled``, ``n_rep``
    times, ``n`` items drawn with replacement keep both labels and ``N - n`` further items
    drawn with replacement keep only the judge's; the interval covers when it holds the
    mean of all of ``y``. Drawing with replacement keeps the samples independent of the
    target, as the intervals assume; drawing without replacement from the pilot itself
    would make the labelled and unlabelled sets partition it and the coverage climb to 1
    as ``n / N`` grows (a finite population the intervals ignore).

    Raises
    ------
    ValueError
        On a NaN in ``y`` or ``yhat`` (drop the incomplete items first), and for a size
        outside ``2 .. N - 1``.

    Returns
    -------
    DataFrame
        One row per size and method: ``n_labeled``, ``method``, ``coverage`` (share of
        the intervals that hold the pilot's human mean), ``width`` (mean width),
        ``n_rep``, ``ci_level``.
    """
    y, yhat = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    if np.isnan(y).any() or np.isnan(yhat).any():
        raise ValueError("ppi_simulation: y and yhat must not hold NaN (drop incomplete items)")
    gen = np.random.default_rng(rng)
    truth = float(np.mean(y))
    rows = []
    for n in n_labeled:
        if not 2 <= n < len(y):
            raise ValueError(f"ppi_simulation: n_labeled must be 2..{len(y) - 1}, got {n}")
        lab = np.empty((n_rep, n), dtype=np.int64)
        unl = np.empty((n_rep, len(y) - n), dtype=np.int64)
        for r in range(n_rep):  # the draws in their order: labelled, then unlabelled
            lab[r] = gen.integers(0, len(y), n)
            unl[r] = gen.integers(0, len(y), len(y) - n)
        # all replicates at once: ppi_py.ppi_mean_ci and statsmodels' zconfint_mean per row
        for method, (low, high, _) in (
                ("ppi", ppi_mean_intervals(y[lab], yhat[lab], yhat[unl], alpha=alpha, lam=lam)),
                ("classical", classical_mean_intervals(y[lab], alpha=alpha))):
            rows.append({"n_labeled": n, "method": method,
                         "coverage": float(np.mean((low <= truth) & (truth <= high))),
                         "width": float(np.mean(high - low)), "n_rep": n_rep,
                         "ci_level": 1 - alpha})
    return pd.DataFrame(rows)


def labels_needed(simulation: pd.DataFrame, width: float) -> pd.DataFrame:
    """The smallest simulated number of human labels whose mean CI width is <= ``width``,
    per method (``n_labeled`` NaN when no simulated size reaches it).

    Examples
    --------
    >>> sim = pd.DataFrame({"n_labeled": [10, 20, 10, 20], "method": ["ppi"] * 2 + ["classical"] * 2,
    ...                     "width": [0.5, 0.3, 0.9, 0.6]})
    >>> labels_needed(sim, 0.4)
          method  width  n_labeled
    0        ppi    0.4       20.0
    1  classical    0.4        NaN
    """
    rows = []
    for method, part in simulation.groupby("method", sort=False):
        ok = part.loc[part["width"] <= width, "n_labeled"]
        rows.append({"method": method, "width": width,
                     "n_labeled": float(ok.min()) if len(ok) else np.nan})
    return pd.DataFrame(rows)
