"""Notebook support: the setup cell, headline numbers, call tables, Papermill runs.

Every study notebook starts with ``ctx = setup(seed, study=...)`` and ends with
``record(study, **headline)``; ``run_notebook`` and ``run_all`` (behind ``workbench
run`` and ``workbench run-all``) execute notebooks with Papermill into ``data/runs/``;
``store_outputs`` re-executes a notebook with its defaults to refresh the outputs that
are committed with it (and checked by nbval).
Figures and tables go below ``figures/<study>/`` and ``data/results/<study>/``, or below
``WORKBENCH_OUTPUT_DIR`` when it is set (the tests use it).
"""

from workbench.notebook._calls import (
    CALL_COLUMNS,
    SUMMARY_COLUMNS,
    calls_frame,
    cost_cache_summary,
)
from workbench.notebook._outputs import OUTPUT_ENV, figures_dir, headline_path, results_dir
from workbench.notebook._record import HEADLINE_DIGITS, read_headline, record
from workbench.notebook._run import (
    RUN_COLUMNS,
    check_parameters,
    describe_error,
    notebook_parameters,
    parse_parameters,
    resolve_notebook,
    run_all,
    run_notebook,
)
from workbench.notebook._session import PANDAS_OPTIONS, setup
from workbench.notebook._store import store_outputs

__all__ = [
    "CALL_COLUMNS",
    "HEADLINE_DIGITS",
    "OUTPUT_ENV",
    "PANDAS_OPTIONS",
    "RUN_COLUMNS",
    "SUMMARY_COLUMNS",
    "calls_frame",
    "check_parameters",
    "cost_cache_summary",
    "describe_error",
    "figures_dir",
    "headline_path",
    "notebook_parameters",
    "parse_parameters",
    "read_headline",
    "record",
    "resolve_notebook",
    "results_dir",
    "run_all",
    "run_notebook",
    "setup",
    "store_outputs",
]
