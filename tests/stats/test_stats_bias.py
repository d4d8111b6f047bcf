"""position_consistency and perturbation_effect."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from workbench.stats import UNPARSED, perturbation_effect, position_consistency

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _llmbar_like():
    """Five items, both orders, verdicts 1/2 with one unparsed (None)."""
    return pd.DataFrame(
        {
            "item_id": [1, 1, 2, 2, 3, 3, 4, 4, 5, 5],
            "order": [0, 1] * 5,
            "verdict": [1, 1, 2, 1, 2, 2, None, 1, 1, 2],
            "label": [1, 1, 2, 2, 2, 2, 1, 1, 2, 2],
        }
    )


def test_position_consistency_by_hand():
    res = position_consistency(
        _llmbar_like(), item="item_id", order="order", verdict="verdict", label="label"
    ).iloc[0]
    # order 0: 1=1 ok, 2=2 ok, 2=2 ok, unparsed wrong, 1!=2 wrong -> 3/5
    # order 1: ok, wrong, ok, ok, ok -> 4/5 ; agreement: items 1 and 3 -> 2/5
    assert res["accuracy_order0"] == pytest.approx(0.6)
    assert res["accuracy_order1"] == pytest.approx(0.8)
    assert res["accuracy"] == pytest.approx(0.7)
    assert res["agreement"] == pytest.approx(0.4)
    assert res["n"] == 5 and res["n_unparsed"] == 1 and res["n_incomplete"] == 0
    v0 = [1, 2, 2, UNPARSED, 1]
    gold = [1, 2, 2, 1, 2]
    assert res["kappa_order0"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score([str(v) for v in v0], [str(g) for g in gold])
    )
    assert res["kappa_order1"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score([1, 1, 2, 1, 2], gold)
    )


def test_two_unparsed_verdicts_agree_and_incomplete_items_are_counted():
    df = pd.DataFrame(
        {
            "item_id": [1, 1, 2, 2, 3],
            "order": ["AB", "BA", "AB", "BA", "AB"],
            "verdict": [None, None, "A", None, "A"],
        }
    )
    res = position_consistency(df, item="item_id", order="order", verdict="verdict").iloc[0]
    assert res["agreement"] == pytest.approx(0.5)
    assert res["n"] == 2 and res["n_incomplete"] == 1 and res["n_unparsed"] == 3
    assert "accuracy" not in res.index


def test_swap_maps_positional_second_order_verdicts():
    df = pd.DataFrame(
        {
            "item_id": [1, 1, 2, 2],
            "order": [0, 1, 0, 1],
            "verdict": ["A", "B", "A", "A"],
            "label": ["A", "A", "B", "B"],
        }
    )
    res = position_consistency(
        df,
        item="item_id",
        order="order",
        verdict="verdict",
        label="label",
        swap={"A": "B", "B": "A"},
    ).iloc[0]
    # order-1 verdicts become A, B: item 1 agrees (A, A), item 2 does not (A, B)
    assert res["agreement"] == pytest.approx(0.5)
    assert res["accuracy_order1"] == pytest.approx(1.0)
    assert res["accuracy_order0"] == pytest.approx(0.5)


def test_groups_and_checks():
    df = pd.concat([_llmbar_like().assign(judge="j1"), _llmbar_like().assign(judge="j2")])
    res = position_consistency(
        df, item="item_id", order="order", verdict="verdict", label="label", by="judge"
    )
    assert list(res["judge"]) == ["j1", "j2"]
    bad = _llmbar_like()
    bad.loc[1, "label"] = 2
    with pytest.raises(ValueError, match="different 'label' values"):
        position_consistency(bad, item="item_id", order="order", verdict="verdict", label="label")
    with pytest.raises(ValueError, match="exactly two orders"):
        position_consistency(
            _llmbar_like().assign(order=[0, 1, 2] * 3 + [0]),
            item="item_id",
            order="order",
            verdict="verdict",
        )
    with pytest.warns(UserWarning, match="no verdict equals any label"):
        position_consistency(
            _llmbar_like().assign(label="1"),
            item="item_id",
            order="order",
            verdict="verdict",
            label="label",
        )


def _perturbed(seed=0, n_items=15, trials=3):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        base = rng.normal(6, 1.5)
        for cond, shift in (("original", 0.0), ("padded", 0.8), ("reordered", 0.1)):
            for t in range(trials):
                rows.append(
                    dict(
                        item_id=i,
                        perturbation=cond,
                        trial=t,
                        score=base + shift + rng.normal(0, 0.5),
                    )
                )
    return pd.DataFrame(rows)


def test_score_effect_averages_trials_then_matches_scipy():
    df = _perturbed()
    df.loc[5, "score"] = np.nan  # one unparsed reply: dropped and counted, never 0
    res = perturbation_effect(
        df, score="score", item="item_id", condition="perturbation", baseline="original"
    ).set_index("condition")
    assert list(res.index) == ["padded", "reordered"]
    means = df.dropna().groupby(["item_id", "perturbation"]).score.mean().unstack()
    for cond in ("padded", "reordered"):
        d = means[cond] - means["original"]
        t = sps.ttest_rel(means[cond], means["original"])
        ci = t.confidence_interval()
        row = res.loc[cond]
        assert row["estimate"] == pytest.approx(d.mean())
        assert row["p_value"] == pytest.approx(t.pvalue)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high))
        assert row["p_value_wilcoxon"] == pytest.approx(sps.wilcoxon(d).pvalue)
        assert row["cohen_dz"] == pytest.approx(d.mean() / d.std(ddof=1))
        assert row["n"] == 15 and row["n_missing"] == 1 and row["kind"] == "score"
    assert res.loc["padded", "p_value"] < 0.001  # the simulated padding effect is large


def test_verdict_flip_rate_with_wilson_interval():
    verdict = ["A", "A", "B", "B", "A", "B", "A", None, "B", "A"]
    swapped = ["A", "B", "B", "A", "A", "B", "A", "A", "B", None]
    df = pd.DataFrame(
        {
            "item_id": list(range(10)) * 2,
            "condition": ["base"] * 10 + ["swap"] * 10,
            "verdict": verdict + swapped,
        }
    )
    res = perturbation_effect(
        df, score="verdict", item="item_id", condition="condition", baseline="base"
    ).iloc[0]
    # flips at items 1, 3, 7 (unparsed -> A), 9 (A -> unparsed)
    assert res["kind"] == "verdict" and res["measure"] == "flip_rate"
    assert res["estimate"] == pytest.approx(0.4) and res["n"] == 10
    assert res["n_unparsed"] == 2
    low, high = proportion_confint(4, 10, alpha=0.05, method="wilson")
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((low, high))


def test_numeric_verdicts_need_kind_and_trials_pair_on():
    df = pd.DataFrame(
        {
            "item_id": [1, 1, 2, 2] * 2,
            "trial": [0] * 4 + [1] * 4,
            "cond": ["a", "b"] * 4,
            "v": [1, 2, 1, 1, 2, 2, 1, 1],
        }
    )
    with pytest.raises(ValueError, match="pair_on"):
        perturbation_effect(
            df, score="v", item="item_id", condition="cond", baseline="a", kind="verdict"
        )
    res = perturbation_effect(
        df,
        score="v",
        item="item_id",
        condition="cond",
        baseline="a",
        kind="verdict",
        pair_on="trial",
    ).iloc[0]
    assert res["estimate"] == pytest.approx(0.25) and res["n"] == 4
    with pytest.raises(ValueError, match="baseline"):
        perturbation_effect(df, score="v", item="item_id", condition="cond", baseline="z")


def test_effect_by_judge_and_incomplete_items():
    df = pd.concat([_perturbed(1).assign(judge="j1"), _perturbed(2).assign(judge="j2")])
    df = df[~((df.judge == "j2") & (df.item_id == 0) & (df.perturbation == "padded"))]
    res = perturbation_effect(
        df, score="score", item="item_id", condition="perturbation", baseline="original", by="judge"
    )
    assert len(res) == 4
    j2 = res[(res.judge == "j2") & (res.condition == "padded")].iloc[0]
    assert j2["n"] == 14 and j2["n_incomplete"] == 1


def test_group_without_baseline_rows_reports_no_pairs():
    df = pd.concat([_perturbed(3).assign(judge="j1"), _perturbed(4).assign(judge="j2")])
    df = df[~((df.judge == "j2") & (df.perturbation == "original"))]
    res = perturbation_effect(
        df, score="score", item="item_id", condition="perturbation", baseline="original", by="judge"
    )
    j2 = res[res.judge == "j2"]
    assert (j2["n"] == 0).all() and j2["estimate"].isna().all()
    assert (j2["n_incomplete"] == 15).all()
