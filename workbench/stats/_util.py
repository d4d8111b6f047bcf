"""Shared helpers: argument checks, random generators, intervals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

Columns = str | Sequence[str]


def as_list(columns: Columns | None) -> list[str]:
    """Return ``columns`` as a list (``None`` -> ``[]``, ``"x"`` -> ``["x"]``)."""
    if columns is None:
        return []
    if isinstance(columns, str):
        return [columns]
    return list(columns)


def label(columns: Columns | None) -> str:
    """Columns joined by ``+`` for the ``unit`` / ``within`` output columns."""
    return "+".join(as_list(columns))


def check_frame(data: Any, columns: Sequence[str], *, name: str = "data") -> pd.DataFrame:
    """Check that ``data`` is a DataFrame holding ``columns``; return it."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, not {type(data).__name__}")
    missing = [c for c in dict.fromkeys(columns) if c not in data.columns]
    if missing:
        raise ValueError(f"{name} has no column(s) {missing}; its columns are {list(data.columns)}")
    return data


def numeric(data: pd.DataFrame, column: str, *, name: str = "data") -> np.ndarray:
    """Column as float array; a non-numeric value raises naming its row."""
    values = pd.to_numeric(data[column], errors="coerce").to_numpy(dtype=float, copy=True)
    bad = np.isnan(values) & data[column].notna().to_numpy()
    if bad.any():
        row = data.index[np.flatnonzero(bad)[0]]
        raise ValueError(
            f"{name}: column {column!r} must be numeric; row {row!r} holds "
            f"{data[column].loc[row]!r}"
        )
    return values


def check_unique(data: pd.DataFrame, columns: Sequence[str], *, why: str) -> None:
    """Raise if two rows share the values of ``columns`` (naming the first such row)."""
    dup = data.duplicated(subset=list(columns), keep=False)
    if dup.any():
        first = data.index[np.flatnonzero(dup.to_numpy())[:2]]
        values = data.loc[first[0], list(columns)].to_dict()
        raise ValueError(
            f"rows {list(first)} share {values}: rows must be unique on {list(columns)} ({why})"
        )


def as_rng(rng: Any, *, needed_for: str = "the bootstrap") -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator or an int seed; never global state."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    if rng is None:
        raise ValueError(f"{needed_for} needs an explicit rng (a numpy Generator or an int seed)")
    raise TypeError(f"rng must be a numpy Generator or an int seed, not {type(rng).__name__}")


def check_level(ci_level: float) -> float:
    """Validate a confidence level in (0, 1)."""
    if not 0 < ci_level < 1:
        raise ValueError(f"ci_level must be in (0, 1), got {ci_level!r}")
    return float(ci_level)


def wilson_interval(successes: int, n: int, ci_level: float) -> tuple[float, float]:
    """Wilson (1927) score interval of a proportion: statsmodels' ``proportion_confint``
    (``method="wilson"``); NaN for ``n = 0``, where statsmodels divides by zero."""
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return np.nan, np.nan
    low, high = proportion_confint(successes, n, alpha=1 - ci_level, method="wilson")
    return float(low), float(high)


def percentile_interval(values: np.ndarray, ci_level: float) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates, ignoring NaN replicates."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return np.nan, np.nan
    alpha = 1 - ci_level
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def percentile_ci(reps: np.ndarray, ci_level: float, n_boot: int) -> dict[str, Any]:
    """The CI columns of a row from bootstrap replicates: ``ci_low``, ``ci_high``
    (:func:`percentile_interval`), ``ci_level``, ``ci_method`` and ``n_boot``."""
    low, high = percentile_interval(reps, ci_level)
    return {"ci_low": low, "ci_high": high, "ci_level": ci_level,
            "ci_method": "percentile_bootstrap", "n_boot": n_boot}


def group_items(data: pd.DataFrame, by: list[str]):
    """Iterate ``(key_dict, frame)`` over ``by`` groups (one group when ``by`` is empty)."""
    if not by:
        yield {}, data
        return
    for key, frame in data.groupby(by, sort=True, dropna=False, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(by, key, strict=True)), frame
