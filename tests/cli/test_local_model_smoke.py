"""``make real-local``'s smoke run without the real model: the same steps against
``workbench sim-server`` (an OpenAI-compatible server, reached through the environment as
the local model is). Checks the report's fields and the progress lines; the real run is
``make real-local``."""

from __future__ import annotations

import json
import math

import pytest

from workbench.cli import local_model as lm
from workbench.cli.local_model import study_runs

MODEL = "openai/sim-judge-a"


@pytest.fixture
def served(sim_server_factory, tmp_path, monkeypatch):
    url = sim_server_factory(latency_ms=300)
    for key, value in lm.local_environment(url).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "run"))  # as run_notebook sets it
    monkeypatch.setenv("WORKBENCH_MEMO", "0")
    return url


def test_the_seed_studies_and_x1_run_small_on_the_local_model():
    runs = study_runs(MODEL)
    assert set(runs) == set(lm.STUDY_STEPS) == {"s1_judge_methods", "s2_summarize_then_judge",
                                                 "s3_hivmedqa", "s4_report_rubric",
                                                 "s5_gist_detail", "x1_bias_probes"}
    assert runs["s3_hivmedqa"]["judge_model"] == MODEL
    for name in set(runs) - {"s3_hivmedqa"}:  # the real model judges in every study
        assert runs[name]["judge_models"] == [MODEL], name
    assert runs["s4_report_rubric"]["report_ids"]
    # the simulated run beside it: the same design with the sim judge in its place
    sim = lm.with_judge(runs["s4_report_rubric"], MODEL, lm.SIM_JUDGE)
    assert sim["judge_models"] == [lm.SIM_JUDGE] and sim["shrink_judge"] == lm.SIM_JUDGE
    assert lm.local_environment("http://127.0.0.1:1/v1")["WORKBENCH_STRUCTURED"] == "json_object"


@pytest.mark.slow
def test_smoke_reports_calls_parse_failures_spread_and_seconds_per_call(served, tmp_path, capsys):
    run = tmp_path / "run"
    report = lm.smoke(run, MODEL, steps=["score_probe", "s3_hivmedqa", "s4_report_rubric"],
                      interval=0.5)
    out = capsys.readouterr().out
    for i, step in enumerate(("score_probe", "s3_hivmedqa", "s4_report_rubric"), 1):
        assert f"[{i}/3] {step}: started" in out and f"[{i}/3] {step}: ok in" in out
    assert "calls answered by openai/sim-judge-a" in out  # progress while a step runs
    for step in ("s3_hivmedqa", "s4_report_rubric"):
        entry = report[step]
        assert entry["timing"]["status"] == "ok" and entry["calls"] > 0
        assert entry["judge_rows"] > 0 and entry["parse_failures"] == 0
        assert entry["score"]["n"] > 0 and entry["score"]["sd"] >= 0
        assert entry["seconds_per_call"] is not None and entry["seconds_per_call"] > 0
        assert entry["seconds_per_call_from"]
        assert (run / "results" / step / "headline.json").exists()
        assert entry["parse_share"] == 1.0 and entry["parse_share_from"].startswith("headline")
        assert "sim/judge-a" in str(entry["headline_simulated"]["judges" if step == "s4_report_rubric"
                                                                else "judge_model"])
        assert entry["beside"]["parse_share"] == {"real": 1.0, "simulated": 1.0}
    assert report["total"]["calls"] == sum(report[s]["calls"] for s in
                                           ("score_probe", "s3_hivmedqa", "s4_report_rubric"))
    probe = report["score_probe"]
    assert probe["calls"] == 12 and probe["seconds_per_call"] > 0  # latency of fresh calls
    # the sim-server does not follow the schema: every reply is a recorded parse failure
    assert probe["parse_failures"] == 12 and probe["parse_failure_rate"] == 1.0
    json.dumps(report)  # report.json is plain JSON


@pytest.mark.slow
def test_a_failed_step_is_recorded_and_the_others_still_run(served, tmp_path, monkeypatch):
    def broken(model=MODEL):
        raise RuntimeError("the server went away")

    monkeypatch.setattr(lm, "score_probe", broken)
    partial = tmp_path / "report.json"
    report = lm.smoke(tmp_path / "run", MODEL, steps=["s4_report_rubric", "score_probe"],
                      interval=60, report_path=partial)
    assert "s4_report_rubric" in json.loads(partial.read_text())  # kept step by step
    assert json.loads(partial.read_text())["score_probe"]["timing"]["status"] == "failed"
    with pytest.raises(ValueError, match="unknown smoke steps"):
        lm.smoke(tmp_path / "run", MODEL, steps=["s9"])
    assert report["score_probe"]["timing"]["status"] == "failed"
    assert "the server went away" in report["score_probe"]["timing"]["error"]
    assert report["s4_report_rubric"]["timing"]["status"] == "ok"
    assert not math.isnan(report["s4_report_rubric"]["score"]["sd"])


def test_replies_since_shows_what_a_model_answered_when_its_study_stopped(tmp_path, monkeypatch):
    from workbench.llm import complete

    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    question = [{"role": "user", "content": "<question>\nWhat is HIV?\n</question>"}]
    reply = complete("sim/answer-strong", question)
    seen = lm.replies_since("sim/answer-strong", "2000-01-01T00:00:00")
    assert seen["replies"] == 1 and seen["sample"] == [reply.text[:300]]
    assert seen["replies_without_json"] == (0 if "{" in reply.text else 1)
    assert lm.replies_since("sim/answer-strong", "2999-01-01T00:00:00")["replies"] == 0


def test_the_server_gets_a_context_long_enough_for_s5(monkeypatch, tmp_path):
    """S5's Japanese prompts are about 2800 tokens: llama-cpp-python's default context
    (2048) answered them with HTTP 400."""
    started = []

    class Exited:
        returncode = 1

        def poll(self):
            return 1

    def popen(command, **kwargs):
        started.append(command)
        return Exited()

    monkeypatch.setattr(lm, "find_gguf", lambda python: tmp_path / "m.gguf")
    monkeypatch.setattr(lm.subprocess, "Popen", popen)
    monkeypatch.setattr(lm, "stop_process", lambda process, timeout: None)
    monkeypatch.setattr(lm, "reachable", lambda api_base, timeout=2.0: False)
    with pytest.raises(RuntimeError, match="exited"), lm.serve("python", port=1):
        pass
    (command,) = started
    assert command[command.index("--n_ctx") + 1] == str(lm.CONTEXT_TOKENS) == "8192"


def test_the_table_of_a_report_puts_real_and_simulated_numbers_side_by_side(tmp_path, capsys):
    report = {"s3_hivmedqa": {"timing": {"status": "ok", "wall_s": 60.0}, "calls": 4,
                              "seconds_per_call": 15.0, "parse_share": 1.0,
                              "headline": {"mean_score": {"openai/smollm2": 2.5}, "run": {"x": 1}},
                              "headline_simulated": {"mean_score": {"sim/judge-a": 4.0}}},
              "total": {"steps": 1, "ok": 1, "wall_s": 60.0, "calls": 4}}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    assert lm.main(["--table", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "s3_hivmedqa: ok in 60.0 s, 4 calls, 15.0 s per call, parse share 1.0"
    assert "    mean_score.<judge>: 2.5 (simulated: 4.0)" in out and not any("run." in o for o in out)
    assert out[-1].startswith("total: ")
