"""A notebook session: the setup cell ``setup(seed, study=...)`` and the headline numbers.

Headline numbers have one mechanism, a JSON file (:func:`record`, :func:`read_headline`):
no scrapbook or papermill glue, and the same file whether the notebook ran in
JupyterLab, under Papermill or under nbval. ``setup(..., parameters=globals())`` keeps
the committed outputs for the default run: a session whose parameters differ from the
notebook's defaults writes below a run folder instead, and its headline gains a ``run``
entry; the default run's ``headline.json`` stays byte for byte as before.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

import numpy as np
import pandas as pd

from workbench import config
from workbench.config import check_name, figures_dir, results_dir
from workbench.notebook._params import changed_parameters, notebook_parameters, parameter_defaults
from workbench.notebook._provenance import new_run_dir, run_record
from workbench.notebook._replays import tally_replays_per_cell

#: pandas display options set by ``setup`` (tables in notebooks are short and rounded).
PANDAS_OPTIONS = {
    "display.precision": 3,
    "display.max_columns": 40,
    "display.max_rows": 60,
    "display.width": 120,
    "display.max_colwidth": 80,
}

_NOISY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "papermill")


def _silence_providers() -> None:
    """Keep litellm's and httpx's warnings and log lines out of the notebook."""
    warnings.filterwarnings("ignore", module=r"litellm(\..*)?")
    warnings.filterwarnings("ignore", module=r"pydantic(\..*)?")
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


#: Run entries of this kernel's non-default sessions, by study (``setup`` -> ``record``).
_RUNS: dict[str, dict[str, Any]] = {}
#: The ``WORKBENCH_OUTPUT_DIR`` value ``setup`` set itself, by study (undone for a default run).
_REDIRECTS: dict[str, str] = {}


def _route_outputs(study: str, namespace: Mapping[str, Any]) -> None:
    """Send a non-default session's outputs to a run folder and note its run entry."""
    declared = notebook_parameters(config.notebooks_dir() / f"{study}.ipynb")
    values = {name: namespace[name] for name in declared if name in namespace}
    changed = changed_parameters(values, parameter_defaults(declared))
    own = _REDIRECTS.pop(study, None)
    if own is not None and os.environ.get(config.OUTPUT_ENV) == own:
        del os.environ[config.OUTPUT_ENV]  # back to the defaults after a changed run
    _RUNS.pop(study, None)
    if not changed:
        return
    if not os.environ.get(config.OUTPUT_ENV):
        folder = new_run_dir(study)
        os.environ[config.OUTPUT_ENV] = _REDIRECTS[study] = str(folder)
        try:
            shown = folder.relative_to(config.root())
        except ValueError:
            shown = folder
        print(f"Parameters differ from the defaults ({', '.join(changed)}): figures, tables "
              f"and headline go to {shown}/, not to figures/ and data/results/.")
    _RUNS[study] = run_record(changed)


