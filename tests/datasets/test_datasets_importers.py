"""Importers of public releases, on small fixture trees in tests/fixtures/.

The fixtures are written for these tests in the layouts of the releases and carry the
defects real releases have: empty answer lists, replies without JSON, scores such as
"2-3", folders of old runs holding invalid JSON (read them and the import fails),
a model folder whose files use another stem, null winners, unparseable verdicts.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from workbench.datasets import hivmedqa, judgebench, llmbar, pandalm, unieval
from workbench.errors import DatasetError
from workbench.judges import parse_dimension_reply

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HIV = FIXTURES / "hivmedqa"


@pytest.fixture(scope="module")
def release():
    return hivmedqa.load_release(HIV)


@pytest.fixture(scope="module")
def judged(release):
    """The judgments with each row's dimension parsed from its raw reply, as S3 does."""
    frame = release["judgments"].copy()
    parsed = [
        parse_dimension_reply(reply, {dim: hivmedqa.RELEASE_KEYS[dim]}, hivmedqa.SCORE_RANGE)[dim]
        for reply, dim in zip(frame["raw_reply"], frame["dimension"], strict=True)
    ]
    frame["score"], frame["parse_ok"], frame["error"] = zip(*parsed, strict=True)
    return frame


def one(judgments: pd.DataFrame, **where) -> pd.DataFrame:
    mask = pd.Series(True, index=judgments.index)
    for column, value in where.items():
        mask &= judgments[column] == value
    return judgments[mask]


def score(judgments, dimension, **where) -> float:
    rows = one(judgments, dimension=dimension, **where)
    assert len(rows) == 1, rows
    return float(rows["score"].iloc[0])


# --------------------------------------------------------------------------- HIVMedQA


def test_hivmedqa_questions_and_categories(release):
    questions = release["questions"]
    assert len(questions) == 4
    assert list(questions["item_id"]) == ["1.1", "1.2", "5.1", "5.2"]
    assert list(questions["paper_category"]) == [1, 1, 4, 4]  # release 5 = paper category 4
    judgments = release["judgments"]
    assert set(judgments.loc[judgments["category"] == 5, "paper_category"]) == {4}


def test_hivmedqa_answers_skip_empty_lists_nested_and_old_folders(release):
    answers = release["answers"]
    assert set(answers["answer_model"]) == {"Llama_cluster", "Claude"}
    # the folder is the model, the stem is kept separately
    assert set(answers.loc[answers["answer_model"] == "Llama_cluster", "stem"]) == {"Llama"}
    # Llama 5.1 is an empty list: no rows, one issue
    assert one(answers, answer_model="Llama_cluster", category=5, iteration=1).empty
    assert not answers["answer"].str.startswith("OLD").any()  # raw/After_pipeline/... skipped
    assert len(answers) == 12
    issues = release["issues"]
    assert "empty list" in set(issues["problem"])


def test_hivmedqa_judgment_rows_per_dimension(release):
    judgments = release["judgments"]
    keys = [
        "answer_model",
        "category",
        "question_index",
        "iteration",
        "reference_given",
        "dimension",
    ]
    assert not judgments.duplicated(keys).any()
    assert set(judgments["dimension"]) == set(hivmedqa.DIMENSIONS)
    assert (judgments.groupby(keys[:-1]).size() == 5).all()
    # 15 replies in the fixture (old folders and checkpoints are not read)
    assert len(judgments) == 15 * 5
    assert not {"score", "parse_ok", "error"} & set(judgments.columns)  # raw replies only
    assert judgments["raw_reply"].map(type).eq(str).all()


def test_hivmedqa_reply_without_json_is_missing_never_zero(judged):
    rows = one(
        judged,
        answer_model="Llama_cluster",
        category=1,
        iteration=2,
        question_index=0,
    )
    assert len(rows) == 5
    assert not rows["parse_ok"].any()
    assert rows["score"].isna().all()
    assert rows["raw_reply"].iloc[0].startswith("I would need")


def test_hivmedqa_bad_value_fails_only_its_dimension(judged):
    j = judged
    where = dict(answer_model="Llama_cluster", category=1, iteration=2, question_index=1)
    assert math.isnan(score(j, "comprehension", **where))  # "2-3"
    assert "2-3" in one(j, dimension="comprehension", **where)["error"].iloc[0]
    assert score(j, "reasoning", **where) == 3.0
    assert score(j, "harm", **where) == 4.0
    where = dict(answer_model="Llama_cluster", category=5, iteration=2, question_index=0)
    assert math.isnan(score(j, "demographic_bias", **where))  # 7 is outside 0-5
    assert score(j, "knowledge_recall", **where) == 3.0
    # the reason mentions "question 1": 5; the JSON object's own value (2) is used
    assert score(j, "comprehension", **where) == 2.0


