"""``run_all`` in one shared kernel, the parameters cell read without papermill, and
``workbench bench run-all`` (no timing is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from workbench import notebook as nb

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(autouse=True)
def _outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MPLBACKEND", "Agg")


def _notebook(path: Path, parameters: str, *bodies: str) -> Path:
    cell = new_code_cell(parameters)
    cell.metadata["tags"] = ["parameters"]
    doc = new_notebook(cells=[cell, *(new_code_cell(b) for b in bodies)])
    doc.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                  "language": "python"}
    nbformat.write(doc, path)
    return path


def _stdout(executed: Path) -> list[str]:
    cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    return [out["text"] if isinstance(out["text"], str) else "".join(out["text"])
            for c in cells if c["cell_type"] == "code"
            for out in c["outputs"] if out.get("name") == "stdout"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_parameters_are_read_as_papermill_reads_them(path):
    papermill = pytest.importorskip("papermill")
    assert nb.notebook_parameters(path) == dict(papermill.inspect_notebook(str(path)))


def test_parameters_cell_syntax(tmp_path):
    path = _notebook(tmp_path / "p.ipynb", (
        "# a comment line\n"
        "a: int = 1  # the a\n"
        'b = "x#y"  # a hash inside a string\n'
        "c: list[int] = [\n    1,  # one\n    2,\n]  # the list\n"
        'd: "float" = 2.5\n'
        "x.y = 3\n"
        "f, g = 1, 2\n"))
    declared = nb.notebook_parameters(path)
    assert list(declared) == ["a", "b", "c", "d"]
    assert declared["a"] == {"name": "a", "inferred_type_name": "int", "default": "1",
                             "help": "the a"}
    assert (declared["b"]["default"], declared["b"]["help"]) == ('"x#y"', "a hash inside a string")
    assert declared["b"]["inferred_type_name"] == "None"
    assert declared["c"]["inferred_type_name"] == "list[int]"
    assert (declared["c"]["default"], declared["c"]["help"]) == ("[1,2,]", "the list")
    assert nb.parameter_defaults(declared)["c"] == [1, 2]
    assert declared["d"]["inferred_type_name"] == "float"
    with pytest.raises(ValueError, match="not valid Python"):
        nb.notebook_parameters(_notebook(tmp_path / "bad.ipynb", "a = (1\n"))


@pytest.mark.slow
def test_shared_kernel_resets_everything_a_notebook_changed(tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_OUTPUT_DIR")
    monkeypatch.setenv("JPY_SESSION_NAME", "lab.ipynb")  # not passed on: no interactive kernel
    folder = tmp_path / "notebooks"
    folder.mkdir()
    _notebook(folder / "a_changes.ipynb", "n: int = 1  # a number\n",
              "import os, warnings\n"
              "import matplotlib\n"
              "import pandas as pd\n"
              "from workbench import config\n"
              "leak = n\n"
              "os.environ['WORKBENCH_LEAK'] = 'x'\n"
              "config.set_overrides({'cache_mode': 'off'})\n"
              "matplotlib.rcParams['font.size'] = 33\n"
              "pd.set_option('display.precision', 1)\n"
              "warnings.simplefilter('error')\n"
              "os.chdir(os.path.dirname(os.getcwd()))\n"
              "print(os.getpid())\n")
    _notebook(folder / "b_checks.ipynb", "n: int = 1  # a number\n",
              "import os, warnings\n"
              "import matplotlib\n"
              "import pandas as pd\n"
              "from workbench import config\n"
              "warnings.warn('shown again')\n"
              "print('leak' in globals(), os.environ.get('WORKBENCH_LEAK'), config.overrides(),\n"
              "      matplotlib.rcParams['font.size'], pd.get_option('display.precision'),\n"
              "      os.path.basename(os.getcwd()), os.environ.get('WORKBENCH_OUTPUT_DIR'),\n"
              "      os.environ.get('JPY_SESSION_NAME'))\n",
              "print(os.getpid())\n")
    _notebook(folder / "c_dies.ipynb", "n: int = 1  # a number\n", "import os\nos._exit(3)\n")
    _notebook(folder / "d_after.ipynb", "n: int = 1  # a number\n", "import os\nprint(os.getpid())\n")
    table = nb.run_all(directory=folder, output_dir=tmp_path / "runs",
                       parameters={"n": 2}, shared_kernel=True)
    assert list(table["status"]) == ["ok", "ok", "failed", "ok"]
    assert "DeadKernelError" in table["error"][2]
    runs = tmp_path / "runs"
    state, pid = _stdout(runs / "b_checks.ipynb")
    # n=2 is not the default: the outputs go below the run folder, as with a new kernel
    assert state.split() == ["False", "None", "{}", "10.0", "6", "notebooks", str(runs.resolve()),
                             "None"]
    assert pid == _stdout(runs / "a_changes.ipynb")[0]  # one kernel ...
    assert pid != _stdout(runs / "d_after.ipynb")[0]  # ... and a new one after c killed it
    assert (runs / "c_dies.ipynb").exists()  # written up to the cell that killed it
    # every notebook's page (written while the next one ran) and an index linking them all
    names = ("a_changes", "b_checks", "c_dies", "d_after")
    for name in names:
        assert (runs / f"{name}.html").stat().st_mtime >= (runs / f"{name}.ipynb").stat().st_mtime
    index = (runs / "index.html").read_text(encoding="utf-8")
    assert all(f"href='{name}.html'" in index for name in names)
    assert "<span class='failed'>failed</span>" in index
    doc = nbformat.read(runs / "b_checks.ipynb", as_version=4)
    code = [c for c in doc.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    warned = [o for c in code for o in c.outputs if o.get("name") == "stderr"]
    assert warned and "shown again" in warned[0]["text"]


@pytest.mark.slow
def test_shared_kernel_gives_the_same_executed_copy(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("a_one", "b_two"):
        _notebook(folder / f"{name}.ipynb", "values: list = [1, 2]  # numbers\n",
                  "import pandas as pd\n"
                  "from workbench.notebook import setup\n"
                  "ctx = setup(3)\n"
                  "pd.DataFrame({'v': values, 'r': ctx['rng'].random(len(values))})",
                  "sum(values)")

    def outputs(shared: bool) -> list:
        out = tmp_path / f"runs-{shared}"
        table = nb.run_all(directory=folder, output_dir=out, shared_kernel=shared)
        assert set(table["status"]) == {"ok"}
        docs = [nbformat.read(out / f"{name}.ipynb", as_version=4) for name in ("a_one", "b_two")]
        return [(c.execution_count, c.outputs) for d in docs for c in d.cells]

    assert outputs(True) == outputs(False)


@pytest.mark.slow
def test_bench_run_all_runs_cold_then_warm_in_temporary_folders(tmp_path):
    from workbench.cli.bench import bench_run_all

    folder = tmp_path / "notebooks"
    folder.mkdir()
    _notebook(folder / "a_one.ipynb", "values: list = [1, 2]  # numbers\n",
              "import os\nprint(os.environ['WORKBENCH_CACHE_DIR'])\n")
    lines: list[str] = []
    result = bench_run_all(directory=folder, keep=tmp_path / "kept", echo=lines.append)
    assert list(result["table"]["notebook"]) == ["a_one"]
    assert set(result["table"]["status"]) == {"ok"}
    assert result["cold_s"] > 0 and result["warm_s"] > 0
    kept = tmp_path / "kept"
    assert _stdout(kept / "warm" / "a_one.ipynb") == [str(kept / "cache") + "\n"]
    assert (kept / "cold" / "a_one.ipynb").exists()
    assert any("warm/cold" in line or "faster" in line for line in lines)
    with pytest.raises(ValueError, match="exists already"):
        bench_run_all(directory=folder, keep=kept, echo=lines.append)
