"""docs/your-data.md's "Judge your own data" section works as pasted.

Its Python block runs top to bottom in an empty folder; its shell command runs through
the ``workbench`` command; and its table of the columns each protocol requires matches
what ``run_judging`` checks: a one-row frame with exactly the listed columns is judged,
and leaving out any of them is an error naming it.
"""

from __future__ import annotations

import math
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest
from conftest import readme_blocks, readme_section
from typer.testing import CliRunner

from workbench.cli import app
from workbench.judges import JudgeSpec, run_judging

README = Path(__file__).resolve().parent.parent / "docs" / "your-data.md"
SECTION = "## Judge your own data"
#: A value for every column the table may list (criteria and rubric as JSON text, as in a CSV).
EXAMPLE = {
    "item_id": "q1",
    "question": "What is the boiling point of water at sea level?",
    "response": "Water boils at 100 degrees Celsius at sea level.",
    "reference": "At sea level, water boils at 100 °C (212 °F).",
    "response_a": "Water boils at 100 degrees Celsius.",
    "response_b": "It boils at 90 degrees.",
    "criteria": '[{"kind": "must", "text": "States 100 degrees Celsius."}]',
    "rubric": '[{"criterion_id": "c1", "text": "States 100 degrees Celsius.", "weight": 1}]',
}


def _section() -> str:
    return readme_section(SECTION)


def _blocks(language: str) -> list[str]:
    return readme_blocks(SECTION, language)


def _run_python_example(folder: Path, monkeypatch) -> dict:
    monkeypatch.chdir(folder)
    (code,) = _blocks("python")
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, f"{README.name}: {SECTION}", "exec"), namespace)
    return namespace


def _required_columns() -> dict[str, list[str]]:
    """protocol -> required columns, from the section's table."""
    table = {}
    for line in _section().splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) >= 2 and re.fullmatch(r"`\w+`", cells[0]):
            table[cells[0].strip("`")] = re.findall(r"`(\w+)`", cells[1])
    return table


def test_python_example_runs_as_pasted(tmp_path, monkeypatch):
    ns = _run_python_example(tmp_path, monkeypatch)
    items, scores, per_answer, rho = ns["items"], ns["scores"], ns["per_answer"], ns["rho"]
    assert (tmp_path / "my.csv").exists()
    assert len(scores) == 3 * len(items) and scores["parse_ok"].all()
    assert sorted(per_answer["item_id"]) == sorted(items["item_id"])
    assert rho["method"].tolist() == ["spearman"] and int(rho["n"].iloc[0]) == len(items)
    assert math.isfinite(rho["estimate"].iloc[0]) and -1 <= rho["estimate"].iloc[0] <= 1


def test_shell_example_runs(tmp_path, monkeypatch):
    _run_python_example(tmp_path, monkeypatch)  # writes my.csv
    commands = [line for code in _blocks("") for line in code.splitlines()
                if re.match(r"^(\.venv/bin/)?workbench judge ", line)]
    assert commands, "the section shows no `workbench judge` command"
    for command in commands:
        args = shlex.split(command)[1:]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        out = Path(args[args.index("--out") + 1])
        assert len(pd.read_csv(out)) > 0


def test_required_columns_table_matches_the_code():
    table = _required_columns()
    assert set(table) == {"holistic_simple", "holistic", "checklist", "geval", "dimensions",
                          "pairwise", "decompose", "summarize_then"}
    for protocol, columns in table.items():
        spec = (JudgeSpec(protocol="summarize_then",
                          inner=JudgeSpec(protocol="holistic_simple", judge_model="sim/judge-a"))
                if protocol == "summarize_then"
                else JudgeSpec(protocol=protocol, judge_model="sim/judge-a"))
        items = pd.DataFrame([{name: EXAMPLE[name] for name in columns}])
        assert len(run_judging(items, spec, progress=False)) > 0, protocol
        for name in columns:
            with pytest.raises(ValueError, match=name):
                run_judging(items.drop(columns=name), spec, progress=False)
