"""Registration of notebooks/x3_judge_qualification.ipynb for tests/test_notebooks.py."""

# 12 items x 4 answerers on the sim backend (48 answers, 72 pairs), few PPI repetitions.
SMALL = {"n_items": 12, "n_boot": 100, "ppi_labels": 20, "ppi_sizes": [10, 20], "ppi_reps": 50}
FIGURES = {"qualification.png", "ppi.png", "bradley_terry.png"}


def check(headline: dict, params: dict) -> None:
    n_items = params.get("n_items", 50)
    assert headline["backend"] == "sim"
    assert headline["n_answers"] == 4 * n_items
    # the simulated raters apply one rubric with a little noise: a high ceiling, which the
    # sim judges approach but do not reach
    assert headline["human_ceiling"] > 0.8
    assert all(0.5 < r < headline["human_ceiling"] for r in headline["judge_r"].values())
    assert all(0 <= w <= 1 for w in headline["alt_test_omega"].values())
    low, high = headline["ppi_ci"]
    assert low < headline["ppi_estimate"] < high
    # the judge's scores make the interval narrower than the human labels alone
    assert headline["ppi_width"] < headline["classical_width"]
    assert all(0.7 <= c <= 1 for c in headline["ppi_coverage"].values())
    low, high = headline["ppi_win_rate_ci"]
    assert 0 <= low < headline["ppi_win_rate"] < high <= 1.05
    # the strongest answer model wins most of its pairs in the raters' eyes
    assert headline["human_win_rate"] > 0.5
    # judge-d prefers the answer shown first: its position effect is larger than judge-a's
    assert headline["bt_position"]["judge-d"] > headline["bt_position"]["judge-a"]
    assert headline["bt_position"]["judge-d"] > 0.5
    assert 0 <= headline["selective_coverage"] <= 1
    if headline["selective_agreement"] is not None:
        assert headline["selective_agreement"] >= headline["all_items_agreement"] - 0.05
