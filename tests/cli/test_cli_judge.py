"""Tests of ``workbench judge`` (workbench.cli.judge): your own CSV, judged, as CSV."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.judges import RESULT_COLUMNS

ROWS = {
    "item_id": ["q1", "q2", "q3"],
    "question": ["What is 2 + 2?", "What is the capital of France?", "Which planet is largest?"],
    "response": ["2 + 2 is 4.", "Paris is the capital of France.", "Mars is the largest planet."],
}


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "my.csv"
    pd.DataFrame(ROWS).to_csv(path, index=False)
    return path


def _judge(*args: str):
    return CliRunner().invoke(app, ["judge", *args])


def test_judge_writes_one_row_per_call_and_says_the_judge_is_simulated(data, tmp_path):
    out = tmp_path / "scores.csv"
    result = _judge(str(data), "--protocol", "holistic_simple", "--judge", "sim/judge-a",
                    "--trials", "2", "--temperature", "1", "--out", str(out))
    assert result.exit_code == 0, result.output
    scores = pd.read_csv(out, dtype={"item_id": str})
    assert list(scores.columns) == list(RESULT_COLUMNS)
    assert len(scores) == 3 * 2 and sorted(scores["trial"].unique()) == [0, 1]
    assert set(scores["backend"]) == {"sim"} and scores["parse_ok"].all()
    assert set(scores["item_id"]) == set(ROWS["item_id"])
    assert (scores["temperature"] == 1.0).all()
    assert "3 rows of my.csv judged by sim/judge-a (holistic_simple, 2 trial(s)): 6 scores" in result.stdout
    assert "simulated judge" in result.stdout

    again = _judge(str(data), "--judge", "sim/judge-a", "--trials", "2", "--temperature", "1",
                   "--no-progress")  # default protocol and output file; every call cached
    assert again.exit_code == 0, again.output
    assert "6 from the cache" in again.stdout and (tmp_path / "my_scores.csv").exists()


def test_a_missing_column_is_named_with_the_file_before_any_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame(ROWS).rename(columns={"response": "answer"}).to_csv("my.csv", index=False)
    result = _judge("my.csv", "--judge", "sim/judge-a")
    assert result.exit_code == 2
    assert ("my.csv: column 'response' is required for protocol 'holistic_simple' "
            "(its columns: item_id, question, answer)") in result.output
    assert not (tmp_path / "my_scores.csv").exists()


def test_an_empty_required_field_is_named_with_its_row(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = dict(ROWS, response=["4", "", "Jupiter"])
    pd.DataFrame(rows).to_csv("my.csv", index=False)
    result = _judge("my.csv", "--judge", "sim/judge-a")
    assert result.exit_code == 2
    assert "my.csv line 3 (item_id 'q2'): field 'response' is empty" in result.output


def test_every_problem_is_listed_with_its_line_before_any_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my.csv").write_text(
        "item_id,question,response\n"
        "q1,What is 2 + 2?,4\n"
        "q2,Capital of France?,\n"          # line 3: empty response
        "\n"                                 # a blank line pandas skips
        "q3,,Jupiter\n"                      # line 5: empty question
        'q4,"A question\nover two lines",\n'  # lines 6-7: empty response
        "q5,Largest planet?,Jupiter\n",
        encoding="utf-8")
    result = _judge("my.csv", "--judge", "sim/judge-a")
    assert result.exit_code == 2
    lines = [ln.strip() for ln in result.output.splitlines()]
    assert lines[0] == "error: 3 problems, nothing judged:"
    assert lines[1].startswith("my.csv line 3 (item_id 'q2'): field 'response' is empty")
    assert lines[2].startswith("my.csv line 5 (item_id 'q3'): field 'question' is empty")
    assert lines[3].startswith("my.csv line 6 (item_id 'q4'): field 'response' is empty")
    assert not (tmp_path / "my_scores.csv").exists()


def test_a_repeated_item_id_is_refused_unless_a_column_tells_the_answers_apart(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = {"item_id": ["q1", "q2", "q1", "q2"], "question": ["2 + 2?", "Capital?", "2 + 2?", "Capital?"],
            "response": ["4", "Paris", "five", "Paris"]}
    pd.DataFrame(rows).to_csv("my.csv", index=False)
    result = _judge("my.csv", "--judge", "sim/judge-a")
    assert result.exit_code == 2
    assert ("my.csv line 4 (item_id 'q1'): item_id 'q1' is already on line 2 (with a different "
            "response)") in result.output
    assert "my.csv line 5 (item_id 'q2'): item_id 'q2' is already on line 3 (as an exact copy)" in result.output
    pd.DataFrame(dict(rows, answer_model=["m1", "m1", "m2", "m2"])).to_csv("my.csv", index=False)
    result = _judge("my.csv", "--judge", "sim/judge-a", "--no-progress")
    assert result.exit_code == 0, result.output
    scores = pd.read_csv("my_scores.csv")
    assert len(scores.drop_duplicates(["item_id", "answer_model"])) == 4


def test_record_lines_follow_quoted_line_breaks_and_blank_lines(tmp_path):
    from workbench.cli.judge import record_lines

    path = tmp_path / "x.csv"
    path.write_text('a,b\n1,"x\ny"\n\n2,z\n', encoding="utf-8")
    assert record_lines(path) == [2, 5]
    assert len(pd.read_csv(path)) == 2


def test_geval_needs_the_reference_unless_told_not_to_show_it(data):
    result = _judge(str(data), "--protocol", "geval", "--judge", "sim/judge-a")
    assert result.exit_code == 2
    assert "column 'reference' is required for protocol 'geval' with use_reference=True" in result.output
    result = _judge(str(data), "--protocol", "geval", "--judge", "sim/judge-a", "--no-reference",
                    "--no-progress")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--protocol", "summarize_then"], "--protocol summarize_then needs --inner"),
        (["--inner", "geval"], "--inner goes with --protocol summarize_then"),
        (["--protocol", "holistc"], "JudgeSpec.protocol: 'holistc' is not one of"),
        (["--cache-mode", "sometimes"], "sometimes"),
    ],
)
def test_bad_options_are_errors_before_any_call(data, args, message):
    result = _judge(str(data), "--judge", "sim/judge-a", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_summarize_then_wraps_the_inner_protocol(data, tmp_path):
    out = tmp_path / "s.csv"
    result = _judge(str(data), "--protocol", "summarize_then", "--inner", "holistic_simple",
                    "--judge", "sim/judge-a", "--out", str(out), "--no-progress")
    assert result.exit_code == 0, result.output
    scores = pd.read_csv(out)
    assert set(scores["protocol"]) == {"summarize_then"} and len(scores) == 3
    assert set(scores["inner_protocol"]) == {"holistic_simple"}


def test_an_unreadable_file_is_named(tmp_path):
    result = _judge(str(tmp_path / "nope.csv"), "--judge", "sim/judge-a")
    assert result.exit_code == 2
    assert "nope.csv: cannot read the data CSV" in result.output


def test_a_judge_without_a_price_shows_its_cost_as_unknown(data, sim_server, monkeypatch, tmp_path):
    # an OpenAI-compatible server whose model litellm cannot price (like a local model);
    # taken for a real server (a sim-server's models are priced 0 wherever its URL comes from)
    from workbench.llm import _providers

    monkeypatch.setattr(_providers, "is_sim_server", lambda model, params: False)
    monkeypatch.setenv("OPENAI_API_BASE", sim_server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    result = _judge(str(data), "--judge", "openai/sim-judge-a", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "cost unknown (no price for openai/sim-judge-a)" in result.stdout
    assert "$0.0000" not in result.stdout


def test_a_judge_on_a_sim_server_costs_nothing(data, sim_server, monkeypatch, tmp_path):
    # a sim-server's replies are simulated (backend "sim"): priced 0, not "cost unknown"
    monkeypatch.setenv("OPENAI_API_BASE", sim_server)
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    result = _judge(str(data), "--judge", "openai/sim-judge-a", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "$0.0000" in result.stdout and "cost unknown" not in result.stdout
