"""workbench.columns: one vocabulary of column names, and every table kept inside it."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from workbench import columns
from workbench.columns import COLUMNS, RESULT_CORE, RESULT_EXTRA, STATS_ORDER, undeclared

CASES_DIR = Path(__file__).resolve().parent / "notebook_cases"
STUDIES = sorted(p.stem for p in CASES_DIR.glob("*.py") if not p.stem.startswith("00_"))


def test_every_column_is_documented_in_one_line():
    for name, doc in COLUMNS.items():
        assert name == name.lower() and name.isidentifier(), name
        assert isinstance(doc, str) and doc.strip() and "\n" not in doc, name


def test_layouts_name_declared_columns_once():
    for layout in (RESULT_CORE + RESULT_EXTRA, STATS_ORDER):
        assert len(set(layout)) == len(layout)
        assert not undeclared(layout)


def test_judges_and_stats_take_their_columns_from_the_vocabulary():
    from workbench.judges import COLUMN_DOCS, CORE_COLUMNS, EXTRA_COLUMNS, RESULT_COLUMNS
    from workbench.stats import COLUMNS as STATS_COLUMNS

    assert CORE_COLUMNS == RESULT_CORE and EXTRA_COLUMNS == RESULT_EXTRA
    assert COLUMN_DOCS == columns.docs(RESULT_COLUMNS)
    assert list(STATS_COLUMNS) == list(STATS_ORDER)
    assert STATS_COLUMNS == columns.docs(STATS_ORDER)


def test_results_frame_uses_only_declared_names():
    from workbench.judges._columns import empty_row, results_frame

    frame = results_frame([{**empty_row(), "trial": 0}])
    assert len(frame) == 1 and not undeclared(frame.columns)


def test_dataset_tables_use_the_vocabulary():
    from workbench.datasets._schema import CANONICAL_COLUMNS

    for table, names in CANONICAL_COLUMNS.items():
        assert not undeclared(names), table


def test_undeclared_keeps_order_and_docs_refuses_unknown_names():
    assert undeclared(["p_val", "estimate", "pval"]) == ["p_val", "pval"]
    with pytest.raises(KeyError):
        columns.docs(["pval"])


def _small(stem: str) -> dict:
    spec = importlib.util.spec_from_file_location(f"columns_case_{stem}", CASES_DIR / f"{stem}.py")
    case = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(case)
    return dict(case.SMALL)


def _values(frames: dict[str, pd.DataFrame]) -> set:
    """Every text value of a declared column: a wide table may spread them over its header."""
    out = set()
    for frame in frames.values():
        for name in frame.columns:
            if name in COLUMNS:
                out.update(v for v in frame[name] if isinstance(v, str))
    return out


@pytest.mark.parametrize("stem", STUDIES)
@pytest.mark.slow
def test_study_tables_stay_inside_the_vocabulary(stem):
    """Each study, on its notebook's small parameters: every table it writes has declared
    columns only (a wide table's headers may also be values of a declared column)."""
    study = importlib.import_module(f"workbench.studies.{stem}")
    results = study.run(study.Config(**_small(stem)))
    not_frames = [k for k, v in results.items() if not isinstance(v, pd.DataFrame)]
    assert not not_frames, f"{stem}.run() must return only DataFrames (the contract): {not_frames}"
    tables = study.tables(results)
    assert tables
    values = _values(results)
    for name, frame in tables.items():
        unknown = [c for c in undeclared(map(str, frame.columns)) if c not in values]
        assert not unknown, f"{stem}.tables()[{name!r}]: {unknown} not in workbench.columns"


def test_published_numbers_use_the_vocabulary():
    from workbench.studies._contract import PUBLISHED_DIR

    for path in sorted(PUBLISHED_DIR.glob("*.csv")):
        assert not undeclared(pd.read_csv(path, nrows=0).columns), path.name
