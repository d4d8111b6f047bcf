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
from statsmodels.stats.weightstats import DescrStatsW

__all__ = ["labels_needed", "ppi_mean", "ppi_simulation"]


def _classical(y: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """Mean and normal interval of the labelled sample (statsmodels' ``zconfint_mean``)."""
    low, high = DescrStatsW(y).zconfint_mean(alpha=alpha)
    return float(np.mean(y)), float(low), float(high)


def _ppi(y, yhat, yhat_unlabeled, alpha, lam):
    low, high = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=alpha, lam=lam)
    est = ppi_mean_pointestimate(y, yhat, yhat_unlabeled, lam=lam)
    return float(np.ravel(est)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0])


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
        hits = {"ppi": [], "classical": []}
        widths = {"ppi": [], "classical": []}
        for _ in range(n_rep):
            lab = gen.integers(0, len(y), n)
            unl = gen.integers(0, len(y), len(y) - n)
            for method, (_, low, high) in (
                    ("ppi", _ppi(y[lab], yhat[lab], yhat[unl], alpha, lam)),
                    ("classical", _classical(y[lab], alpha))):
                hits[method].append(low <= truth <= high)
                widths[method].append(high - low)
        rows += [{"n_labeled": n, "method": m, "coverage": float(np.mean(hits[m])),
                  "width": float(np.mean(widths[m])), "n_rep": n_rep, "ci_level": 1 - alpha}
                 for m in ("ppi", "classical")]
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