def setup(
    seed: int = 0,
    *,
    study: str | None = None,
    cache_mode: str | None = None,
    fresh_cache: bool = False,
    parameters: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Prepare a notebook session and return its context.

    Sets the matplotlib style (``workbench.plots.use_style``: fonts with a Japanese
    fallback, deterministic SVG ids; the backend is left alone, so the same cell works
    inline in JupyterLab and under ``MPLBACKEND=Agg``), pandas display options
    (``PANDAS_OPTIONS``), quiets litellm's logging, prints the cache's replay line once
    per cell under IPython (``_replays``), and optionally sets the LLM cache.
    Progress bars are per call (``complete_many(..., progress=...)``); they use
    ``tqdm.auto`` and so render as widgets in JupyterLab.

    Parameters
    ----------
    seed : int
        Seed of the returned ``numpy.random.Generator``; the only source of randomness a
        notebook should use.
    study : str, optional
        Study name; fills ``figures_dir`` and ``results_dir`` in the context.
    cache_mode : str, optional
        ``readwrite``, ``readonly``, ``refresh`` or ``off``: passed to
        ``workbench.llm.configure``. ``None`` keeps ``WORKBENCH_CACHE_MODE``.
    fresh_cache : bool
        Use a new, empty temporary cache folder for this session (removed when the
        context is garbage-collected or the kernel exits). The tour uses it so that it
        always starts cold and its stored outputs do not depend on earlier runs.
    parameters : mapping, optional
        The notebook's parameter values (``globals()``); needs ``study``, the stem of a
        notebook in ``notebooks/``. When a value differs from that notebook's default
        (leaving out ``cache_mode``, ``fresh_cache`` and ``progress``) and
        ``WORKBENCH_OUTPUT_DIR`` is not set, it is set to a new run folder
        ``data/runs/<timestamp>-<study>/`` (a line says so), and ``record`` adds the
        ``run`` entry to the headline. Rerunning with the defaults undoes it.

    Returns
    -------
    dict
        ``seed``, ``rng`` (``numpy.random.Generator``), ``study``, ``figures_dir``,
        ``results_dir`` (``None`` without a study), ``cache_mode`` (the mode in force) and,
        with ``fresh_cache``, ``cache_dir`` and the ``TemporaryDirectory`` object under
        ``_cache_tmp`` (keep the context alive to keep the folder).

    Examples
    --------
    >>> ctx = setup(7)
    >>> ctx["seed"], type(ctx["rng"]).__name__
    (7, 'Generator')
    >>> for key in PANDAS_OPTIONS:  # leave the doctest process as it was
    ...     pd.reset_option(key)
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if study is not None:
        check_name(study, "study")
    if cache_mode is not None and cache_mode not in config.CACHE_MODES:
        raise ValueError(
            f"cache_mode={cache_mode!r}: expected one of {', '.join(config.CACHE_MODES)}"
        )
    if fresh_cache and cache_mode == "readonly":
        raise ValueError("fresh_cache=True with cache_mode='readonly': every call would miss")
    if parameters is not None:
        if study is None:
            raise ValueError("setup(parameters=...) needs study=... (the notebook's stem)")
        _route_outputs(study, parameters)

    from workbench import plots  # matplotlib only for sessions, not for `workbench run`

    plots.use_style()
    tally_replays_per_cell()
    for key, value in PANDAS_OPTIONS.items():
        pd.set_option(key, value)
    _silence_providers()

    context: dict[str, Any] = {
        "seed": int(seed),
        "rng": np.random.default_rng(int(seed)),
        "study": study,
        "figures_dir": figures_dir(study) if study else None,
        "results_dir": results_dir(study) if study else None,
    }
    if fresh_cache or cache_mode is not None:
        from workbench.llm import configure

        settings: dict[str, Any] = {}
        if cache_mode is not None:
            settings["cache_mode"] = cache_mode
        if fresh_cache:
            tmp = tempfile.TemporaryDirectory(prefix="workbench-cache-")
            context["_cache_tmp"] = tmp
            context["cache_dir"] = tmp.name
            settings["cache_dir"] = tmp.name
        configure(**settings)
    context["cache_mode"] = cache_mode or config.cache_mode()
    return context


#: Significant digits kept for floats in ``headline.json``.
HEADLINE_DIGITS = 6


def _round(value: float) -> float | None:
    if math.isnan(value):
        return None
    if math.isinf(value):
        raise ValueError("is infinite")
    return float(f"{value:.{HEADLINE_DIGITS}g}")


def _jsonable(value: Any, name: str) -> Any:
    """Convert ``value`` to plain JSON types, rounding floats; ``name`` is for errors."""
    try:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, bool | np.bool_):
            return bool(value)
        if isinstance(value, int | np.integer):
            return int(value)
        if isinstance(value, float | np.floating):
            return _round(float(value))
        if value is pd.NA or value is pd.NaT:
            return None
        if isinstance(value, PurePath):
            raise TypeError("is a path (paths are machine-specific; record a name instead)")
        if isinstance(value, pd.DataFrame):
            return [_jsonable(row, name) for row in value.to_dict(orient="records")]
        if isinstance(value, pd.Series | Mapping):
            return {str(k): _jsonable(v, f"{name}[{k!r}]") for k, v in value.items()}
        if isinstance(value, list | tuple | np.ndarray):
            return [_jsonable(v, f"{name}[{i}]") for i, v in enumerate(value)]
    except ValueError as exc:
        raise ValueError(f"headline value {name!r} {exc}") from None
    except TypeError as exc:
        raise TypeError(f"headline value {name!r} {exc}") from None
    raise TypeError(
        f"headline value {name!r} has type {type(value).__name__}; "
        "use numbers, strings, booleans, lists, dicts, Series or DataFrames"
    )


def headline_path(study: str) -> Path:
    """The JSON file holding a notebook's headline numbers (see ``record``)."""
    return results_dir(study) / "headline.json"


def record(study: str, /, **headline: Any) -> dict[str, Any]:
    """Write a notebook's headline numbers to ``data/results/<study>/headline.json``.

    Call it in the last cell. The file is rewritten whole, with sorted keys and floats
    rounded to ``HEADLINE_DIGITS`` significant digits, so reruns give identical bytes.
    After ``setup(..., parameters=...)`` found parameters that differ from the defaults,
    the file also holds a ``run`` entry: ``parameters`` (those values), ``version`` and
    ``commit`` (``workbench.notebook._provenance.run_record``).

    Parameters
    ----------
    study : str
        Study name (the folder below ``data/results``).
    **headline
        Named values: numbers, strings, booleans, ``None``, lists, dicts, pandas Series
        (to dicts) or DataFrames (to lists of records). NaN is written as ``null``.

    Returns
    -------
    dict
        The values as written (displayed as the cell's output).

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["WORKBENCH_OUTPUT_DIR"] = tempfile.mkdtemp()
    >>> record("demo", rho=0.123456789, n=50, ok=True)
    {'n': 50, 'ok': True, 'rho': 0.123457}
    >>> read_headline("demo")["rho"]
    0.123457
    >>> del os.environ["WORKBENCH_OUTPUT_DIR"]
    """
    check_name(study, "study")
    if not headline:
        raise ValueError("record() needs at least one named headline value")
    run = _RUNS.get(study)
    if run is not None:
        if "run" in headline:
            raise ValueError("headline name 'run' is taken by the run entry of a non-default run")
        headline = dict(headline, run=run)
    clean = {key: _jsonable(headline[key], key) for key in sorted(headline)}
    path = headline_path(study)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(clean, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")
    return clean


def read_headline(study: str) -> dict[str, Any]:
    """Read the headline numbers ``record`` wrote for ``study``.

    Raises ``FileNotFoundError`` naming the file when the notebook has not recorded any.
    """
    path = headline_path(study)
    if not path.exists():
        raise FileNotFoundError(f"no headline numbers for study {study!r}: {path} does not exist")
    return json.loads(path.read_text(encoding="utf-8"))
