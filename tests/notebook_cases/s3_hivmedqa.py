"""Registration of notebooks/s3_hivmedqa.ipynb for tests/notebook/test_notebooks.py."""

from pathlib import Path

# 2 questions per category (+ 6 cued), strong and weak answerers plus the tiny lower bound
# and the rephrased references, 2 iterations: 96 answers, 192 judge calls
SMALL = {
    "items_per_category": 2,
    "iterations": 2,
    "answer_models": ["sim/answer-strong", "sim/answer-weak"],
}
# the switches flipped (tests/notebook/test_notebooks.py::test_notebook_runs_with_each_switch): the
# release branch on the test fixture (categories 1 and 5 only), and no upper bound / no
# synonym dictionary on the sim backend
VARIANTS = {
    "release": {"release_dir": str(Path(__file__).resolve().parent.parent / "fixtures"
                                   / "hivmedqa")},
    "no_rephrasing_no_synonyms": {"rephrase_model": "", "synonym_model": ""},
}
FIGURES = {"table2_scores.png", "table2_scores.svg"} | {
    f"{name}.png"
    for name in ("best_model_tests", "category_trend", "bias_drop", "supervision_gap", "medsynf1")
}


def check(headline: dict, params: dict) -> None:
    if params.get("release_dir"):
        assert headline["backend"] == "openai" and headline["release"] is True
        assert headline["release_categories"] == [1, 2, 3, 4, 5]
        assert headline["table2_verdict"].startswith("the release is below the paper in")
        return
    assert headline["backend"] == "sim" and headline["release"] is False
    n_items = 3 * params["items_per_category"] * 2  # categories 1-3, plus 3 cues x category 3
    upper = params.get("rephrase_model", "sim/paraphraser") != ""
    n_models = len(params["answer_models"]) + 1 + upper  # + lower bound (+ rephrased reference)
    assert headline["n_answers"] == n_items * n_models * params["iterations"]
    assert headline["n_scores"] == headline["n_answers"] * 2 * 5  # supervised/unsupervised x 5
    assert 0 <= headline["n_unparsed"] <= headline["n_scores"]
    means = headline["mean_score"]
    assert means["sim/answer-strong"] > means["sim/answer-weak"] > means["sim/answer-tiny"]
    # quality control: the tiny lower bound below the rephrased-reference upper bound
    if upper:
        assert headline["lower_bound_mean"] < headline["upper_bound_mean"]
        assert headline["mean_f1"]["rephrased_reference"] > headline["mean_f1"]["sim/answer-tiny"]
    else:
        assert headline["upper_bound_mean"] is None
    n_judged = n_models - upper  # the models the tests and the gap compare
    assert headline["best_model"] == "sim/answer-strong"
    assert headline["n_comparisons"] == n_judged - 1  # best vs each other; upper bound left out
    assert 0 <= headline["n_significant_holm"] <= headline["n_comparisons"]
    assert headline["n_significant_bonf"] <= headline["n_significant_holm"]  # Holm is uniformly more powerful
    # a judge without the reference is over-optimistic (seed 002: every model, mean +0.73)
    assert headline["mean_gap"] > 0
    assert headline["n_models_gap_positive"] == headline["n_models_gap"] == n_judged
    assert set(headline["drop_by_bias"]) == {"all", "recency", "frequency", "status_quo"}
