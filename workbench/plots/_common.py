"""Shared helpers of the ``plot_*`` functions: tidy frame in, matplotlib Axes out, no saving.

Each one draws on ``ax`` when given, else on a new figure; each checks its columns and
raises ``ValueError`` naming a missing one; each remembers the frame's ``backend``
values on the figure and writes "simulated judges" on it when a row came from ``sim``
(see ``save_figure``). Category order is the order of first appearance unless an
``order`` is given, so a study controls it by sorting its frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from workbench.plots._style import ensure_cjk_fallback


def require(data: Any, columns: Sequence[str | None], where: str) -> None:
    """Raise when ``data`` is not a DataFrame or lacks a column (naming it and ``where``)."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"{where}: expected a pandas DataFrame, got {type(data).__name__}")
    missing = [c for c in columns if c is not None and c not in data.columns]
    if missing:
        raise ValueError(
            f"{where}: column(s) {missing} not in data (columns: {list(data.columns)})"
        )


def new_axes(ax: Axes | None, figsize: tuple[float, float] | None = None) -> Axes:
    """``ax`` itself, or the Axes of a new constrained-layout figure; fonts made ready."""
    ensure_cjk_fallback()
    if ax is not None:
        return ax
    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def order_of(values: pd.Series, order: Sequence[Any] | None) -> list[Any]:
    """``order`` if given, else the distinct values in order of first appearance."""
    return list(order) if order is not None else list(pd.unique(values.dropna()))


def dodge(n: int, band: float = 0.8) -> np.ndarray:
    """Offsets that spread ``n`` series side by side within a band of width ``band``."""
    if n <= 1:
        return np.zeros(1)
    return (np.arange(n) - (n - 1) / 2) * (band / n)
