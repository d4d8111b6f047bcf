"""Notebook support: the setup cell, parameters, headline numbers, call tables, Papermill runs.

Every study notebook starts with ``ctx = setup(seed, study=..., parameters=globals())``
and ends with ``record(study, **headline)``; ``run_notebook`` and ``run_all`` (behind
``workbench run`` and ``workbench run-all``) execute notebooks with Papermill into
``data/runs/``; ``store_outputs`` re-executes a notebook with its defaults to refresh the
outputs that are committed with it (and checked by nbval). ``notebook_parameters``,
``check_parameters`` and ``parameter_table`` read and check a notebook's ``parameters``
cell (behind ``workbench params``); ``interactive`` tells a JupyterLab kernel from a
Papermill or nbval one (progress bars on or off).

Figures and tables go below ``figures/<study>/`` and ``data/results/<study>/`` for the
default run only; a run with other parameters writes them below its run folder
``data/runs/<timestamp>-<study>/``, through ``WORKBENCH_OUTPUT_DIR`` (the tests set it
too): ``figures_dir`` and ``results_dir`` are :mod:`workbench.config`'s, re-exported here.
"""

from workbench.config import OUTPUT_ENV, figures_dir, interactive, results_dir
from workbench.notebook._calls import (
    CALL_COLUMNS,
    SUMMARY_COLUMNS,
    calls_frame,
    cost_cache_summary,
)
from workbench.notebook._params import (
    PARAMETER_COLUMNS,
    RUN_NEUTRAL,
    changed_parameters,
    check_parameters,
    check_values,
    notebook_parameters,
    parameter_defaults,
    parameter_table,
    parse_parameters,
)
from workbench.notebook._run import (
    RUN_COLUMNS,
    describe_error,
    resolve_notebook,
    run_all,
    run_notebook,
    store_outputs,
)
from workbench.notebook._session import (
    HEADLINE_DIGITS,
    PANDAS_OPTIONS,
    headline_path,
    read_headline,
    record,
    setup,
)

__all__ = [
    "CALL_COLUMNS",
    "HEADLINE_DIGITS",
    "OUTPUT_ENV",
    "PANDAS_OPTIONS",
    "PARAMETER_COLUMNS",
    "RUN_COLUMNS",
    "RUN_NEUTRAL",
    "SUMMARY_COLUMNS",
    "calls_frame",
    "changed_parameters",
    "check_parameters",
    "check_values",
    "cost_cache_summary",
    "describe_error",
    "figures_dir",
    "headline_path",
    "interactive",
    "notebook_parameters",
    "parameter_defaults",
    "parameter_table",
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
