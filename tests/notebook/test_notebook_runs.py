"""Run records, the run listing and comparison, and the HTML page of a run folder
(workbench.notebook._runs, _html; ``workbench runs``)."""

from __future__ import annotations

import json
import re

import nbformat
import numpy as np
import pandas as pd
import pytest
import typer
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from scipy import stats
from typer.testing import CliRunner

from workbench import notebook as nb
from workbench.cli import run as run_cli
from workbench.notebook._runs import compare_runs, flat_numbers, list_runs, utc_stamp

PARAMETERS = 'values: list[int] = [1, 2]  # numbers to add\njudge_models: list = ["sim/judge-a"]  # judges\n'
BODY = (
    "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
    "from workbench.notebook import record\nfrom workbench.plots import save_figure\n"
    "fig, ax = plt.subplots()\nax.plot(values)\n"
    "save_figure(ax, 'tiny', 'line', formats=('png',), simulated=False)\n"
    'record("tiny", total=sum(values), parts={"first": values[0]})\n'
)


def _app() -> typer.Typer:
    app = typer.Typer()
    run_cli.register(app)
    return app


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    doc = new_notebook()
    cell = new_code_cell(PARAMETERS)
    cell.metadata["tags"] = ["parameters"]
    doc.cells = [new_markdown_cell("# tiny"), cell, new_code_cell(BODY)]
    doc.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                  "language": "python"}
    nbformat.write(doc, root / "notebooks" / "00_tiny.ipynb")
    monkeypatch.setenv("WORKBENCH_ROOT", str(root))
    monkeypatch.delenv("WORKBENCH_OUTPUT_DIR", raising=False)
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return root


def test_run_folders_have_one_utc_naming():
    assert re.fullmatch(r"\d{8}T\d{6}Z", utc_stamp())
    assert re.fullmatch(r"\d{8}T\d{6}Z-s1_judge_methods", nb._provenance.new_run_dir("s1_judge_methods").name)


@pytest.mark.slow
def test_every_run_leaves_a_record_a_page_and_its_own_copy_of_the_results(project):
    nb.run_notebook("00", progress=False)
    default = nb.run_notebook("00", progress=False)  # same figure bytes: the file is left alone
    changed = nb.run_notebook("00", parameters={"values": [5, 6]}, progress=False)
    for out, total in ((default.parent, 3), (changed.parent, 11)):
        assert re.fullmatch(r"\d{8}T\d{6}Z-00_tiny", out.name)
        rec = json.loads((out / "00_tiny.run.json").read_text(encoding="utf-8"))
        assert rec["status"] == "ok" and rec["study"] == "tiny" and rec["headline"]["total"] == total
        assert rec["backend"] == "sim" and rec["judge_models"] == ["sim/judge-a"]
        assert json.loads((out / "results" / "tiny" / "headline.json").read_text())["total"] == total
        assert (out / "figures" / "tiny" / "line.png").exists()  # the default run's, copied
        page = (out / "index.html").read_text(encoding="utf-8")
        assert "figures/tiny/line.png" in page and "00_tiny.html" in page
        assert "data:image/png;base64" not in page  # the figures are files beside it
        assert (out / "00_tiny.html").exists()
    assert "values = [5, 6]" in (changed.parent / "index.html").read_text(encoding="utf-8")

    runs = list_runs()
    assert runs["run"].tolist()[1:] == [default.parent.name, changed.parent.name]
    assert runs["changed"].tolist() == ["default", "default", "values=[5, 6]"]
    out = compare_runs(default.parent.name, changed.parent.name)
    assert out["parameters"].to_dict("records") == [{"parameter": "values", "A": "[1, 2]", "B": "[5, 6]"}]
    head = out["headline"].set_index("number")
    assert head.loc["total"].tolist() == [3.0, 11.0, 8.0]
    assert head.loc["parts.first", "B - A"] == 4.0
    assert out["paired"].empty  # no per-item scores table

    shown = CliRunner().invoke(_app(), ["runs"])
    assert shown.exit_code == 0, shown.output
    assert f"{changed.parent.name}  ok  sim" in shown.output and "changed: values=[5, 6]" in shown.output
    shown = CliRunner().invoke(_app(), ["runs", "compare", default.parent.name, changed.parent.name])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"total\s+3\.0+\s+11\.0+\s+8\.0+", shown.output)


def _fake_run(runs, name, scores, **params):
    folder = runs / name
    (folder / "results" / "s9").mkdir(parents=True)
    scores.to_csv(folder / "results" / "s9" / "scores.csv", index=False)
    (folder / "s9_x.run.json").write_text(json.dumps({
        "notebook": "s9_x", "study": "s9", "status": "ok", "parameters": params,
        "changed": params, "headline": {"mean": float(scores["score"].mean())},
        "backend": "sim", "judge_models": ["sim/judge-a"]}), encoding="utf-8")


def test_compare_pairs_the_items_and_tests_them_like_scipy(tmp_path):
    rng = np.random.default_rng(3)
    items = [f"q{i}" for i in range(12)]
    a = pd.DataFrame({"item_id": np.repeat(items, 2), "protocol": "holistic", "trial": [0, 1] * 12,
                      "judge_model": "sim/judge-a", "score": rng.integers(1, 10, 24).astype(float)})
    b = a.assign(score=a["score"] + rng.normal(0.5, 1, 24), judge_model="sim/judge-b")
    b = b[b["item_id"] != "q0"]  # an item scored only in A is not paired
    _fake_run(tmp_path, "20260101T000000Z-s9", a, trials=2)
    _fake_run(tmp_path, "20260102T000000Z-s9", b, trials=2, judge="b")
    out = compare_runs("20260101", "20260102", runs_dir=tmp_path)
    (row,) = out["paired"].to_dict("records")
    mean_a = a.groupby("item_id")["score"].mean().drop("q0")
    mean_b = b.groupby("item_id")["score"].mean()
    ref = stats.ttest_rel(mean_b, mean_a.loc[mean_b.index])
    assert row["protocol"] == "holistic" and row["n"] == 11
    assert row["B - A"] == pytest.approx((mean_b - mean_a).mean())
    assert row["p_value"] == pytest.approx(ref.pvalue)
    assert out["parameters"]["parameter"].tolist() == ["judge"]
    with pytest.raises(ValueError, match="matches 2 runs"):
        compare_runs("s9", "20260102", runs_dir=tmp_path)


def test_flat_numbers_joins_nested_keys():
    assert flat_numbers({"a": {"b": 1, "c": {"d": 2.5}}, "ok": True, "s": "x"}) == {"a.b": 1.0, "a.c.d": 2.5}
