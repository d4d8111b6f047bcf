"""correlate and length_bias against scipy and statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as sps

from workbench.stats import correlate, length_bias


def _data(seed=0, n_groups=5, n=30):
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(n_groups):
        x = rng.integers(1, 6, n).astype(float)  # ties, as with 1-5 human scores
        y = 0.5 * x + rng.normal(0, 1, n) + g
        rows.append(pd.DataFrame({"model": f"g{g}", "human": x, "metric": y}))
    return pd.concat(rows, ignore_index=True)


SCIPY = {
    "pearson": sps.pearsonr,
    "spearman": sps.spearmanr,
    "kendall": lambda a, b: sps.kendalltau(a, b, variant="b"),
}


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_pooled_matches_scipy(method):
    df = _data()
    res = correlate(df, x="metric", y="human", method=method)
    ref = SCIPY[method](df.metric, df.human)
    assert res.loc[0, "estimate"] == pytest.approx(ref.statistic, rel=1e-12)
    assert res.loc[0, "p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert res.loc[0, "n"] == len(df) and res.loc[0, "level"] == "pooled"


def test_kendall_is_tau_b():
    x = [1, 1, 2, 2, 3, 3, 4, 5]
    y = [1, 2, 1, 3, 3, 4, 4, 4]
    res = correlate(pd.DataFrame({"x": x, "y": y}), x="x", y="y", method="kendall")
    b = sps.kendalltau(x, y, variant="b").statistic
    c = sps.kendalltau(x, y, variant="c").statistic
    assert res.loc[0, "estimate"] == pytest.approx(b) and b != pytest.approx(c)


def test_per_group_and_mean_with_a_constant_group():
    df = _data()
    df.loc[df.model == "g2", "human"] = 3.0  # constant: undefined, skipped
    res = correlate(df, x="metric", y="human", by="model", level="all", method="spearman")
    per = res[res.level == "per_group"].set_index("model")
    expected = {}
    for g, part in df.groupby("model"):
        if g != "g2":
            expected[g] = sps.spearmanr(part.metric, part.human).statistic
            assert per.loc[g, "estimate"] == pytest.approx(expected[g])
    assert np.isnan(per.loc["g2", "estimate"])
    mean = res[res.level == "per_group_mean"].iloc[0]
    assert mean["estimate"] == pytest.approx(np.mean(list(expected.values())))
    assert mean["n_skipped"] == 1 and mean["n_groups"] == 4
    vals = np.array(list(expected.values()))
    half = sps.t.ppf(0.975, 3) * vals.std(ddof=1) / 2
    assert mean["ci_low"] == pytest.approx(vals.mean() - half)
    assert mean["p_value"] == pytest.approx(sps.ttest_1samp(vals, 0).pvalue)
    pooled = res[res.level == "pooled"].iloc[0]
    assert pooled["estimate"] == pytest.approx(sps.spearmanr(df.metric, df.human).statistic)


def test_fisher_interval_for_pearson():
    df = _data(n_groups=1, n=40)
    res = correlate(df, x="metric", y="human", method="pearson").iloc[0]
    z, se = np.arctanh(res["estimate"]), 1 / np.sqrt(40 - 3)
    q = sps.norm.ppf(0.975)
    assert res["ci_low"] == pytest.approx(np.tanh(z - q * se))
    assert res["ci_high"] == pytest.approx(np.tanh(z + q * se))
    # scipy's own Fisher interval for Pearson
    ci = sps.pearsonr(df.metric, df.human).confidence_interval()
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((ci.low, ci.high))


def test_all_methods_and_missing_rows():
    df = _data()
    df.loc[[0, 5], "metric"] = np.nan
    res = correlate(df, x="metric", y="human", method="all")
    assert list(res["method"]) == ["pearson", "spearman", "kendall"]
    assert (res["n"] == len(df) - 2).all() and (res["n_missing"] == 2).all()


def test_split_runs_separate_analyses():
    df = pd.concat([_data(1).assign(metric_name="bleu"), _data(2).assign(metric_name="rouge")])
    res = correlate(df, x="metric", y="human", split="metric_name")
    assert list(res["metric_name"]) == ["bleu", "rouge"]
    rouge = df[df.metric_name == "rouge"]
    assert res.loc[1, "estimate"] == pytest.approx(
        sps.spearmanr(rouge.metric, rouge.human).statistic
    )


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_bootstrap_rows_agrees_with_scipy_bootstrap(method):
    df = _data(n_groups=1, n=60)
    res = correlate(df, x="metric", y="human", method=method, n_boot=1000, rng=0).iloc[0]
    assert res["ci_method"] == "percentile_bootstrap" and res["n_boot"] == 1000

    def stat(a, b):
        return SCIPY[method](a, b).statistic

    ref = sps.bootstrap(
        (df.metric.to_numpy(), df.human.to_numpy()),
        stat,
        paired=True,
        vectorized=False,
        n_resamples=1000,
        method="percentile",
        random_state=np.random.default_rng(1),
    ).confidence_interval
    width = ref.high - ref.low
    assert res["ci_low"] == pytest.approx(ref.low, abs=0.1 * width)
    assert res["ci_high"] == pytest.approx(ref.high, abs=0.1 * width)


def test_bootstrap_of_group_mean_resamples_groups():
    df = _data(n_groups=6)
    res = correlate(
        df, x="metric", y="human", by="model", level="per_group_mean", n_boot=500, rng=3
    ).iloc[0]
    vals = [sps.spearmanr(p.metric, p.human).statistic for _, p in df.groupby("model")]
    assert min(vals) <= res["ci_low"] <= res["estimate"] <= res["ci_high"] <= max(vals)


def test_bad_arguments():
    df = _data()
    with pytest.raises(ValueError, match="need by="):
        correlate(df, x="metric", y="human", level="per_group")
    with pytest.raises(ValueError, match="method"):
        correlate(df, x="metric", y="human", method="cosine")
    with pytest.raises(ValueError, match="rng"):
        correlate(df, x="metric", y="human", n_boot=10)
    with pytest.raises(ValueError, match="row"):
        correlate(df.assign(human="x"), x="metric", y="human")


# --- length_bias ---------------------------------------------------------------


def _lengths(seed=0):
    rng = np.random.default_rng(seed)
    n = 80
    item = np.repeat(np.arange(20), 4)
    length = rng.integers(100, 900, n).astype(float)
    score = 3 + 0.002 * length + rng.normal(0, 0.5, 20)[item] + rng.normal(0, 0.6, n)
    return pd.DataFrame({"item_id": item, "length": length, "score": score})


def test_length_bias_matches_ols_on_z_scores():
    df = _lengths()
    res = length_bias(df, score="score", length="length").iloc[0]
    z = df.assign(
        zs=(df.score - df.score.mean()) / df.score.std(),
        zl=(df.length - df.length.mean()) / df.length.std(),
    )
    fit = smf.ols("zs ~ zl", data=z).fit()
    lo, hi = fit.conf_int().loc["zl"]
    assert res["estimate"] == pytest.approx(fit.params["zl"])
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((lo, hi))
    assert res["p_value"] == pytest.approx(fit.pvalues["zl"])
    assert res["estimate"] == pytest.approx(sps.pearsonr(df.score, df.length).statistic)
    raw = smf.ols("score ~ length", data=df).fit()
    lo, hi = raw.conf_int().loc["length"]
    assert res["raw_slope"] == pytest.approx(100 * raw.params["length"])
    assert (res["raw_slope_ci_low"], res["raw_slope_ci_high"]) == pytest.approx(
        (100 * lo, 100 * hi)
    )


def test_length_bias_within_items_matches_fixed_effects_ols():
    df = _lengths(1)
    res = length_bias(df, score="score", length="length", item="item_id", per=1).iloc[0]
    fit = smf.ols("score ~ length + C(item_id)", data=df).fit()
    lo, hi = fit.conf_int().loc["length"]
    assert res["raw_slope"] == pytest.approx(fit.params["length"])
    assert (res["raw_slope_ci_low"], res["raw_slope_ci_high"]) == pytest.approx((lo, hi))
    assert res["p_value"] == pytest.approx(fit.pvalues["length"])
    assert res["df"] == fit.df_resid and res["n_units"] == 20


def test_length_bias_by_group_and_missing():
    df = pd.concat([_lengths(2).assign(judge="a"), _lengths(3).assign(judge="b")])
    df.iloc[0, df.columns.get_loc("score")] = np.nan
    res = length_bias(df, score="score", length="length", by="judge")
    assert list(res["judge"]) == ["a", "b"]
    assert res.loc[0, "n_missing"] == 1 and res.loc[0, "n"] == 79


def test_count_weighted_bootstrap_equals_scipy_on_the_materialised_resample():
    from workbench.stats._bootstrap import resample_counts
    from workbench.stats._correlation import _resample_ranks, _weighted_pearson

    df = _data(n_groups=1, n=25)
    x, y = df.metric.to_numpy(), df.human.to_numpy()
    counts = resample_counts(25, 5, np.random.default_rng(0)).astype(float)
    gx, gy = np.unique(x, return_inverse=True)[1], np.unique(y, return_inverse=True)[1]
    rx = _resample_ranks(counts, gx, gx.max() + 1)
    ry = _resample_ranks(counts, gy, gy.max() + 1)
    spearman = _weighted_pearson(counts, rx, ry)
    pearson = _weighted_pearson(counts, x, y)
    for b in range(5):
        xs, ys = np.repeat(x, counts[b].astype(int)), np.repeat(y, counts[b].astype(int))
        assert spearman[b] == pytest.approx(sps.spearmanr(xs, ys).statistic, rel=1e-10)
        assert pearson[b] == pytest.approx(sps.pearsonr(xs, ys).statistic, rel=1e-10)
