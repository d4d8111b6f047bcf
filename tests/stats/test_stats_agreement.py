"""Kappas, Krippendorff's alpha and ICC against published examples and references."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from workbench.stats import cohen_kappa, fleiss_kappa, icc, krippendorff_alpha

sklearn_metrics = pytest.importorskip("sklearn.metrics")

# Fleiss (1971), table 1: 30 patients, 6 psychiatrists each, counts of diagnoses in the
# categories depression, personality disorder, schizophrenia, neurosis, other.
FLEISS_1971 = """
0 0 0 6 0|0 3 0 0 3|0 1 4 0 1|0 0 0 0 6|0 3 0 3 0|2 0 4 0 0|0 0 4 0 2|2 0 3 1 0|2 0 0 4 0
0 0 0 0 6|1 0 0 5 0|1 1 0 4 0|0 3 3 0 0|1 0 0 5 0|0 2 0 3 1|0 0 5 0 1|3 0 0 1 2|5 1 0 0 0
0 2 0 4 0|1 0 2 0 3|0 0 0 0 6|0 1 0 5 0|0 2 0 1 3|2 0 0 4 0|1 0 0 4 1|0 5 0 1 0|4 0 0 0 2
0 2 0 4 0|1 0 5 0 0|0 0 0 0 6
"""


def _fleiss_long() -> pd.DataFrame:
    cells = FLEISS_1971.replace("\n", "|").strip("|").split("|")
    rows = []
    for patient, cell in enumerate(cells):
        counts = [int(v) for v in cell.split()]
        labels = [c for c, k in enumerate(counts, start=1) for _ in range(k)]
        # rater identities differ between patients in Fleiss's design; number them 0-5
        rows += [dict(patient=patient, rater=r, diagnosis=lab) for r, lab in enumerate(labels)]
    return pd.DataFrame(rows)


def test_fleiss_kappa_reproduces_fleiss_1971():
    df = _fleiss_long()
    assert df.patient.nunique() == 30 and (df.groupby("patient").size() == 6).all()
    res = fleiss_kappa(df, item="patient", rater="rater", label="diagnosis").iloc[0]
    assert round(res["estimate"], 3) == 0.430  # Fleiss (1971)
    assert res["estimate"] == pytest.approx(0.4302445, abs=1e-7)  # R irr::kappam.fleiss
    assert res["test_statistic"] == pytest.approx(17.65183, abs=1e-4)  # irr's z
    assert res["n"] == 30 and res["n_raters"] == 6 and res["n_categories"] == 5


def test_fleiss_kappa_matches_statsmodels_and_skips_short_items():
    rng = np.random.default_rng(0)
    wide = rng.integers(0, 3, size=(25, 4))
    wide[:, 1] = np.where(rng.uniform(size=25) < 0.6, wide[:, 0], wide[:, 1])
    table, _ = aggregate_raters(wide)
    long = pd.DataFrame(
        [(i, r, wide[i, r]) for i in range(25) for r in range(4)],
        columns=["item", "rater", "label"],
    )
    res = fleiss_kappa(long, item="item", rater="rater", label="label").iloc[0]
    assert res["estimate"] == pytest.approx(sm_fleiss(table))
    short = long.astype({"label": float})
    short.loc[0, "label"] = np.nan  # item 0 now has 3 ratings: left out and counted
    res2 = fleiss_kappa(short, item="item", rater="rater", label="label").iloc[0]
    assert res2["n_missing"] == 1 and res2["n_skipped"] == 1 and res2["n"] == 24
    assert res2["estimate"] == pytest.approx(sm_fleiss(aggregate_raters(wide[1:])[0]))
    boot = fleiss_kappa(long, item="item", rater="rater", label="label", n_boot=500, rng=0).iloc[0]
    assert boot["ci_low"] < boot["estimate"] < boot["ci_high"]


def test_cohen_kappa_worked_example():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> po .7, pe .5, kappa .4
    df = pd.DataFrame(
        {
            "r1": ["yes"] * 25 + ["no"] * 25,
            "r2": ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15,
        }
    )
    res = cohen_kappa(df, a="r1", b="r2").iloc[0]
    assert res["estimate"] == pytest.approx(0.4)
    assert res["p_observed"] == pytest.approx(0.7) and res["p_expected"] == pytest.approx(0.5)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn_and_statsmodels(weights):
    rng = np.random.default_rng(1)
    a = rng.integers(1, 6, 120)
    b = np.clip(a + rng.integers(-1, 2, 120), 1, 5)
    res = cohen_kappa(pd.DataFrame({"a": a, "b": b}), a="a", b="b", weights=weights).iloc[0]
    assert res["estimate"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score(a, b, weights=weights), rel=1e-12
    )
    table = (
        pd.crosstab(a, b).reindex(index=range(1, 6), columns=range(1, 6), fill_value=0).to_numpy()
    )
    ref = cohens_kappa(table, wt=weights)
    assert res["se"] == pytest.approx(ref.std_kappa, rel=1e-9)
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((ref.kappa_low, ref.kappa_upp))
    assert res["test_statistic"] == pytest.approx(ref.z_value, rel=1e-9)
    assert res["p_value"] == pytest.approx(ref.pvalue_two_sided, rel=1e-6)


def test_cohen_kappa_missing_and_groups():
    df = pd.DataFrame(
        {
            "g": ["x"] * 4 + ["y"] * 4,
            "a": [1, 2, 1, None, 1, 1, 2, 2],
            "b": [1, 2, 2, 1, 1, 2, 2, 2],
        }
    )
    res = cohen_kappa(df, a="a", b="b", by="g")
    assert list(res["g"]) == ["x", "y"]
    assert res.loc[0, "n"] == 3 and res.loc[0, "n_missing"] == 1
    assert res.loc[1, "estimate"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score([1, 1, 2, 2], [1, 2, 2, 2])
    )


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders x 12 units.
K2011 = [
    "1 2 3 3 2 1 4 1 2 . . .",
    "1 2 3 3 2 2 4 1 2 5 . 3",
    ". 3 3 3 2 3 4 2 2 5 1 .",
    "1 2 3 3 2 4 4 1 2 5 1 .",
]


def _k2011():
    matrix = np.array([[np.nan if v == "." else float(v) for v in row.split()] for row in K2011])
    long = pd.DataFrame(
        [(u, c, matrix[c, u]) for c in range(4) for u in range(12)],
        columns=["unit", "coder", "value"],
    )
    return matrix, long


@pytest.mark.parametrize(
    "level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_published_example(level, published):
    matrix, long = _k2011()
    res = krippendorff_alpha(long, item="unit", rater="coder", value="value", level=level).iloc[0]
    assert round(res["estimate"], 3) == published
    assert res["estimate"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement=level), rel=1e-12
    )
    assert res["n_skipped"] == 1 and res["n_units"] == 11 and res["n"] == 40


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_matches_package_on_random_data(level):
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, 40)
    matrix = np.clip(truth + rng.integers(-1, 2, (5, 40)), 1, 5).astype(float)
    matrix[rng.uniform(size=matrix.shape) < 0.2] = np.nan
    long = pd.DataFrame(
        [(u, c, matrix[c, u]) for c in range(5) for u in range(40)],
        columns=["item", "rater", "value"],
    ).dropna()
    res = krippendorff_alpha(long, item="item", rater="rater", value="value", level=level)
    assert res.loc[0, "estimate"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement=level), rel=1e-10
    )
    boot = krippendorff_alpha(
        long, item="item", rater="rater", value="value", level=level, n_boot=300, rng=0
    ).iloc[0]
    assert boot["ci_low"] < boot["estimate"] < boot["ci_high"]


# Shrout & Fleiss (1979), table 2: 6 targets rated by 4 judges, and their table 4 values.
SF_WIDE = {
    "j1": [9, 6, 8, 7, 10, 6],
    "j2": [2, 1, 4, 1, 5, 2],
    "j3": [5, 3, 6, 2, 6, 4],
    "j4": [8, 2, 8, 6, 9, 7],
}
SF_PUBLISHED = {
    "ICC1": 0.17,
    "ICC2": 0.29,
    "ICC3": 0.71,
    "ICC1k": 0.44,
    "ICC2k": 0.62,
    "ICC3k": 0.91,
}
PG_NAMES = {
    "ICC1": "ICC(1,1)",
    "ICC2": "ICC(A,1)",
    "ICC3": "ICC(C,1)",
    "ICC1k": "ICC(1,k)",
    "ICC2k": "ICC(A,k)",
    "ICC3k": "ICC(C,k)",
}


def _long(wide: dict) -> pd.DataFrame:
    return (
        pd.DataFrame(wide)
        .rename_axis("target")
        .reset_index()
        .melt(id_vars="target", var_name="judge", value_name="rating")
    )


def test_icc_reproduces_shrout_fleiss():
    res = icc(_long(SF_WIDE), item="target", rater="judge", score="rating")
    for _, row in res.iterrows():
        assert round(row["estimate"], 2) == SF_PUBLISHED[row["measure"]]


@pytest.mark.parametrize("seed", [0, 1])
def test_icc_matches_pingouin(seed):
    rng = np.random.default_rng(seed)
    true = rng.normal(0, 1, 15)
    wide = {f"r{j}": true + rng.normal(0.3 * j, 0.7, 15) for j in range(3)}
    df = _long(wide)
    ours = icc(df, item="target", rater="judge", score="rating").set_index("measure")
    ref = pg.intraclass_corr(data=df, targets="target", raters="judge", ratings="rating").set_index(
        "Type"
    )
    for name, pg_name in PG_NAMES.items():
        assert ours.loc[name, "estimate"] == pytest.approx(ref.loc[pg_name, "ICC"], rel=1e-9)
        assert ours.loc[name, "test_statistic"] == pytest.approx(ref.loc[pg_name, "F"])
        assert ours.loc[name, "df_den"] == ref.loc[pg_name, "df2"]
        assert ours.loc[name, "p_value"] == pytest.approx(ref.loc[pg_name, "pval"], rel=1e-6)
        low, high = ref.loc[pg_name, "CI95"]  # pingouin rounds its CI to 2 decimals
        assert ours.loc[name, "ci_low"] == pytest.approx(low, abs=0.005 + 1e-9)
        assert ours.loc[name, "ci_high"] == pytest.approx(high, abs=0.005 + 1e-9)


def test_icc_listwise_deletion_and_duplicates():
    df = _long(SF_WIDE)
    df.loc[0, "rating"] = np.nan
    res = icc(df, item="target", rater="judge", score="rating")
    assert (res["n"] == 5).all() and (res["n_missing"] == 1).all()
    with pytest.raises(ValueError, match="one rating per item and rater"):
        icc(pd.concat([df, df.iloc[:1]]), item="target", rater="judge", score="rating")


def test_krippendorff_interval_needs_numbers():
    df = pd.DataFrame(
        {"item": [1, 1, 2, 2], "rater": ["a", "b"] * 2, "value": ["x", "y", "x", "x"]}
    )
    nominal = krippendorff_alpha(df, item="item", rater="rater", value="value")
    assert np.isfinite(nominal.loc[0, "estimate"])
    with pytest.raises(ValueError, match="numeric 'value'"):
        krippendorff_alpha(df, item="item", rater="rater", value="value", level="interval")
