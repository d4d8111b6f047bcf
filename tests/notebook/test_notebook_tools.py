"""Tests of workbench.notebook and the run / run-all commands (workbench.cli.run)."""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import typer
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from typer.testing import CliRunner

import workbench
from workbench import notebook as nb
from workbench.cli import run as run_cli


@pytest.fixture(autouse=True)
def _outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MPLBACKEND", "Agg")


def _write_notebook(path: Path, parameters: str, body: str) -> Path:
    doc = new_notebook()
    cell = new_code_cell(parameters)
    cell.metadata["tags"] = ["parameters"]
    doc.cells = [new_markdown_cell("# test notebook"), cell, new_code_cell(body)]
    doc.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(doc, path)
    return path


TINY_PARAMETERS = 'values: list[int] = [1, 2]  # numbers to add\nlabel: str = "a"  # a label\n'
TINY_BODY = (
    "import os\n"
    "from workbench.notebook import record\n"
    'record("tiny", kind=type(values).__name__, total=sum(values), label=label,\n'
    "       cwd=os.path.basename(os.getcwd()))\n"
)


@pytest.fixture
def notebooks(tmp_path):
    folder = tmp_path / "project" / "notebooks"
    folder.mkdir(parents=True)
    _write_notebook(folder / "00_tiny.ipynb", TINY_PARAMETERS, TINY_BODY)
    _write_notebook(
        folder / "s1_broken.ipynb",
        "trials = 2  # int: trials\n",
        'raise RuntimeError("boom in s1")\n',
    )
    _write_notebook(
        folder / "x1_bias_probes.ipynb", "judges = ['sim/judge-a']  # judges\n", "x = 1\n"
    )
    return folder


# --- parameters ---------------------------------------------------------------------------


def test_parse_parameters_keeps_yaml_types_and_later_wins(tmp_path):
    file = tmp_path / "params.yaml"
    file.write_text("judges: [sim/judge-a]\ntrials: 5\nextra: {a: 1}\n", encoding="utf-8")
    params = nb.parse_parameters(
        files=[file],
        yaml_strings=[
            "judges: [sim/judge-a, sim/judge-b]",
            "temperatures: [0, 1.0]",
            "trials: 2",
            "use_reference: false",
        ],
    )
    assert params == {
        "judges": ["sim/judge-a", "sim/judge-b"],
        "trials": 2,
        "extra": {"a": 1},
        "temperatures": [0, 1.0],
        "use_reference": False,
    }
    assert isinstance(params["temperatures"][1], float)


@pytest.mark.parametrize(
    "text, match",
    [
        ("just a string", "expected a YAML mapping"),
        ("[1, 2]", "expected a YAML mapping"),
        ("a: [1, 2", "not valid YAML"),
        ("1: x", "names must be strings"),
    ],
)
def test_parse_parameters_rejects_non_mappings(text, match):
    with pytest.raises(ValueError, match=match) as info:
        nb.parse_parameters(yaml_strings=[text])
    assert repr(text) in str(info.value)  # names the offending -y value


def test_resolve_notebook_by_stem_prefix_and_short_name(notebooks):
    assert nb.resolve_notebook("s1", directory=notebooks).name == "s1_broken.ipynb"
    assert nb.resolve_notebook("00", directory=notebooks).name == "00_tiny.ipynb"
    assert nb.resolve_notebook("tiny", directory=notebooks).name == "00_tiny.ipynb"
    assert nb.resolve_notebook("x1_bias_probes", directory=notebooks).stem == "x1_bias_probes"
    path = notebooks / "s1_broken.ipynb"
    assert nb.resolve_notebook(str(path)) == path.resolve()
    with pytest.raises(ValueError, match="no notebook matches 's7'.*00_tiny, s1_broken"):
        nb.resolve_notebook("s7", directory=notebooks)
    with pytest.raises(FileNotFoundError):
        nb.resolve_notebook(str(notebooks / "missing.ipynb"))


def test_unknown_parameter_is_an_error_naming_it_and_the_valid_ones(notebooks, tmp_path):
    with pytest.raises(
        ValueError, match=r"unknown parameter\(s\) valuez \(did you mean values\?\); valid: label, values"
    ):
        nb.run_notebook(
            "00", parameters={"valuez": [1]}, directory=notebooks, output_dir=tmp_path / "runs"
        )
    assert not (tmp_path / "runs").exists()  # refused before any kernel started


