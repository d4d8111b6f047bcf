"""Simulated annotators, and the simulation that proves the active interval.

**Simulated annotators** (:class:`Annotator`): each has a known bias and noise; given an
item's latent human score (on the bundled data: the simulated raters' mean of study X2/X3),
a label is ``clip(round(latent + bias + noise * z), low, high)``. Their expected label is
known exactly (:func:`expected_label`: a sum over the rounding bins of the normal), so the
simulation's target, the mean human label over the pool, is known without error.
Pairwise annotators prefer the answer of higher ``latent + noise * z`` (a tie within
``tie_margin``).

**Judges of known informativeness** (:func:`sampled_judge`): a share ``hard_share`` of the
items is hard; on item ``i`` the judge's verdict is ``latent_i + bias + e_i`` with
``e_i ~ N(0, s_i)``, ``s_i = hard`` (default 2 points on the 1-5 scale) on the hard items
and ``easy`` (0.2) on the others, and its ``n_samples`` samples scatter around the verdict
by ``spread * s_i``; the prediction is their mean (clipped to the scale), the uncertainty
their SD. So the judge is confident and nearly right on most items and unsure exactly
where it errs: its uncertainty predicts its error. ``informative=False`` shuffles the
uncertainty over the items, keeping its values and the errors: the same judge whose
uncertainty says nothing. The pairwise judge (:func:`pairwise_judge`) is asked in both
orders; its verdict flips with the order on pairs it cannot separate.

**How much any rule can gain** is set by how unequal the residuals ``Y - f`` are: at best
(sampling by the true residual size, no uniform share) the width ratio is
``E[r] / sqrt(E[r^2])`` with ``r_i = sqrt(E[(Y_i - f_i)^2])`` (Zrnic & Candès 2024). The
people's own noise (and the rounding to whole points) is in every item's residual, the
judge's error only in the hard ones', so the gain shrinks as the annotators' noise grows
and as the hard share grows; the ``oracle rule`` row measures that ceiling.

:func:`simulate_labelling` runs many labelling studies side by side with
:class:`~workbench.labels.active.ActiveSampler` (active and uniform sampling under one
budget) and reports coverage (at the budget and at every label from ``t0`` on) and widths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from workbench.labels.active import ActiveSampler
from workbench.qualify import ppi_mean_intervals

__all__ = ["ANNOTATORS", "Annotator", "annotate", "binary_labeller", "continuous_labeller",
           "expected_label", "label_scenarios", "pairwise_judge", "prefer",
           "preference_labeller", "sampled_judge", "score_labeller", "simulate_labelling",
           "verdict_judge"]


@dataclass(frozen=True)
class Annotator:
    """A simulated person: ``bias`` added to the latent score, Gaussian ``noise`` (SD)."""

    name: str
    bias: float
    noise: float


#: The default panel: two careful annotators, one lenient, one noisy.
ANNOTATORS = (Annotator("sim-ann-1", 0.0, 0.4), Annotator("sim-ann-2", -0.2, 0.5),
              Annotator("sim-ann-3", 0.3, 0.5), Annotator("sim-ann-4", 0.0, 0.8))


def annotate(latent: np.ndarray, annotators: Sequence[Annotator], who: np.ndarray,
             rng: np.random.Generator, *, scale: tuple[int, int] = (1, 5)) -> np.ndarray:
    """Integer labels of ``latent`` scores by annotators ``who`` (indices, same shape)."""
    bias = np.array([a.bias for a in annotators])[who]
    noise = np.array([a.noise for a in annotators])[who]
    raw = np.asarray(latent, dtype=float) + bias + noise * rng.standard_normal(np.shape(who))
    return np.clip(np.round(raw), *scale)


def expected_label(latent: np.ndarray, annotators: Sequence[Annotator], *,
                   scale: tuple[int, int] = (1, 5)) -> np.ndarray:
    """Each item's expected label, averaged over the annotators (exact).

    ``P(label = k)`` is the normal mass of ``[k - 0.5, k + 0.5)`` (the ends open to the
    clipping). ``np.round`` rounds halves to even, a set of measure zero.

    Examples
    --------
    >>> float(expected_label(np.array([3.0]), [Annotator("x", 0.0, 0.5)])[0])
    3.0
    """
    latent = np.asarray(latent, dtype=float)
    low, high = scale
    out = np.zeros_like(latent)
    for a in annotators:
        mu = latent + a.bias
        cdf = lambda x, mu=mu, a=a: sps.norm.cdf((x - mu) / a.noise)  # noqa: E731
        exp = np.full_like(latent, float(low))
        for k in range(low + 1, high + 1):
            exp += 1.0 - cdf(k - 0.5)                 # E[X] = low + sum_k P(X >= k)
        out += exp
    return out / len(annotators)


def _preference_mean(diff: np.ndarray, noise: float, tie_margin: float) -> np.ndarray:
    """E[Y], Y = 1 (A preferred), 0.5 (tie), 0 (B), for one annotator of ``noise``."""
    high = sps.norm.cdf((diff - tie_margin) / noise)
    low = sps.norm.cdf((diff + tie_margin) / noise)
    return high + 0.5 * (low - high)


def prefer(diff: np.ndarray, noise: np.ndarray, rng: np.random.Generator, *,
           tie_margin: float = 0.25) -> np.ndarray:
    """Simulated preferences between two answers whose latent scores differ by ``diff``
    (A minus B): 1 (A), 0.5 (tie, within ``tie_margin``) or 0 (B), with Gaussian ``noise``."""
    seen = np.asarray(diff, float) + np.asarray(noise, float) * rng.standard_normal(np.shape(diff))
    return np.where(np.abs(seen) < tie_margin, 0.5, np.where(seen > 0, 1.0, 0.0))


def score_labeller(latent: np.ndarray, annotators: Sequence[Annotator] = ANNOTATORS):
    """(labeller, target) for the mean human score: the labeller gives an item's label by
    an annotator drawn at random; the target is the pool's expected label."""
    latent = np.asarray(latent, dtype=float)

    def labeller(idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        who = rng.integers(len(annotators), size=np.shape(idx))
        return annotate(latent[idx], annotators, who, rng)

    return labeller, float(expected_label(latent, annotators).mean())


def preference_labeller(diff: np.ndarray, annotators: Sequence[Annotator] = ANNOTATORS, *,
                        tie_margin: float = 0.25):
    """(labeller, target) for a win rate: the share of pairs (a tie counts half) in which
    people prefer A, from the pairs' latent differences ``diff``."""
    diff = np.asarray(diff, dtype=float)
    noise = np.array([a.noise for a in annotators])
    target = float(np.mean([_preference_mean(diff, n, tie_margin) for n in noise]))

    def labeller(idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        who = rng.integers(len(annotators), size=np.shape(idx))
        return prefer(diff[idx], noise[who], rng, tie_margin=tie_margin)

    return labeller, target


def pairwise_judge(diff: np.ndarray, rng: np.random.Generator, *, error: float = 0.3,
                   position_bias: float = 0.4, noise: float = 0.3,
                   informative: bool = True) -> pd.DataFrame:
    """A simulated pairwise judge asked in both orders: ``prediction`` is the mean of its
    two verdicts for A (1, 0.5 or 0), ``uncertainty`` 1 when the verdict flips with the
    order (else 0). Its view of each pair is off by ``N(0, error)``; the answer shown first
    gains ``position_bias``; each call adds ``N(0, noise)``. ``informative=False`` shuffles
    the flips over the pairs."""
    diff = np.asarray(diff, dtype=float)
    seen = diff + error * rng.standard_normal(len(diff))
    first = (seen + position_bias + noise * rng.standard_normal(len(diff))) > 0     # A first
    second = (seen - position_bias + noise * rng.standard_normal(len(diff))) > 0    # B first
    flip = (first != second).astype(float)
    if not informative:
        flip = rng.permutation(flip)
    return pd.DataFrame({"prediction": (first.astype(float) + second) / 2,
                         "uncertainty": flip})


def sampled_judge(latent: np.ndarray, rng: np.random.Generator, *, bias: float = 0.3,
                  easy: float = 0.2, hard: float = 2.0, hard_share: float = 0.1,
                  spread: float = 0.5, n_samples: int = 5, informative: bool = True,
                  scale: tuple[int, int] = (1, 5)) -> pd.DataFrame:
    """A simulated judge's prediction and uncertainty of each item (see the module).

    Returns
    -------
    DataFrame
        ``prediction`` (mean of the samples, clipped to the scale), ``uncertainty`` (their
        SD; shuffled over the items when ``informative=False``), ``hard`` (the item is one
        of the hard ones), ``error_sd`` (``s_i``).
    """
    latent = np.asarray(latent, dtype=float)
    n = len(latent)
    hard_items = np.zeros(n, dtype=bool)
    hard_items[rng.choice(n, int(round(hard_share * n)), replace=False)] = True
    s = np.where(hard_items, hard, easy)
    verdict = latent + bias + s * rng.standard_normal(n)
    samples = verdict[:, None] + spread * s[:, None] * rng.standard_normal((n, n_samples))
    uncertainty = samples.std(axis=1, ddof=1)
    if not informative:
        uncertainty = rng.permutation(uncertainty)
    return pd.DataFrame({"prediction": np.clip(samples.mean(axis=1), *scale),
                         "uncertainty": uncertainty, "hard": hard_items, "error_sd": s})


def verdict_judge(n: int, rng: np.random.Generator, *, accuracy: float = 0.85,
                  concentration: float = 7.0, overconfidence: float = 0.05,
                  noise: float = 0.08, informative: bool = True) -> pd.DataFrame:
    """A judge's verdicts that people mark right (1) or wrong (0): binary labels.

    Item ``i``'s verdict is right with probability ``p_i ~ Beta(accuracy k, (1 - accuracy) k)``
    (``k = concentration``); the judge's confidence in it, the prediction, is
    ``clip(p_i + overconfidence + N(0, noise), 0.5, 0.999)`` and its uncertainty
    ``1 - confidence`` (shuffled over the items when ``informative=False``). Returns
    ``prediction``, ``uncertainty``, ``p_right``; :func:`binary_labeller` labels them.
    """
    p = rng.beta(accuracy * concentration, (1 - accuracy) * concentration, n)
    conf = np.clip(p + overconfidence + noise * rng.standard_normal(n), 0.5, 0.999)
    unc = 1.0 - conf
    if not informative:
        unc = rng.permutation(unc)
    return pd.DataFrame({"prediction": conf, "uncertainty": unc, "p_right": p})


def binary_labeller(p_right: np.ndarray):
    """(labeller, target): a person marks item ``i``'s verdict right with probability
    ``p_right[i]``; the target is the judge's accuracy over the pool, ``mean(p_right)``."""
    p = np.asarray(p_right, dtype=float)

    def labeller(idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return (rng.random(np.shape(idx)) < p[idx]).astype(float)

    return labeller, float(p.mean())


def continuous_labeller(latent: np.ndarray, noise: float = 0.8):
    """(labeller, target): unrounded, unclipped labels ``latent + N(0, noise)`` (a
    continuous measure, e.g. a time or a length); the target is ``mean(latent)``."""
    latent = np.asarray(latent, dtype=float)

    def labeller(idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return latent[idx] + noise * rng.standard_normal(np.shape(idx))

    return labeller, float(latent.mean())


def label_scenarios(latent: np.ndarray, rng: np.random.Generator) -> list[dict]:
    """The binary- and continuous-label scenarios of ``workbench bench labels`` (beside X4's
    scores and win rates): a judge's accuracy as people mark its verdicts (:func:`verdict_judge`,
    accuracy 0.85 and 0.7, uncertainty informative or shuffled, on a pool of ``len(latent)``),
    and the mean of continuous labels (:func:`continuous_labeller`, noise 0.8, the
    :func:`sampled_judge` of ``latent`` unclipped, hard share 0.2). Each a dict of
    ``quantity``, ``scenario``, ``informative``, ``pred``, ``unc``, ``lab``, ``target``."""
    n = len(latent)
    out = []
    for accuracy in (0.85, 0.7):
        seed = rng.integers(2 ** 32)
        for informative in (True, False):
            kind = "informative" if informative else "shuffled"
            judge = verdict_judge(n, np.random.default_rng(seed), accuracy=accuracy,
                                  informative=informative)
            lab, target = binary_labeller(judge["p_right"])
            out.append(dict(quantity="judge accuracy (binary)", informative=kind,
                            scenario=f"binary, accuracy {accuracy:.2f}, {kind}",
                            pred=judge["prediction"], unc=judge["uncertainty"], lab=lab,
                            target=target))
    seed = rng.integers(2 ** 32)
    lab, target = continuous_labeller(latent, 0.8)
    for informative in (True, False):
        kind = "informative" if informative else "shuffled"
        judge = sampled_judge(latent, np.random.default_rng(seed), hard_share=0.2,
                              informative=informative, scale=(-1e9, 1e9))
        out.append(dict(quantity="mean (continuous)", informative=kind,
                        scenario=f"continuous, noise 0.8, {kind}", pred=judge["prediction"],
                        unc=judge["uncertainty"], lab=lab, target=target))
    return out


def simulate_labelling(prediction: np.ndarray, uncertainty: np.ndarray, labeller,
                       target: float, *, budget: int = 100, n_studies: int = 500,
                       alpha: float = 0.05, floor: float = 0.2, burn_in: int = 20,
                       t0: int = 20, abstain: np.ndarray | None = None, check_every: int = 1,
                       reference: bool = True, oracle: bool = True, tune: bool = True,
                       gate: float = 3.0, direct: bool = True,
                       rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Coverage and width of the active and uniform intervals over ``n_studies`` studies.

    Every study draws ``budget`` labels from the pool, each given by ``labeller(idx, rng)``
    (:func:`score_labeller`, :func:`preference_labeller`: an annotator drawn at random);
    ``target`` is the pool's expected human label. ``active`` samples by the uncertainty
    with the calibrated rule, ``active, q ∝ u`` (with ``direct``) by the uncertainty itself
    (Zrnic & Candès's rule, mixed with uniform), ``uniform`` uniformly; all use the same
    PPI++ estimate and confidence sequence. With
    ``reference``, the fixed-n PPI++ interval of ``ppi-python`` (``ppi_mean_ci``, for all
    studies at once: :func:`workbench.qualify.ppi_mean_intervals`) on each uniform study's labels (the pool's
    predictions as the unlabelled set) is added as
    ``uniform ppi-python (fixed n)``. With ``oracle``, ``oracle rule``: sampling
    proportional to each item's true residual size ``sqrt(E[(Y - f - c)^2])`` (estimated
    from 200 simulated labels per item; ``c`` the mean residual), mixed with uniform like
    the active rule: the best any rule using this judge could do, known only in simulation;
    and ``ceiling``, the width ratio of that rule without the uniform share and with
    ``lam = 1``, ``mean(r) / sqrt(mean(r^2))`` (``r`` the residual sizes; Zrnic & Candès
    2024, the Cauchy-Schwarz bound), about the most any sampling rule can gain here.

    Returns
    -------
    DataFrame
        One row per method: ``method``, ``n_studies``, ``budget``, ``coverage`` (the
        interval at the budget holds the target), ``coverage_anytime`` (it holds it at every
        ``check_every``-th label from ``t0`` to the budget), ``width`` (mean width at the
        budget), ``wald_coverage``, ``wald_width`` (fixed-n Wald interval of the same
        estimate), ``distinct_items`` (mean number of different items labelled),
        ``ci_level``, ``target``, ``width_ratio`` (mean width over uniform's mean width),
        and Monte Carlo standard errors: ``coverage_se``, ``coverage_anytime_se``
        (binomial, ``sqrt(p (1 - p) / n_studies)``) and ``width_ratio_se`` (delta method
        for a ratio of two means over paired studies,
        ``r sqrt((var_a / mean_a^2 + var_u / mean_u^2 - 2 cov_au / (mean_a mean_u)) / n)``).
        The methods share their random numbers (the seeds of the draws and of the labels),
        so study ``s`` of each method is paired with study ``s`` of uniform's.
    """
    gen = np.random.default_rng(rng)
    pred = np.asarray(prediction, dtype=float)
    rows, uniform_draws, sizes = [], None, None
    methods = (("active",) + (("active, q ∝ u",) if direct else ()) + ("uniform",)
               + (("oracle rule",) if oracle else ()))
    widths = {}
    if oracle:
        draws = labeller(np.repeat(np.arange(len(pred))[None, :], 200, axis=0),
                         np.random.default_rng(gen.integers(2 ** 32)))
        resid = draws - pred[None, :]
        sizes = np.sqrt(((resid - resid.mean()) ** 2).mean(axis=0))
    # common random numbers: every method draws with the same seeds, so the studies are
    # paired (identical draws and labels while a rule stays uniform)
    draw_seed, label_seed = gen.integers(2 ** 32, size=2)
    for method in methods:
        sampler = ActiveSampler(pred, uncertainty, abstain=abstain, alpha=alpha,
                                floor=floor, burn_in=burn_in, t_star=budget,
                                active=method.startswith("active"), n_studies=n_studies,
                                tune=tune, gate=gate,
                                rule="direct" if method == "active, q ∝ u" else "calibrated",
                                sizes=sizes if method == "oracle rule" else None,
                                rng=draw_seed)
        label_rng = np.random.default_rng(label_seed)
        always = np.ones(n_studies, dtype=bool)
        seen = np.zeros((n_studies, len(pred)), dtype=bool)
        draws = np.zeros((n_studies, budget), dtype=int)
        labels = np.zeros((n_studies, budget))
        for t in range(budget):
            idx, prob = sampler.draw()
            y = labeller(idx, label_rng)
            sampler.update(idx, prob, y)
            seen[np.arange(n_studies), idx] = True
            draws[:, t], labels[:, t] = idx, y
            if (t + 1 >= t0 and (t + 1 - t0) % check_every == 0) or t + 1 == budget:
                mean, cs, _, _ = sampler.estimate()
                always &= np.abs(mean - target) <= cs
        mean, cs, wald, _ = sampler.estimate()
        widths[method] = 2 * cs
        rows.append({"method": method, "n_studies": n_studies, "budget": budget,
                     "coverage": float(np.mean(np.abs(mean - target) <= cs)),
                     "coverage_anytime": float(np.mean(always)),
                     "width": float(np.mean(2 * cs)),
                     "wald_coverage": float(np.mean(np.abs(mean - target) <= wald)),
                     "wald_width": float(np.mean(2 * wald)),
                     "distinct_items": float(seen.sum(axis=1).mean())})
        if method == "uniform":
            uniform_draws = (draws, labels)
    if reference:
        draws, labels = uniform_draws
        lows, highs, _ = ppi_mean_intervals(labels, pred[draws], pred, alpha=alpha)
        hits = (lows <= target) & (target <= highs)
        widths["uniform ppi-python (fixed n)"] = highs - lows
        rows.append({"method": "uniform ppi-python (fixed n)", "n_studies": n_studies,
                     "budget": budget, "coverage": float(hits.mean()),
                     "coverage_anytime": np.nan, "width": float(np.mean(highs - lows)),
                     "wald_coverage": np.nan, "wald_width": np.nan,
                     "distinct_items": next(r["distinct_items"] for r in rows
                                            if r["method"] == "uniform")})
    ceiling = (float(sizes.mean() / np.sqrt(np.mean(sizes ** 2))) if sizes is not None
               else np.nan)
    out = pd.DataFrame(rows).assign(ci_level=1 - alpha, target=target, ceiling=ceiling)
    uni = out.loc[out["method"] == "uniform"].iloc[0]
    out["width_ratio"] = out["width"] / uni["width"]
    # delta method for a ratio of means of paired studies
    base = widths["uniform"]
    ses = []
    for method in out["method"]:
        a = widths[method]
        cov = np.cov(a, base)
        rel = (cov[0, 0] / a.mean() ** 2 + cov[1, 1] / base.mean() ** 2
               - 2 * cov[0, 1] / (a.mean() * base.mean()))
        ses.append(a.mean() / base.mean() * np.sqrt(max(rel, 0.0) / n_studies))
    out["width_ratio_se"] = ses
    for col in ("coverage", "coverage_anytime"):
        out[f"{col}_se"] = np.sqrt(out[col] * (1 - out[col]) / n_studies)
    return out
