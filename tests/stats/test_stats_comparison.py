"""paired_tests against pingouin and scipy; p_adjust against a published example."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats as sps

from workbench.stats import p_adjust, paired_tests


def _scores(seed=0, n_q=12, n_iter=3):
    """Seed-002-like layout: models x questions x iterations, one score each."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, shift in zip(["best", "second", "m3", "m4"], [0.0, -0.1, -0.6, -1.0], strict=True):
        for q in range(n_q):
            for it in range(n_iter):
                rows.append(
                    dict(
                        model=m,
                        question=q,
                        iteration=it,
                        score=3.5 + shift + 0.3 * q % 2 + rng.normal(0, 0.5),
                    )
                )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("padjust", ["bonf", "holm", "fdr_bh"])
def test_all_pairs_match_pingouin(padjust):
    df = _scores()
    df = df[df.iteration == 0]
    ours = paired_tests(df, dv="score", within="model", subject="question", padjust=padjust)
    ref = pg.pairwise_tests(
        data=df, dv="score", within="model", subject="question", padjust=padjust
    )
    merged = ours.merge(ref, left_on=["a", "b"], right_on=["A", "B"])
    assert len(merged) == len(ours) == 6
    np.testing.assert_allclose(merged["test_statistic"], merged["T"], rtol=1e-9)
    np.testing.assert_allclose(merged["p_value"], merged["p_unc"], rtol=1e-7)
    np.testing.assert_allclose(merged["p_adjusted"], merged["p_corr"], rtol=1e-7)


def test_against_scipy_ttest_rel_and_dz():
    df = _scores(1)
    res = paired_tests(
        df, dv="score", within="model", subject=["question", "iteration"], reference="best"
    )
    wide = df.pivot_table(index=["question", "iteration"], columns="model", values="score")
    assert list(res["b"]) == ["m3", "m4", "second"] and (res["a"] == "best").all()
    for _, row in res.iterrows():
        ref = sps.ttest_rel(wide["best"], wide[row["b"]])
        ci = ref.confidence_interval(0.95)
        d = wide["best"] - wide[row["b"]]
        assert row["test_statistic"] == pytest.approx(ref.statistic)
        assert row["p_value"] == pytest.approx(ref.pvalue)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high))
        assert row["estimate"] == pytest.approx(d.mean())
        assert row["cohen_dz"] == pytest.approx(d.mean() / d.std(ddof=1))
        assert row["n"] == 36 and row["df"] == 35
        # Bonferroni over the 3 comparisons with the reference
        assert row["p_adjusted"] == pytest.approx(min(1.0, 3 * ref.pvalue))
        assert row["significant"] == (row["p_adjusted"] < 0.05)


def test_wilcoxon_matches_scipy_and_pingouin():
    df = _scores(2)
    df = df[df.iteration == 0]
    res = paired_tests(
        df, dv="score", within="model", subject="question", parametric=False, padjust="holm"
    )
    wide = df.pivot_table(index="question", columns="model", values="score")
    ref = pg.pairwise_tests(
        data=df, dv="score", within="model", subject="question", parametric=False, padjust="holm"
    )
    merged = res.merge(ref, left_on=["a", "b"], right_on=["A", "B"])
    np.testing.assert_allclose(merged["p_adjusted"], merged["p_corr"], rtol=1e-7)
    for _, row in res.iterrows():
        w = sps.wilcoxon(wide[row["a"]], wide[row["b"]])
        assert row["test"] == "wilcoxon"
        assert row["test_statistic"] == pytest.approx(w.statistic)
        assert row["p_value"] == pytest.approx(w.pvalue)
        d = (wide[row["a"]] - wide[row["b"]]).to_numpy()
        ranks = sps.rankdata(np.abs(d))
        rbc = (ranks[d > 0].sum() - ranks[d < 0].sum()) / ranks.sum()
        assert row["rank_biserial"] == pytest.approx(rbc)


def test_missing_values_are_dropped_pairwise():
    df = _scores(3)
    df = df[df.iteration == 0].copy()
    df.loc[(df.model == "m3") & (df.question == 4), "score"] = np.nan
    df = df[~((df.model == "m4") & (df.question == 7))]  # a missing row, not NaN
    res = paired_tests(df, dv="score", within="model", subject="question").set_index(["a", "b"])
    assert res.loc[("best", "second"), "n"] == 12
    assert res.loc[("best", "m3"), "n"] == 11 and res.loc[("best", "m3"), "n_missing"] == 1
    assert res.loc[("m3", "m4"), "n"] == 10
    wide = df.pivot_table(index="question", columns="model", values="score", dropna=False)
    ok = wide[["best", "m3"]].dropna()
    assert res.loc[("best", "m3"), "p_value"] == pytest.approx(
        sps.ttest_rel(ok["best"], ok["m3"]).pvalue
    )


def test_duplicates_raise_unless_aggregated():
    df = _scores(4)
    with pytest.raises(ValueError, match="aggregate='mean'"):
        paired_tests(df, dv="score", within="model", subject="question")
    res = paired_tests(
        df, dv="score", within="model", subject="question", aggregate="mean", reference="best"
    )
    means = df.groupby(["question", "model"]).score.mean().unstack()
    ref = sps.ttest_rel(means["best"], means["m4"])
    assert res.set_index("b").loc["m4", "p_value"] == pytest.approx(ref.pvalue)
    with pytest.raises(ValueError, match="not a level"):
        paired_tests(
            df, dv="score", within="model", subject=["question", "iteration"], reference="nope"
        )


def test_by_groups_are_separate_families():
    df = pd.concat([_scores(5).assign(dimension="d1"), _scores(6).assign(dimension="d2")])
    res = paired_tests(
        df,
        dv="score",
        within="model",
        subject=["question", "iteration"],
        reference="best",
        by="dimension",
    )
    assert len(res) == 6
    for _, part in res.groupby("dimension"):
        np.testing.assert_allclose(
            part["p_adjusted"], np.minimum(1, 3 * part["p_value"]), rtol=1e-12
        )


#: Benjamini & Hochberg (1995), section 4.2: 15 p-values of a multiple-endpoint trial.
BH_1995 = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459,
           0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000]


@pytest.mark.parametrize("method, rejected", [("bonf", 3), ("holm", 3), ("fdr_bh", 4)])
def test_p_adjust_reproduces_benjamini_hochberg_1995(method, rejected):
    """At 0.05 the paper's example rejects 3 hypotheses by Bonferroni (and so by Holm,
    whose 4th step is 12 x 0.0095 > 0.05) and 4 by the FDR procedure; the BH adjusted
    value of the 4th is 15 x 0.0095 / 4 = 0.035625 (shuffled: the order must be kept)."""
    order = np.random.default_rng(1).permutation(len(BH_1995))
    p = np.array(BH_1995)[order]
    adjusted = p_adjust(p, method)
    assert int((adjusted < 0.05).sum()) == rejected
    if method == "fdr_bh":
        assert adjusted[order == 3][0] == pytest.approx(15 * 0.0095 / 4, rel=1e-12)
    if method == "holm":
        assert adjusted[order == 2][0] == pytest.approx(13 * 0.0019, rel=1e-12)


def test_p_adjust_leaves_nan_out_of_the_family():
    out = p_adjust([0.01, np.nan, 0.02], "bonf")
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.04)
    assert p_adjust([0.3, 0.2], "none").tolist() == [0.3, 0.2]
    with pytest.raises(ValueError):
        p_adjust([0.1], "sidak")
