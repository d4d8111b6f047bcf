"""Every notebook in notebooks/: parameters, a small Papermill run, headline numbers, lint.

Study authors: register your notebook in ``tests/notebook_cases/<stem>.py`` (the tests
fail for a notebook without one), defining

- ``SMALL``: values that make it run in seconds on the sim backend;
- ``FIGURES``: files it must write below ``figures/<stem>/``;
- ``check(headline, params)``: asserts on the numbers it ``record``s.

A study notebook's ``parameters`` cell must declare exactly the fields of its study's
``Config`` (``workbench.studies.<stem>``), with the same defaults; the tour, which has no
study module, lists its parameter names in ``PARAMETERS`` instead.

Conventions the tests rely on: the study name given to ``setup``, ``save_figure`` and
``record`` is the notebook's stem (``00_tour``), and the notebook writes through
``workbench.notebook`` / ``workbench.plots`` so ``WORKBENCH_OUTPUT_DIR`` redirects its
figures and tables into the test's temporary folder. Each run gets its own LLM cache.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import tempfile
from pathlib import Path

import pytest
from PIL import Image

from workbench import notebook as nb
from workbench.plots import SIM_LABEL
from workbench.studies import config_fields

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
CASES_DIR = Path(__file__).resolve().parents[1] / "notebook_cases"
NOTEBOOKS = sorted(p for p in NOTEBOOK_DIR.glob("*.ipynb") if not p.name.startswith("."))
IDS = [p.stem for p in NOTEBOOKS]
TOUR = "00_tour"
STUDY_NOTEBOOKS = [p for p in NOTEBOOKS if p.stem != TOUR]


def _load_case(stem: str):
    path = CASES_DIR / f"{stem}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"notebook_case_{stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = {stem: _load_case(stem) for stem in IDS}


def _case(stem: str):
    case = CASES[stem]
    assert case is not None, f"register {stem!r} in {CASES_DIR / (stem + '.py')}"
    return case


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_is_registered(path):
    case = _case(path.stem)
    for name in ("SMALL", "FIGURES", "check") + (("PARAMETERS",) if path.stem == TOUR else ()):
        assert hasattr(case, name), f"{CASES_DIR / (path.stem + '.py')} lacks {name}"


def test_there_is_a_tour():
    assert TOUR in IDS


def _as_list(value):
    return list(value) if isinstance(value, list | tuple) else value


@pytest.mark.parametrize("path", STUDY_NOTEBOOKS, ids=[p.stem for p in STUDY_NOTEBOOKS])
def test_parameters_are_the_study_config(path):
    """The parameters cell declares every field of ``workbench.studies.<stem>.Config``,
    and nothing else, with the same default values (lists and tuples alike)."""
    study = importlib.import_module(f"workbench.studies.{path.stem}")
    fields = {name: _as_list(value) for name, value in config_fields(study.Config).items()}
    declared = {name: _as_list(ast.literal_eval(info["default"]))
                for name, info in nb.notebook_parameters(path).items()}
    assert sorted(declared) == sorted(fields), "parameter names differ from Config fields"
    differ = {name: (declared[name], fields[name]) for name in fields
              if declared[name] != fields[name]}
    assert not differ, f"defaults differ (notebook, Config): {differ}"


def test_tour_parameters():
    assert set(nb.notebook_parameters(NOTEBOOK_DIR / f"{TOUR}.ipynb")) == _case(TOUR).PARAMETERS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_parameters_are_typed_and_commented(path):
    declared = nb.notebook_parameters(path)
    assert set(_case(path.stem).SMALL) <= set(declared)
    for name, info in declared.items():
        assert info["inferred_type_name"] not in (None, "None"), f"{name}: add a type annotation"
        assert info["help"].strip(), f"{name}: add a comment saying what it is"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_runs_with_small_parameters(path, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readwrite")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    params = _case(path.stem).SMALL
    executed = nb.run_notebook(path, parameters=params, output_dir=tmp_path / "runs")
    assert executed == (tmp_path / "runs" / path.name).resolve()

    figures = tmp_path / "out" / "figures" / path.stem
    written = {p.name for p in figures.iterdir()} if figures.exists() else set()
    assert _case(path.stem).FIGURES <= written, (
        f"missing {_case(path.stem).FIGURES - written}"
    )
    for name in written:  # the small runs use sim judges: every figure must say so
        file = figures / name
        if file.suffix == ".png":
            assert Image.open(file).text.get("Description") == SIM_LABEL, name
        elif file.suffix == ".svg":
            assert f"<!-- {SIM_LABEL} -->" in file.read_text(encoding="utf-8"), name

    headline = nb.read_headline(path.stem)
    assert headline, "the last cell should record headline numbers"
    _case(path.stem).check(headline, params)


VARIANTS = [(path, name) for path in NOTEBOOKS
            for name in getattr(CASES[path.stem], "VARIANTS", None) or {}]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "variant"), VARIANTS,
                         ids=[f"{p.stem}-{name}" for p, name in VARIANTS])
def test_notebook_runs_with_each_switch(path, variant, tmp_path, monkeypatch):
    """``VARIANTS`` of a case (name -> values over ``SMALL``) flip its documented switches
    (release folders, ``bundled: false``, ...): the notebook must run through each one and
    record numbers ``check`` accepts."""
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readwrite")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    case = _case(path.stem)
    params = {**case.SMALL, **case.VARIANTS[variant]}
    nb.run_notebook(path, parameters=params, output_dir=tmp_path / "runs")
    headline = nb.read_headline(path.stem)
    assert headline, "the last cell should record headline numbers"
    case.check(headline, params)


# --- lint: the rules of the project's notebook checker, re-implemented ------------------

LINT_RULES = [
    (re.compile(r"^\s*(async\s+)?def\s|^\s*class\s", re.M), "defines a function or class"),
    (re.compile(r"os\.chdir|^\s*%cd\b|^\s*cd\s", re.M), "changes directory"),
    (re.compile(r"pip install|!pip|%pip", re.M), "installs packages"),
    (
        re.compile(r"^\s*(import|from)\s+(openai|anthropic|google\.generativeai|litellm)\b", re.M),
        "imports a provider SDK",
    ),
    (re.compile(r"['\"](/[A-Za-z0-9_.-]+/|[A-Za-z]:\\\\)"), "holds an absolute path"),
    (
        re.compile(r"time\.time\(\)|datetime\.now\(|%%?time\b|perf_counter"),
        "measures or prints wall-clock time",
    ),
    (
        re.compile(
            r"np\.random\.(seed|rand|randn|randint|choice|normal)\(|^\s*import random\b", re.M
        ),
        "uses unseeded or global randomness",
    ),
]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_lint(path):
    cells = _cells(path)
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    found = []
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        src = _source(cell)
        found += [f"cell {i} {what}" for rx, what in LINT_RULES if rx.search(src)]
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"cell {i} has a stored error output ({out.get('ename')})")
    assert not found, found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_parameters_cell_holds_only_commented_literals(path):
    (cell,) = [c for c in _cells(path) if "parameters" in c.get("metadata", {}).get("tags", [])]
    src = _source(cell)
    lines = src.splitlines()
    for stmt in ast.parse(src).body:
        assert isinstance(stmt, ast.Assign | ast.AnnAssign), f"line {stmt.lineno}: only assignments"
        ast.literal_eval(stmt.value)  # raises for anything but a literal
        assert "#" in lines[stmt.lineno - 1], f"line {stmt.lineno}: comment what it is"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_committed_outputs_come_from_a_clean_run(path):
    """Stored outputs (checked by nbval) exist, ran top to bottom, hold no local paths."""
    code = [c for c in _cells(path) if c.get("cell_type") == "code"]
    counts = [c.get("execution_count") for c in code]
    assert counts == list(range(1, len(code) + 1)), "execute the whole notebook once, in order"
    local = {str(ROOT), str(Path.home()) + "/", tempfile.gettempdir() + "/"}
    text = json.dumps([c.get("outputs", []) for c in code])
    leaked = [p for p in local if p in text]
    assert not leaked, f"stored outputs hold machine-specific paths: {leaked}"
    assert "latency" not in text, "latency changes between runs; do not store it"
