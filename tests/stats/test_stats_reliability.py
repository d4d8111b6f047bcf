"""Seed 000's consistency index (eq. 1) and variance ratio (eq. 2)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from workbench.stats import bootstrap_ci, consistency_index, variance_ratio

# Two conversations x two judges x two trials (the docstring's worked example).
WORKED = pd.DataFrame(
    {
        "conv": ["c1"] * 4 + ["c2"] * 4,
        "judge": ["j1", "j1", "j2", "j2"] * 2,
        "trial": [0, 1] * 4,
        "score": [4, 6, 6, 8, 1, 1, 3, 3],
    }
)


def test_consistency_index_both_readings_by_hand():
    # all 8 scores: mean 4, squared deviations 0+4+4+16+9+9+1+1 = 44 -> sd sqrt(44/7)
    sd_all = math.sqrt(44 / 7)
    # reading 1 (trials only): units (conv, judge): sds sqrt2, sqrt2, 0, 0 -> mean sqrt2/2
    r1 = consistency_index(WORKED, score="score", unit=["conv", "judge"], within="trial")
    assert r1.loc[0, "numerator"] == pytest.approx(math.sqrt(2) / 2)
    assert r1.loc[0, "denominator"] == pytest.approx(sd_all)
    assert r1.loc[0, "estimate"] == pytest.approx((math.sqrt(2) / 2) / sd_all)
    assert r1.loc[0, "within"] == "trial" and r1.loc[0, "unit"] == "conv+judge"
    assert r1.loc[0, "n_units"] == 4 and r1.loc[0, "n"] == 8
    # reading 2 (trials and judges): c1 {4,6,6,8}: SS 8 -> sd sqrt(8/3); c2 {1,1,3,3}: sqrt(4/3)
    r2 = consistency_index(WORKED, score="score", unit="conv", within=["trial", "judge"])
    num = (math.sqrt(8 / 3) + math.sqrt(4 / 3)) / 2
    assert r2.loc[0, "estimate"] == pytest.approx(num / sd_all)
    assert r2.loc[0, "within"] == "trial+judge"


def test_consistency_index_per_judge_and_ddof0():
    res = consistency_index(WORKED, score="score", unit="conv", within="trial", by="judge")
    assert list(res["judge"]) == ["j1", "j2"]
    # judge j1: units c1 (4,6) sd sqrt2, c2 (1,1) sd 0; all {4,6,1,1}: mean 3, SS 1+9+4+4=18
    assert res.loc[0, "estimate"] == pytest.approx((math.sqrt(2) / 2) / math.sqrt(18 / 3))
    r0 = consistency_index(WORKED, score="score", unit="conv", ddof=0)
    assert r0.loc[0, "estimate"] == pytest.approx(((math.sqrt(2) + 1) / 2) / math.sqrt(44 / 8))
    assert r0.loc[0, "within"] == "unchecked"


def test_undeclared_varying_factor_is_an_error():
    with pytest.raises(ValueError, match="within="):
        consistency_index(WORKED, score="score", unit="conv", within="trial")
    with pytest.raises(ValueError, match="both in"):
        consistency_index(WORKED, score="score", unit="conv", within="conv")
    with pytest.raises(ValueError, match="no column"):
        consistency_index(WORKED, score="points", unit="conv")


def _pilot(seed=0, n_items=12, n_models=4, n_trials=5):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for m in range(n_models):
            base = rng.normal(5 + m, 1)
            for t in range(n_trials):
                rows.append(
                    dict(item_id=i, answer_model=f"m{m}", trial=t, score=base + rng.normal(0, 0.7))
                )
    return pd.DataFrame(rows)


def test_consistency_index_matches_pandas_and_counts_missing():
    df = _pilot()
    df.loc[[3, 17, 40], "score"] = np.nan
    res = consistency_index(df, score="score", unit=["item_id", "answer_model"], within="trial")
    clean = df.dropna(subset=["score"])
    expected = clean.groupby(["item_id", "answer_model"]).score.std().mean() / clean.score.std()
    assert res.loc[0, "estimate"] == pytest.approx(expected, rel=1e-10)
    assert res.loc[0, "n_missing"] == 3 and res.loc[0, "n"] == len(df) - 3


def test_consistency_index_single_score_unit_is_skipped():
    df = WORKED.iloc[:5]  # c2 has one score
    res = consistency_index(df, score="score", unit="conv")
    assert res.loc[0, "n_skipped"] == 1 and res.loc[0, "n_units"] == 1


def test_consistency_index_bootstrap_agrees_with_generic_cluster_bootstrap():
    df = _pilot()
    unit = ["item_id", "answer_model"]
    fast = consistency_index(df, score="score", unit=unit, n_boot=3000, rng=1)

    def stat(d):
        return d.groupby(unit).score.std().mean() / d.score.std()

    slow = bootstrap_ci(df, statistic=stat, n_boot=300, rng=2, by=unit)
    assert fast.loc[0, "ci_low"] < fast.loc[0, "estimate"] < fast.loc[0, "ci_high"]
    width = slow.loc[0, "ci_high"] - slow.loc[0, "ci_low"]
    assert fast.loc[0, "ci_low"] == pytest.approx(slow.loc[0, "ci_low"], abs=0.2 * width)
    assert fast.loc[0, "ci_high"] == pytest.approx(slow.loc[0, "ci_high"], abs=0.2 * width)
    again = consistency_index(df, score="score", unit=unit, n_boot=3000, rng=1)
    pd.testing.assert_frame_equal(fast, again)


def test_variance_ratio_both_readings_by_hand():
    df = WORKED.rename(columns={"conv": "answer_model", "judge": "item_id"})
    # model c1 scores {4,6,6,8}: sd sqrt(8/3), mean 6; c2 {1,1,3,3}: sd sqrt(4/3), mean 2
    res = variance_ratio(df, score="score", system="answer_model", within=["item_id", "trial"])
    num = (math.sqrt(8 / 3) + math.sqrt(4 / 3)) / 2
    den = math.sqrt(8)  # sd of {6, 2}
    assert res.loc[0, "numerator"] == pytest.approx(num)
    assert res.loc[0, "denominator"] == pytest.approx(den)
    assert res.loc[0, "estimate"] == pytest.approx(num / den)
    assert res.loc[0, "replicate"] == "none"
    # replicate reading: c1 trial means 5 and 7 (sd sqrt2); c2 2 and 2 (sd 0)
    rep = variance_ratio(
        df, score="score", system="answer_model", within=["item_id", "trial"], replicate="trial"
    )
    assert rep.loc[0, "numerator"] == pytest.approx(math.sqrt(2) / 2)
    assert rep.loc[0, "estimate"] == pytest.approx((math.sqrt(2) / 2) / den)


def test_variance_ratio_matches_pandas_on_a_pilot():
    df = _pilot(seed=4)
    res = variance_ratio(df, score="score", system="answer_model", within=["item_id", "trial"])
    g = df.groupby("answer_model").score
    assert res.loc[0, "estimate"] == pytest.approx(g.std().mean() / g.mean().std())
    rep = variance_ratio(df, score="score", system="answer_model", replicate="trial")
    per = df.groupby(["answer_model", "trial"]).score.mean().groupby("answer_model")
    assert rep.loc[0, "estimate"] == pytest.approx(per.std().mean() / g.mean().std())
    assert rep.loc[0, "estimate"] < res.loc[0, "estimate"]


def test_variance_ratio_bootstrap_needs_cluster_and_matches_generic():
    df = _pilot(seed=5)
    with pytest.raises(ValueError, match="cluster="):
        variance_ratio(df, score="score", system="answer_model", n_boot=10, rng=0)
    fast = variance_ratio(
        df, score="score", system="answer_model", cluster="item_id", n_boot=3000, rng=0
    )

    def stat(d):
        g = d.groupby("answer_model").score
        return g.std().mean() / g.mean().std()

    slow = bootstrap_ci(df, statistic=stat, n_boot=300, rng=1, by="item_id")
    width = slow.loc[0, "ci_high"] - slow.loc[0, "ci_low"]
    assert fast.loc[0, "ci_low"] == pytest.approx(slow.loc[0, "ci_low"], abs=0.2 * width)
    assert fast.loc[0, "ci_high"] == pytest.approx(slow.loc[0, "ci_high"], abs=0.2 * width)


def test_variance_ratio_by_group():
    df = pd.concat([_pilot(seed=1).assign(protocol="a"), _pilot(seed=2).assign(protocol="b")])
    res = variance_ratio(df, score="score", system="answer_model", by="protocol")
    assert list(res["protocol"]) == ["a", "b"]
    one = variance_ratio(df[df.protocol == "b"], score="score", system="answer_model")
    assert res.loc[1, "estimate"] == pytest.approx(one.loc[0, "estimate"])
