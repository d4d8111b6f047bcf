"""The setup cell of every notebook: ``setup(seed, study=...)``."""

from __future__ import annotations

import logging
import tempfile
import warnings
from typing import Any

import numpy as np
import pandas as pd

from workbench import config
from workbench.notebook._outputs import check_name, figures_dir, results_dir

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


def setup(
    seed: int = 0,
    *,
    study: str | None = None,
    cache_mode: str | None = None,
    fresh_cache: bool = False,
) -> dict[str, Any]:
    """Prepare a notebook session and return its context.

    Sets the matplotlib style (``workbench.plots.use_style``: fonts with a Japanese
    fallback, deterministic SVG ids; the backend is left alone, so the same cell works
    inline in JupyterLab and under ``MPLBACKEND=Agg``), pandas display options
    (``PANDAS_OPTIONS``), quiets litellm's logging, and optionally sets the LLM cache.
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

    from workbench import plots

    plots.use_style()
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
