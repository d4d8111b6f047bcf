"""Every ``workbench`` command answers a user's mistake in one line, never a traceback.

The commands are enumerated from the typer app: a new command fails
:func:`test_every_command_has_bad_input_cases` until its cases are added to ``BAD``.
Each case must fail before any work starts (no kernel, server or benchmark: a guard
turns reaching one into a test failure), exit non-zero, and print an ``error:`` line
(or click's usage error for a malformed command line) and no traceback.
"""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from workbench.cli import app

#: Bad command lines per command; ``{name}`` is a file of :func:`files`.
BAD: dict[str, list[list[str]]] = {
    "judge": [
        ["{missing}", "--judge", "sim/judge-a"],
        ["{no_item_id}", "--judge", "sim/judge-a"],
        ["{items}", "--judge", "sim/no-such-judge"],
        ["{items}", "--judge", "no-such-provider/model"],
        ["{items}", "--judge", "sim/judge-a", "--protocol", "no-such-protocol"],
        ["{items}", "--judge", "sim/judge-a", "--protocol", "checklist", "--rubric", "{missing}"],
        ["{items}", "--judge", "sim/judge-a", "--protocol", "checklist", "--rubric", "{garbage}"],
        ["{items}", "--judge", "sim/judge-a", "--cache-mode", "sometimes"],
        ["{items}", "--judge", "sim/judge-a", "--trials", "0"],
        ["{folder}", "--judge", "sim/judge-a"],
        ["{items}", "--judge", "sim/judge-a", "--out", "{missing}/scores.csv"],
        ["{items}", "--judge", "sim/judge-a", "--out", "{folder}"],
        ["{garbage}", "--judge", "sim/judge-a"],
    ],
    "qualify": [
        ["{missing}"],
        ["{folder}"],
        ["{garbage}"],
        ["{items}", "--kind", "sideways"],
        ["{items}", "--columns", "verdict: ["],
        ["{items}", "--spec", "{missing}"],
    ],
    "run": [["s9"], ["s1", "-y", "no_such_parameter: 1"], ["s1", "-y", "trials: ["],
            ["s1", "-f", "{missing}"], ["s1", "-y", "trials: many"]],
    "run-all": [["--only", "s9"], ["-y", "trials: ["], ["-f", "{missing}"]],
    "params": [["s9"], ["{missing}"]],
    "store-outputs": [["s9"]],
    "runs": [["--no-such-option"]],
    "runs list": [["--no-such-option"]],
    "runs compare": [["no-such-run-a", "no-such-run-b"]],
    "cache stats": [["--dir", "{garbage}"]],
    "cache export": [["{folder}"], ["{out}", "--dir", "{garbage}"]],
    "cache import": [["{missing}"], ["{garbage}"], ["{folder}"]],
    "cache explain": [[], ["--request", "{missing}"], ["--request", "{garbage}"]],
    "cache check": [["--dir", "{garbage}"]],
    "cache repair": [["--dir", "{missing}"], ["--dir", "{garbage}"]],
    "cache clear": [[], ["--dir", "{garbage}", "--yes"]],
    "sim-server": [["--mimic", "nope"], ["--latency-ms", "-1"], ["--batch-final", "nope"],
                   ["--server-error-rate", "2"], ["--port", "70000"]],
    "bench llm": [["--n-server", "0"], ["--concurrency", "0"], ["--n-replay", "-5"],
                  ["--latency-ms", "-1"]],
    "bench quota": [["--client", "nope"], ["--quota", "nope"], ["--seconds", "0"]],
    "bench run-all": [["--only", "s9"], ["--keep", "{folder}"]],
    "bench labels": [["--n-studies", "1"], ["--budget", "0"]],
    "bench scale": [["--calls", "0"], ["--calls", "many"]],
}


def leaf_commands(command, path: tuple[str, ...] = ()) -> dict:
    """Every command a user can run, by its words (``"cache stats"``), groups included
    when they run on their own (``runs``)."""
    out = {}
    if hasattr(command, "commands"):  # a group
        if path and command.invoke_without_command:
            out[" ".join(path)] = command
        for name, sub in command.commands.items():
            out.update(leaf_commands(sub, (*path, name)))
    else:
        out[" ".join(path)] = command
    return out


COMMANDS = leaf_commands(typer.main.get_command(app))


