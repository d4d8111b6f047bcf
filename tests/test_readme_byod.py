"""docs/your-data.md's "Bring your own judge data" section works as pasted, and its numbers are right.

Both Python blocks run top to bottom in an empty folder; the leaderboard they print is
checked against a count by hand of the example's eight verdicts, the correlations against
scipy on the example's columns; the shell command runs through the ``workbench`` command.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pytest
from conftest import readme_blocks, readme_section
from scipy import stats as sps
from typer.testing import CliRunner

from workbench.cli import app

README = Path(__file__).resolve().parent.parent / "docs" / "your-data.md"
SECTION = "## Bring your own judge data"


def _section() -> str:
    return readme_section(SECTION)


def _blocks(language: str) -> list[str]:
    return readme_blocks(SECTION, language)


def _run(code: str, folder: Path, monkeypatch) -> dict:
    monkeypatch.chdir(folder)
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, f"{README.name}: {SECTION}", "exec"), namespace)
    return namespace


@pytest.fixture(autouse=True)
def _quiet_memo(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_MEMO", "0")
    monkeypatch.setenv("MPLBACKEND", "Agg")


def test_pairwise_example_runs_and_counts_right(tmp_path, monkeypatch):
    pairwise, _ = _blocks("python")
    ns = _run(pairwise, tmp_path, monkeypatch)
    board = ns["board"].set_index("group")
    # by hand: p1 right in both orders; p2 right first, wrong swapped; p3 tie = tie twice;
    # p4 wrong first, right swapped
    expected = {"code": (1.0, 0.5, 0.5, 0.5), "writing": (0.5, 1.0, 0.5, 0.5),
                "all": (0.75, 0.75, 0.5, 0.5)}
    for group, values in expected.items():
        row = board.loc[group]
        got = (row["accuracy_order0"], row["accuracy_order1"], row["accuracy_both"],
               row["agreement"])
        assert got == pytest.approx(values), group
    assert (tmp_path / "report" / "index.html").exists()
    assert (tmp_path / "report" / "leaderboard.csv").exists()
    assert len(ns["report"]["answers"]) == 3


def test_pointwise_example_matches_scipy(tmp_path, monkeypatch):
    _, pointwise = _blocks("python")
    ns = _run(pointwise, tmp_path, monkeypatch)
    table = ns["table"]
    raw = __import__("pandas").read_csv(tmp_path / "scores.csv")
    for metric in ("BLEU", "BERTScore"):
        rows = table[table["judge"] == metric].set_index("level")
        pooled = sps.kendalltau(raw[metric], raw["human_mean"])
        assert rows.loc["pooled", "estimate"] == pytest.approx(pooled.statistic)
        means = raw.groupby("model")[[metric, "human_mean"]].mean()
        system = sps.kendalltau(means[metric], means["human_mean"])
        assert rows.loc["system", "estimate"] == pytest.approx(system.statistic)
        assert rows.loc["system", "n"] == 4
        per_story = [sps.kendalltau(g[metric], g["human_mean"]).statistic
                     for _, g in raw.groupby("story")]
        assert rows.loc["per_group_mean", "estimate"] == pytest.approx(np.nanmean(per_story))


def test_shell_example_runs(tmp_path, monkeypatch):
    pairwise, _ = _blocks("python")
    _run(pairwise, tmp_path, monkeypatch)  # writes verdicts.csv
    (block,) = [b for b in _blocks("") if "workbench qualify" in b]
    args = shlex.split(block.strip())
    assert args[0].endswith("workbench") and args[1] == "qualify"
    result = CliRunner().invoke(app, [*args[1:], "--out", str(tmp_path / "cli"),
                                      "--n-boot", "50", "--n-rep", "20"])
    assert result.exit_code == 0, result.output
    assert "report:" in result.output
    assert (tmp_path / "cli" / "index.html").exists()
    board = __import__("pandas").read_csv(tmp_path / "cli" / "leaderboard.csv")
    assert board.set_index("group").loc["all", "accuracy_both"] == pytest.approx(0.5)


def test_shell_lists_every_bad_row(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.csv").write_text("item_id,judge,verdict\n1,j,A\n2,j,maybe\n3,j,C\n")
    result = CliRunner().invoke(app, ["qualify", "bad.csv", "--out", "r"])
    assert result.exit_code == 2
    assert "line 3" in result.output and "line 4" in result.output
    assert "'maybe' is not one of A, B, tie" in result.output
