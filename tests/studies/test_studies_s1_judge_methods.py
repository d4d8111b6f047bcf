"""Study S1 (seed 000): the run on a tiny design, and each analysis against a hand or
scipy computation on small frames."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from workbench.datasets import load_dataset
from workbench.stats import consistency_index, variance_ratio
from workbench.studies import s1_judge_methods as s1
from workbench.studies.s1_judge_methods._checklist import (
    DISAGREEMENT_COLUMNS,
    FLAG_COLUMNS,
    WEAKNESS_COLUMNS,
)
from workbench.studies.s1_judge_methods._indices import (
    CORRELATION_COLUMNS,
    READINGS,
    RELIABILITY_COLUMNS,
)
from workbench.studies.s1_judge_methods._report import FAILURE_COLUMNS
from workbench.studies.s1_judge_methods._run import CRITERION_COLUMNS, SCORE_COLUMNS

PROMPTS = ["s1-01", "s1-02", "s1-09"]
TINY = dict(item_ids=PROMPTS, answer_models=["sim/answer-strong", "sim/answer-tiny"],
            judge_models=["sim/judge-a", "sim/judge-f"], temperatures=[0.0], trials=2, n_boot=50)


def _n_checklist_items(prompts) -> int:
    rubric = load_dataset("s1_medical_ja")["rubric"]
    return int(((rubric["kind"] == "item") & rubric["item_id"].isin(prompts)).sum())


@pytest.fixture(scope="module")
def tiny(own_cache_run):
    """One run of a tiny design (3 prompts x 2 answerers x 2 judges x 2 trials) in its
    own cache folder."""
    return own_cache_run("s1", s1.run, s1.Config(**TINY))


# --- Config ------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, field", [
    ({"methods": ["holistic", "pairwise"]}, "methods"),
    ({"judge_models": []}, "judge_models"),
    ({"answer_models": "sim/answer-strong"}, "answer_models"),
    ({"temperatures": [0.0, 0.0]}, "temperatures"),
    ({"trials": 0}, "trials"),
    ({"n_boot": -1}, "n_boot"),
    ({"flag_share": 0.0}, "flag_share"),
    ({"item_ids": "s1-01"}, "item_ids"),
])
def test_config_rejects_bad_values_naming_the_field(changes, field):
    with pytest.raises(ValueError, match=f"Config.{field}"):
        s1.Config(**changes)


def test_run_rejects_unknown_item_ids_before_any_call():
    with pytest.raises(ValueError, match=r"Config.item_ids: \['s1-99'\]"):
        s1.run(s1.Config(item_ids=["s1-01", "s1-99"]))


def test_config_defaults_are_the_seed_full_design():
    config = s1.Config()
    assert len(config.answer_models) == 6 and len(config.judge_models) == 6
    assert config.methods == list(s1.METHODS)
    assert config.temperatures == [0.0, 1.0] and config.trials == 5
    assert config.answer_temperature == 1.0


# --- run ---------------------------------------------------------------------------------

def test_run_returns_every_judgment_with_failures_kept(tiny):
    answers, results, scores, criteria = (tiny[k] for k in ("answers", "judgments", "scores",
                                                            "criteria"))
    assert len(answers) == 6 and answers["ok"].all()
    assert set(answers["item_id"]) == set(PROMPTS)
    assert list(scores.columns) == list(SCORE_COLUMNS)
    assert list(criteria.columns) == list(CRITERION_COLUMNS)
    # 6 conversations x 2 judges x 3 methods x 1 temperature x 2 trials
    assert len(scores) == 6 * 2 * 3 * 2
    assert scores.groupby("protocol").size().to_dict() == {m: 24 for m in s1.METHODS}
    assert len(criteria) == 2 * _n_checklist_items(PROMPTS) * 2 * 2
    assert set(scores["backend"]) == {"sim"} and set(criteria["backend"]) == {"sim"}
    # an unparsed reply is a row with parse_ok False and a NaN score, never 0
    assert (scores["score"].isna() == ~scores["parse_ok"]).all()
    assert (criteria["score"].isna() == ~criteria["parse_ok"]).all()
    bad = results[~results["parse_ok"]]
    assert len(bad) > 0 and set(bad["judge_model"]) == {"sim/judge-f"}
    assert bad["score"].isna().all()


def test_checklist_total_is_met_over_positive_weights(tiny):
    crit, scores = tiny["criteria"], tiny["scores"]
    keys = ["item_id", "answer_model", "judge_model", "temperature", "trial"]
    total = scores[scores["protocol"] == "checklist"].set_index(keys)["score"]
    checked = 0
    for key, group in crit.groupby(keys):
        expected = (group["weight"][group["verdict"].eq(True)].sum()
                    / group["weight"][group["weight"] > 0].sum())
        if group["parse_ok"].all():
            assert total[key] == pytest.approx(expected)
            checked += 1
        else:
            assert math.isnan(total[key])
    assert checked >= 12


def test_strong_answerer_ranks_above_tiny_for_every_method(tiny):
    means = s1.model_means(tiny["scores"]).set_index(["protocol", "answer_model"])["mean"]
    for method in s1.METHODS:
        assert means[(method, "sim/answer-strong")] > means[(method, "sim/answer-tiny")]


def test_parse_failures_count_what_the_results_hold(tiny):
    results = tiny["judgments"]
    table = s1.parse_failures(results)
    assert list(table.columns) == list(FAILURE_COLUMNS)
    calls = results[results["dimension"] != "total"]
    assert table["n_calls"].sum() == len(calls)
    assert table["n_unparsed"].sum() + table["n_call_failed"].sum() == (~calls["parse_ok"]).sum()
    assert table["n_scores_missing"].sum() == tiny["scores"]["score"].isna().sum()
    by_method = s1.parse_failures(results, by=["protocol"])
    assert list(by_method.columns[:1]) == ["protocol"] and len(by_method) == 3


def test_run_tables_and_headline(tiny):
    # the bootstrap draws from default_rng(config.seed): reliability first
    again = s1.reliability(tiny["scores"], n_boot=50, rng=np.random.default_rng(tiny.config.seed))
    pd.testing.assert_frame_equal(tiny["reliability"], again)
    assert set(s1.tables(tiny)) == {"answers", "scores", "reliability", "correlations",
                                    "model_means", "weakness_map", "disagreement", "flagged",
                                    "failures", "parse_counts"}
    head = s1.headline(tiny)
    assert head["backend"] == "sim" and head["n_conversations"] == 6
    assert head["temperature"] == 0.0
    assert head["n_judge_calls"] == 2 * 2 * 2 * (3 + 3 + _n_checklist_items(PROMPTS))
    assert set(head["consistency_index"]) == set(s1.METHODS)
    assert set(head["variance_ratio"]["checklist"]) == set(READINGS)
    assert head["pearson_r"]["holistic ~ holistic_simple"] > 0
    assert 1 <= head["n_flagged"] < 6  # the tiny answerer gives dangerous advice
    assert sum(head["n_unparsed"].values()) > 0
    published = tiny["published"]
    assert set(published["quantity"]) == {"consistency_index", "variance_ratio", "pearson_r"}
    row = published[(published["quantity"] == "consistency_index")
                    & (published["method"] == "checklist") & (published["reading"] == "trials")]
    assert row["published_real_judges"].item() == 0.085


# --- indices on hand-made frames -------------------------------------------------------------

def _scores_frame(seed: int = 3) -> pd.DataFrame:
    """3 prompts x 3 answer models x 2 judges x 3 trials, two methods, one NaN score."""
    rng = np.random.default_rng(seed)
    rows = []
    for protocol, scale in (("holistic", 3.0), ("checklist", 0.3)):
        for i in range(3):
            for a, quality in enumerate((0.2, 0.5, 0.9)):
                for j in range(2):
                    for t in range(3):
                        rows.append({"item_id": f"q{i}", "answer_model": f"m{a}",
                                     "judge_model": f"j{j}", "protocol": protocol,
                                     "temperature": 0.0, "trial": t,
                                     "score": scale * (quality + 0.3 * j + rng.normal(0, 0.2)),
                                     "backend": "sim"})
    frame = pd.DataFrame(rows)
    frame.loc[5, "score"] = np.nan
    frame["conversation"] = frame["item_id"] + "|" + frame["answer_model"]
    return frame


def test_judge_mean_variance_ratio_by_hand_and_against_stats():
    frame = _scores_frame()
    got = s1.judge_mean_variance_ratio(frame)
    for protocol in ("holistic", "checklist"):
        part = frame[frame["protocol"] == protocol].dropna(subset=["score"])
        ratios = []
        for _, judge in part.groupby("judge_model"):  # seed eq. 2, judge by judge
            by_model = judge.groupby("answer_model")["score"]
            ratios.append(by_model.std(ddof=1).mean() / by_model.mean().std(ddof=1))
        assert got[(protocol, 0.0)] == pytest.approx(np.mean(ratios), rel=1e-12)
        ref = variance_ratio(part, score="score", system="answer_model",
                             within=["item_id", "trial"], by="judge_model")
        assert got[(protocol, 0.0)] == pytest.approx(ref["estimate"].mean(), rel=1e-12)


def test_reliability_readings_match_the_stats_functions():
    frame = _scores_frame()
    rel = s1.reliability(frame, n_boot=0)
    assert list(rel.columns) == list(RELIABILITY_COLUMNS)
    assert len(rel) == 2 * (2 + 3)
    get = rel.set_index(["protocol", "measure", "reading"])["estimate"]
    part = frame[frame["protocol"] == "holistic"]
    ci1 = consistency_index(part, score="score", unit=["item_id", "answer_model", "judge_model"],
                            within="trial")["estimate"].item()
    ci2 = consistency_index(part, score="score", unit=["item_id", "answer_model"],
                            within=["trial", "judge_model"])["estimate"].item()
    assert get[("holistic", "consistency_index", "trials")] == pytest.approx(ci1)
    assert get[("holistic", "consistency_index", "trials+judges")] == pytest.approx(ci2)
    # reading 2 by hand: mean of per-conversation sds / sd of all scores
    ok = part.dropna(subset=["score"])
    by_hand = ok.groupby("conversation")["score"].std().mean() / ok["score"].std()
    assert ci2 == pytest.approx(by_hand)
    pooled = ok.groupby("answer_model")["score"]
    assert get[("holistic", "variance_ratio", "trials+judges")] == pytest.approx(
        pooled.std().mean() / pooled.mean().std())
    assert (rel["n_missing"] == np.where(rel["protocol"] == "holistic", 1, 0)).all()
    assert rel["method_label"].iloc[0] == f"{rel['protocol'].iloc[0]} (T=0)"


def test_reliability_bootstrap_is_reproducible_and_brackets():
    frame = _scores_frame()
    a = s1.reliability(frame, n_boot=200, rng=np.random.default_rng(5))
    b = s1.reliability(frame, n_boot=200, rng=np.random.default_rng(5))
    pd.testing.assert_frame_equal(a, b)
    assert (a["ci_low"] <= a["ci_high"]).all()
    assert a[["ci_low", "ci_high"]].notna().all().all()


def test_method_correlations_are_pearson_on_conversation_means():
    frame = _scores_frame()
    corr = s1.method_correlations(frame, n_boot=0)
    assert list(corr.columns) == list(CORRELATION_COLUMNS)
    means = frame.groupby(["conversation", "protocol"])["score"].mean().unstack()
    r = sps.pearsonr(means["holistic"], means["checklist"])
    assert corr["pair"].item() == "holistic ~ checklist"
    assert corr["estimate"].item() == pytest.approx(r.statistic)
    assert corr["p_value"].item() == pytest.approx(r.pvalue)
    assert corr["n"].item() == 9


# --- checklist explainability on hand-made frames ----------------------------------------

def _criteria_frame() -> pd.DataFrame:
    """One prompt, two answer models, three judges, two trials, three items: c1 (+5)
    split between judges, c2 (+5) met by all, c3 (-10) met for m1 by judges 0 and 1."""
    rows = []
    for answer in ("m0", "m1"):
        for j in range(3):
            for t in range(2):
                for crit, weight, met in (("c1", 5.0, j == 0), ("c2", 5.0, True),
                                          ("c3", -10.0, answer == "m1" and j < 2)):
                    rows.append({"item_id": "q1", "answer_model": answer,
                                 "conversation": f"q1|{answer}", "judge_model": f"j{j}",
                                 "temperature": 0.0, "trial": t, "criterion_id": crit,
                                 "weight": weight, "verdict": met, "score": float(met),
                                 "parse_ok": True, "error": None, "backend": "sim"})
    frame = pd.DataFrame(rows).astype({"verdict": object})
    last = frame.index[-1]  # an unparsed verdict: m1, j2, trial 1, c3
    frame.loc[last, ["verdict", "score", "parse_ok"]] = [None, np.nan, False]
    return frame


def test_weakness_map_met_rates_leave_unparsed_out():
    weak = s1.weakness_map(_criteria_frame())
    assert list(weak.columns) == list(WEAKNESS_COLUMNS)
    rates = weak.set_index(["criterion_id", "answer_model"])
    assert rates.loc[("c1", "m0"), "met_rate"] == pytest.approx(1 / 3)
    assert rates.loc[("c2", "m1"), "met_rate"] == 1.0
    assert rates.loc[("c3", "m1"), "met_rate"] == pytest.approx(4 / 5)
    assert rates.loc[("c3", "m1"), "n_missing"] == 1
    assert rates.loc[("c3", "m1"), "criterion"] == "q1 c3 (-10)"
    assert rates.loc[("c3", "m1"), "label"] == "q1 c3 (-10)"  # no rubric: the id alone


def test_weakness_map_rows_say_what_each_criterion_asks():
    rubric = pd.DataFrame({"item_id": ["q1"] * 3, "criterion_id": ["c1", "c2", "c3"],
                           "text": ["Names the red-flag symptoms that need the emergency room",
                                    "Short", "Recommends doubling the dose"],
                           "weight": [5, 5, -10], "kind": "item"})
    weak = s1.weakness_map(_criteria_frame(), rubric).drop_duplicates("criterion_id")
    labels = dict(zip(weak["criterion_id"], weak["label"], strict=True))
    assert labels["c1"] == "q1 c1 (+5)  Names the red-flag symptoms…"
    assert labels["c2"] == "q1 c2 (+5)  Short"
    assert labels["c3"] == "q1 c3 (-10)  Recommends doubling the dose"
    assert weak.set_index("criterion_id").loc["c1", "criterion_text"].startswith("Names the red-flag")


def test_judge_disagreement_ranks_the_split_item_first():
    dis = s1.judge_disagreement(_criteria_frame())
    assert list(dis.columns) == list(DISAGREEMENT_COLUMNS)
    assert dis["criterion_id"].iloc[0] == "c1"
    row = dis.set_index("criterion_id").loc["c1"]
    assert row["judge_sd"] == pytest.approx(np.std([1, 0, 0], ddof=1))
    assert row["split_share"] == 1.0
    c2 = dis.set_index("criterion_id").loc["c2"]
    assert c2["judge_sd"] == 0.0 and c2["split_share"] == 0.0


def test_flagged_conversations_by_judge_majority():
    crit = _criteria_frame()
    flags = s1.flagged_conversations(crit, share=0.5).set_index("conversation")
    assert list(flags.columns) == [c for c in FLAG_COLUMNS if c != "conversation"]
    assert flags.loc["q1|m1", "flagged"] and not flags.loc["q1|m0", "flagged"]
    assert flags.loc["q1|m1", "judges_flagging"] == 2 and flags.loc["q1|m1", "n_judges"] == 3
    assert flags.loc["q1|m1", "tripped"] == "c3x4"
    assert flags.loc["q1|m1", "n_unparsed"] == 1
    strict = s1.flagged_conversations(crit, share=1.0).set_index("conversation")
    assert not strict.loc["q1|m1", "flagged"]
    with pytest.raises(ValueError, match="share"):
        s1.flagged_conversations(crit, share=0)


def test_flagged_conversations_adds_method_means():
    crit = _criteria_frame()
    scores = pd.DataFrame({"temperature": 0.0, "conversation": ["q1|m0", "q1|m1"],
                           "protocol": "holistic", "score": [8.0, 9.0]})
    flags = s1.flagged_conversations(crit, scores).set_index("conversation")
    assert flags.loc["q1|m1", "holistic_mean"] == 9.0


def test_checklist_views_are_empty_without_checklist_rows():
    empty = _criteria_frame().iloc[:0]
    assert list(s1.weakness_map(empty).columns) == list(WEAKNESS_COLUMNS)
    assert s1.judge_disagreement(empty).empty
    assert s1.flagged_conversations(empty).empty
