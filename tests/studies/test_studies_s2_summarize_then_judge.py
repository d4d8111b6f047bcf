"""Study S2 (workbench.studies.s2_summarize_then_judge) on tiny configurations.

Each test gets an empty LLM cache (autouse fixture in conftest.py); sim models only.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from workbench.errors import DatasetError
from workbench.studies import s2_summarize_then_judge as s2
from workbench.studies.common import SCORE_COLUMNS, judge_scores
from workbench.studies.common.bridge_qa import RATING_COLUMNS

MODELS = ["sim/answer-strong", "sim/answer-weak"]


@pytest.fixture(scope="module")
def tiny(own_cache_run):
    """One small run shared by the read-only tests (its own cache folder)."""
    config = s2.Config(n_items=6, answer_models=MODELS, judge_models=["sim/judge-a"],
                       n_boot=50, seed=1)
    return config, own_cache_run("s2", s2.run, config)


def test_run_shapes_and_columns(tiny):
    config, res = tiny
    n_answers = 6 * len(MODELS)
    assert len(res["answers"]) == n_answers and res["answers"]["ok"].all()
    assert (res["answers"]["backend"] == "sim").all()
    assert len(res["ratings"]) == n_answers * 4  # four simulated raters
    assert res["ratings"]["score"].between(1, 5).all()
    methods = [s2.method_label(m, "sim/judge-a") for m in s2.LLM_METHODS]
    assert methods == ["geval_original/judge-a", "geval_adapted/judge-a",
                       "summarize_then/judge-a"]
    expected = [*config.lexical_metrics, *methods]
    assert list(res["parse_summary"]["metric"]) == expected
    assert (res["parse_summary"]["n"] == n_answers).all()
    assert (res["parse_summary"]["n_failed"] == 0).all()
    assert list(res["scores"].columns) == SCORE_COLUMNS
    assert len(res["scores"]) == n_answers * len(expected)
    # summarise-then-judge keeps the summary of each answer in the judge rows
    summ = res["judgments"][res["judgments"]["metric"] == "summarize_then/judge-a"]
    assert summ["prep_text"].notna().all() and (summ["prep_model"] == "sim/summarizer").all()
    assert (summ["inner_protocol"] == "geval").all()


def test_correlation_levels_match_scipy(tiny):
    _, res = tiny
    corr = res["correlations"]
    one = corr[corr["metric"] == "rougeL"]
    assert list(one["level"]) == ["pooled", "per_group", "per_group", "per_group_mean"]
    assert list(one["answer_model"].iloc[1:3]) == MODELS  # models in input order
    data = res["scores"][res["scores"]["metric"] == "rougeL"].merge(res["human"])
    pooled = sps.spearmanr(data["score"], data["human"]).statistic
    assert one["estimate"].iloc[0] == pytest.approx(pooled)
    per = [sps.spearmanr(g["score"], g["human"]).statistic
           for _, g in data.groupby("answer_model", sort=False)]
    assert list(one["estimate"].iloc[1:3]) == pytest.approx(per, nan_ok=True)
    assert one["estimate"].iloc[3] == pytest.approx(np.nanmean(per))
    assert (one["ci_method"].iloc[:3] == "percentile_bootstrap").all()
    assert (corr["backend"] == "sim").all()
    table = res["rho_table"]
    assert list(table.columns) == [*MODELS, "pooled", "mean"]
    assert table.loc["rougeL", "pooled"] == pytest.approx(pooled)


def test_vocabulary_lengths_and_headline(tiny):
    _, res = tiny
    vocab = res["vocabulary"].set_index("answer_model")
    assert list(vocab.index) == MODELS
    assert (vocab["n_texts"] == 6).all() and (vocab["n_unique_words"] > 0).all()
    lengths = s2.answer_lengths(res["answers"])
    mean = lengths.groupby("answer_model")["length_chars"].mean()
    assert vocab["mean_length_chars"].to_dict() == pytest.approx(mean.to_dict())
    head = s2.headline(res)
    assert head["backend"] == "sim" and head["n_answers"] == 12
    assert head["longest_model"] == "sim/answer-strong"  # the sim GPT-4 stand-in is wordy
    assert set(head["rho_pooled"]) == set(res["parse_summary"]["metric"])
    assert set(s2.tables(res)) >= {"answers", "correlations", "judgments", "rho_table"}
    assert "latency_s" not in s2.tables(res)["judgments"].columns


def test_published_comparison_maps_seed_names(tiny):
    _, res = tiny
    comp = s2.published_comparison(res["rho_table"], judge_models=["sim/judge-a"])
    row = comp[(comp["seed_method"] == "Proposed-gpt4") & (comp["column"] == "mean")]
    assert row["metric"].item() == "summarize_then/judge-a"
    assert row["published_real_judges"].item() == 0.32  # seed 001 table 3
    assert row["this_run"].item() == pytest.approx(res["rho_table"].loc[
        "summarize_then/judge-a", "mean"])
    assert "G-Eval-gemi" not in set(comp["seed_method"])  # no second judge in this run
    assert comp.loc[comp["seed_method"] == "BLEU", "published_real_judges"].tolist() == [
        0.15, 0.02]


def test_failed_answer_stays_a_row_with_missing_scores():
    items = s2.load_items("s2_civil_ja", 2)
    answers = s2.load_answers(items, answer_models=["sim/answer-mid"], progress=False)
    answers.loc[1, ["response", "ok", "error"]] = [None, False, "timeout: no reply"]
    scores = s2.metric_scores(answers, ["bleu", "rougeL", "keyword_score"])
    failed = scores[scores["item_id"] == answers.loc[1, "item_id"]]
    assert len(failed) == 3 and failed["score"].isna().all()
    assert not failed["parse_ok"].any() and (failed["error"] == "answer call failed").all()
    ratings = s2.simulated_ratings(answers, n_raters=2)
    assert ratings.loc[ratings["item_id"] == answers.loc[1, "item_id"], "score"].isna().all()
    config = s2.Config(n_items=2, answer_models=["sim/answer-mid"],
                       judge_models=["sim/judge-a"], llm_methods=["geval_adapted"])
    judgments, llm = judge_scores(answers, s2.judge_specs(config))
    assert len(judgments) == 1  # only the answer that exists is judged
    assert set(judgments["metric"]) == {"geval_adapted/judge-a"}
    with pytest.raises(ValueError, match="labels repeat"):
        judge_scores(answers, s2.judge_specs(config) * 2)
    assert len(llm) == 2 and llm["score"].isna().sum() == 1
    summary = s2.parse_summary(pd.concat([scores, llm]))
    assert (summary["n_failed"] == 1).all() and (summary["n"] == 2).all()


def test_human_scores_file(tmp_path):
    rows = [("s2-001", "m1", r, "overall", s) for r, s in (("r1", 4), ("r2", 5))]
    rows += [("s2-001", "m1", "r1", "fluency", 3)]
    path = tmp_path / "human_scores.csv"
    pd.DataFrame(rows, columns=["item_id", "answer_model", "rater", "dimension",
                                "score"]).to_csv(path, index=False)
    with pytest.raises(ValueError, match="human_scores.csv: several dimensions"):
        s2.read_human_scores(path)
    with pytest.raises(ValueError, match="no rows of dimension 'accuracy'"):
        s2.read_human_scores(path, dimension="accuracy")
    ratings = s2.read_human_scores(path, dimension="overall")
    assert list(ratings.columns) == RATING_COLUMNS
    assert ratings["score"].tolist() == [4.0, 5.0] and (ratings["source"] == path.name).all()
    assert s2.human_means(ratings)["human"].item() == 4.5
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,answer_model,rater,dimension,score\ns2-001,m1,r1,overall,four\n",
                   encoding="utf-8")
    with pytest.raises(DatasetError, match="bad.csv"):
        s2.read_human_scores(bad)
    header_only = tmp_path / "empty.csv"
    header_only.write_text("item_id,answer_model,rater,dimension,score\n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty.csv: no rows"):
        s2.read_human_scores(header_only)
    with_samples = tmp_path / "samples.csv"
    with_samples.write_text("item_id,answer_model,sample,rater,dimension,score\n"
                            "s2-001,m1,1,r1,overall,4\n", encoding="utf-8")
    assert s2.read_human_scores(with_samples)["answer_sample"].tolist() == [1]


def test_responses_and_human_scores_from_files(tmp_path):
    items = s2.load_items("s2_civil_ja", 3)
    responses = pd.DataFrame({
        "item_id": list(items["item_id"]) * 2,
        "answer_model": ["people-a"] * 3 + ["people-b"] * 3,
        "sample": 0,
        "response": list(items["reference"]) + ["わかりません。"] * 3,
    })
    responses.to_csv(tmp_path / "answers.csv", index=False)
    ratings = responses[["item_id", "answer_model"]].assign(rater="r1", dimension="overall",
                                                            score=[5, 5, 4, 1, 2, 1])
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    config = s2.Config(n_items=3, responses_path=str(tmp_path / "answers.csv"),
                       human_scores_path=str(tmp_path / "ratings.csv"), llm_methods=[],
                       lexical_metrics=["rouge1", "keyword_score"], n_boot=0)
    res = s2.run(config)
    assert (res["answers"]["backend"] == "file").all()
    assert set(res["ratings"]["source"]) == {"ratings.csv"}
    assert (res["correlations"]["backend"] == "file").all()  # nothing simulated here
    pooled = res["rho_table"]["pooled"]
    assert pooled["rouge1"] > 0.5 and pooled["keyword_score"] > 0.5
    responses.loc[0, "item_id"] = "s2-999"
    responses.to_csv(tmp_path / "answers.csv", index=False)
    with pytest.raises(DatasetError, match="answers.csv"):
        s2.run(config)


def test_config_checks():
    with pytest.raises(ValueError, match="lexical_metrics"):
        s2.Config(lexical_metrics=["meteor"])
    with pytest.raises(ValueError, match="llm_methods"):
        s2.Config(llm_methods=["pairwise"])
    with pytest.raises(ValueError, match="n_raters"):
        s2.Config(n_raters=5)
    with pytest.raises(ValueError, match="n_items"):
        s2.Config(n_items=-1)
    assert math.isclose(s2.Config().judge_temperature, 0.0)


def test_bertscore_metric_is_optional_and_keeps_failures():
    answers = pd.DataFrame({
        "item_id": ["a", "b", "c"], "answer_model": "m", "answer_sample": 0,
        "response": ["鋼橋には桁橋とトラス橋がある。", "土の色は茶色です。", None],
        "ok": [True, True, False], "backend": "sim",
        "reference": ["鋼橋には桁橋、トラス橋がある。"] * 3, "keywords": [["桁橋"]] * 3,
        "lang": "ja"})
    scores = s2.metric_scores(answers, ["bertscore"]).set_index("item_id")
    assert set(scores["family"]) == {"embedding"}
    assert scores.loc["a", "score"] > scores.loc["b", "score"]  # paraphrase beats unrelated
    assert np.isnan(scores.loc["c", "score"]) and not scores.loc["c", "parse_ok"]
