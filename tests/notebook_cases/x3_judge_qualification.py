"""Registration of notebooks/x3_judge_qualification.ipynb for tests/notebook/test_notebooks.py."""

from pathlib import Path

# 12 items x 4 answerers on the sim backend (48 answers, 72 pairs), few PPI repetitions.
# risk_alpha 0.2: with ~30 calibration pairs no threshold passes the binomial test at 0.1,
# and selective judging would abstain on every pair (nothing to check).
SMALL = {"n_items": 12, "n_boot": 100, "ppi_labels": 20, "ppi_sizes": [10, 20], "ppi_reps": 50,
         "risk_alpha": 0.2}
_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# the switches flipped (tests/notebook/test_notebooks.py::test_notebook_runs_with_each_switch):
# the public releases only, without the bundled set (this crashed with a KeyError)
VARIANTS = {
    "releases_only": {"bundled": False, "n_boot": 20, "ppi_labels": 3, "ppi_sizes": [2, 3],
                      "ppi_reps": 10, "pandalm_dir": str(_FIXTURES / "pandalm"),
                      "unieval_dir": str(_FIXTURES / "unieval"),
                      "llmbar_dir": str(_FIXTURES / "llmbar")},
    # a user's own judge table (docs/your-data.md, "Bring your own judge data"), without the bundled set
    "own_table": {"bundled": False, "n_boot": 20, "ppi_reps": 10,
                  "table": str(_FIXTURES / "judge_tables" / "pointwise_stories.csv"),
                  "table_spec": {"columns": {"item_id": "story", "system": "model"},
                                 "judges": ["llm_judge", "overlap"],
                                 "annotators": ["rater1", "rater2", "rater3"]}},
}
FIGURES = {"qualification.png", "ppi.png", "bradley_terry.png"}
#: Held-out agreement of the accepted pairs may fall below 1 - risk_alpha by this much: the
#: guarantee bounds the expected risk, and ~25 held-out pairs give a binomial SD near 0.08.
SELECTIVE_MARGIN = 0.1


def check(headline: dict, params: dict) -> None:
    if params.get("bundled", True):
        _check_bundled(headline, params)
    else:
        assert "backend" not in headline and "human_ceiling" not in headline
    # release fixtures: 4 PandaLM items and 2 judge files; 6 Topical-Chat responses x 6
    # dimensions; 3 LLMBar judge configurations
    if params.get("pandalm_dir"):
        assert set(headline["pandalm_kappa"]) == {"gpt-3.5-turbo", "pandalm-7b"}
    if params.get("unieval_dir"):
        assert set(headline["unieval_ppi"]) == {
            "coherence", "engagingness", "groundedness", "naturalness", "overall",
            "understandability"}
        assert headline["unieval_n_labeled"] == params.get("ppi_labels", 40)
    if params.get("table"):  # the fixture: three annotators, an LLM judge and a metric
        assert set(headline["table_alt_test_passed"]) == {"llm_judge", "overlap"}
        assert "human ceiling" in headline["table_ceiling"]
    if params.get("llmbar_dir"):
        assert set(headline["llmbar_position"]) == {"JudgeA/CoT", "JudgeA/Vanilla",
                                                    "JudgeB/Vanilla"}


def _check_bundled(headline: dict, params: dict) -> None:
    n_items = params.get("n_items", 50)
    assert headline["backend"] == "sim"
    assert headline["rater_source"] == "sim_raters"
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
    # selective judging accepts some held-out pairs, and on them agrees with the raters'
    # majority at about the guaranteed level
    assert headline["selective_coverage"] > 0
    alpha = params.get("risk_alpha", 0.1)
    assert headline["selective_agreement"] >= 1 - alpha - SELECTIVE_MARGIN
