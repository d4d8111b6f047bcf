"""Consistency index and variance ratio per method (seed 000 eqs. 1-2, both readings of
the grouping) and the inter-method correlation of conversation means (seed 000 §4.3)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd

from workbench.stats import bootstrap_ci, consistency_index, correlate, variance_ratio

#: Columns of :func:`reliability`.
RELIABILITY_COLUMNS = ("protocol", "temperature", "measure", "reading", "unit", "within",
                       "estimate", "ci_low", "ci_high", "n", "n_missing", "n_units", "backend",
                       "method_label")
#: Columns of :func:`method_correlations`.
CORRELATION_COLUMNS = ("temperature", "pair", "method_x", "method_y", "estimate", "ci_low",
                       "ci_high", "p_value", "n", "n_missing", "backend")
#: The readings of the grouping, in display order.
READINGS = ("trials", "trials+judges", "trial means")

_BY = ["protocol", "temperature"]


def _rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _backend(frame: pd.DataFrame) -> str:
    values = sorted(set(frame["backend"].dropna()))
    return "+".join(values) if values else "unknown"


def judge_mean_variance_ratio(scores: pd.DataFrame, *, ddof: int = 1) -> pd.Series:
    """Variance ratio per judge, averaged over judges, per (protocol, temperature).

    For each judge separately: mean over answer models of the sd of the model's scores
    (over prompts and trials) divided by the sd of the models' mean scores (seed 000
    eq. 2, :func:`workbench.stats.variance_ratio` with ``by="judge_model"``); then the
    mean over judges. Computed from per-cell count, sum and sum of squares, so the
    cluster bootstrap of :func:`reliability` stays fast; the tests check it against
    :func:`workbench.stats.variance_ratio` and a direct computation.

    Returns
    -------
    Series
        Indexed by (protocol, temperature).
    """
    sums, cell_index, shape = _cell_sums(scores)
    values = _judge_mean_vr(sums, shape, ddof)
    return pd.Series(values, index=pd.MultiIndex.from_tuples(list(cell_index), names=_BY))


def _cell_sums(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.Index, tuple[int, int, int]]:
    """Count, sum and sum of squares of the (centred) scores per prompt x (protocol,
    temperature) x judge x answer model, with integer codes; NaN scores left out."""
    frame = scores.dropna(subset=["score"])
    cells, cell_index = pd.MultiIndex.from_frame(frame[_BY]).factorize()
    judges, judge_index = pd.factorize(frame["judge_model"])
    systems, system_index = pd.factorize(frame["answer_model"])
    y = frame["score"].to_numpy(float)
    y = y - y.mean() if y.size else y  # a constant shift changes no sd; keeps sums stable
    raw = pd.DataFrame({"item": pd.factorize(frame["item_id"])[0], "cell": cells,
                        "judge": judges, "system": systems, "n": 1.0, "s1": y, "s2": y * y})
    sums = raw.groupby(["item", "cell", "judge", "system"], sort=True).sum().reset_index()
    return sums, cell_index, (len(cell_index), len(judge_index), len(system_index))


def _judge_mean_vr(sums: pd.DataFrame, shape: tuple[int, int, int], ddof: int) -> np.ndarray:
    n_cells, n_judges, n_systems = shape
    code = ((sums["cell"].to_numpy() * n_judges + sums["judge"].to_numpy()) * n_systems
            + sums["system"].to_numpy())
    size = n_cells * n_judges * n_systems
    n, s1, s2 = (np.bincount(code, weights=sums[c].to_numpy(float), minlength=size).reshape(shape)
                 for c in ("n", "s1", "s2"))
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sd = np.sqrt(np.where(n > ddof, np.maximum(s2 - s1 * s1 / n, 0.0) / (n - ddof), np.nan))
        numerator = np.nanmean(sd, axis=2)
        means = np.where(n > 0, s1 / n, np.nan)
        k = np.isfinite(means).sum(axis=2)
        centred = means - np.nanmean(means, axis=2, keepdims=True)
        between = np.where(k > ddof, np.sqrt(np.nansum(centred**2, axis=2) / np.maximum(k - ddof, 1)),
                           np.nan)
        ratio = np.where(between > 0, numerator / between, np.nan)
        return np.nanmean(ratio, axis=1)


def _per_judge_rows(scores, n_boot, gen, ci_level) -> pd.DataFrame:
    sums, cell_index, shape = _cell_sums(scores)

    def statistic(frame: pd.DataFrame) -> dict[int, float]:
        return dict(enumerate(_judge_mean_vr(frame, shape, 1)))

    if n_boot:  # prompts are resampled with all their rows (their sums)
        boot = bootstrap_ci(sums, statistic=statistic, n_boot=n_boot, rng=gen, by="item",
                            ci_level=ci_level).set_index("measure")
    else:
        point = statistic(sums)
        boot = pd.DataFrame({"estimate": point, "ci_low": np.nan, "ci_high": np.nan})
    rows = []
    for k, (protocol, temperature) in enumerate(cell_index):
        part = scores[(scores["protocol"] == protocol) & (scores["temperature"] == temperature)]
        rows.append({"protocol": protocol, "temperature": temperature,
                     "measure": "variance_ratio", "reading": "trials",
                     "unit": "answer_model (per judge_model, mean over judges)",
                     "within": "item_id+trial", "estimate": boot.loc[k, "estimate"],
                     "ci_low": boot.loc[k, "ci_low"], "ci_high": boot.loc[k, "ci_high"],
                     "n": int(part["score"].notna().sum()),
                     "n_missing": int(part["score"].isna().sum()),
                     "n_units": int(part["answer_model"].nunique())})
    return pd.DataFrame(rows)


def reliability(scores: pd.DataFrame, *, n_boot: int = 1000,
                rng: np.random.Generator | int | None = None,
                ci_level: float = 0.95) -> pd.DataFrame:
    """Consistency index and variance ratio per method and temperature, every reading.

    Parameters
    ----------
    scores : DataFrame
        The ``scores`` frame of :func:`~workbench.studies.s1_judge_methods.run`.
    n_boot : int
        Bootstrap resamples (0: no CIs). Consistency index: conversations (units) are
        resampled; variance ratio: prompts (``item_id``) with all their rows.
    rng : numpy.random.Generator or int, optional
        Source of the resamples (used in a fixed order, so results are reproducible).
    ci_level : float
        Confidence level of the percentile intervals.

    Returns
    -------
    DataFrame
        :data:`RELIABILITY_COLUMNS`, one row per protocol x temperature x measure x reading;
        ``method_label`` names the method and temperature for plots (``holistic (T=0)``).

    Notes
    -----
    Seed 000 eq. (1), consistency index = mean over units of the sd of the unit's
    scores / sd of all scores; eq. (2), variance ratio = mean over answer models of the
    sd of the model's scores / sd of the models' mean scores (both lower = better). The
    seed's wording allows two groupings, both reported (``reading``):

    - ``trials``: only trials vary inside a unit. Consistency index: unit = conversation x
      judge; variance ratio: computed per judge (prompts and trials vary inside a model)
      and averaged over judges (:func:`judge_mean_variance_ratio`).
    - ``trials+judges``: trials and judges vary inside a unit. Consistency index: unit =
      conversation; variance ratio: judges pooled.
    - ``trial means`` (variance ratio only): the numerator is the sd over trials of the
      model's mean score in each trial (``replicate="trial"``), the run-to-run noise of
      a model's aggregate score.

    References
    ----------
    .. [1] Ota, M. et al. (Ubie, Inc.). 医療系対話 AI における評価基準の策定と自動評価手法の
       比較検証 (seed 000), §4.1-4.2, equations (1) and (2), table 3.
    """
    gen = _rng(rng)
    common = dict(score="score", by=_BY, n_boot=n_boot, ci_level=ci_level)
    parts = []
    for reading, unit, within in (
        ("trials", ["item_id", "answer_model", "judge_model"], ["trial"]),
        ("trials+judges", ["item_id", "answer_model"], ["trial", "judge_model"]),
    ):
        res = consistency_index(scores, unit=unit, within=within, rng=gen if n_boot else None,
                                **common)
        parts.append(res.assign(reading=reading))
    parts.append(_per_judge_rows(scores, n_boot, gen, ci_level))
    for reading, replicate in (("trials+judges", None), ("trial means", "trial")):
        res = variance_ratio(scores, system="answer_model",
                             within=["item_id", "trial", "judge_model"], replicate=replicate,
                             cluster="item_id", rng=gen if n_boot else None, **common)
        parts.append(res.assign(reading=reading))
    out = pd.concat(parts, ignore_index=True).reindex(columns=list(RELIABILITY_COLUMNS))
    out["backend"] = _backend(scores)
    out["reading"] = pd.Categorical(out["reading"], categories=READINGS, ordered=True)
    out["protocol"] = pd.Categorical(out["protocol"], categories=_order(scores), ordered=True)
    out = out.sort_values(["measure", "temperature", "protocol", "reading"], kind="stable")
    out["reading"] = out["reading"].astype(str)
    out["protocol"] = out["protocol"].astype(str)
    out["method_label"] = [f"{p} (T={t:g})" for p, t in zip(out["protocol"], out["temperature"],
                                                            strict=True)]
    return out.reset_index(drop=True)


def _order(scores: pd.DataFrame) -> list[str]:
    return list(pd.unique(scores["protocol"]))


def conversation_means(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean score of each conversation per method and temperature (over judges and
    trials; unparsed scores left out and counted in ``n_missing``)."""
    keys = ["temperature", "item_id", "answer_model", "conversation", "protocol"]
    grouped = scores.groupby(keys, sort=False, observed=True)["score"]
    out = grouped.agg(score="mean", n="count", n_total="size").reset_index()
    out["n_missing"] = out.pop("n_total") - out["n"]
    out["backend"] = _backend(scores)
    return out