@pytest.fixture
def files(tmp_path, monkeypatch):
    """Bad (and one good) inputs; the working folder is a new empty one."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "outputs"))
    (tmp_path / "items.csv").write_text("item_id,question,response\nq1,2+2?,4\n", encoding="utf-8")
    (tmp_path / "no_item_id.csv").write_text("question,response\n2+2?,4\n", encoding="utf-8")
    (tmp_path / "garbage.bin").write_bytes(b"\x00\xff\xfe not a table, a store or YAML {[\n" * 3)
    (tmp_path / "folder").mkdir()
    return {"missing": str(tmp_path / "missing.csv"), "items": str(tmp_path / "items.csv"),
            "no_item_id": str(tmp_path / "no_item_id.csv"), "garbage": str(tmp_path / "garbage.bin"),
            "folder": str(tmp_path / "folder"), "out": str(tmp_path / "out.jsonl")}


class WorkStarted(AssertionError):
    """Raised by the guards: a bad input reached a kernel, a server or a benchmark."""


@pytest.fixture
def no_work(monkeypatch):
    """Make kernels, servers and benchmarks fail the test if a bad input reaches them."""
    import jupyter_client.manager
    import papermill

    import workbench.cli.bench
    import workbench.cli.bench_quota
    import workbench.sim.server

    def refuse(*args, **kwargs):
        raise WorkStarted("work started on bad input")

    monkeypatch.setattr(papermill, "execute_notebook", refuse)
    monkeypatch.setattr(jupyter_client.manager.KernelManager, "start_kernel", refuse)
    monkeypatch.setattr(workbench.sim.server, "serve", refuse)
    monkeypatch.setattr(workbench.cli.bench, "run_llm_bench", refuse)
    monkeypatch.setattr(workbench.cli.bench, "bench_labels", refuse)
    monkeypatch.setattr(workbench.cli.bench_quota, "run_quota_bench", refuse)


def invoke(words: str, args: list[str]):
    return CliRunner().invoke(app, [*words.split(), *args])


def check_answer(result, shown: str, files: tuple[str, ...] = ()) -> None:
    """Non-zero exit, no traceback, one ``error:`` line naming the bad ``files`` (or
    click's usage error)."""
    assert not isinstance(result.exception, WorkStarted), f"{shown}: work started"
    assert isinstance(result.exception, SystemExit | None), (
        f"{shown}: raised {type(result.exception).__name__}: {result.exception}")
    assert result.exit_code != 0, f"{shown}: exit 0 on bad input\n{result.output}"
    assert "Traceback" not in result.output and "Error(" not in result.output, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines, f"{shown}: nothing on stderr"
    if any("Usage:" in line or "─ Error ─" in line for line in lines):
        return
    assert len(lines) == 1 and lines[0].startswith("error: "), f"{shown}:\n{result.output}"
    for path in files:
        assert path in lines[0], f"{shown}: the error does not name {path}\n{lines[0]}"


def test_every_command_has_bad_input_cases():
    assert set(COMMANDS) == set(BAD), "add the new command's bad inputs to BAD"


@pytest.mark.parametrize(("words", "args"), [(w, a) for w, cases in BAD.items() for a in cases],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_bad_input_is_one_error_line(words, args, files, no_work):
    bad = tuple(files[name] for name in ("missing", "garbage", "folder")
                if f"{{{name}}}" in args and words != "params")  # params takes a study name
    args = [a.format(**files) for a in args]
    check_answer(invoke(words, args), f"workbench {words} {' '.join(args)}", bad)


@pytest.mark.parametrize("words", sorted(COMMANDS))
def test_an_unknown_option_or_a_number_that_is_not_one_is_a_usage_error(words, files, no_work):
    check_answer(invoke(words, ["--no-such-option"]), f"workbench {words} --no-such-option")
    numbers = [p for p in COMMANDS[words].params if getattr(p, "opts", None)
               and re.fullmatch(r"(list\[)?(int|float)\]?", str(p.bare_type()))]
    assert numbers or words not in {"judge", "sim-server", "bench llm"}
    for option in numbers:
        check_answer(invoke(words, [option.opts[0], "many"]), f"workbench {words} {option.opts[0]}")


def test_judge_names_the_missing_item_id_column_and_the_unknown_judge_in_one_line(files):
    no_id = invoke("judge", [files["no_item_id"], "--judge", "sim/judge-a"])
    assert no_id.exit_code == 2 and "IndexError" not in no_id.output
    assert "column 'item_id' is required for protocol 'holistic_simple'" in no_id.stderr
    assert len(no_id.stderr.splitlines()) == 1 and "nothing judged" in no_id.stderr
    unknown = invoke("judge", [files["items"], "--judge", "sim/no-such-judge"])
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("error: unknown simulated model 'sim/no-such-judge': the "
                                     "sim profiles are sim/judge-a")
    assert len(unknown.stderr.splitlines()) == 1


def test_a_bug_keeps_its_traceback(files, monkeypatch):
    import workbench.judges

    def broken(*args, **kwargs):
        raise KeyError("a bug, not a user's mistake")

    monkeypatch.setattr(workbench.judges, "run_judging", broken)
    result = invoke("judge", [files["items"], "--judge", "sim/judge-a"])
    assert isinstance(result.exception, KeyError)
