"""variance_components and power_by_simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.power import TTestIndPower, TTestPower

from workbench.stats import power_by_simulation, variance_components


def _mc_tolerance(p, n_sim):
    return 4 * np.sqrt(p * (1 - p) / n_sim)


def test_power_rises_with_items_and_trials():
    res = power_by_simulation(
        variance_components={"item": 0.5, "residual": 0.3, "trial": 1.0},
        effect=0.5,
        n_items=[5, 20, 60],
        n_trials=[1, 5],
        n_sim=1000,
        rng=0,
    )
    grid = res.pivot(index="n_items", columns="n_trials", values="estimate")
    assert grid.loc[5, 1] < grid.loc[20, 1] < grid.loc[60, 1]
    assert (grid.loc[[20, 60], 5] > grid.loc[[20, 60], 1]).all()  # at n=5 both are ~0.1
    analytic = res.pivot(index="n_items", columns="n_trials", values="power_analytic")
    assert (analytic[5] > analytic[1]).all() and analytic[1].is_monotonic_increasing
    assert len(res) == 6 and set(res["design"]) == {"independent"}


@pytest.mark.parametrize("design", ["independent", "paired"])
def test_no_effect_rejects_at_alpha(design):
    res = power_by_simulation(
        variance_components={"item": 1, "judge": 0.5, "residual": 0.5, "trial": 0.5},
        effect=0.0,
        n_items=20,
        n_trials=2,
        n_judges=2,
        n_sim=4000,
        rng=1,
        design=design,
    ).iloc[0]
    assert res["estimate"] == pytest.approx(0.05, abs=_mc_tolerance(0.05, 4000))


def test_matches_statsmodels_independent_t_when_judge_and_trial_vanish():
    comp = {"item": 0.8, "residual": 0.2}
    res = power_by_simulation(
        variance_components=comp, effect=0.6, n_items=15, n_sim=4000, rng=2
    ).iloc[0]
    d = 0.6 / np.sqrt(1.0)
    ref = TTestIndPower().power(effect_size=d, nobs1=15, alpha=0.05)
    assert res["effect_size_d"] == pytest.approx(d)
    assert res["power_analytic"] == pytest.approx(ref, rel=1e-6)
    assert res["estimate"] == pytest.approx(ref, abs=_mc_tolerance(ref, 4000))
    assert res["ci_low"] < ref < res["ci_high"]


def test_paired_design_cancels_item_and_judge_variance():
    # the residual alone and with large item and judge variance: the same power
    ref = TTestPower().power(effect_size=0.4 / np.sqrt(2 * 0.5), nobs=12, alpha=0.05)
    for components, rng in (
        ({"residual": 0.5}, 3),
        ({"item": 5.0, "judge": 3.0, "residual": 0.5}, 4),
    ):
        res = power_by_simulation(
            variance_components=components,
            effect=0.4,
            n_items=12,
            n_sim=4000,
            rng=rng,
            design="paired",
        ).iloc[0]
        assert res["power_analytic"] == pytest.approx(ref, rel=1e-6)
        assert res["estimate"] == pytest.approx(ref, abs=_mc_tolerance(ref, 4000))


def test_more_judges_and_trials_shrink_the_noise():
    comp = {"item": 0.0, "residual": 1.0, "trial": 2.0}
    res = power_by_simulation(
        variance_components=comp,
        effect=0.5,
        n_items=20,
        n_trials=[1, 4],
        n_judges=[1, 3],
        n_sim=10,
        rng=0,
    )
    d = res.set_index(["n_trials", "n_judges"])["effect_size_d"]
    assert d[(1, 1)] == pytest.approx(0.5 / np.sqrt(3.0))
    assert d[(4, 3)] == pytest.approx(0.5 / np.sqrt(1 / 3 + 2 / 12))


def test_welch_and_bad_arguments():
    res = power_by_simulation(
        variance_components={"item": 1.0}, effect=1.0, n_items=10, n_sim=500, rng=0, test="welch"
    ).iloc[0]
    assert res["test"] == "welch" and 0 < res["estimate"] < 1
    with pytest.raises(ValueError, match="unknown variance components"):
        power_by_simulation(variance_components={"items": 1.0}, effect=1, n_items=5, rng=0)
    with pytest.raises(ValueError, match="rng"):
        power_by_simulation(variance_components={"item": 1.0}, effect=1, n_items=5, rng=None)
    with pytest.raises(ValueError, match="independent design only"):
        power_by_simulation(
            variance_components={"item": 1.0},
            effect=1,
            n_items=5,
            rng=0,
            design="paired",
            test="welch",
        )


def _balanced(seed, comp, n_i=40, n_j=4, n_t=3):
    rng = np.random.default_rng(seed)
    a = rng.normal(0, np.sqrt(comp["item"]), n_i)[:, None, None]
    b = rng.normal(0, np.sqrt(comp["judge"]), n_j)[None, :, None]
    r = rng.normal(0, np.sqrt(comp["residual"]), (n_i, n_j, 1))
    e = rng.normal(0, np.sqrt(comp["trial"]), (n_i, n_j, n_t))
    y = 5 + a + b + r + e
    i, j, t = np.indices(y.shape)
    return pd.DataFrame(
        {"item_id": i.ravel(), "judge_model": j.ravel(), "trial": t.ravel(), "score": y.ravel()}
    )


def test_variance_components_equal_anova_mean_squares():
    df = _balanced(0, {"item": 1.0, "judge": 0.3, "residual": 0.4, "trial": 0.6})
    vc = variance_components(df, score="score", item="item_id", judge="judge_model")
    est = dict(zip(vc.component, vc.variance_raw, strict=True))
    aov = anova_lm(smf.ols("score ~ C(item_id) * C(judge_model)", data=df).fit())
    ms = aov["mean_sq"]
    ms_i, ms_j = ms["C(item_id)"], ms["C(judge_model)"]
    ms_ij, ms_w = ms["C(item_id):C(judge_model)"], ms["Residual"]
    assert est["trial"] == pytest.approx(ms_w)
    assert est["residual"] == pytest.approx((ms_ij - ms_w) / 3)
    assert est["item"] == pytest.approx((ms_i - ms_ij) / (4 * 3))
    assert est["judge"] == pytest.approx((ms_j - ms_ij) / (40 * 3))
    assert vc["share"].sum() == pytest.approx(1.0)
    assert set(vc.n_items) == {40} and set(vc.n_judges) == {4} and set(vc.n_trials) == {3}


def test_variance_components_recover_the_truth_on_a_large_pilot():
    truth = {"item": 1.0, "judge": 0.5, "residual": 0.4, "trial": 0.6}
    df = _balanced(1, truth, n_i=300, n_j=8, n_t=4)
    vc = variance_components(df, score="score", item="item_id", judge="judge_model")
    est = dict(zip(vc.component, vc.variance, strict=True))
    assert est["trial"] == pytest.approx(0.6, rel=0.05)
    assert est["residual"] == pytest.approx(0.4, rel=0.15)
    assert est["item"] == pytest.approx(1.0, rel=0.2)
    assert est["judge"] == pytest.approx(0.5, rel=0.8)  # only 8 judges
    # and the estimate feeds the power simulation directly
    res = power_by_simulation(variance_components=vc, effect=0.5, n_items=20, n_sim=50, rng=0)
    assert res.loc[0, "n_sim"] == 50


def test_variance_components_incomplete_items():
    df = _balanced(2, {"item": 1.0, "judge": 0.0, "residual": 0.2, "trial": 0.5}, n_i=6)
    df.loc[0, "score"] = np.nan
    with pytest.raises(ValueError, match="item .*0.* is incomplete"):
        variance_components(df, score="score", item="item_id", judge="judge_model")
    vc = variance_components(
        df, score="score", item="item_id", judge="judge_model", incomplete="drop"
    )
    assert set(vc.n_items) == {5} and set(vc.n_skipped) == {1}
    with pytest.raises(ValueError, match="unique"):
        variance_components(
            pd.concat([df, df.iloc[:1]]), score="score", item="item_id", judge="judge_model"
        )