def test_notebook_parameters_reads_the_parameters_cell(notebooks):
    declared = nb.notebook_parameters(notebooks / "00_tiny.ipynb")
    assert sorted(declared) == ["label", "values"]
    assert declared["values"]["inferred_type_name"] == "list[int]"
    no_params = notebooks.parent / "plain.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1")]), no_params)
    with pytest.raises(ValueError, match="no cell tagged 'parameters'"):
        nb.notebook_parameters(no_params)


def test_python3_kernel_runs_this_interpreter():
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    # jupyter_client replaces a bare "python" with sys.executable when it launches
    assert spec.argv[0] in {"python", "python3", sys.executable}
    assert spec.language == "python"


# --- the commands (these start kernels: a few seconds each) -----------------------------


def _app() -> typer.Typer:
    app = typer.Typer()
    run_cli.register(app)
    return app


@pytest.mark.slow
def test_run_command_passes_typed_lists_and_writes_beside_not_over(notebooks, tmp_path):
    source = notebooks / "00_tiny.ipynb"
    before = source.read_bytes()
    result = CliRunner().invoke(
        _app(),
        [
            "run",
            str(source),
            "-y",
            "values: [3, 4, 5]",
            "-y",
            "label: b",
            "-o",
            str(tmp_path / "runs"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    executed = tmp_path / "runs" / "00_tiny.ipynb"
    assert result.output.strip().endswith(str(executed))
    assert source.read_bytes() == before
    assert nb.read_headline("tiny") == {
        "cwd": "notebooks",
        "kind": "list",
        "label": "b",
        "total": 12,
    }
    injected = [
        c
        for c in nbformat.read(executed, as_version=4).cells
        if "injected-parameters" in c.metadata.get("tags", [])
    ]
    assert "values = [3, 4, 5]" in injected[0].source


def test_run_command_rejects_unknown_parameter(notebooks):
    result = CliRunner().invoke(
        _app(), ["run", str(notebooks / "00_tiny.ipynb"), "-y", "n_batch: 3"]
    )
    assert result.exit_code == 2
    assert "unknown parameter(s) n_batch; valid: label, values" in result.output


@pytest.mark.slow
def test_run_all_reports_failures_without_stopping(notebooks, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_ROOT", str(notebooks.parent))
    result = CliRunner().invoke(
        _app(), ["run-all", "--only", "00", "--only", "s1", "-y", "values: [10, 20]"]
    )
    assert result.exit_code == 1, result.output
    assert "1 of 2 notebooks failed: s1_broken" in result.output
    assert "RuntimeError" in result.output and "boom in s1" in result.output
    lines = result.stdout.splitlines()
    assert "%|" not in result.output  # no bar over the notebooks: stderr is not a terminal
    assert any(line.startswith("[1/2] 00_tiny") and line.endswith("started") for line in lines)
    (done,) = [line for line in lines if line.startswith("[2/2] s1_broken") and "failed" in line]
    assert "cache entries" in done and "notebooks failed so far: 1" in done and "boom in s1" in done
    assert nb.read_headline("tiny")["total"] == 30  # ran, with the parameter it declares
    runs = list((notebooks.parent / "data" / "runs").glob("*/*.ipynb"))
    assert sorted(p.name for p in runs) == ["00_tiny.ipynb", "s1_broken.ipynb"]


@pytest.mark.slow
def test_store_outputs_saves_stable_outputs_and_leaves_failures_alone(notebooks, monkeypatch):
    monkeypatch.setenv("WORKBENCH_ROOT", str(notebooks.parent))
    broken = notebooks / "s1_broken.ipynb"
    before = broken.read_bytes()
    result = CliRunner().invoke(_app(), ["store-outputs", "00", "s1"])
    assert result.exit_code == 1
    assert "stored  00_tiny.ipynb" in result.output
    assert "failed  s1_broken.ipynb: RuntimeError: boom in s1" in result.output
    assert broken.read_bytes() == before
    doc = nbformat.read(notebooks / "00_tiny.ipynb", as_version=4)
    code = [c for c in doc.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == [1, 2]
    assert "'total': 3" in code[1].outputs[0]["data"]["text/plain"]  # defaults, no injection
    assert all("execution" not in c.metadata for c in doc.cells)  # no timestamps stored
    assert "widgets" not in doc.metadata


@pytest.mark.slow
def test_run_all_returns_a_table(notebooks, tmp_path):
    table = nb.run_all(only=["x1"], directory=notebooks, output_dir=tmp_path / "runs")
    assert list(table.columns) == list(nb.RUN_COLUMNS)
    row = table.iloc[0]
    assert (row["notebook"], row["status"], row["new_cache_entries"]) == ("x1_bias_probes", "ok", 0)
    assert row["seconds"] > 0 and pd.isna(row["error"])
    with pytest.raises(ValueError, match="declared by none of the notebooks"):
        nb.run_all(only=["x1"], parameters={"values": [1]}, directory=notebooks)


# --- record / read_headline ---------------------------------------------------------------


def test_record_writes_sorted_rounded_json(tmp_path):
    shown = nb.record(
        "demo",
        zeta=1,
        alpha=np.float64(2 / 3),
        flag=np.bool_(True),
        missing=float("nan"),
        per_method=pd.Series({"simple": 0.1294999, "checklist": 0.085}),
        table=pd.DataFrame({"m": ["a"], "r": [0.5]}),
        counts=np.array([1, 2]),
    )
    path = tmp_path / "out" / "results" / "demo" / "headline.json"
    text = path.read_text(encoding="utf-8")
    assert list(json.loads(text)) == sorted(shown)
    assert (
        json.loads(text)
        == shown
        == {
            "alpha": 0.666667,
            "counts": [1, 2],
            "flag": True,
            "missing": None,
            "per_method": {"simple": 0.1295, "checklist": 0.085},
            "table": [{"m": "a", "r": 0.5}],
            "zeta": 1,
        }
    )
    nb.record(
        "demo",
        zeta=1,
        alpha=np.float64(2 / 3),
        flag=np.bool_(True),
        missing=float("nan"),
        per_method=pd.Series({"simple": 0.1294999, "checklist": 0.085}),
        table=pd.DataFrame({"m": ["a"], "r": [0.5]}),
        counts=np.array([1, 2]),
    )
    assert path.read_text(encoding="utf-8") == text  # identical bytes on a rerun


def test_record_rejects_what_it_cannot_store_honestly(tmp_path):
    with pytest.raises(ValueError, match="'rho' is infinite"):
        nb.record("demo", rho=math.inf)
    with pytest.raises(TypeError, match="'where' is a path"):
        nb.record("demo", where=tmp_path)
    with pytest.raises(TypeError, match="'obj' has type object"):
        nb.record("demo", obj=object())
    with pytest.raises(ValueError, match="at least one"):
        nb.record("demo")
    with pytest.raises(ValueError, match="not a plain name"):
        nb.record("../up", x=1)
    with pytest.raises(FileNotFoundError, match="no headline numbers for study 'none'"):
        nb.read_headline("none")


# --- setup ----------------------------------------------------------------------------


def test_setup_returns_a_seeded_generator_and_sets_display():
    ctx = nb.setup(11, study="demo")
    assert ctx["rng"].random() == np.random.default_rng(11).random()
    assert ctx["figures_dir"].parts[-2:] == ("figures", "demo")
    assert ctx["results_dir"].parts[-2:] == ("results", "demo")
    assert pd.get_option("display.precision") == nb.PANDAS_OPTIONS["display.precision"]
    import matplotlib

    assert "IPAexGothic" in matplotlib.rcParams["font.family"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"seed": -1}, "non-negative integer"),
        ({"seed": 1.5}, "non-negative integer"),
        ({"seed": 0, "cache_mode": "sometimes"}, "expected one of"),
        ({"seed": 0, "fresh_cache": True, "cache_mode": "readonly"}, "every call would miss"),
        ({"seed": 0, "study": "a/b"}, "not a plain name"),
    ],
)
def test_setup_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        nb.setup(**kwargs)


# --- call tables ------------------------------------------------------------------------


@dataclass
class _Completion:
    text: str
    model: str = "sim/judge-a"
    usage: dict = field(default_factory=lambda: {"prompt_tokens": 10, "completion_tokens": 3})
    cost_usd: float = 0.002
    latency_s: float = 0.5
    cached: bool = False
    key: str = "k"
    logprobs: None = None
    backend: str = "sim"
    cost_known: bool = True


@dataclass
class _Failure:
    key: str
    error_type: str
    message: str
    attempts: int


def test_calls_frame_and_summary_keep_failures():
    results = {
        "first": [_Completion("a")],
        "batch": [
            _Completion("b", cached=True, cost_usd=0.0),
            _Failure("k2", "timeout", "t", 3),
            _Completion("c"),
        ],
    }
    calls = nb.calls_frame(results)
    assert list(calls.columns) == list(nb.CALL_COLUMNS)
    assert "latency_s" not in calls.columns
    assert calls["ok"].tolist() == [True, True, False, True]
    assert calls.loc[2, "error_type"] == "timeout" and math.isnan(calls.loc[2, "cost_usd"])
    summary = nb.cost_cache_summary(calls).set_index("stage")
    assert summary.loc["batch", ["calls", "cache_hits", "provider_calls", "failures"]].tolist() == [
        3,
        1,
        1,
        1,
    ]
    assert summary.loc["total", "cost_usd"] == pytest.approx(0.004)  # provider calls only
    assert summary.loc["batch", "saved_usd"] == pytest.approx(0.0)
    assert summary.loc["total", "prompt_tokens"] == 20  # the cached reply sent nothing
    assert summary.loc["batch", "hit_rate"] == pytest.approx(1 / 3)
    single = nb.calls_frame(_Completion("z", cached=True), stage="again")
    assert single[["stage", "cached"]].values.tolist() == [["again", True]]
    with pytest.raises(TypeError, match="result 0 of stage 'x' is a str"):
        nb.calls_frame(["text"], stage="x")


def test_an_unpriced_model_shows_an_unknown_cost_never_zero():
    import matplotlib.pyplot as plt

    from workbench.plots import plot_cost_cache

    unpriced = dict(model="openai/smollm2", backend="openai", cost_usd=0.0, cost_known=False)
    calls = nb.calls_frame({"priced": [_Completion("a"), _Completion("b", cached=True)],
                            "local": [_Completion("c", **unpriced),
                                      _Completion("d", cached=True, **unpriced)]})
    assert calls["cost_known"].tolist() == [True, True, False, False]
    assert calls["cost_usd"].isna().tolist() == [False, False, True, True]
    summary = nb.cost_cache_summary(calls).set_index("stage")
    assert summary.loc["priced", "cost_usd"] == pytest.approx(0.002)
    assert math.isnan(summary.loc["local", "cost_usd"]) and math.isnan(summary.loc["total", "cost_usd"])
    ax = plot_cost_cache(calls)
    notes = [t.get_text() for t in ax.texts]
    assert any("0.0020 USD" in n for n in notes)
    assert any("cost unknown" in n for n in notes) and not any("0.0000 USD" in n for n in notes)
    plt.close("all")


# --- parameter values, defaults and run folders -------------------------------------------


def test_wrong_value_type_is_reported_before_any_kernel_naming_the_parameter(notebooks, tmp_path):
    result = CliRunner().invoke(
        _app(),
        ["run", str(notebooks / "00_tiny.ipynb"), "-y", "label: [1]", "-o", str(tmp_path / "runs")],
    )
    assert result.exit_code == 2
    assert "parameter 'label' is a str (default 'a'), got list [1]" in result.output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "value, annotation",
    [(2, "float"), (2.5, "float"), (None, "bool | None"), (True, "bool | None"),
     ([1], "list[int]"), ((1,), "list"), ("x", "Path"), ("x", None)],
)
def test_check_values_accepts(value, annotation):
    nb.check_values({"p": value}, {"p": 0.0 if annotation == "float" else None},
                    annotations={"p": annotation})


@pytest.mark.parametrize(
    "value, default, match",
    [
        (True, 5, r"'p' is an int \(default 5\), got bool True"),
        (2.5, 5, r"'p' is an int \(default 5\), got float 2.5"),
        ("three", 5, r"'p' is an int \(default 5\), got str 'three'"),
        ("[3, 4]", [1, 2], r"'p' is a list, got the string '\[3, 4\]': give a YAML list with -y, "
                           r"e.g. -y 'p: \[a, b\]' \(papermill's -p passes every value as text\)"),
        ("{a: 1}", {}, r"'p' is a dict, got the string .*YAML mapping with -y"),
    ],
)
def test_check_values_names_the_parameter_and_says_how_to_fix_it(value, default, match):
    with pytest.raises(ValueError, match=match):
        nb.check_values({"p": value}, {"p": default})


def test_changed_parameters_leaves_out_what_does_not_change_the_numbers():
    defaults = {"values": [1, 2], "cache_mode": "readwrite", "progress": False, "fresh_cache": True}
    same = {"values": (1, 2), "cache_mode": "readonly", "progress": True, "fresh_cache": False}
    assert set(nb.RUN_NEUTRAL) == {"cache_mode", "fresh_cache", "progress"}
    assert nb.changed_parameters(same, defaults) == {}
    assert nb.changed_parameters({"values": [1.0, 2.0]}, defaults) == {}
    assert nb.changed_parameters({"values": [3]}, defaults) == {"values": [3]}


def test_params_command_lists_type_default_and_comment(notebooks):
    result = CliRunner().invoke(_app(), ["params", str(notebooks / "00_tiny.ipynb")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines == ["00_tiny: 2 parameters, set with -y 'name: value' or -f params.yaml",
                     "  values: list[int] = [1, 2]", "      numbers to add",
                     '  label: str = "a"', "      a label"]
    assert list(nb.parameter_table(notebooks / "00_tiny.ipynb").columns) == list(nb.PARAMETER_COLUMNS)


def test_params_listing_fits_a_terminal_however_long_the_default():
    table = pd.DataFrame([{"name": "judge_models", "type": "list",
                           "default": str([f"sim/judge-{c}" for c in "abcdefghij"]),
                           "comment": "judge models (litellm strings; sim/* run offline) " * 3}])
    lines = run_cli.parameter_lines(table)
    assert max(map(len, lines)) <= 88 and len(lines) >= 4
    assert lines[0].startswith("  judge_models: list = ['sim/judge-a',")
    assert " ".join(x.strip() for x in lines).count("sim/judge-") == 10  # nothing cut


@pytest.mark.slow
def test_only_the_default_run_writes_to_the_project_results(notebooks, monkeypatch):
    project = notebooks.parent
    monkeypatch.setenv("WORKBENCH_ROOT", str(project))
    monkeypatch.delenv("WORKBENCH_OUTPUT_DIR")
    headline = project / "data" / "results" / "tiny" / "headline.json"

    default = nb.run_notebook("00", directory=notebooks)
    assert default.parent.parent == project / "data" / "runs"
    assert default.parent.name.endswith("-00_tiny")
    assert json.loads(headline.read_text(encoding="utf-8"))["total"] == 3

    result = CliRunner().invoke(_app(), ["run", str(notebooks / "00_tiny.ipynb"), "-y", "values: [5]"])
    assert result.exit_code == 0, result.output
    changed = Path(result.output.strip().splitlines()[-1])
    assert "parameters differ from the defaults (values)" in result.output
    assert json.loads(headline.read_text(encoding="utf-8"))["total"] == 3  # untouched
    run_headline = changed.parent / "results" / "tiny" / "headline.json"
    assert json.loads(run_headline.read_text(encoding="utf-8"))["total"] == 5


def test_setup_sends_a_non_default_session_to_a_run_folder_and_records_the_run(
    notebooks, monkeypatch
):
    project = notebooks.parent
    _write_notebook(
        notebooks / "s9_demo.ipynb",
        "values: list = [1, 2]  # numbers\nprogress: bool = False  # bars\n",
        "x = 1\n",
    )
    monkeypatch.setenv("WORKBENCH_ROOT", str(project))
    monkeypatch.delenv("WORKBENCH_OUTPUT_DIR")
    default_file = project / "data" / "results" / "s9_demo" / "headline.json"

    ctx = nb.setup(0, study="s9_demo", parameters={"values": [1, 2], "progress": True})
    assert nb.OUTPUT_ENV not in os.environ
    assert ctx["results_dir"] == project / "data" / "results" / "s9_demo"
    assert nb.record("s9_demo", total=3) == {"total": 3}

    ctx = nb.setup(0, study="s9_demo", parameters={"values": [4], "progress": False, "x": 1})
    folder = Path(os.environ[nb.OUTPUT_ENV])
    assert folder.parent == project / "data" / "runs" and folder.name.endswith("-s9_demo")
    assert ctx["figures_dir"] == folder / "figures" / "s9_demo"
    written = nb.record("s9_demo", total=4)
    assert written["run"]["parameters"] == {"values": [4]}
    assert written["run"]["version"] == workbench.__version__
    assert "commit" in written["run"]  # None here: the temporary project is no git checkout
    assert nb.read_headline("s9_demo") == written
    assert json.loads(default_file.read_text(encoding="utf-8")) == {"total": 3}  # untouched

    nb.setup(0, study="s9_demo", parameters={"values": [1, 2]})  # back to the defaults
    assert nb.OUTPUT_ENV not in os.environ
    assert nb.record("s9_demo", total=3) == {"total": 3}
    with pytest.raises(ValueError, match="needs study"):
        nb.setup(0, parameters={"values": [1]})


@pytest.mark.slow
def test_interactive_only_in_a_kernel_that_jupyter_server_started(notebooks, tmp_path, monkeypatch):
    import ipykernel  # noqa: F401  (interactive() also asks for a kernel process)

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert not nb.interactive()
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebooks / "00_tiny.ipynb"))
    assert nb.interactive()
    probe = _write_notebook(
        notebooks / "x9_probe.ipynb",
        "label: str = 'a'  # a label\n",
        "from workbench.notebook import interactive, record\n"
        "record('probe', interactive=interactive())\n",
    )
    nb.run_notebook(probe, output_dir=tmp_path / "runs")  # started from a Lab kernel, say
    assert nb.read_headline("probe") == {"interactive": False}