def test_hivmedqa_reply_shapes(judged):
    j = judged
    # a number written as a string counts; an unfenced object parses
    assert (
        score(
            j, "reasoning", answer_model="Llama_cluster", category=5, iteration=2, question_index=1
        )
        == 4.0
    )
    # prose around the JSON object
    assert (
        score(j, "comprehension", answer_model="Claude", category=1, iteration=1, question_index=0)
        == 5.0
    )


def test_hivmedqa_rephrased_gold_and_unsupervised(judged):
    j = judged
    gold = j[j["answer_model"] == hivmedqa.REPHRASED_MODEL]
    assert len(gold) == 4 * 5 and gold["reference_given"].all()
    assert set(gold["category"]) == {1, 5}
    unsup = j[~j["reference_given"]]
    assert set(unsup["answer_model"]) == {"Llama_cluster"} and len(unsup) == 10
    assert (
        score(
            j,
            "comprehension",
            answer_model="Llama_cluster",
            category=1,
            iteration=1,
            question_index=1,
            reference_given=False,
        )
        == 4.0
    )
    assert (
        score(
            j,
            "comprehension",
            answer_model="Llama_cluster",
            category=1,
            iteration=1,
            question_index=1,
            reference_given=True,
        )
        == 3.0
    )


def test_hivmedqa_issues_and_display_names(release):
    problems = dict(zip(release["issues"]["file"], release["issues"]["problem"], strict=True))
    assert any(f.endswith("notes.json") for f in problems)
    assert (
        "1 records for 2 questions"
        in problems[
            "model_answers/results-GPT-score/Claude/GPT-score_Claude_answers_category_5.2_HIV_EQ.json"
        ]
    )
    names = release["display_names"].set_index("answer_model")["display_name"]
    assert names["Llama_cluster"] == "Llama 3.3-70B-Instruct"
    assert names["Claude"] == "Claude 3.5 Sonnet v2"
    custom = hivmedqa.load_release(
        HIV, display_names={"Claude": "Claude (ours)"}, models=["Claude"]
    )
    assert set(custom["judgments"]["display_name"]) == {"Claude (ours)"}
    assert set(custom["answers"]["answer_model"]) == {"Claude"}
    assert custom["issues"]["problem"].str.contains("share").sum() == 0
    clash = hivmedqa.load_release(HIV, display_names={"Claude": "X", "Llama_cluster": "X"})
    shared = clash["issues"][clash["issues"]["problem"].str.contains("share the display name")]
    assert list(shared["file"]) == ["Claude, Llama_cluster"]


def test_hivmedqa_prompts_and_cache_import_file(release, tmp_path, monkeypatch):
    from workbench.llm import complete, import_cache, write_replay_file

    prompts = release["prompts"]
    assert len(prompts) == 8 and set(prompts["reference_given"]) == {True, False}
    replies = hivmedqa.release_replies(release)
    assert list(replies.columns) == ["model", "messages", "temperature", "text", "source"]
    assert set(replies["model"]) == {"gpt-4o"} and set(replies["temperature"]) == {0.0}
    path = tmp_path / "hiv.jsonl"
    count = write_replay_file(replies.to_dict("records"), path, backend="openai")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    # Llama 1.1 (2 supervised + 2 unsupervised), Llama 1.2 (2), Claude 1.1 (2)
    assert count == len(lines) == len(replies) == 8
    texts = {line["response"]["text"] for line in lines}
    assert "I would need the student's answer to evaluate it." in texts  # kept, unparseable
    assert {line["imported_from"] for line in lines} == set(replies["source"])
    # replay: import into an empty cache and read the release's reply back, no key needed
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    assert import_cache(path)["imported"] == 8
    for row in replies.itertuples():
        reply = complete(row.model, row.messages, temperature=row.temperature)
        assert reply.cached and reply.text == row.text and reply.backend == "openai"


def copy_release(tmp_path: Path) -> Path:
    target = tmp_path / "release"
    shutil.copytree(HIV, target)
    return target / "deploy_medical_llm_evaluation"


