"""Study X2 (workbench.studies.x2_human_agreement): bundled-set analysis on a tiny
configuration, the pairwise helpers on hand-made frames, and the release branches on
the synthetic fixtures in tests/fixtures/unieval and tests/fixtures/pandalm."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats import inter_rater

from workbench.stats import UNPARSED
from workbench.studies import x2_human_agreement as x2
from workbench.studies.common.pairwise import VERDICTS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MODELS = ["sim/answer-strong", "sim/answer-mid", "sim/answer-tiny"]


@pytest.fixture(scope="module")
def tiny(own_cache_run):
    config = x2.Config(n_items=4, answer_models=MODELS, judge_models=["sim/judge-a"],
                       metrics=["rougeL"], pairwise_judges=["sim/judge-a"], n_boot=50)
    return own_cache_run("x2", x2.run, config)


def test_bundled_run(tiny):
    res = tiny
    assert len(res["answers"]) == 12 and len(res["ratings"]) == 48
    rel = res["reliability"].set_index("measure_label")
    assert list(rel.index) == ["alpha (interval)", "alpha (ordinal)", "ICC1", "ICC2", "ICC3",
                               "ICC1k", "ICC2k", "ICC3k"]
    assert (rel["n_raters"] == 4).all() and (rel["backend"] == "sim").all()
    corr = res["correlations"]
    assert set(corr["method"]) == {"pearson", "spearman", "kendall"}
    spear = corr[(corr["method"] == "spearman") & (corr["metric"] == "judge-a")]
    assert list(spear["scope"]) == ["pooled", *(f"per model: {m}" for m in MODELS),
                                    "per model (mean)", "per item (mean)"]
    data = res["scores"][res["scores"]["metric"] == "judge-a"].merge(
        res["ratings"].groupby(["item_id", "answer_model"], as_index=False)["score"].mean(),
        on=["item_id", "answer_model"], suffixes=("", "_human"))
    assert spear["estimate"].iloc[0] == pytest.approx(
        sps.spearmanr(data["score"], data["score_human"]).statistic)
    kendall = corr[corr["method"] == "kendall"]
    assert (kendall["ci_method"].isin(["fisher_z", "t_over_groups"])).all()
    assert list(x2.correlation_table(corr).columns) == ["pooled", "per model (mean)",
                                                        "per item (mean)"]
    assert len(res["pairs"]) == 4 * 3 and len(res["majority"]) == 12
    assert set(res["majority"]["majority"]) <= {"A", "B", "tie"}
    agree = res["pairwise_agreement"].set_index("judge_model")
    assert agree.loc["sim/judge-a", "n"] == 12 and agree.loc["sim/judge-a", "n_verdicts"] == 24
    head = x2.headline(res)
    assert head["backend"] == "sim" and head["n_pairs"] == 12
    assert "judge-a | pooled" in head["rho"] and "sim/judge-a" in head["pairwise_kappa"]
    assert "unieval_rho" not in head and res["unieval"].empty
    json.dumps(head)  # plain JSON types
    assert list(res["correlation_table"].columns) == ["pooled", "per model (mean)",
                                                      "per item (mean)"]
    assert list(res["kappas"]["who"]) == ["raters (Fleiss)", "sim/judge-a vs majority"]
    assert res["pandalm_kappas"].empty and res["unieval_table"].empty
    assert "kappas" not in x2.tables(res) and "metric" in x2.tables(res)["judgments"]


def test_pairwise_items_balance_positions_and_skip_failures():
    answers = pd.DataFrame({
        "item_id": ["q1"] * 3 + ["q2"] * 3,
        "answer_model": ["m1", "m2", "m3"] * 2,
        "answer_sample": 0,
        "response": ["a1", "a2", "a3", "b1", None, "b3"],
        "ok": [True, True, True, True, False, True],
        "question": "q", "reference": "r", "lang": "en",
    })
    pairs = x2.pairwise_items(answers, ["m1", "m2", "m3"])
    q1 = pairs[pairs["item_id"] == "q1"]
    assert list(zip(q1["model_a"], q1["model_b"], strict=True)) == [
        ("m1", "m2"), ("m3", "m1"), ("m2", "m3")]  # every second pair swapped
    assert list(q1["response_a"]) == ["a1", "a3", "a2"]
    q2 = pairs[pairs["item_id"] == "q2"]
    assert list(zip(q2["model_a"], q2["model_b"], strict=True)) == [("m1", "m3")]


def test_rater_preferences_and_majority():
    pairs = pd.DataFrame({"item_id": ["q1", "q2"], "model_a": ["m1", "m1"],
                          "model_b": ["m2", "m2"]})
    scores = {("q1", "m1"): [5, 4, 3, 4], ("q1", "m2"): [3, 4, 4, 2],
              ("q2", "m1"): [2, 5, 3, np.nan], ("q2", "m2"): [4, 1, 3, 3]}
    ratings = pd.DataFrame([
        {"item_id": i, "answer_model": m, "answer_sample": 0, "rater": f"r{k}", "score": s}
        for (i, m), values in scores.items() for k, s in enumerate(values)])
    prefs = x2.rater_preferences(ratings, pairs)
    q1 = prefs[prefs["item_id"] == "q1"].set_index("rater")["preference"]
    assert q1.to_dict() == {"r0": "A", "r1": "tie", "r2": "B", "r3": "A"}
    assert len(prefs[prefs["item_id"] == "q2"]) == 3  # r3 did not score both answers
    maj = x2.majority_label(prefs).set_index("item_id")
    assert maj.loc["q1", "majority"] == "A" and maj.loc["q1", "n_votes"] == 2
    # q2: B, A, tie: no preference has strictly the most votes -> tie
    assert maj.loc["q2", "majority"] == "tie" and maj.loc["q2", "n_raters"] == 3


def test_pairwise_agreement_counts_unparsed_verdicts():
    majority = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"], "model_a": "m1",
                             "model_b": "m2", "majority": ["A", "B", "A", "tie"]})
    verdicts = {0: ["A", "B", "A", "A"], 1: ["A", "B", None, "tie"]}
    judgments = pd.DataFrame([
        {"item_id": f"q{i + 1}", "model_a": "m1", "model_b": "m2", "judge_model": "j",
         "order": order, "verdict": v, "backend": "sim"}
        for order, values in verdicts.items() for i, v in enumerate(values)])
    out = x2.pairwise_agreement(judgments, majority).set_index("judge_model")
    assert out.loc["j", "n_unparsed"] == 1
    assert out.loc["j", "accuracy_order0"] == 0.75 and out.loc["j", "accuracy_order1"] == 0.75
    assert out.loc["j", "agreement"] == 0.5
    # pooled kappa by hand: 6 of 8 verdicts agree; margins judge A3 B2 tie1 U1 + A1 (order 0)
    judge = ["A", "B", "A", "A", "A", "B", UNPARSED, "tie"]
    label = ["A", "B", "A", "tie"] * 2
    po = np.mean([a == b for a, b in zip(judge, label, strict=True)])
    pe = sum(judge.count(c) * label.count(c) for c in VERDICTS) / 64
    assert out.loc["j", "estimate"] == pytest.approx((po - pe) / (1 - pe))
    assert out.loc["j", "n_verdicts"] == 8
    summary = x2.kappa_summary(pd.DataFrame({"estimate": [0.5], "ci_low": [0.1],
                                             "ci_high": [0.9], "n": [4], "backend": ["sim"]}),
                               out.reset_index())
    assert list(summary["who"]) == ["raters (Fleiss)", "j vs majority"]


def test_unieval_release_branch():
    out = x2.unieval_correlations(str(FIXTURES / "unieval"), n_boot=50, rng=0)
    assert len(out) == 6 * 3 and (out["level"] == "pooled").all() and (out["n"] == 6).all()
    records = json.loads((FIXTURES / "unieval/reproduce/data/dialogue/topical_chat.json")
                         .read_text(encoding="utf-8"))
    preds = json.loads((FIXTURES / "unieval/reproduce/unieval_predict/dialogue/"
                        "topical_chat_result.json").read_text(encoding="utf-8"))
    human = [r["scores"]["coherence"] for r in records]
    predicted = [p["predict_scores"]["coherence"] for p in preds]
    row = out[(out["dimension"] == "coherence") & (out["method"] == "kendall")]
    assert row["estimate"].item() == pytest.approx(sps.kendalltau(predicted, human).statistic)
    table = x2.unieval_table(out)
    assert list(table.columns) == ["dimension", "pearson", "spearman", "kendall", "n"]
    assert x2.unieval_table(pd.DataFrame()).empty


def test_pandalm_release_branch():
    out = x2.pandalm_agreement(str(FIXTURES / "pandalm"), n_boot=50, rng=0)
    raw = json.loads((FIXTURES / "pandalm/data/testset-v1.json").read_text(encoding="utf-8"))
    labels = np.array([[r[f"annotator{k}"] for k in (1, 2, 3)] for r in raw])
    table, _ = inter_rater.aggregate_raters(labels)
    assert out["annotators"]["estimate"].item() == pytest.approx(
        inter_rater.fleiss_kappa(table, method="fleiss"))
    judges = out["judges"].set_index("judge_model")
    # majority labels 1, 2, 0, 1. gpt-3.5-turbo: 1, tie, unparseable, 2 -> 1 of 4 right;
    # pandalm-7b: 1, 2, 0, null -> 3 of 4. Kappa by hand over {0, 1, 2, unparsed}:
    # pe = 0.25 for both (each judge uses every category once), so kappa = (po-.25)/.75
    assert judges.loc["gpt-3.5-turbo", "accuracy"] == 0.25
    assert judges.loc["pandalm-7b", "accuracy"] == 0.75
    assert judges.loc["gpt-3.5-turbo", "estimate"] == pytest.approx(0.0)
    assert judges.loc["pandalm-7b", "estimate"] == pytest.approx(2 / 3)
    assert (judges["n_unparsed"] == 1).all() and (judges["n"] == 4).all()
    assert (judges["n_no_majority"] == 0).all()


def test_release_only_run_and_config_checks():
    res = x2.run(x2.Config(bundled=False, unieval_dir=str(FIXTURES / "unieval"),
                           pandalm_dir=str(FIXTURES / "pandalm"), n_boot=20))
    assert res["answers"].empty and len(res["unieval"]) == 18
    head = x2.headline(res)
    assert set(head) == {"unieval_rho", "unieval_n", "pandalm_fleiss_kappa", "pandalm_kappa",
                         "pandalm_n_unparsed"}
    assert set(x2.tables(res)) == {"unieval", "pandalm_annotators", "pandalm_judges"}
    assert list(res["pandalm_kappas"]["who"]) == [
        "annotators (Fleiss)", "gpt-3.5-turbo vs majority", "pandalm-7b vs majority"]
    assert list(res["unieval_table"].columns) == ["dimension", "pearson", "spearman",
                                                  "kendall", "n"]
    # the frames the notebook indexes keep their columns when empty (issue 12: KeyError)
    assert {"measure_label", "estimate", "n_raters"} <= set(res["reliability"].columns)
    assert res["correlations"].query("method == 'spearman' and level != 'per_group'").empty
    assert {"judge_model", "kappa_order0", "agreement"} <= set(
        res["pairwise_agreement"].columns)
    assert list(res["correlation_table"].columns) == ["pooled", "per model (mean)",
                                                      "per item (mean)"]
    with pytest.raises(ValueError, match="n_raters"):
        x2.Config(n_raters=1)
    with pytest.raises(ValueError, match="metrics"):
        x2.Config(metrics=["meteor"])
    with pytest.raises(ValueError, match="answer_models"):
        x2.Config(answer_models=["sim/answer-mid"])
