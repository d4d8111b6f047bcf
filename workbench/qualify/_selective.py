"""Selective judging with a guarantee: abstain below a confidence threshold chosen so that
agreement with people on the accepted items is at least 1 - alpha with probability 1 - delta.

The threshold is chosen on a calibration split by fixed-sequence testing (Jung et al.
2024, after Bates et al. 2021): thresholds from the strictest down; at each, H0 "the
disagreement rate of the accepted items exceeds alpha" is tested with the exact binomial
test (reject when ``P(Bin(n, alpha) <= k) <= delta``, equivalently when the
Clopper-Pearson upper bound of the risk is <= alpha); the procedure goes on while H0 is
rejected and keeps the last threshold that rejected.

References
----------
Jung, J., Brahman, F. & Choi, Y. (2024). Trust or escalate: LLM judges with provable
guarantees for human agreement. arXiv:2407.18370 (ICLR 2025).
Bates, S., Angelopoulos, A., Lei, L., Malik, J. & Jordan, M. (2021). Distribution-free,
risk-controlling prediction sets. *Journal of the ACM*, 68(6).
Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits
illustrated in the case of the binomial. *Biometrika*, 26(4), 404-413.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = ["calibrate_threshold", "clopper_pearson_upper", "selective_report"]


def clopper_pearson_upper(k: int, n: int, delta: float) -> float:
    """One-sided (1 - delta) Clopper-Pearson upper bound of a rate with ``k`` events in ``n``.

    The upper end of statsmodels' two-sided ``proportion_confint(method="beta")`` at
    level 1 - 2 delta; 1 when nothing was observed (``n = 0``).

    Examples
    --------
    >>> round(clopper_pearson_upper(0, 10, 0.05), 4)   # 1 - 0.05 ** (1 / 10)
    0.2589
    """
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return 1.0
    return float(proportion_confint(k, n, alpha=2 * delta, method="beta")[1])


def calibrate_threshold(confidence: np.ndarray, correct: np.ndarray, *, alpha: float = 0.1,
                        delta: float = 0.1, min_accepted: int | None = None
                        ) -> tuple[float, pd.DataFrame]:
    """The fixed-sequence threshold on the calibration items and the test at each step.

    Parameters
    ----------
    confidence : array
        The judge's confidence per calibration item (higher: more sure).
    correct : bool array
        Whether the judge agreed with the human label there.
    alpha, delta : float
        Target disagreement risk and the allowed probability of missing it.
    min_accepted : int, optional
        Thresholds that accept fewer items are skipped, not tested. Default: the fewest
        items at which the test can reject at all, ``ceil(log delta / log(1 - alpha))``
        (22 for alpha = delta = 0.1). The accepted counts grow as the threshold falls, so
        this skips a prefix of the sequence that depends on the confidences only: given
        them, the order of the tests is fixed and the fixed-sequence argument holds.

    Returns
    -------
    (threshold, steps)
        ``threshold``: accept items with confidence >= it (``inf``: abstain on all);
        ``steps``: one row per tested threshold, strictest first: ``threshold``,
        ``n`` (accepted), ``n_errors``, ``p_value`` (binomial), ``risk_ci_high``
        (Clopper-Pearson upper bound), ``significant`` (H0 rejected and every
        stricter one too).

    Examples
    --------
    >>> conf = np.array([0.9] * 40 + [0.5] * 40 + [0.95] * 5)
    >>> ok = np.array([True] * 40 + [True, False] * 20 + [True] * 5)  # 0.95: too few to test
    >>> thr, steps = calibrate_threshold(conf, ok, alpha=0.1, delta=0.1)
    >>> thr, list(steps["significant"])
    (0.9, [True, False])
    >>> list(steps["n"])
    [45, 85]
    """
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=bool)
    if min_accepted is None:
        min_accepted = int(np.ceil(np.log(delta) / np.log(1 - alpha)))
    rows, chosen, going = [], np.inf, True
    for thr in np.unique(conf)[::-1]:
        accepted = conf >= thr
        n = int(accepted.sum())
        if n < min_accepted:
            continue
        k = int((~ok[accepted]).sum())
        p = float(sps.binom.cdf(k, n, alpha))
        going = going and p <= delta
        if going:
            chosen = float(thr)
        rows.append({"threshold": float(thr), "n": n, "n_errors": k, "p_value": p,
                     "risk_ci_high": clopper_pearson_upper(k, n, delta), "significant": going})
    return chosen, pd.DataFrame(rows, columns=["threshold", "n", "n_errors", "p_value",
                                               "risk_ci_high", "significant"])


def selective_report(confidence: np.ndarray, correct: np.ndarray, calibration: np.ndarray, *,
                     alpha: float = 0.1, delta: float = 0.1) -> pd.DataFrame:
    """Calibrate on one split, report on the other, beside judging every item.

    Returns
    -------
    DataFrame
        Two rows, ``policy`` ``selective`` and ``all items``: ``threshold``, ``coverage``
        (share of held-out items accepted), ``agreement`` (with the human label on the
        accepted held-out items), ``n_items`` (held-out), ``n`` (accepted held-out),
        ``alpha``, ``delta``, ``guarantee_met`` (agreement >= 1 - alpha on the held-out
        items; the guarantee is on the expected rate, so this can fail by chance).
    """
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=bool)
    cal = np.asarray(calibration, dtype=bool)
    thr, _ = calibrate_threshold(conf[cal], ok[cal], alpha=alpha, delta=delta)
    rows = []
    for policy, t in (("selective", thr), ("all items", -np.inf)):
        accepted = (conf[~cal] >= t)
        n = int(accepted.sum())
        agreement = float(ok[~cal][accepted].mean()) if n else np.nan
        rows.append({"policy": policy, "threshold": t, "coverage": n / int((~cal).sum()),
                     "agreement": agreement, "n_items": int((~cal).sum()), "n": n,
                     "alpha": alpha, "delta": delta,
                     "guarantee_met": bool(n and agreement >= 1 - alpha)})
    return pd.DataFrame(rows)
