"""Registration of notebooks/x2_human_agreement.ipynb for tests/notebook/test_notebooks.py."""

from pathlib import Path

# 12 items x 4 answerers on the sim backend. The release branches (unieval_dir,
# pandalm_dir) are tested through the study module in tests/studies/test_studies_x2_human_agreement.py:
# their figures show real published scores and so carry no "simulated judges" label.
SMALL = {"n_items": 12, "n_boot": 200}
_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# the switches flipped (tests/notebook/test_notebooks.py::test_notebook_runs_with_each_switch):
# releases only, without the bundled set (issue 12: this crashed with a KeyError)
VARIANTS = {
    "releases_only": {"bundled": False, "n_boot": 50, "unieval_dir": str(_FIXTURES / "unieval"),
                      "pandalm_dir": str(_FIXTURES / "pandalm")},
    # a user's own pairwise judge table (docs/your-data.md, "Bring your own judge data")
    "own_table": {"bundled": False, "n_boot": 20,
                  "table": str(_FIXTURES / "judge_tables" / "pairwise_people.csv"),
                  "table_spec": {
                      "columns": {"item_id": "pair", "order": "shown", "annotator": "rater",
                                  "judge": "model", "verdict": "choice", "group": "topic"},
                      "verdicts": {1: "A", 2: "B"}, "recode": {"order": {"AB": 0, "BA": 1}},
                      "second_order": "positional"}},
}
FIGURES = {"reliability.png", "correlations.png", "correlations.svg", "pairwise_kappa.png"}


def check(headline: dict, params: dict) -> None:
    if params.get("bundled", True):
        _check_bundled(headline, params)
    else:
        assert "backend" not in headline and "rho" not in headline
    # release fixtures: 6 Topical-Chat responses x 6 dimensions; 4 PandaLM items, 2 judges
    if params.get("unieval_dir"):
        assert headline["unieval_n"] == 6
        assert set(headline["unieval_rho"]) == {
            "coherence", "engagingness", "groundedness", "naturalness", "overall",
            "understandability"}
    if params.get("table"):  # the fixture: the first-position judge flips more often
        agreement = headline["table_agreement"]
        assert agreement["judge-good"] > agreement["judge-first"]
        assert set(headline["table_accuracy_both"]) == {"judge-good", "judge-first"}
    if params.get("pandalm_dir"):
        assert set(headline["pandalm_kappa"]) == {"gpt-3.5-turbo", "pandalm-7b"}
        # each judge file has one unparseable verdict: counted, not dropped
        assert headline["pandalm_n_unparsed"] == {"gpt-3.5-turbo": 1, "pandalm-7b": 1}


def _check_bundled(headline: dict, params: dict) -> None:
    n_items = params.get("n_items", 50)
    assert headline["backend"] == "sim"
    assert headline["n_answers"] == 4 * n_items
    # the simulated raters apply one rubric with a little noise: they agree well
    assert headline["alpha"]["interval"] > 0.6
    assert headline["alpha"]["ordinal"] > 0.6
    assert headline["icc"]["ICC2k"] >= headline["icc"]["ICC2"] > 0.5
    human = headline["human_mean"]
    assert human["sim/answer-strong"] > human["sim/answer-weak"] > human["sim/answer-tiny"]
    rho = headline["rho"]
    assert rho["judge-a | pooled"] > 0.5  # the good judge tracks the raters
    assert rho["keyword_score | pooled"] > 0.3  # the rubric starts from the keyword score
    assert all(-1 <= v <= 1 for v in rho.values() if v is not None)
    assert headline["n_pairs"] == 6 * n_items  # every pair of the 4 answers per question
    assert headline["rater_fleiss_kappa"] > 0.4
    kappa = headline["pairwise_kappa"]
    assert kappa["sim/judge-a"] > 0.2
    # judge-d prefers the first position: its two orders agree less often than judge-a's
    agreement = headline["pairwise_agreement"]
    assert agreement["sim/judge-d"] < agreement["sim/judge-a"]