def test_checkpoint_folders_are_skipped(tmp_path):
    # .ipynb_checkpoints is git-ignored, so the folders are made here, not in fixtures/
    root = copy_release(tmp_path)
    checkpoints = root / "model_answers/results-GPT-score/Llama_cluster/.ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / "GPT-score_Llama_answers_category_1.1_HIV_EQ.json").write_text("{broken")
    (root / "model_answers/raw/.ipynb_checkpoints").mkdir()
    (root / "model_answers/raw/.ipynb_checkpoints/X_answers_category_1.1_HIV_EQ.json").write_text(
        "[]"
    )
    assert len(hivmedqa.load_release(root)["judgments"]) == 15 * 5
    bar = tmp_path / "llmbar"
    shutil.copytree(FIXTURES / "llmbar", bar)
    hidden = bar / "Dataset/LLMBar/Natural/evaluators/JudgeA/Vanilla/.ipynb_checkpoints"
    hidden.mkdir()
    (hidden / "result.json").write_text("{broken")
    assert len(llmbar.load_release(bar)) == 14


def test_hivmedqa_errors_name_file_and_record(tmp_path):
    root = copy_release(tmp_path)
    bad = (
        root
        / "model_answers/results-GPT-score/Claude/GPT-score_Claude_answers_category_1.1_HIV_EQ.json"
    )
    bad.write_text('[{"response": ', encoding="utf-8")
    with pytest.raises(DatasetError, match="invalid JSON") as info:
        hivmedqa.load_release(root)
    assert info.value.file.endswith("GPT-score_Claude_answers_category_1.1_HIV_EQ.json")
    bad.write_text(json.dumps([{"response": "{}"}, "not an object"]), encoding="utf-8")
    with pytest.raises(DatasetError, match="record 1"):
        hivmedqa.load_release(root)
    with pytest.raises(DatasetError, match="not a HIVMedQA release"):
        hivmedqa.load_release(tmp_path / "nowhere")


# --------------------------------------------------------------------------- LLMBar


@pytest.fixture(scope="module")
def verdicts():
    return llmbar.load_release(FIXTURES / "llmbar")


def test_llmbar_two_rows_per_item_and_run(verdicts):
    assert len(verdicts) == (3 + 2 + 2) * 2
    runs = verdicts.groupby(["subset", "judge", "strategy", "item_id"]).size()
    assert (runs == 2).all()
    assert set(verdicts["subset"]) == {"LLMBar/Natural", "LLMBar/Adversarial/Neighbor"}
    assert set(verdicts["strategy"]) == {"Vanilla", "CoT"}  # old_Vanilla is skipped
    assert list(verdicts.columns[:9]) == [
        "subset",
        "item_id",
        "item_index",
        "judge",
        "strategy",
        "order",
        "verdict",
        "label",
        "parse_ok",
    ]


def get(verdicts, subset, judge, strategy, index, order):
    rows = verdicts[
        (verdicts["subset"] == subset)
        & (verdicts["judge"] == judge)
        & (verdicts["strategy"] == strategy)
        & (verdicts["item_index"] == index)
        & (verdicts["order"] == order)
    ]
    assert len(rows) == 1
    return rows.iloc[0]


def test_llmbar_uses_the_last_run_and_keeps_null_as_none(verdicts):
    nat = "LLMBar/Natural"
    assert get(verdicts, nat, "JudgeA", "Vanilla", 0, 0)["verdict"] == 1  # last run, not "2"
    assert get(verdicts, nat, "JudgeA", "Vanilla", 1, 0)["verdict"] == 2
    assert get(verdicts, nat, "JudgeA", "Vanilla", 1, 1)["verdict"] == 1  # flips with order
    row = get(verdicts, nat, "JudgeA", "Vanilla", 2, 1)
    assert row["verdict"] is None and not row["parse_ok"]
    assert row["completion"] == "I cannot decide."
    adv = "LLMBar/Adversarial/Neighbor"
    empty = verdicts[
        (verdicts["subset"] == adv)
        & (verdicts["strategy"] == "CoT")
        & (verdicts["item_index"] == 1)
    ]
    assert list(empty["verdict"]) == [None, None]  # empty results list: no run, no guess
    assert get(verdicts, adv, "JudgeB", "Vanilla", 0, 1)["verdict"] == 1  # int winners
    assert get(verdicts, adv, "JudgeB", "Vanilla", 1, 1)["verdict"] is None  # "3" invalid
    assert verdicts["verdict"].dtype == object


def test_llmbar_flip_rate_from_the_frame(verdicts):
    nat = verdicts[(verdicts["subset"] == "LLMBar/Natural")]
    wide = nat.pivot(index="item_id", columns="order", values="verdict")
    flipped = [a != b for a, b in zip(wide[0], wide[1], strict=True)]
    assert flipped == [False, True, True]  # a None verdict is a value of its own


def test_llmbar_items_and_bad_label(tmp_path):
    items = llmbar.load_items(FIXTURES / "llmbar")
    assert len(items) == 5 and set(items["label"]) == {1, 2}
    root = tmp_path / "Dataset" / "X"
    (root / "evaluators" / "J" / "S").mkdir(parents=True)
    (root / "evaluators" / "J" / "S" / "result.json").write_text(
        json.dumps([{"input": "i", "output_1": "a", "output_2": "b", "label": 3, "results": []}]),
        encoding="utf-8",
    )
    with pytest.raises(DatasetError, match="record 0") as info:
        llmbar.load_release(tmp_path)
    assert info.value.column == "label" and info.value.file.endswith("S/result.json")


# --------------------------------------------------------------------------- UniEval


def test_unieval_long_frame():
    frame = unieval.load_release(FIXTURES / "unieval")
    assert len(frame) == 6 * 6
    assert list(frame.columns) == [
        "item_id",
        "dialogue_id",
        "system_id",
        "dimension",
        "human",
        "predicted",
    ]
    assert (frame.groupby("item_id").size() == 6).all()
    assert set(frame["dialogue_id"]) == {0, 1}
    source = json.loads((FIXTURES / "unieval" / unieval.PREDICTION_FILE).read_text())
    row = frame[(frame["item_id"] == 4) & (frame["dimension"] == "coherence")].iloc[0]
    assert row["human"] == source[4]["scores"]["coherence"]
    assert row["predicted"] == source[4]["predict_scores"]["coherence"]
    assert row["system_id"] == source[4]["system_id"]
    humans_only = unieval.load_release(FIXTURES / "unieval", predictions=False)
    assert humans_only["predicted"].isna().all()


def test_unieval_misaligned_and_bad_scores(tmp_path):
    shutil.copytree(FIXTURES / "unieval", tmp_path / "u")
    pred_path = tmp_path / "u" / unieval.PREDICTION_FILE
    records = json.loads(pred_path.read_text())
    records[2]["system_id"] = "Someone else"
    pred_path.write_text(json.dumps(records))
    with pytest.raises(DatasetError, match="record 2") as info:
        unieval.load_release(tmp_path / "u")
    assert info.value.column == "system_id"
    records[2]["system_id"] = json.loads((tmp_path / "u" / unieval.DATA_FILE).read_text())[2][
        "system_id"
    ]
    records[3]["predict_scores"]["overall"] = "n/a"
    pred_path.write_text(json.dumps(records))
    with pytest.raises(DatasetError, match="not a number") as info:
        unieval.load_release(tmp_path / "u")
    assert info.value.column == "predict_scores.overall"


# --------------------------------------------------------------------------- PandaLM


def test_pandalm_items_and_predictions():
    data = pandalm.load_release(FIXTURES / "pandalm")
    items, preds = data["items"], data["predictions"]
    assert list(items["idx"]) == [0, 1, 2, 3]
    assert list(items["annotator3"]) == [1, 0, 0, 1]
    assert set(preds["judge"]) == {"gpt-3.5-turbo", "pandalm-7b"}
    gpt = preds[preds["judge"] == "gpt-3.5-turbo"].sort_values("idx")
    assert list(gpt["verdict"]) == [1, 0, None, 2]  # the release's "garbage" is not guessed
    assert list(gpt["parse_ok"]) == [True, True, False, True]
    local = preds[preds["judge"] == "pandalm-7b"].sort_values("idx")
    assert list(local["verdict"]) == [1, 2, 0, None]  # read from ``pandalm_result`` (ints)
    assert list(local["reason"])[0].startswith("Response 1")
    assert preds["verdict"].dtype == object
    # defects of the real testset-v1.json: a bare NaN literal and JSON booleans as texts
    assert math.isnan(items.loc[2, "input"]) and items.loc[3, "response1"] is True


def test_pandalm_judge_without_a_readable_verdict_is_an_error(tmp_path):
    """A judge file whose verdicts are all unparsed (or under an unknown field) must fail
    loudly, never become a kappa of 0 (issue 12)."""
    shutil.copytree(FIXTURES / "pandalm", tmp_path / "p")
    path = tmp_path / "p" / "data" / "pandalm-7b-testset-v1.json"
    records = json.loads(path.read_text())
    path.write_text(json.dumps([{"idx": r["idx"], "verdict": r["pandalm_result"]}
                                for r in records]))
    with pytest.raises(DatasetError, match="no verdict field") as info:
        pandalm.load_release(tmp_path / "p")
    assert info.value.file == "data/pandalm-7b-testset-v1.json"
    path.write_text(json.dumps([dict(r, pandalm_result="unclear") for r in records]))
    with pytest.raises(DatasetError, match="all 4 verdicts"):
        pandalm.load_release(tmp_path / "p")


def test_pandalm_bad_annotator_and_duplicate_idx(tmp_path):
    shutil.copytree(FIXTURES / "pandalm", tmp_path / "p")
    path = tmp_path / "p" / pandalm.TESTSET_FILE
    records = json.loads(path.read_text())
    records[1]["annotator2"] = 5
    path.write_text(json.dumps(records))
    with pytest.raises(DatasetError, match="record 1") as info:
        pandalm.load_release(tmp_path / "p")
    assert info.value.column == "annotator2" and info.value.file == pandalm.TESTSET_FILE
    records[1]["annotator2"] = 2
    records[3]["idx"] = 0
    path.write_text(json.dumps(records))
    with pytest.raises(DatasetError, match="repeats"):
        pandalm.load_release(tmp_path / "p" / "data")


# --------------------------------------------------------------------------- JudgeBench


def test_judgebench_pairs_and_verdicts_in_the_original_numbering():
    data = judgebench.load_release(FIXTURES / "judgebench")
    pairs, verdicts = data["pairs"], data["verdicts"]
    assert list(pairs["pair_id"]) == ["p1", "p2", "p3", "p4", "p5"]
    assert list(pairs["category"]) == ["knowledge", "reasoning", "math", "coding", "knowledge"]
    arena = verdicts[verdicts["judge_name"] == "arena_hard"].set_index(["pair_id", "game"])
    assert arena.loc[("p1", 1), "decision"] == "A>B"  # shown swapped, flipped back
    assert arena.loc[("p4", 0), "decision"] == "A=B"  # a tie stays a tie
    assert arena.loc[("p5", 0), "decision"] is None  # a failed call (null judgment)
    assert not arena.loc[("p5", 1), "parse_ok"]  # decision null: unparsed
    assert set(verdicts["judge_model"]) == {"gpt-4o-mini", "org_rm"}


def test_judgebench_accuracy_uses_the_two_game_rule():
    verdicts = judgebench.load_release(FIXTURES / "judgebench")["verdicts"]
    acc = judgebench.accuracy(verdicts).set_index(["judge_name", "category"])
    # arena_hard: p1, p2 right twice; p3 right then wrong (inconsistent: not correct);
    # p4 tie then right (correct); p5 no verdict -> 3 of 5
    assert acc.loc[("arena_hard", "all"), "pct_correct"] == 60.0
    assert acc.loc[("arena_hard", "all"), "n_inconsistent"] == 2
    assert acc.loc[("arena_hard", "all"), "n_unparsed"] == 2
    assert acc.loc[("arena_hard", "math"), "pct_correct"] == 0.0
    assert acc.loc[("arena_hard", "knowledge"), "n"] == 2
    assert acc.loc[("reward_model", "all"), "pct_correct"] == 80.0


def test_judgebench_bad_lines_name_file_and_line(tmp_path):
    shutil.copytree(FIXTURES / "judgebench", tmp_path / "jb")
    (out,) = [p for p in (tmp_path / "jb" / "outputs").iterdir() if "arena_hard" in p.name]
    lines = out.read_text(encoding="utf-8").splitlines()
    out.write_text("\n".join([lines[0], lines[0]]) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 2: pair_id p5 repeats line 1") as info:
        judgebench.load_release(tmp_path / "jb")
    assert info.value.file.startswith("outputs/dataset=judgebench")
    out.write_text(lines[0][:-5] + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1: invalid JSON"):
        judgebench.load_release(tmp_path / "jb")
    with pytest.raises(DatasetError, match="not a JudgeBench checkout"):
        judgebench.load_release(tmp_path)


def test_hivmedqa_f1_raw_missing_column_is_named(tmp_path):
    shutil.copytree(HIV, tmp_path / "r")
    root = tmp_path / "r" / "deploy_medical_llm_evaluation"
    assert hivmedqa.load_f1(tmp_path / "r") is None  # no f1_raw.csv: no release F1
    (root / hivmedqa.F1_FILE).write_text(
        ",nlp_model,model,category_id,iteration_number,question_index\n"
        "0,en_core_sci_lg,Claude,1,1,0\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="synonyms_lemmatized_precision_dict") as info:
        hivmedqa.load_f1(tmp_path / "r")
    assert info.value.file == hivmedqa.F1_FILE