def method_correlations(scores: pd.DataFrame, *, n_boot: int = 1000,
                        rng: np.random.Generator | int | None = None,
                        ci_level: float = 0.95) -> pd.DataFrame:
    """Pearson r between every pair of methods on conversation mean scores.

    Parameters
    ----------
    scores : DataFrame
        The ``scores`` frame of :func:`~workbench.studies.s1_judge_methods.run`.
    n_boot : int
        Bootstrap resamples of conversations for a percentile CI (0: Fisher-z interval).
    rng : numpy.random.Generator or int, optional
    ci_level : float

    Returns
    -------
    DataFrame
        :data:`CORRELATION_COLUMNS`, one row per temperature x pair (``pair`` is
        ``"<method_x> ~ <method_y>"``), computed by :func:`workbench.stats.correlate`.

    References
    ----------
    .. [1] Seed 000 §4.3: simple vs detailed holistic r = 0.80, simple vs checklist
       r = 0.68 (real judges, temperature 0).
    """
    means = conversation_means(scores)
    wide = means.pivot_table(index=["temperature", "conversation"], columns="protocol",
                             values="score", aggfunc="first", dropna=False)
    frames = []
    for a, b in itertools.combinations([m for m in _order(scores) if m in wide.columns], 2):
        pair = wide[[a, b]].rename(columns={a: "x", b: "y"}).reset_index()
        frames.append(pair.assign(pair=f"{a} ~ {b}", method_x=a, method_y=b))
    if not frames:
        raise ValueError("method_correlations: need at least two methods in scores")
    pairs = pd.concat(frames, ignore_index=True)
    gen = _rng(rng) if n_boot else None
    out = correlate(pairs, x="x", y="y", method="pearson",
                    split=["temperature", "pair", "method_x", "method_y"], n_boot=n_boot,
                    rng=gen, ci_level=ci_level)
    out["backend"] = _backend(scores)
    return out.reindex(columns=list(CORRELATION_COLUMNS)).reset_index(drop=True)
