"""Registration of notebooks/x4_human_labels.ipynb for tests/notebook/test_notebooks.py."""

# 12 questions x 4 answerers (48 answers), 60 simulated studies of 40 labels per scenario
SMALL = {"n_items": 12, "n_studies": 60, "budget": 40, "burn_in": 10, "max_labels": 40,
         "target_width": 0.8, "overlap": 0.25}
VARIANTS = {}
FIGURES = {"loop.png", "width_ratio.png"}


def check(headline: dict, params: dict) -> None:
    n_items = params.get("n_items", 50)
    assert headline["n_answers"] == 4 * n_items
    low, high = headline["ci"]
    assert low < headline["estimate"] < high
    assert headline["n_active_labels"] <= params.get("max_labels", 150)
    assert headline["n_labels"] > headline["n_active_labels"]        # the overlap labels too
    assert headline["human_minutes"] > 0
    assert headline["round_trip_identical"] == {"csv": True, "label-studio": True}
    # 17 scenarios (G-Eval; 3 hard shares x 2 noise levels x informative/shuffled; order
    # flips x 2 noise levels x informative/shuffled); loose coverage (few studies here)
    assert len(headline["coverage"]) == 17
    assert all(c >= 0.85 for c in headline["coverage"].values())
    # the simulated annotators agree well: a high ceiling, the judge below it
    assert headline["krippendorff_alpha"] > 0.6
    assert headline["judge_r"] < headline["human_ceiling"]
