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
from workbench.notebook._html import write_page
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


def _bad_records(runs):
    """Run folders, each with one record an editor or a killed run could leave."""
    bad = {
        "a JSON list": ("20260103T000000Z-list", "s9_x.run.json", "[1, 2]"),
        "no notebook": ("20260104T000000Z-nonb", "s9_x.run.json", '{"study": "s9"}'),
        "changed a string": ("20260105T000000Z-str", "s9_x.run.json",
                             '{"notebook": "s9_x", "changed": "trials=2"}'),
        "half written": ("20260106T000000Z-half", "s9_x.run.json", '{"notebook": "s9_x", "st'),
        "unreadable headline": ("20260107T000000Z-session", "results/s9/headline.json",
                                '{"mean": 1.0, "run": {"parameters"'),
    }
    for folder, name, text in bad.values():
        path = runs / folder / name
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    return {why: runs / folder / name for why, (folder, name, _) in bad.items()}


def test_one_bad_record_never_hides_the_other_runs(project):
    from workbench import config

    runs = config.runs_dir()
    scores = pd.DataFrame({"item_id": ["q1", "q2", "q3"], "score": [1.0, 2.0, 4.0]})
    _fake_run(runs, "20260101T000000Z-s9", scores, trials=1)
    _fake_run(runs, "20260102T000000Z-s9", scores.assign(score=[2.0, 2.0, 5.0]), trials=2)
    bad = _bad_records(runs)
    shown = CliRunner().invoke(_app(), ["runs"])
    assert shown.exit_code == 0 and shown.exception is None, shown.output
    assert "20260102T000000Z-s9  ok  sim" in shown.output
    assert all(f"warning: {path}: " in shown.output for path in bad.values())
    problems: list[str] = []
    table = list_runs(problems=problems)
    assert table["run"].tolist() == ["20260101T000000Z-s9", "20260102T000000Z-s9"]
    assert len(problems) == len(bad)
    for path, problem in zip(bad.values(), problems, strict=True):
        assert problem.startswith(f"{path}: ") and "left out" in problem
    assert "field 'changed' is a string, expected an object" in problems[2]
    shown = CliRunner().invoke(_app(), ["runs", "compare", "20260101", "20260102"])
    assert shown.exit_code == 0 and shown.exception is None, shown.output
    assert "paired t test" in shown.output and f"warning: {bad['a JSON list']}" in shown.output
    shown = CliRunner().invoke(_app(), ["runs", "compare", "20260101", "nonb"])
    assert shown.exit_code == 2 and isinstance(shown.exception, SystemExit), shown.output
    assert "no run matches 'nonb'" in shown.output and "left out" in shown.output

    # a run folder's page is written with its sound record, and names the odd one
    folder = runs / "20260101T000000Z-s9"
    (folder / "s9_y.run.json").write_text('{"notebook": "s9_y", "headline": [1]}', encoding="utf-8")
    (folder / "s9_z.run.json").write_text('{"notebook": "s9_z", "status": null}', encoding="utf-8")
    page = write_page(folder).read_text(encoding="utf-8")
    assert "<h2 id='s9_x'>" in page and "<h2 id='s9_z'>s9_z <span class='?'>?</span>" in page
    assert "s9_y.run.json</code>: field &#x27;headline&#x27; is an array" in page


