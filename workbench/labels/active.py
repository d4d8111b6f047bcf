"""Active labelling: ask people where the judge is unsure, and keep a valid anytime interval.

A pool of ``N`` items has the judge's prediction ``f_i`` of each (a score, a verdict, the
judge's own chance of being right) and an uncertainty ``u_i`` (verdict flips when the
order is swapped, a split jury, score variance across samples, logprob entropy). The
quantity of interest is the mean human label over the pool,
``theta = mean_i E[Y_i]`` (the mean human score, a win rate, the judge's accuracy: each a
mean of some per-item label).

**Design.** Label ``t`` is drawn from the pool with a known probability ``q_t(i)``, fixed
before the draw from the labels before it (predictable), and the person's label ``Y``
gives

    Z_t = lam_t * Fbar + c_t + (Y - lam_t * f_I - c_t) / (N * q_t(I)),

whose conditional mean is exactly ``theta`` whatever the predictable ``q_t``, ``lam_t``
(power tuning as in PPI++, Angelopoulos, Duchi & Zrnic 2023, clipped to [0, 1]) and
``c_t`` (a centring constant) are: prediction-powered inference (Angelopoulos et al. 2023) with
inverse-probability weighting for the active sampling (Zrnic & Candès 2024). Its
conditional variance is ``sum_i E[e_i^2] / (N^2 q_t(i)) - (theta - lam_t Fbar - c_t)^2``
(``e_i = Y_i - lam_t f_i - c_t``), smallest at ``q(i) ∝ sqrt(E[e_i^2])`` (Zrnic & Candès
2024, section 3; Cauchy-Schwarz).

**The rule** (``rule``). Zrnic & Candès sample with ``q ∝ u``, the model's uncertainty,
mixed with the uniform rule for safety. ``rule="direct"`` does exactly that:
``q = (1 - floor) * u / sum(u) + floor / N`` (``u`` scaled to [0, 1]), from the first
label on. It is variance-optimal only when ``u`` is proportional to the residual's size,
which the people's own noise breaks: an item the judge is sure of still has the
annotators' noise in its residual, and ``q ∝ u`` gives it weight up to ``1 / floor``.
``rule="calibrated"`` (the default) keeps the judge's signal but learns its scale from
the labels so far: the size of the judge's residual ``e = Y - f - c`` (``c`` its weighted
mean) as ``E[|e| | u] = a + b u`` (least squares of the absolute residuals on ``1, u``;
``a`` the part no uncertainty explains, the annotators' noise; ``a, b >= 0``), and
``q = (1 - floor) * s / sum(s) + floor / N`` with ``s = a + b u`` (for residuals of one
shape, ``E|e|`` is proportional to ``sqrt(E[e^2])``). The fit is one slope, so a few
labels on uncertain items suffice, and absolute residuals keep a few large errors from
swinging it. The rule is used after ``burn_in`` uniform labels, and only while the labels
so far show that the residual grows with ``u`` (the slope's t-statistic above ``gate``, 3
by default) and that the rule beats uniform PPI++ (their variances estimated by
importance-weighted means over the labels, see :meth:`ActiveSampler.gain`); otherwise the
draw stays uniform, so an uninformative ``u`` (``b`` near 0) costs little: the interval is
then uniform PPI++'s. Every ``q`` is at least ``floor / N``, so each weight is at most
``1 / floor``. ``lam`` and ``c`` are the ``w^2``-weighted least squares of ``Y`` on ``f``
(``w = 1 / (N q)``), which minimise the estimated variance of ``Z`` under the sampling
used (PPI++'s ``lam`` under uniform sampling; nearer 1 under active sampling, where the
rarely drawn, well-predicted items count most).

**Abstentions.** Items a selective judge abstained on are drawn first in expectation: while
the draw is "uniform" (burn-in, gate closed) each is ``1 / floor`` times as likely as any
other item, and in the rule they get ``u = 1`` (the highest). They are not labelled with
probability one in a first pass: an item labelled for sure is a
stratum of its own, and its labels would need their own estimator and variance beside
the weighted one. Giving them the largest ``q`` keeps the single estimator above exact
(every ``q`` known and positive), and puts the labels where the judge said nothing.

**Interval.** The running mean of the ``Z_t`` with the asymptotic confidence sequence of
Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas (2024, Theorem 2.2, Gaussian mixture
boundary, martingale form): with ``V_t = t * sigma_t^2`` (running variance of the ``Z``)

    mean_t ± sqrt( 2 (V_t rho^2 + 1) / (t^2 rho^2) * log( sqrt(V_t rho^2 + 1) / alpha ) ),

valid at every ``t`` at once, so the researcher may look after every label and stop when it
is narrow enough; ``rho^2 = (-2 log alpha + log(1 - 2 log alpha)) / (t_star * s0^2)`` makes
it tightest near ``t_star`` labels (``s0^2`` a scale fixed before labelling,
:func:`default_scale`: a bound on the labels' variance from their range, ``1/4`` for
labels in [0, 1], else the variance of the judge's predictions; it is also the one
pseudo-observation that keeps the first running variances off zero). The fixed-``n`` Wald interval
``mean_t ± z sigma_t / sqrt(t)`` is given beside it (valid only at a size fixed in advance).
In :class:`ActiveSampler` (the simulation) an item drawn twice is labelled again, by
another annotator drawn at random; the live queue (:class:`ActiveQueue`) draws each label
among the items its annotator has not labelled and corrects the estimate for it (des
Raj's term, see :mod:`workbench.labels._queue`).

**The guarantee** is asymptotic (Waudby-Smith et al. 2024: the sequence's coverage tends to
``1 - alpha`` uniformly over time as the looks grow), so it is claimed from the 20th label
on (``burn_in``; the first looks rest on too few labels for the CLT). Measured by
``workbench bench labels`` (1,000 simulated studies per cell, Monte Carlo SE about 0.005):
with the default scale the active and uniform intervals held at every look from the 20th
label in at least 0.959 ± 0.006 of studies (binary labels, 40 labels; 0.97 or more at 100
and 300) for 1-5 scores, win rates, binary labels (a judge's accuracy near 0.85 and 0.7)
and continuous labels, at budgets 40, 100 and 300 (the table is in docs/labelling.md); the
interval at the budget alone covers in 0.988-1.0. The
reference rule ``q ∝ u`` without the calibration can fall short (0.87 at every look on
binary labels with a shuffled uncertainty at 40 labels): its weights reach ``1 / floor``
on the items the uncertainty wrongly calls sure.

References
----------
Zrnic, T. & Candès, E. J. (2024). Active statistical inference. *ICML 2024*, PMLR 235,
62993-63010. arXiv:2403.03208.
Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023).
Prediction-powered inference. *Science*, 382(6671), 669-674.
Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++: efficient prediction-powered
inference. arXiv:2311.01453.
Waudby-Smith, I., Arbour, D., Sinha, R., Kennedy, E. H. & Ramdas, A. (2024). Time-uniform
central limit theory and asymptotic confidence sequences. *Annals of Statistics*, 52(6).
arXiv:2103.06476.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from workbench.labels._sequence import cs_halfwidth, default_scale, scaled_uncertainty

__all__ = ["ActiveSampler", "cs_halfwidth", "default_scale", "scaled_uncertainty"]


@dataclass
class _Design:
    alpha: float
    floor: float
    burn_in: int
    active: bool
    tune: bool
    rho2: float
    gate: float
    rule: str


_RULES = ("calibrated", "direct")


class ActiveSampler:
    """Draw the next item to label and keep the prediction-powered anytime interval.

    Runs ``n_studies`` independent labelling sequences side by side (vectorised: the
    simulation runs hundreds at once; a live session uses one).

    Parameters
    ----------
    predictions : array of shape (N,)
        The judge's prediction of each pool item's human label.
    uncertainty : array of shape (N,), optional
        The judge's uncertainty about each item (scaled to [0, 1] by
        :func:`scaled_uncertainty`). ``None``, or ``active=False``, gives uniform sampling
        (plain PPI++).
    abstain : bool array of shape (N,), optional
        Items the selective judge abstained on: uncertainty 1, and during the uniform
        burn-in ``1 / floor`` times as likely as the others.
    alpha : float
        1 - confidence level.
    floor : float
        Share of the uniform rule in the mix (weights at most ``1 / floor``).
    rule : {"calibrated", "direct"}
        ``q ∝ a + b u`` with ``a, b`` learnt from the labels, or ``q ∝ u`` (see the
        module).
    burn_in : int
        Labels drawn uniformly before the calibrated rule is used.
    t_star : int
        Number of labels near which the confidence sequence is tightest.
    scale, label_range : float, (float, float), optional
        The sequence's variance scale ``s0``, or the range of the labels it is derived
        from (:func:`default_scale`).
    gate : float
        The calibrated rule is used only when the labels so far show the residual growing
        with the uncertainty (the slope's t-statistic above ``gate``) and the rule's
        estimated variance below uniform PPI++'s (:meth:`gain`); else the draw stays
        uniform.
    tune : bool
        PPI++ power tuning of ``lam`` (else ``lam = 1``, plain PPI).
    sizes : array of shape (N,), optional
        A known map instead of a learnt one: each item's expected residual size (e.g. from
        a pilot, or the truth in a simulation); ``q`` is proportional to it, mixed with
        uniform, from the first label on.
    n_studies : int
        Parallel sequences.
    rng : Generator or int, optional
        Draws the items.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(3, 1, 300); judge = truth + rng.normal(0, 0.5, 300)
    >>> sampler = ActiveSampler(judge, np.abs(rng.normal(size=300)), rng=1)
    >>> for _ in range(60):
    ...     item, prob = sampler.draw()
    ...     sampler.update(item, prob, truth[item])
    >>> row = sampler.interval().iloc[0]
    >>> bool(row["ci_low"] < truth.mean() < row["ci_high"]), int(row["n_labels"])
    (True, 60)
    """

    def __init__(self, predictions, uncertainty=None, *, abstain=None, alpha: float = 0.05,
                 floor: float = 0.2, burn_in: int = 20, t_star: int = 100, tune: bool = True,
                 active: bool = True, gate: float = 3.0, n_studies: int = 1, rng=None,
                 rule: str = "calibrated", scale: float | None = None,
                 label_range: tuple[float, float] | None = None,
                 sizes: np.ndarray | None = None):
        f = np.asarray(predictions, dtype=float)
        if f.ndim != 1 or len(f) < 2 or np.isnan(f).any():
            raise ValueError("ActiveSampler: predictions must be a 1-d array of >= 2 numbers "
                             "without NaN (give the judge's failures a prediction, e.g. the mean)")
        if not 0 < floor <= 1:
            raise ValueError(f"ActiveSampler: floor must be in (0, 1], got {floor}")
        if rule not in _RULES:
            raise ValueError(f"ActiveSampler: rule must be one of {_RULES}, got {rule!r}")
        self.f, self.n = f, len(f)
        self.fbar = float(f.mean())
        active = active and uncertainty is not None
        self.scaled = (scaled_uncertainty(uncertainty, abstain=abstain) if active
                       else np.zeros(self.n))
        base = np.ones(self.n)
        if active and abstain is not None:
            base = np.where(np.asarray(abstain, dtype=bool), 1.0 / floor, 1.0)
        self.base = base / base.sum()
        s0 = scale if scale is not None else default_scale(f, label_range)
        rho2 = (-2 * np.log(alpha) + np.log(1 - 2 * np.log(alpha))) / (t_star * s0)
        self.design = _Design(alpha, floor, burn_in, active, tune, rho2, gate, rule)
        self.s0 = s0
        self.s = n_studies
        self.rng = np.random.default_rng(rng)
        zeros = lambda: np.zeros(n_studies)  # noqa: E731
        # labels so far; weighted sums for lam and c; the fit of |e| on 1, u; Z sums
        self.t = zeros()
        self.sw, self.swy, self.swf, self.swyy, self.swff, self.swyf = (zeros() for _ in range(6))
        # sums for the PPI++ lam under uniform sampling (IPW) and for lam, c of the estimate
        # (w^2-weighted least squares); the labels so far, for the rule and its gate
        self.sw2, self.sw2y, self.sw2f, self.sw2ff, self.sw2fy = (zeros() for _ in range(5))
        # the labels so far, one column per label (items, labels, weights), in buffers that
        # double when full: columns [0, k) are used
        self._k = 0
        self._seen: tuple | None = None      # (k, what _labels gave after k labels)
        self._hist = np.zeros((3, n_studies, max(int(t_star), 8)))
        self.sz, self.szz = zeros(), zeros()
        self.lam, self.c = np.ones(n_studies), zeros()
        self.history: list[dict] = []
        self.sizes = None if sizes is None else np.asarray(sizes, dtype=float)
        self._ones_u = np.stack([np.ones(self.n), self.scaled])   # the fit's design, (2, N)
        self._z = sps.norm.ppf(1 - alpha / 2)                    # the Wald quantile

    # --- the sampling rule -------------------------------------------------------------------

    def _labels(self) -> tuple[np.ndarray, ...]:
        """(items, labels, weights, residuals with lam = 1, predictions, scaled
        uncertainties), each of shape (n_studies, t); kept until the next label."""
        if self._seen is not None and self._seen[0] == self._k:
            return self._seen[1]
        idx, y, w = self._hist[:, :, :self._k]
        idx = idx.astype(int)
        f = self.f[idx]
        c1 = (w * (y - f)).sum(axis=1, keepdims=True) / w.sum(axis=1, keepdims=True)
        out = idx, y, w, y - f - c1, f, self.scaled[idx]
        self._seen = (self._k, out)
        return out

    def fit(self) -> np.ndarray:
        """``(a, b)`` of ``E[|e| | u] = a + b u`` per sequence, shape (n_studies, 2), ``e``
        the judge's residual ``Y - f - c`` (``c`` the weighted mean residual): least squares
        on the labels so far, then ``b >= 0`` and ``a >= 0`` (a negative one refitted as
        ``b`` alone, a negative intercept as ``a`` alone)."""
        if not self._k:
            return np.zeros((self.s, 2))
        idx, _, _, e1, _, v = self._labels()
        e = np.abs(e1)
        n = float(idx.shape[1])
        sx, sxx = v.sum(axis=1), (v * v).sum(axis=1)
        sy, sxy = e.sum(axis=1), (v * e).sum(axis=1)
        det = n * sxx - sx ** 2
        ok = det > 1e-12 * np.maximum(n * sxx, 1e-12)
        b = np.where(ok, (n * sxy - sx * sy) / np.where(ok, det, 1.0), 0.0)
        a = (sy - b * sx) / n
        b = np.maximum(b, 0.0)
        a = np.where(b == 0.0, sy / n, a)
        through_zero = sxy / np.maximum(sxx, 1e-12)                 # b alone, a = 0
        neg = a < 0
        return np.stack([np.where(neg, 0.0, a), np.where(neg, through_zero, b)], 1)

    def gain(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the calibrated rule's probabilities, shape (n_studies, N); its variance over
        uniform PPI++'s, as the labels so far estimate them; the t-statistic of the slope
        of ``|e|`` on ``u``), the last two of shape (n_studies,).

        Both variances are importance-weighted means over the labels so far
        (``w = 1 / (N q)`` of each draw): uniform PPI++'s ``mean(w e_lam^2)`` with its
        tuned ``lam`` (the residual ``e_lam = Y - lam f - c``), the rule's
        ``mean(w e^2 / (N q_rule))`` with the judge's own residual ``e`` (``lam = 1``).
        The t-statistic is the ordinary least-squares one (slope over its standard error,
        as ``scipy.stats.linregress``), before the fit's ``a, b >= 0`` constraints."""
        d = self.design
        size = self.fit() @ self._ones_u                                        # (S, N)
        # a size below a tenth of the typical one is not trusted
        np.maximum(size, 0.1 * np.maximum(size.mean(axis=1, keepdims=True), 1e-12), out=size)
        # q = (1 - floor) * size / sum(size) + floor / N, computed in place
        total = size.sum(axis=1, keepdims=True)
        q = np.multiply(size, 1 - d.floor, out=size)
        q /= total
        q += d.floor / self.n
        if self._k < 3:
            return q, np.ones(self.s), np.zeros(self.s)
        idx, y, w, e1, f, v = self._labels()
        rows = np.arange(self.s)[:, None]
        per_rule = w * e1 ** 2 / (self.n * q[rows, idx])
        sw = np.maximum(self.sw, 1e-12)
        my, mf = self.swy / sw, self.swf / sw
        var = self.swff / sw - mf ** 2
        lam = np.clip((self.swyf / sw - my * mf) / np.maximum(var, 1e-12), 0.0, 1.0)
        resid = y - lam[:, None] * f - (my - lam * mf)[:, None]
        per_uniform = w * resid ** 2
        ratio = per_rule.mean(axis=1) / np.maximum(per_uniform.mean(axis=1), 1e-12)
        # the slope's t-statistic
        e = np.abs(e1)
        vc = v - v.mean(axis=1, keepdims=True)
        sxx = (vc ** 2).sum(axis=1)
        slope = (vc * e).sum(axis=1) / np.maximum(sxx, 1e-12)
        fitted = e.mean(axis=1, keepdims=True) + slope[:, None] * vc
        rss = ((e - fitted) ** 2).sum(axis=1)
        se = np.sqrt(rss / (idx.shape[1] - 2) / np.maximum(sxx, 1e-12))
        z = np.where(sxx > 1e-12, slope / np.maximum(se, 1e-12), 0.0)
        return q, ratio, z

    def probabilities(self) -> np.ndarray:
        """The sampling probabilities of the next draw, shape (n_studies, N), rows sum to 1."""
        q, rule = self._probabilities()
        return np.tile(q, (self.s, 1)) if rule is None else np.where(rule[:, None], q, self.base)

    def _probabilities(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(one row of shape (N,) every sequence draws with, ``None``), or, once the
        calibrated rule may be used, (its probabilities, shape (n_studies, N); the sequences
        that use it, the others drawing uniformly)."""
        d = self.design
        if self.sizes is not None:
            return (1 - d.floor) * self.sizes / self.sizes.sum() + d.floor / self.n, None
        if not d.active:
            return self.base, None
        if d.rule == "direct":
            v = self.scaled if self.scaled.sum() > 0 else np.ones(self.n)
            return (1 - d.floor) * v / v.sum() + d.floor / self.n, None
        if int(self.t.min()) < d.burn_in:
            return self.base, None
        # the rule only where the labels show that the residual grows with the uncertainty
        # (by ``gate`` standard errors) and that the rule beats uniform PPI++
        q, ratio, z = self.gain()
        return q, (z > d.gate) & (ratio < 1)

    def draw(self) -> tuple[np.ndarray, np.ndarray]:
        """Draw the next item of each sequence: (item indices, their probabilities).

        Sequence ``s`` takes the first item whose cumulative probability reaches
        ``r_s * total`` (``r_s`` uniform on [0, 1)); sequences drawing with the same row of
        probabilities share its cumulative sum, searched once for all of them."""
        q, rule = self._probabilities()
        r = self.rng.random(self.s)
        row = q if rule is None else self.base
        cum = np.cumsum(row)
        # the number of cumulative sums below r * total (they never decrease)
        idx = np.searchsorted(cum, r * cum[-1], side="left")
        if rule is not None and rule.any():
            cum = np.cumsum(q[rule], axis=1)
            idx[rule] = (cum < r[rule, None] * cum[:, -1:]).sum(axis=1)
        idx = np.minimum(idx, self.n - 1)
        prob = row[idx]
        if rule is not None and rule.any():
            prob[rule] = q[rule, idx[rule]]
        return (idx[0], prob[0]) if self.s == 1 else (idx, prob)

    # --- one label ---------------------------------------------------------------------------

    def draw_one(self, r: float, exclude: np.ndarray | None = None) -> tuple[int, float] | None:
        """One sequence's next item among those not in ``exclude`` (a bool mask: the items
        its annotator has labelled), for the uniform number ``r``: the first item whose
        cumulative probability reaches ``r * total``, with its probability renormalised
        over the items left (the probability the draw was actually made with); ``None``
        when no item is left."""
        q = self.probabilities()[0].copy()
        if exclude is not None:
            q[np.asarray(exclude, dtype=bool)] = 0.0
        cum = np.cumsum(q)
        if cum[-1] <= 0.0:
            return None
        idx = min(int(np.searchsorted(cum, r * cum[-1], side="left")), self.n - 1)
        while q[idx] <= 0.0:                       # r * total on a zero step's edge
            idx += 1
        return idx, float(q[idx] / cum[-1])

    def update(self, item, prob, label, *, done=None) -> None:
        """Add the label(s) of the drawn item(s), with the probability each was drawn with.

        ``done``: ``(items, labels)`` of the items the annotator had labelled before this
        draw, when the draw excluded them (:meth:`draw_one`; one sequence): their labels
        stand in for themselves (des Raj 1956), so the term stays unbiased for the pool
        mean: ``Z = lam Fbar + c + (sum_done e_j + e_I / q_left(I)) / N``."""
        idx = np.atleast_1d(np.asarray(item, dtype=int))
        q = np.atleast_1d(np.asarray(prob, dtype=float))
        y = np.atleast_1d(np.asarray(label, dtype=float))
        if np.isnan(y).any():
            raise ValueError("ActiveSampler.update: a label is NaN (record the failure, draw again)")
        f = self.f[idx]
        w = 1.0 / (self.n * q)
        z = self.lam * self.fbar + self.c + (y - self.lam * f - self.c) * w
        if done is not None and len(done[0]):
            d_idx = np.asarray(done[0], dtype=int)
            d_y = np.asarray(done[1], dtype=float)
            z = z + (d_y.sum() - self.lam * self.f[d_idx].sum() - self.c * len(d_idx)) / self.n
        self.t += 1
        self.sz += z
        self.szz += z ** 2
        if self._k == self._hist.shape[2]:
            self._hist = np.concatenate([self._hist, np.zeros_like(self._hist)], axis=2)
        self._hist[:, :, self._k] = idx, y, w
        self._k += 1
        w2 = w * w
        self.sw2 += w2
        self.sw2y += w2 * y
        self.sw2f += w2 * f
        self.sw2ff += w2 * f * f
        self.sw2fy += w2 * f * y
        self.sw += w
        self.swy += w * y
        self.swf += w * f
        self.swyy += w * y * y
        self.swff += w * f * f
        self.swyf += w * y * f
        self._tune()
        if self.s == 1:
            self.history.append({"item": int(idx[0]), "prob": float(q[0]), "label": float(y[0]),
                                 "z": float(z[0])})

    def _tune(self) -> None:
        """``lam`` and ``c`` for the next label: least squares of ``Y`` on ``f`` over the
        labels so far, each weighted by ``w^2``, so they minimise the estimated
        ``E_q[w^2 (Y - lam f - c)^2]``, the variance of ``Z`` up to a term that does not
        grow with the weights. Under uniform sampling this is PPI++'s ``lam = cov(Y, f) /
        var(f)`` (Angelopoulos, Duchi & Zrnic 2023); under active sampling, the ``lam``
        that suits it (the items drawn rarely count most). ``lam`` is clipped to [0, 1]."""
        sw = np.maximum(self.sw2, 1e-12)
        my, mf = self.sw2y / sw, self.sw2f / sw
        cov = self.sw2fy / sw - my * mf
        var = self.sw2ff / sw - mf ** 2
        if self.design.tune:
            lam = np.where((var > 1e-12) & (self.t >= 3), cov / np.maximum(var, 1e-12), 1.0)
            self.lam = np.clip(lam, 0.0, 1.0)
        self.c = np.where(self.t >= 2, my - self.lam * mf, 0.0)

    # --- the answer --------------------------------------------------------------------------

    def estimate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(estimate, CS half-width, Wald half-width, running variance) of each sequence."""
        t = np.maximum(self.t, 1.0)
        mean = self.sz / t
        # one pseudo-observation of variance s0^2 keeps the first variances off zero
        var = (np.maximum(self.szz - t * mean ** 2, 0.0) + self.s0) / (t + 1.0)
        cs = cs_halfwidth(t, var, alpha=self.design.alpha, rho2=self.design.rho2)
        wald = self._z * np.sqrt(var / t)
        return mean, cs, wald, var

    def interval(self) -> pd.DataFrame:
        """The answer so far, one row per sequence: ``estimate``, ``ci_low``, ``ci_high``
        (the anytime-valid confidence sequence), ``width``, ``wald_low``, ``wald_high``
        (fixed-n), ``n_labels``, ``lam``, ``ci_level``."""
        mean, cs, wald, _ = self.estimate()
        return pd.DataFrame({"estimate": mean, "ci_low": mean - cs, "ci_high": mean + cs,
                             "width": 2 * cs, "wald_low": mean - wald, "wald_high": mean + wald,
                             "n_labels": self.t.astype(int), "lam": self.lam,
                             "ci_level": 1 - self.design.alpha})

