"""Bring-your-own judge tables: loaders, code mapping, validators that list every bad row."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.datasets import (
    load_pairwise,
    load_pointwise,
    load_table,
    validate_pairwise,
    validate_pointwise,
)
from workbench.errors import DatasetError


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_pairwise_from_per_order_files_and_an_items_table(tmp_path):
    # three files aligned line by line, as a leaderboard release ships them
    _jsonl(tmp_path / "items.jsonl", [{"scenario": "s1", "label": 0}, {"scenario": "s2", "label": 2},
                                      {"scenario": "s1", "label": 1}])
    _jsonl(tmp_path / "o0.jsonl", [{"output": 0}, {"output": 2}, {"output": 0}])
    _jsonl(tmp_path / "o1.jsonl", [{"output": 1}, {"output": 2}, {"output": 0}])
    t = load_pairwise({0: tmp_path / "o0.jsonl", 1: tmp_path / "o1.jsonl"},
                      items=tmp_path / "items.jsonl",
                      columns={"verdict": "output", "group": "scenario"},
                      verdicts={0: "A", 1: "B", 2: "tie"}, second_order="positional",
                      constants={"judge": "j"}, recode={"group": {"s1": "G1", "s2": "G2"}})
    got = t.sort_values(["item_id", "order"])[["item_id", "order", "verdict", "label", "group"]]
    assert got.values.tolist() == [
        ["1", 0, "A", "A", "G1"], ["1", 1, "A", "A", "G1"],       # order-1 "B" mapped back
        ["2", 0, "tie", "tie", "G2"], ["2", 1, "tie", "tie", "G2"],
        ["3", 0, "A", "B", "G1"], ["3", 1, "B", "B", "G1"]]
    assert t.attrs["workbench_table"] == "pairwise"
    assert set(t["source_file"]) == {str(tmp_path / "o0.jsonl"), str(tmp_path / "o1.jsonl")}


def test_pairwise_csv_with_string_codes_and_original_numbering(tmp_path):
    (tmp_path / "v.csv").write_text("id,pos,decision,gold,who\n"
                                    "p1,AB,A>B,A>B,m\np1,BA,A>B,A>B,m\np2,AB,A=B,B>A,m\n",
                                    encoding="utf-8")
    codes = {"A>B": "A", "B>A": "B", "A=B": "tie"}
    # orders given as text are recoded to 0/1 with recode=
    t = load_pairwise(tmp_path / "v.csv", columns={"item_id": "id", "order": "pos",
                      "verdict": "decision", "label": "gold", "judge": "who"},
                      verdicts=codes, recode={"order": {"AB": 0, "BA": 1}},
                      second_order="original")
    assert t["verdict"].tolist() == ["A", "A", "tie"] and t["order"].tolist() == [0, 1, 0]
    assert t["source_line"].tolist() == [2, 3, 4]  # line 1 is the header


def test_validator_lists_every_bad_row_with_line_field_and_why(tmp_path):
    (tmp_path / "bad.csv").write_text(
        "item_id,order,judge,annotator,verdict,label\n"
        "1,0,j,,A,A\n"        # line 2: fine
        "1,0,j,,B,A\n"        # line 3: duplicate of line 2
        "2,0,j,,C,A\n"        # line 4: unknown verdict
        "3,2,j,,A,A\n"        # line 5: order 2
        ",0,j,,A,A\n"         # line 6: empty item
        "4,0,j,ann,A,A\n"     # line 7: judge and annotator
        "5,0,j,,A,B\n5,0,,ann,A,A\n",  # lines 8, 9: fine rows, but labels differ in item 5
        encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_pairwise(tmp_path / "bad.csv")
    problems = info.value.problems
    found = {(int(r.line), r.field) for r in problems.itertuples()}
    assert {(3, "item_id+order+judge+annotator"), (4, "verdict"), (5, "order"), (6, "item_id"),
            (7, "judge"), (8, "label"), (9, "label")} <= found
    assert (2, "verdict") not in found
    message = str(info.value)
    assert "line 4" in message and "'C' is not one of A, B, tie" in message
    assert "2 rows in 1 groups share their (item_id, order, judge, annotator), e.g. lines 2, 3" \
        in message


def test_a_second_order_must_say_whether_it_is_mapped_back():
    t = pd.DataFrame({"item_id": [1, 1], "order": [0, 1], "judge": "j", "verdict": ["A", "B"]})
    with pytest.raises(DatasetError, match="second_order"):
        validate_pairwise(t)
    assert validate_pairwise(t, second_order="original")["verdict"].tolist() == ["A", "B"]
    assert validate_pairwise(t, second_order="positional")["verdict"].tolist() == ["A", "A"]
    # a single order needs no declaration
    assert len(validate_pairwise(t.iloc[:1])) == 1


def test_unmapped_codes_and_missing_columns_are_named():
    raw = pd.DataFrame({"pair": [1, 2], "out": [0, 3]})
    with pytest.raises(DatasetError) as info:
        load_pairwise(raw, columns={"item_id": "pair", "verdict": "out"},
                      verdicts={0: "A", 1: "B"}, constants={"judge": "j"})
    assert info.value.problems["line"].tolist() == [2]
    assert info.value.problems["field"].tolist() == ["verdict"]
    with pytest.raises(DatasetError, match="no column 'nope'"):
        load_pairwise(raw, columns={"verdict": "nope"})
    with pytest.raises(DatasetError, match="no judge column"):
        load_pairwise(raw, columns={"item_id": "pair", "verdict": "out"},
                      verdicts={0: "A", 3: "B"})


def test_unparsed_verdicts_are_kept_as_missing():
    raw = pd.DataFrame({"item_id": [1, 2], "verdict": ["A", None], "judge": "j"})
    t = validate_pairwise(raw)
    assert len(t) == 2 and t["verdict"].isna().tolist() == [False, True]


def test_pointwise_wide_metrics_and_list_cells(tmp_path):
    # one row per system, each cell the list of its per-story values (as some releases ship)
    (tmp_path / "scores.csv").write_text(
        'Model,Relevance,BLEU,chrF\n'
        'a,"[1, 2, 3]","[0.1, 0.2, 0.3]","[5, 4, 3]"\n'
        'b,"[2, 2, 5]","[0.3, 0.1, 0.9]","[1, 1, 1]"\n', encoding="utf-8")
    t = load_pointwise(tmp_path / "scores.csv", columns={"system": "Model", "label": "Relevance"},
                       judges=["BLEU", "chrF"], explode=True)
    assert len(t) == 12 and set(t["judge"]) == {"BLEU", "chrF"}
    bleu_b = t[(t["judge"] == "BLEU") & (t["system"] == "b")].sort_values("item_id")
    assert bleu_b["score"].tolist() == [0.3, 0.1, 0.9] and bleu_b["label"].tolist() == [2, 2, 5]
    assert bleu_b["item_id"].tolist() == ["1", "2", "3"]
    assert (bleu_b["source_line"] == 3).all()


def test_pointwise_annotator_columns_and_validation_errors():
    raw = pd.DataFrame({"story": [1, 2], "sys": "s", "r1": [3, 4], "r2": [2, None],
                        "judge_score": [3.5, "x"]})
    t = load_pointwise(raw.drop(columns="judge_score"), columns={"item_id": "story",
                       "system": "sys"}, annotators=["r1"])
    assert t["annotator"].tolist() == ["r1", "r1"] and t["score"].tolist() == [3.0, 4.0]
    with pytest.raises(DatasetError) as info:
        load_pointwise(raw, columns={"item_id": "story", "system": "sys"},
                       annotators={"r1": "ann1", "r2": "ann2"}, judges={"judge_score": "m"})
    fields = {(int(r.line), r.field) for r in info.value.problems.itertuples()}
    assert (2, "score") in fields  # ann2's empty score on row 2, judge 'x' on row 2
    assert len(info.value.problems) == 2


def test_pointwise_duplicates_are_refused():
    raw = pd.DataFrame({"item_id": [1, 1], "system": "s", "judge": "m", "score": [1, 2]})
    with pytest.raises(DatasetError, match="2 rows in 1 groups share"):
        validate_pointwise(raw)


def test_problems_beyond_thirty_are_counted_not_shown():
    raw = pd.DataFrame({"item_id": range(40), "judge": "m", "score": ["bad"] * 40})
    with pytest.raises(DatasetError) as info:
        validate_pointwise(raw)
    assert len(info.value.problems) == 40 and "and 10 more" in str(info.value)
    assert np.array_equal(info.value.problems["line"].to_numpy(), np.arange(1, 41))


# --- issue 31: hostile tables and what releases look like ----------------------------------

def test_duplicates_are_summarised_and_the_telling_column_named():
    # 5,000 rows of 1,000 items x 5 systems, loaded without the system column mapped
    raw = pd.DataFrame({"item_id": np.repeat(np.arange(1000), 5), "model": np.tile(list("abcde"),
                        1000), "judge": "m", "score": 1.0, "label": np.arange(5000) % 7})
    with pytest.raises(DatasetError) as info:
        validate_pointwise(raw)
    message = str(info.value)
    assert len(info.value.problems) == 1 and len(message.splitlines()) == 2
    assert "5000 rows in 1000 groups" in message and "e.g. lines 1, 2, 3 ..." in message
    assert "column 'model' tells them apart" in message
    assert validate_pointwise(raw.rename(columns={"model": "system"}))["system"].nunique() == 5


@pytest.mark.parametrize("value, why", [("inf", "not a finite number"),
                                        ("1e999", "not a finite number"),
                                        ("-Infinity", "not a finite number")])
def test_non_finite_scores_are_refused_with_file_line_and_field(tmp_path, value, why):
    (tmp_path / "s.csv").write_text(f"item_id,judge,score\n1,m,0.5\n2,m,{value}\n",
                                    encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_pointwise(tmp_path / "s.csv")
    assert info.value.problems[["line", "field"]].values.tolist() == [[3, "score"]]
    assert f"s.csv line 3, 'score': {value!r} is {why}" in str(info.value)


def test_json_infinity_and_booleans_are_not_scores(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"item_id": 1, "judge": "m", "score": 1e999}\n'
                                      '{"item_id": 2, "judge": "m", "score": true}\n'
                                      '{"item_id": 3, "judge": "m", "score": 2}\n',
                                      encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_pointwise(tmp_path / "s.jsonl")
    assert info.value.problems[["line", "field"]].values.tolist() == [[1, "score"],
                                                                      [2, "score"]]
    assert "True is true/false, not a number" in str(info.value)


@pytest.mark.parametrize("encoding", ["latin-1", "shift_jis"])
def test_a_file_in_another_encoding_is_named_and_read_with_encoding(tmp_path, encoding):
    note = "caf\u00e9" if encoding == "latin-1" else "\u65e5\u672c\u8a9e"
    text = f"item_id,judge,score,note\n1,m,0.5,plain\n2,m,0.7,{note}\n"
    path = tmp_path / "s.csv"
    path.write_bytes(text.encode(encoding))
    with pytest.raises(DatasetError) as info:
        load_pointwise(path)
    assert str(info.value).startswith(f"file {path}: line 3: not UTF-8 text")
    assert "encoding=" in str(info.value)
    table = load_pointwise(path, encoding=encoding)
    assert table["note"].tolist()[1] == note
    assert load_table(path, encoding=encoding)["score"].tolist() == [0.5, 0.7]


def test_a_directory_deep_json_and_clashing_columns_are_clear_errors(tmp_path):
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(DatasetError, match="is a directory"):
        load_pointwise(tmp_path / "d.csv")
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000, encoding="utf-8")
    with pytest.raises(DatasetError, match="nested too deeply"):
        load_pointwise(tmp_path / "deep.json")
    (tmp_path / "sp.csv").write_text("item_id,score, score\n1,2,3\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"two columns named 'score' \(after trimming"):
        load_pointwise(tmp_path / "sp.csv", constants={"judge": "m"})
    (tmp_path / "two.csv").write_text("item_id,judge,score,score\n1,m,2,3\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1: two columns named 'score': rename one"):
        load_pointwise(tmp_path / "two.csv")
    (tmp_path / "two.jsonl").write_text('{"item_id": 1, "judge": "m", "score": 2, "score": 3}\n',
                                        encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1: invalid JSON: the key 'score' appears twice"):
        load_pointwise(tmp_path / "two.jsonl")


def test_free_text_verdicts_by_a_declared_pattern():
    raw = pd.DataFrame({"id": [1, 2, 3, 4, 5],
                        "reply": ["[[A]]", "I prefer [[B]].", "Tie: [[C]]", "Both are good",
                                  "The answer is A"]})
    t = load_pairwise(raw, columns={"item_id": "id", "verdict": "reply"},
                      pattern=r"\[\[(A|B|C)\]\]", verdicts={"A": "A", "B": "B", "C": "tie"},
                      constants={"judge": "j"})
    assert t["verdict"].tolist() == ["A", "B", "tie", None, None]
    summaries = pd.DataFrame({"id": [1, 2, 3, 4],
                              "reply": ["A: Summary #1 is more consistent.",
                                        "B: Summary #2 is more consistent.", "Output (a)",
                                        "Neither"]})
    t = load_pairwise(summaries, columns={"item_id": "id", "verdict": "reply"},
                      pattern={"A": r"^A:|Output \(a\)", "B": r"^B:|Output \(b\)"},
                      constants={"judge": "j"})
    assert t["verdict"].tolist() == ["A", "B", "A", None]


def test_an_item_key_of_several_columns_and_several_files(tmp_path):
    for k, system in enumerate(["x", "y"]):
        (tmp_path / f"{system}.csv").write_text(
            "story,model,metric\n" + "".join(f"{s},{system},{s + k}\n" for s in (1, 2)),
            encoding="utf-8")
    t = load_pointwise([tmp_path / "x.csv", tmp_path / "y.csv"],
                       columns={"item_id": ["story", "model"], "system": "model",
                                "score": "metric"}, constants={"judge": "m"})
    assert t["item_id"].tolist() == ["1 | x", "2 | x", "1 | y", "2 | y"]
    assert t["system"].tolist() == ["x", "x", "y", "y"]
    assert t["source_file"].tolist() == [str(tmp_path / "x.csv")] * 2 + [str(tmp_path / "y.csv")] * 2
    assert t["source_line"].tolist() == [2, 3, 2, 3]


def test_a_nested_release_by_its_path_and_a_path_that_does_not_fit(tmp_path):
    release = [{"id": "s1", "outputs": [{"model": "a", "scores": {"coh": 3, "flu": 4}},
                                        {"model": "b", "scores": {"coh": 1, "flu": 2}}]},
               {"id": "s2", "outputs": [{"model": "a", "scores": {"coh": 5, "flu": 5}}]}]
    (tmp_path / "r.json").write_text(json.dumps(release), encoding="utf-8")
    t = load_pointwise(tmp_path / "r.json", nested="[].outputs.[].scores.{dimension}",
                       columns={"item_id": "id", "system": "model"},
                       constants={"annotator": "people"})
    assert t[["item_id", "system", "dimension", "score"]].values.tolist() == [
        ["s1", "a", "coh", 3.0], ["s1", "a", "flu", 4.0], ["s1", "b", "coh", 1.0],
        ["s1", "b", "flu", 2.0], ["s2", "a", "coh", 5.0], ["s2", "a", "flu", 5.0]]
    with pytest.raises(DatasetError) as info:
        load_pointwise(tmp_path / "r.json", nested="[].output.[].scores.{dimension}")
    assert str(info.value) == (f"file {tmp_path / 'r.json'}: $[1]: no field 'output' "
                               "(found ['id', 'outputs'])")
    with pytest.raises(DatasetError, match="'outputs' holds nested JSON: give the path"):
        load_pointwise(tmp_path / "r.json")  # not a list of flat objects