def test_paths_taken_from_records_stay_inside_the_run_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    pd.DataFrame({"item_id": ["q1", "q2", "q3"], "score": [9.0, 1.0, 5.0]}).to_csv(
        outside / "scores.csv", index=False)
    (outside / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n")  # globbed, never opened
    runs = tmp_path / "runs"
    scores = pd.DataFrame({"item_id": ["q1", "q2", "q3"], "score": [1.0, 2.0, 4.0]})
    _fake_run(runs, "20260101T000000Z-s9", scores)
    # a study that climbs out of the run folder
    escape = runs / "20260102T000000Z-up"
    (escape / "results").mkdir(parents=True)  # the first steps of a path that climbs out
    (escape / "figures").mkdir()
    (escape / "s9_x.run.json").write_text(json.dumps(
        {"notebook": "s9_x", "study": "../../../outside", "headline": {"mean": 1.0}}),
        encoding="utf-8")
    page = write_page(escape, notebooks=False).read_text(encoding="utf-8")
    assert "secret.png" not in page and "outside" in page  # named as odd, not linked
    with pytest.raises(ValueError, match="no run matches"):
        compare_runs("20260101", "20260102", runs_dir=runs)
    problems: list[str] = []
    assert list_runs(runs, problems=problems)["run"].tolist() == ["20260101T000000Z-s9"]
    assert "field 'study' is '../../../outside'" in problems[0]
    # a plain study whose folders are links out of the run folder
    linked = runs / "20260103T000000Z-link"
    (linked / "results").mkdir(parents=True)
    (linked / "figures").mkdir()
    (linked / "results" / "s9").symlink_to(outside, target_is_directory=True)
    (linked / "figures" / "s9").symlink_to(outside, target_is_directory=True)
    (linked / "s9_x.run.json").write_text(json.dumps(
        {"notebook": "s9_x", "study": "s9", "headline": {"mean": 5.0}}), encoding="utf-8")
    out = compare_runs("20260101", "20260103", runs_dir=runs)
    assert out["paired"].empty  # the scores outside were not read
    page = write_page(linked, notebooks=False).read_text(encoding="utf-8")
    assert "secret.png" not in page and "<h2 id='s9_x'>" in page


def test_the_backend_shown_is_where_the_replies_came_from(tmp_path, monkeypatch):
    """S5 records its backends as a list and has ``decomposer_model: ""``; the runs code
    guessed from parameter names and said ``openai+sim`` for a fully offline run."""
    import time

    from workbench.notebook._runs import write_record

    monkeypatch.setattr("workbench.notebook._runs.git_commit", lambda: None)
    started = time.time() - 5
    out = tmp_path / "out"
    (out / "results" / "s5_gist_detail").mkdir(parents=True)
    (out / "results" / "s5_gist_detail" / "headline.json").write_text(
        json.dumps({"backend": ["sim"], "n_runs": 3}), encoding="utf-8")
    values = {"judge_models": ["sim/judge-a", "sim/decomposer"], "decomposer_model": ""}
    path = write_record(out, "s5_gist_detail", values=values, changed={}, output_root=out,
                        started=started, status="ok", error=None)
    assert json.loads(path.read_text(encoding="utf-8"))["backend"] == "sim"
    # no backend in the headline: the result tables' backend column, not the parameters
    (out / "results" / "s5_gist_detail" / "headline.json").write_text('{"n": 1}', encoding="utf-8")
    pd.DataFrame({"score": [1, 2], "backend": ["sim", "sim"]}).to_csv(
        out / "results" / "s5_gist_detail" / "scores.csv", index=False)
    path = write_record(out, "s5_gist_detail", values={**values, "answer_model": "openai/gpt-4o"},
                        changed={}, output_root=out, started=started, status="ok", error=None)
    assert json.loads(path.read_text(encoding="utf-8"))["backend"] == "sim"
    (out / "results" / "s5_gist_detail" / "headline.json").write_text(
        json.dumps({"backend": ["sim", "openai"]}), encoding="utf-8")
    path = write_record(out, "s5_gist_detail", values=values, changed={}, output_root=out,
                        started=started, status="ok", error=None)
    assert json.loads(path.read_text(encoding="utf-8"))["backend"] == "openai+sim"
    # a record written before: its headline's list is shown, not its guess
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec.update(backend="openai+sim", headline={"backend": ["sim"]})
    path.write_text(json.dumps(rec), encoding="utf-8")
    assert list_runs(tmp_path)["backend"].tolist() == ["sim"]


def test_a_half_written_headline_still_leaves_a_record(tmp_path, monkeypatch):
    import time

    from workbench.notebook._runs import write_record

    monkeypatch.setattr("workbench.notebook._runs.git_commit", lambda: None)
    out = tmp_path / "20260101T000000Z-s9"
    (out / "results" / "s9").mkdir(parents=True)
    (out / "results" / "s9" / "headline.json").write_text('{"mean": 1.', encoding="utf-8")
    path = write_record(out, "s9_x", values={}, changed={}, output_root=out,
                        started=time.time() - 5, status="failed", error="killed")
    rec = json.loads(path.read_text(encoding="utf-8"))
    assert (rec["study"], rec["headline"], rec["status"]) == ("s9", {}, "failed")
    assert list_runs(tmp_path)["status"].tolist() == ["failed"]


_ODD_VALUES = [None, True, 0, -1.5, "", "../../x", "s9", [], [1, "a"], ["s9"], {}, {"a": [1]},
               {"a": {"b": "c"}}]
_FIELDS = ["notebook", "study", "status", "started", "seconds", "changed", "parameters",
           "headline", "backend", "judge_models", "commit", "error", "version", "executed"]


def test_no_value_of_any_record_field_breaks_the_listing_or_the_page(tmp_path):
    """Every field of a record given each of 13 JSON values (182 records): the listing, a
    comparison with a sound run and the run page never raise, and each record is either
    listed or named."""
    scores = pd.DataFrame({"item_id": ["q1", "q2"], "score": [1.0, 2.0]})
    _fake_run(tmp_path, "20260101T000000Z-good", scores)
    tried = 0
    for field in _FIELDS:
        for i, value in enumerate(_ODD_VALUES):
            folder = tmp_path / f"20260102T{i:06d}Z-{field}"
            (folder / "results" / "s9").mkdir(parents=True)
            scores.to_csv(folder / "results" / "s9" / "scores.csv", index=False)
            rec = {"notebook": "s9_x", "study": "s9", "status": "ok", "headline": {"m": 1}}
            rec[field] = value
            (folder / "s9_x.run.json").write_text(json.dumps(rec), encoding="utf-8")
            write_page(folder, notebooks=False)
            tried += 1
    problems: list[str] = []
    listed = list_runs(tmp_path, problems=problems)
    assert len(listed) + len(problems) == tried + 1
    for run in listed["run"]:
        compare_runs("20260101T000000Z-good", run, runs_dir=tmp_path)
