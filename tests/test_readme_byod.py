"""docs/your-data.md's "Bring your own judge data" section works as pasted, and its numbers are right.

Both Python blocks run top to bottom in an empty folder; the leaderboard they print is
checked against a count by hand of the example's eight verdicts, the correlations against
scipy on the example's columns; the shell command runs through the ``workbench`` command.
"""

from __future__ import annotations

import itertools
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
    pairwise = _blocks("python")[0]
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
    answers = ns["report"]["answers"]
    assert any(a.startswith("Position: my-judge") for a in answers)
    assert "at least 3 annotators" in answers[0]


def test_pointwise_example_matches_scipy(tmp_path, monkeypatch):
    pointwise = _blocks("python")[1]
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
        exact = sps.kendalltau(means[metric], means["human_mean"], method="exact").pvalue
        assert rows.loc["system", "p_value"] == pytest.approx(exact)
        assert np.isnan(rows.loc["system", "ci_low"])  # 4 systems: no interval
        per_story = [sps.kendalltau(g[metric], g["human_mean"]).statistic
                     for _, g in raw.groupby("story")]
        assert rows.loc["per_group_mean", "estimate"] == pytest.approx(np.nanmean(per_story))


def test_shell_example_runs(tmp_path, monkeypatch):
    _run(_blocks("python")[0], tmp_path, monkeypatch)  # writes verdicts.csv
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


def test_nested_json_example_matches_scipy(tmp_path, monkeypatch):
    ns = _run(_blocks("python")[2], tmp_path, monkeypatch)
    corr, release = ns["correlations"], ns["release"]
    units = [(story, system) for story, systems in release.items() for system in systems]
    for dim in ("coherence", "fluency"):
        human = [np.mean([a[dim] for a in release[s][m]["annotators"].values()])
                 for s, m in units]
        for metric in ("BLEU", "BERTScore"):
            score = [release[s][m]["metrics"][metric] for s, m in units]
            row = corr[(corr["judge"] == metric) & (corr["dimension"] == dim)].set_index("level")
            assert row.loc["pooled", "estimate"] == pytest.approx(
                sps.kendalltau(score, human).statistic)
            assert row.loc["pooled", "n"] == 12 and row.loc["system", "n"] == 4
    assert len(corr) == 8  # 2 metrics x 2 dimensions x 2 levels, no row copied by hand


def test_free_text_example_parses_by_the_pattern(tmp_path, monkeypatch):
    ns = _run(_blocks("python")[3], tmp_path, monkeypatch)
    got = ns["free_text"]["verdict"].tolist()
    # order 1 is positional: "[[B]]" (second shown = A) maps back to A
    assert got == ["A", "A", "tie", "tie", None, "B"]


def test_system_level_pairwise_example_counts_right(tmp_path, monkeypatch):
    ns = _run(_blocks("python")[4], tmp_path, monkeypatch)
    points = {"A": 1.0, "B": 0.0, "tie": 0.5}
    back = {"A": "B", "B": "A"}
    judge, people = {}, {}
    for (a, b), label, (first, second) in zip(ns["pairs"], ns["human"], ns["judge"],
                                              strict=True):
        p = (points[first] + points[back.get(second, second)]) / 2
        for system, share in ((a, p), (b, 1 - p)):
            judge.setdefault(system, []).append(share)
        for system, share in ((a, points[label]), (b, 1 - points[label])):
            people.setdefault(system, []).append(share)
    systems = sorted(judge)
    own = [np.mean(judge[s]) for s in systems]
    hum = [np.mean(people[s]) for s in systems]
    ranking = ns["systems"]["ranking"].iloc[0]
    expected = sps.kendalltau(own, hum)
    assert ranking["tau"] == pytest.approx(expected.statistic)
    # the permutation p-value, by hand over all 24 orderings of the judge's win rates
    # (two-sided: twice the smaller tail)
    taus = np.array([sps.kendalltau(order, hum).statistic
                     for order in itertools.permutations(own)])
    share = min(1.0, 2 * min(np.mean(taus >= expected.statistic - 1e-12),
                             np.mean(taus <= expected.statistic + 1e-12)))
    assert ranking["p_value"] == pytest.approx(share)
    assert ranking["judge_winner"] == systems[int(np.argmax(own))]
    assert ranking["people_winner"] == systems[int(np.argmax(hum))]
    h2h = ns["systems"]["head_to_head"]
    row = h2h[(h2h["rater"] == "my-judge") & (h2h["system_x"] == "gpt")
              & (h2h["system_y"] == "llama")].iloc[0]
    # pairs 0 and 6 (gpt as A): "A" first, then "B" shown second = A: gpt takes every point
    assert row["n_items"] == 2 and row["points_x"] == pytest.approx(1.0)
    people = h2h[(h2h["rater"] == "people") & (h2h["system_x"] == "llama")
                 & (h2h["system_y"] == "qwen")].iloc[0]
    assert people["points_x"] == pytest.approx((0.0 + 1.0) / 2)  # labels B (pair 4), A (10)


def test_qualify_without_a_mapping_shows_one_that_fits(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ratings.csv").write_text("story_id,model,rating,rater\n1,a,3,r1\n")
    result = CliRunner().invoke(app, ["qualify", "ratings.csv", "--out", "r"])
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert "found columns story_id, model, rating, rater" in out
    assert "missing: item_id, score, judge or annotator" in out
    assert "-c 'item_id: story_id' -c 'score: rating' -c 'annotator: rater'" in out
    assert "source_file" not in out and "Traceback" not in out
    fitted = CliRunner().invoke(app, ["qualify", "ratings.csv", "-c", "item_id: story_id",
                                      "-c", "score: rating", "-c", "annotator: rater", "-c",
                                      "system: model", "--out", "r"])
    assert "found columns" not in fitted.output


def test_qualify_names_file_and_line_of_an_encoding_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v.csv").write_bytes("item_id,judge,verdict,note\n1,j,A,caf\u00e9\n"
                                     .encode("latin-1"))
    result = CliRunner().invoke(app, ["qualify", "v.csv", "--out", "r"])
    assert result.exit_code == 2
    assert "file v.csv: line 2: not UTF-8 text" in result.output
    ok = CliRunner().invoke(app, ["qualify", "v.csv", "--encoding", "latin-1", "--out", "r",
                                  "--n-boot", "0", "--n-rep", "5"])
    assert "not UTF-8" not in ok.output and "Traceback" not in ok.output
