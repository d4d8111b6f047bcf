"""Study X3 (workbench.studies.x3_judge_qualification): the run on a tiny configuration and
the bundled-set helpers on hand-made frames."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from workbench.studies import x3_judge_qualification as x3
from workbench.studies.x3_judge_qualification._bundled import (
    score_preferences,
    selective_frame,
    shown_order,
)

MODELS = ["sim/answer-strong", "sim/answer-mid", "sim/answer-tiny"]


@pytest.fixture(scope="module")
def tiny(own_cache_run):
    config = x3.Config(n_items=10, answer_models=MODELS, lc_baseline="sim/answer-mid",
                       n_boot=30, ppi_labels=10, ppi_sizes=[5, 10], ppi_reps=20)
    return own_cache_run("x3", x3.run, config)


def test_run_fills_every_table(tiny):
    res = tiny
    assert set(x3.tables(res)) == {t for t in x3._study._TABLES
                                   if not t.startswith(("pandalm", "unieval", "llmbar", "table"))
                                   and t != "not_computed"} | {"parse_counts"}
    assert res["not_computed"].empty  # every reply parsed: every analysis computed
    agree = res["agreement"]
    assert list(agree["kind"]) == ["judge"] * 3 + ["rater"] * 4 + ["ceiling"]
    assert (agree["backend"] == "sim").all()
    assert agree.loc[agree["kind"] == "ceiling", "estimate"].iloc[0] == pytest.approx(
        agree.loc[agree["kind"] == "rater", "estimate"].mean())
    assert set(res["alt_test"]["judge_model"]) == {"sim/judge-a", "sim/judge-c", "sim/judge-f"}
    ppi = res["ppi"]
    assert list(ppi["method"]) == ["ppi", "classical"] * 2
    assert list(ppi["measure"]) == ["mean score"] * 2 + ["win rate: sim/answer-strong"] * 2
    assert ppi["n_labeled"].eq(10).all() and ppi["n_unlabeled"].iloc[0] == 20
    win = ppi[ppi["measure"] != "mean score"]
    assert ((win["truth"] >= 0) & (win["truth"] <= 1)).all()
    assert set(res["ppi_simulation"]["n_labeled"]) == {5, 10}
    assert list(res["jury"]["kind"]) == ["judge"] * 3 + ["jury"] * 4
    bt = res["bradley_terry"]
    assert set(bt["term"]) == {"strength", "position", "length_diff"}  # no judge answered
    assert set(res["lc_win_rate"]["answer_model"]) == {"sim/answer-strong", "sim/answer-tiny"}
    for name in set(x3.tables(res)) - {"parse_counts"}:
        assert list(res[name].columns) == x3._study._TABLES[name], name
    assert (res["agreement"]["rater_source"] == "sim_raters").all()
    sel = res["selective"].set_index("policy")
    assert sel.loc["all items", "coverage"] == 1.0
    head = x3.headline(res)
    json.dumps(head)  # plain JSON types
    assert head["backend"] == "sim" and head["n_answers"] == 30
    assert 0 <= head["human_win_rate"] <= 1
    assert set(head["bt_position"]) == {"judge-a", "judge-d"}


def test_run_without_the_bundled_set_is_empty(tiny):
    res = x3.run(x3.Config(bundled=False))
    assert not x3.tables(res) and x3.headline(res) == {}
    # the empty frames keep the columns a run fills, so the notebook can select them
    for name in ("agreement", "ppi", "jury", "bradley_terry", "selective"):
        assert list(res[name].columns) == list(tiny[name].columns), name
    assert all(list(res[n].columns) == c for n, c in x3._study._TABLES.items())


def test_config_checks():
    with pytest.raises(ValueError, match="ppi_judge"):
        x3.Config(ppi_judge="sim/judge-z")
    with pytest.raises(ValueError, match="n_raters"):
        x3.Config(n_raters=2)
    with pytest.raises(ValueError, match="calibration_share"):
        x3.Config(calibration_share=1.0)


def _pairs():
    return pd.DataFrame({"item_id": ["q1", "q2"], "model_a": ["m1", "m2"],
                         "model_b": ["m2", "m1"], "response_a": ["aaaa", "b"],
                         "response_b": ["bb", "aaa"]})


def test_shown_order_maps_verdicts_to_the_first_shown_answer():
    pw = pd.DataFrame({"item_id": ["q1", "q1", "q2"], "model_a": ["m1", "m1", "m2"],
                       "model_b": ["m2", "m2", "m1"], "judge_model": ["m1", "m1", "j"],
                       "order": [0, 1, 1], "verdict": ["A", "A", "tie"], "backend": "sim"})
    out = shown_order(pw, _pairs())
    assert list(out["first"]) == ["m1", "m2", "m1"]
    assert out["first_wins"].tolist()[:2] == [1.0, 0.0] and np.isnan(out["first_wins"].iloc[2])
    assert out["length_diff"].tolist() == pytest.approx([0.02, -0.02, 0.02])
    assert out["self_preference"].tolist() == [1.0, -1.0, 0.0]


def test_selective_frame_confidence_and_tie_majorities():
    keys = {"item_id": ["q1", "q2"], "model_a": ["m1", "m2"], "model_b": ["m2", "m1"]}
    pw = pd.DataFrame({**{k: v * 2 for k, v in keys.items()}, "judge_model": "j",
                       "order": [0, 0, 1, 1], "verdict": ["A", "B", "A", "A"], "backend": "sim"})
    scores = pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"], "answer_model": ["m1", "m2"] * 2,
                           "answer_sample": 0, "metric": "g", "score": [4.0, 2.0, 3.0, 3.0]})
    prefs = score_preferences(scores, pd.DataFrame(keys))
    assert prefs["verdict"].tolist() == ["A", "tie"]
    majority = pd.DataFrame({**keys, "majority": ["A", "tie"]})
    out = selective_frame(pw, prefs, majority, "j")
    assert len(out) == 1  # q2: the raters split, no human preference
    assert out["confidence"].iloc[0] == pytest.approx(1.0) and out["correct"].iloc[0]


def test_release_branches_on_the_fixtures():
    from pathlib import Path

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    config = x3.Config(bundled=False, pandalm_dir=str(fixtures / "pandalm"),
                       unieval_dir=str(fixtures / "unieval"), llmbar_dir=str(fixtures / "llmbar"),
                       n_boot=20, ppi_labels=3, ppi_sizes=[2, 3], ppi_reps=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # four-item fixtures: separated logistic fits
        res = x3.run(config)
    agree = res["pandalm_agreement"].set_index("who")
    assert list(agree["kind"]) == ["judge", "judge", "rater", "rater", "rater", "ceiling"]
    assert (res["pandalm_agreement"]["backend"] == "pandalm_release").all()
    # four items: fewer than the 30 the alternative annotator test asks of each annotator
    assert res["pandalm_alt_test"].empty
    assert set(res["unieval_ppi"]["dimension"]) == {
        "coherence", "engagingness", "groundedness", "naturalness", "overall",
        "understandability"}
    assert res["unieval_ppi"]["n_labeled"].eq(3).all()
    bt = res["llmbar_bradley_terry"]
    assert set(bt["judge_model"]) == {"JudgeA/CoT", "JudgeA/Vanilla", "JudgeB/Vanilla"}
    assert set(bt["term"]) == {"strength", "position"}
    for name, columns in x3._study._TABLES.items():  # filled or empty: the declared columns
        assert list(res[name].columns) == columns, name
    head = x3.headline(res)
    json.dumps(head)
    assert set(head["llmbar_position"]) == set(bt["judge_model"])
    assert set(head["pandalm_kappa"]) == {"gpt-3.5-turbo", "pandalm-7b"}


def test_llmbar_verdicts_as_shown():
    from workbench.studies.x3_judge_qualification._releases import llmbar_verdicts

    frame = pd.DataFrame({"subset": "s", "item_id": ["s/0"] * 2, "judge": "J",
                          "strategy": "V", "order": [0, 1], "verdict": [1, 1], "label": 1})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("workbench.datasets.llmbar.load_release", lambda path: frame)
        out = llmbar_verdicts("x")
    # order 0 shows output 1 (the better one) first and it wins; order 1 shows output 2
    # first, and the verdict 1 (original numbering) means the second shown won
    assert out["first"].tolist() == ["better", "worse"]
    assert out["first_wins"].tolist() == [1.0, 0.0]
    assert out["judge_model"].iloc[0] == "J/V"


def test_llmbar_selective_keeps_unparsed_verdicts_as_wrong():
    from workbench.studies.x3_judge_qualification._releases import llmbar_analysis

    n = 40  # the first 10 items: the judge's verdict is unparsed
    frame = pd.DataFrame({"subset": "s", "item_id": [f"s/{i}" for i in range(n)] * 2,
                          "judge": "J", "strategy": "V", "order": [0] * n + [1] * n,
                          "verdict": ["?"] * 10 + [1] * (n - 10) + [1] * n, "label": 1})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("workbench.datasets.llmbar.load_release", lambda path: frame)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = llmbar_analysis("x", judge="J/V", alpha=0.1, delta=0.1, share=0.5,
                                  rng=np.random.default_rng(0))
    every = out["llmbar_selective"].set_index("policy").loc["all items"]
    # every parsed verdict is right: below 1 only because the unparsed ones count as wrong
    assert every["agreement"] < 1.0
