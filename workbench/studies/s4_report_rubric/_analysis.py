"""S4 analyses: verbosity effect, version comparison, pilot variance components, power
(private; re-exported by ``workbench.studies.s4_report_rubric``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from workbench import stats
from workbench.studies.s4_report_rubric._data import MIN_PER_VERSION, ORIGINAL


def verbosity_effect(data: pd.DataFrame, *, score: str = "total",
                     ci_level: float = 0.95) -> pd.DataFrame:
    """Padded minus original score per judge and prompt condition, paired by report.

    :func:`workbench.stats.perturbation_effect` with ``condition = perturbation``,
    baseline the originals, one analysis per ``judge_model`` x ``mitigation``; trials are
    averaged within a report first and missing totals are dropped and counted. Adds
    ``prompt`` (:func:`prompt_label`) and ``comparison`` (``<judge>: <condition>``) for the
    figures. Works on
    :func:`totals` (``score="total"``) or on the long scores frame with a ``dimension``
    column (``score="score"``, one analysis per dimension as well).
    """
    by = ["judge_model", "backend", "mitigation"]
    by += ["dimension"] if "dimension" in data.columns else []
    eff = stats.perturbation_effect(data, score=score, item="source_item",
                                    condition="perturbation", baseline=ORIGINAL, by=by,
                                    ci_level=ci_level)
    return eff.assign(prompt=[prompt_label(m) for m in eff["mitigation"]],
                      comparison=eff["judge_model"] + ": " + eff["condition"])


def prompt_label(mitigation: bool) -> str:
    """``with mitigation`` / ``without mitigation`` (legend text of the figures)."""
    return "with mitigation" if bool(mitigation) else "without mitigation"


def version_comparison(data: pd.DataFrame, *, version_a: str, version_b: str,
                       ci_level: float = 0.95, alpha: float = 0.05) -> pd.DataFrame:
    """Pipeline version B minus A on the original reports, per judge and prompt.

    Each report's total is averaged over trials (a report is the unit), then Welch's
    t test (unequal variances, :func:`scipy.stats.ttest_ind` with ``equal_var=False``)
    with the Welch-Satterthwaite interval of the difference of means. ``provisional``
    marks comparisons with fewer than :data:`MIN_PER_VERSION` reports on a side (seed
    003's rule: fewer is a provisional signal only).

    Returns
    -------
    DataFrame
        ``judge_model, backend, mitigation, prompt, measure`` (``mean_difference``),
        ``a, b, test``
        (``welch_t``), ``n_a, n_b, mean_a, mean_b, estimate`` (b - a), ``ci_low,
        ci_high, ci_level, test_statistic, df, p_value, significant, hedges_g,
        provisional``.

    References
    ----------
    Welch, B. L. (1947). *Biometrika*, 34(1-2), 28-35. Hedges, L. V. (1981). Distribution
    theory for Glass's estimator of effect size. *J. Educ. Stat.*, 6(2), 107-128.
    """
    orig = data[data["perturbation"] == ORIGINAL]
    per_report = orig.groupby(["judge_model", "backend", "mitigation", "pipeline_version",
                               "item_id"], as_index=False)["total"].mean()
    rows = []
    for (judge, backend, mit), part in per_report.groupby(["judge_model", "backend", "mitigation"],
                                                          sort=True):
        xa = part.loc[part["pipeline_version"] == version_a, "total"].dropna().to_numpy(float)
        xb = part.loc[part["pipeline_version"] == version_b, "total"].dropna().to_numpy(float)
        row = {"judge_model": judge, "backend": backend, "mitigation": bool(mit),
               "prompt": prompt_label(mit),
               "measure": "mean_difference",
               "a": version_a, "b": version_b, "test": "welch_t", "n_a": len(xa), "n_b": len(xb),
               "mean_a": xa.mean() if len(xa) else np.nan,
               "mean_b": xb.mean() if len(xb) else np.nan, "ci_level": ci_level}
        row["estimate"] = row["mean_b"] - row["mean_a"]
        if len(xa) >= 2 and len(xb) >= 2 and (xa.var() > 0 or xb.var() > 0):
            res = sps.ttest_ind(xb, xa, equal_var=False)
            ci = res.confidence_interval(confidence_level=ci_level)
            n = len(xa) + len(xb)
            pooled = np.sqrt(((len(xa) - 1) * xa.var(ddof=1) + (len(xb) - 1) * xb.var(ddof=1))
                             / (n - 2))
            g = row["estimate"] / pooled * (1 - 3 / (4 * n - 9)) if pooled > 0 else np.nan
            row.update(ci_low=ci.low, ci_high=ci.high, test_statistic=res.statistic,
                       df=res.df, p_value=res.pvalue, hedges_g=g)
        else:
            row.update(ci_low=np.nan, ci_high=np.nan, test_statistic=np.nan, df=np.nan,
                       p_value=np.nan, hedges_g=np.nan)
        row["significant"] = bool(row["p_value"] < alpha) if np.isfinite(row["p_value"]) else False
        row["provisional"] = min(len(xa), len(xb)) < MIN_PER_VERSION
        rows.append(row)
    columns = ["judge_model", "backend", "mitigation", "prompt", "measure", "a", "b", "test",
               "n_a", "n_b",
               "mean_a", "mean_b", "estimate", "ci_low", "ci_high", "ci_level",
               "test_statistic", "df", "p_value", "significant", "hedges_g", "provisional"]
    return pd.DataFrame(rows, columns=columns)


def pilot_components(data: pd.DataFrame, *, mitigation: bool = True) -> pd.DataFrame:
    """Variance components of the report total from this run, as a pilot.

    Original reports only, one prompt condition (default: with the mitigation prompt,
    the seed's production setting), every judge: the item (report), judge, residual
    (report x judge) and trial components of :func:`workbench.stats.variance_components`.
    Totals are centred within each pipeline version first, so the version difference
    (the effect to detect) does not count as report-to-report noise. Reports with a
    missing total are dropped (counted in ``n_skipped``).
    """
    part = data[(data["perturbation"] == ORIGINAL) & (data["mitigation"] == mitigation)]
    if part.empty:
        raise ValueError(f"no original reports scored with mitigation={mitigation}")
    centred = part.assign(total_centred=part["total"] - part.groupby("pipeline_version")[
        "total"].transform("mean"))
    judge = "judge_model" if centred["judge_model"].nunique() > 1 else None
    trial = "trial" if centred["trial"].nunique() > 1 else None
    return stats.variance_components(centred, score="total_centred", item="item_id",
                                     judge=judge, trial=trial, incomplete="drop")


def power_table(components: pd.DataFrame, *, effects: list[float], n_items: list[int],
                n_trials: int = 1, n_judges: int = 1, n_sim: int = 1000,
                alpha: float = 0.05, rng: np.random.Generator | int) -> pd.DataFrame:
    """Power to detect each version difference with each number of reports per version:
    :func:`workbench.stats.power_by_simulation`, independent design (each version scored
    on its own reports), Welch's test, from the pilot's variance components."""
    return stats.power_by_simulation(variance_components=components, effect=list(effects),
                                     n_items=list(n_items), n_trials=n_trials,
                                     n_judges=n_judges, alpha=alpha, n_sim=n_sim, rng=rng,
                                     design="independent", test="welch")


def reports_needed(power: pd.DataFrame, *, target: float = 0.8) -> pd.DataFrame:
    """The answer to "how many reports do we need?": per effect, the fewest reports per
    version in the grid whose simulated power reaches ``target`` (NaN when none does), with
    that power and its noncentral-t counterpart."""
    rows = []
    for effect, part in power.sort_values("n_items").groupby("effect", sort=True):
        hit = part[part["estimate"] >= target]
        first = hit.iloc[0] if len(hit) else None
        rows.append({
            "effect": effect, "target": target,
            "n_items": int(first["n_items"]) if first is not None else np.nan,
            "power": float(first["estimate"]) if first is not None else np.nan,
            "power_analytic": float(first["power_analytic"]) if first is not None else np.nan,
            "largest_n_tried": int(part["n_items"].max()),
            "power_at_largest_n": float(part["estimate"].iloc[-1]),
        })
    return pd.DataFrame(rows)


def failure_counts(scores: pd.DataFrame) -> pd.DataFrame:
    """Judge calls and missing scores (failed or unparsed) per judge and prompt condition."""
    return scores.assign(_bad=~scores["parse_ok"].astype(bool)).groupby(
        ["judge_model", "mitigation"], as_index=False).agg(
        n_calls=("_bad", "size"), n_failed=("_bad", "sum"))
