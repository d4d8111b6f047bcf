"""workbench.stats: the public surface, the one column vocabulary, and bootstrap_ci."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import workbench.stats as ws
from workbench.stats._columns import COLUMNS, tidy


def test_all_is_sorted_and_importable():
    assert ws.__all__ == sorted(ws.__all__)
    for name in ws.__all__:
        assert getattr(ws, name) is not None


def test_vocabulary_has_core_names_and_no_pingouin_warts():
    for name in ("estimate", "ci_low", "ci_high", "p_value", "p_adjusted", "significant", "n"):
        assert name in COLUMNS
    for wart in ("pval", "p_val", "p_unc", "p_corr", "CI95", "p-val"):
        assert wart not in COLUMNS
    assert all(k == k.lower() and " " not in k for k in COLUMNS)


def test_tidy_orders_and_rejects_unknown_columns():
    frame = pd.DataFrame({"p_value": [0.1], "judge": ["j"], "estimate": [1.0]})
    out = tidy(frame, keys=["judge"])
    assert list(out.columns) == ["judge", "estimate", "p_value"]
    with pytest.raises(KeyError, match="pval"):
        tidy(pd.DataFrame({"pval": [0.1]}))


def _small():
    rng = np.random.default_rng(3)
    rows = []
    for item in range(8):
        for model in ("m1", "m2", "m3"):
            for judge in ("j1", "j2"):
                for trial in range(2):
                    rows.append(
                        dict(
                            item_id=item,
                            answer_model=model,
                            judge_model=judge,
                            trial=trial,
                            score=float(rng.integers(1, 11)),
                            length=float(rng.integers(50, 500)),
                        )
                    )
    return pd.DataFrame(rows)


def test_every_output_uses_the_vocabulary():
    """Each public function's columns are vocabulary words or the caller's keys."""
    df = _small()
    keys = {"judge_model", "answer_model", "item_id", "condition_col"}
    one_trial = df[df.trial == 0]
    cond = one_trial.assign(
        condition_col=np.where(one_trial.judge_model == "j1", "base", "pert")
    ).drop(columns="judge_model")
    pos = pd.DataFrame(
        {"item_id": [1, 1, 2, 2], "order": [0, 1, 0, 1], "v": ["A", "B", "A", "A"], "y": "A"}
    )
    spans = pd.DataFrame({"item_id": [1], "class": ["c"], "start": [0], "end": [5]})
    outputs = [
        ws.consistency_index(df, score="score", unit=["item_id", "answer_model"], n_boot=20, rng=0),
        ws.variance_ratio(
            df, score="score", system="answer_model", cluster="item_id", n_boot=20, rng=0
        ),
        ws.correlate(df, x="score", y="length", by="answer_model", level="all", method="all"),
        ws.bootstrap_ci(df, statistic=lambda d: d.score.mean(), n_boot=20, rng=0),
        ws.paired_tests(
            one_trial, dv="score", within="answer_model", subject=["item_id", "judge_model"]
        ),
        ws.paired_tests(
            one_trial,
            dv="score",
            within="answer_model",
            subject=["item_id", "judge_model"],
            parametric=False,
        ),
        ws.cohen_kappa(pd.DataFrame({"a": [1, 2, 2], "b": [1, 2, 1]}), a="a", b="b"),
        ws.fleiss_kappa(
            one_trial,
            item=["item_id", "answer_model"],
            rater="judge_model",
            label="score",
            n_boot=10,
            rng=0,
        ),
        ws.krippendorff_alpha(
            one_trial,
            item=["item_id", "answer_model"],
            rater="judge_model",
            value="score",
            n_boot=10,
            rng=0,
        ),
        ws.icc(one_trial, item=["item_id", "answer_model"], rater="judge_model", score="score"),
        ws.position_consistency(pos, item="item_id", order="order", verdict="v", label="y"),
        ws.perturbation_effect(
            cond,
            score="score",
            item=["item_id", "answer_model"],
            condition="condition_col",
            baseline="base",
        ),
        ws.perturbation_effect(
            cond.assign(score=cond.score > 5),
            score="score",
            item=["item_id", "answer_model"],
            condition="condition_col",
            baseline="base",
        ),
        ws.length_bias(df, score="score", length="length", by="judge_model", item="item_id"),
        ws.power_by_simulation(
            variance_components={"item": 1.0}, effect=1.0, n_items=5, n_sim=20, rng=0
        ),
        ws.variance_components(
            df, score="score", item=["item_id", "answer_model"], judge="judge_model"
        ),
    ]
    sm = ws.span_match(spans, spans, classes=["c"])
    outputs += [sm.summary, sm.pairs, sm.items]
    for out in outputs:
        assert isinstance(out, pd.DataFrame) and len(out)
        unknown = set(out.columns) - set(COLUMNS) - keys
        assert not unknown, unknown


def test_no_global_random_state_is_used():
    state = np.random.get_state()[1].copy()
    df = _small()
    ws.bootstrap_ci(df, statistic=lambda d: d.score.mean(), n_boot=30, rng=1)
    ws.consistency_index(df, score="score", unit="item_id", n_boot=30, rng=1)
    ws.power_by_simulation(variance_components={"item": 1.0}, effect=1, n_items=5, n_sim=30, rng=1)
    assert np.array_equal(np.random.get_state()[1], state)


def test_rng_is_required_and_reproducible():
    df = _small()
    with pytest.raises(ValueError, match="explicit rng"):
        ws.bootstrap_ci(df, statistic=lambda d: d.score.mean(), n_boot=10, rng=None)
    a = ws.bootstrap_ci(df, statistic=lambda d: d.score.mean(), n_boot=50, rng=7)
    b = ws.bootstrap_ci(
        df, statistic=lambda d: d.score.mean(), n_boot=50, rng=np.random.default_rng(7)
    )
    pd.testing.assert_frame_equal(a, b)


def test_bootstrap_ci_matches_scipy_percentile_bootstrap():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    ours = ws.bootstrap_ci(
        pd.DataFrame({"x": x}), statistic=lambda d: d.x.mean(), n_boot=4000, rng=1
    )
    ref = sps.bootstrap(
        (x,), np.mean, n_resamples=4000, method="percentile", random_state=np.random.default_rng(2)
    ).confidence_interval
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert ours.loc[0, "estimate"] == pytest.approx(x.mean())
    assert ours.loc[0, "ci_low"] == pytest.approx(ref.low, abs=0.1 * se)
    assert ours.loc[0, "ci_high"] == pytest.approx(ref.high, abs=0.1 * se)
    assert ours.loc[0, "se"] == pytest.approx(se, rel=0.08)


def test_bootstrap_ci_resamples_clusters_and_relabels():
    df = pd.DataFrame({"unit": np.repeat(np.arange(10), 3), "y": np.arange(30.0)})

    def n_units(d):
        return d.unit.nunique()

    relabel = ws.bootstrap_ci(df, statistic=n_units, n_boot=50, rng=0, by="unit")
    assert relabel.loc[0, "ci_low"] == relabel.loc[0, "ci_high"] == 10
    merged = ws.bootstrap_ci(df, statistic=n_units, n_boot=50, rng=0, by="unit", relabel=False)
    assert merged.loc[0, "ci_high"] < 10  # duplicates merge without relabelling
    # every resample holds whole clusters: 30 rows each time
    sizes = ws.bootstrap_ci(df, statistic=len, n_boot=20, rng=0, by="unit")
    assert sizes.loc[0, "ci_low"] == sizes.loc[0, "ci_high"] == 30
    assert sizes.loc[0, "n_units"] == 10


def test_bootstrap_ci_named_outputs_and_failed_replicates():
    df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0]})
    res = ws.bootstrap_ci(
        df, statistic=lambda d: {"mean": d.y.mean(), "max": d.y.max()}, n_boot=30, rng=0, level=0.9
    )
    assert list(res["measure"]) == ["mean", "max"]
    assert (res["ci_level"] == 0.9).all()
    nan_sometimes = ws.bootstrap_ci(
        df, statistic=lambda d: d.y.mean() if d.y.nunique() > 2 else np.nan, n_boot=200, rng=0
    )
    assert 0 < nan_sometimes.loc[0, "n_boot_failed"] < 200
