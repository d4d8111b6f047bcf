"""Headline numbers of a notebook: ``record`` writes them, ``read_headline`` reads them.

One mechanism, a JSON file: ``data/results/<study>/headline.json`` (sorted keys,
floats rounded to ``HEADLINE_DIGITS`` significant digits, NaN written as ``null``). Tests
and ``workbench run-all`` read the file; no scrapbook or papermill glue is needed, and
the same file is produced whether the notebook ran in JupyterLab, under Papermill or
under nbval.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from workbench.notebook._outputs import check_name, headline_path

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
        if isinstance(value, pd.Series):
            return {str(k): _jsonable(v, f"{name}[{k!r}]") for k, v in value.items()}
        if isinstance(value, Mapping):
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


def record(study: str, /, **headline: Any) -> dict[str, Any]:
    """Write a notebook's headline numbers to ``data/results/<study>/headline.json``.

    Call it in the last cell. The file is rewritten whole, with sorted keys and floats
    rounded to ``HEADLINE_DIGITS`` significant digits, so reruns give identical bytes.

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
