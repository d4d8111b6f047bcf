"""Matrices: ``plot_heatmap`` (e.g. a weakness map), ``plot_scatter_matrix``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from workbench.plots._common import new_axes, order_of, require
from workbench.plots._style import ensure_cjk_fallback, mark_backends


def plot_heatmap(
    data: pd.DataFrame,
    *,
    index: str,
    columns: str,
    values: str,
    aggfunc: str = "mean",
    index_order: Sequence[Any] | None = None,
    columns_order: Sequence[Any] | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str = "viridis",
    annotate: bool = True,
    fmt: str = ".2f",
    ax: Axes | None = None,
    title: str | None = None,
    colorbar_label: str | None = None,
) -> Axes:
    """A matrix of ``values`` by ``index`` (rows) x ``columns``, e.g. a weakness map.

    Rows sharing an (index, columns) cell are aggregated with ``aggfunc`` (default the
    mean, so True/False ``met`` verdicts become met-rates). Empty cells stay blank.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require(data, [index, columns, values], "plot_heatmap")
    frame = data[[index, columns]].assign(_v=pd.to_numeric(data[values].astype(float)))
    table = frame.pivot_table(index=index, columns=columns, values="_v", aggfunc=aggfunc)
    rows = order_of(data[index], index_order)
    cols = order_of(data[columns], columns_order)
    table = table.reindex(index=rows, columns=cols)
    ax = new_axes(ax, figsize=(max(4.0, 0.7 * len(cols) + 2.5), max(3.0, 0.35 * len(rows) + 1.6)))
    matrix = table.to_numpy(dtype=float)
    image = ax.imshow(np.ma.masked_invalid(matrix), aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(np.arange(len(cols)), labels=[str(c) for c in cols], rotation=30, ha="right")
    ax.set_yticks(np.arange(len(rows)), labels=[str(r) for r in rows])
    ax.grid(False)
    ax.set_xlabel(columns)
    ax.set_ylabel(index)
    ax.figure.colorbar(image, ax=ax, label=colorbar_label or values)
    if annotate:
        norm = image.norm
        for (i, k), value in np.ndenumerate(matrix):
            if np.isfinite(value):
                dark = norm(value) < 0.55
                ax.text(
                    k,
                    i,
                    format(value, fmt),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if dark else "black",
                )
    if title:
        ax.set_title(title)
    mark_backends(ax, data)
    return ax


def plot_scatter_matrix(
    data: pd.DataFrame,
    *,
    unit: str,
    method: str,
    score: str,
    order: Sequence[Any] | None = None,
    title: str | None = None,
    figsize: tuple[float, float] | None = None,
) -> np.ndarray:
    """Scatter matrix of per-unit mean scores, one panel per pair of methods.

    Means ``score`` over the rows of each (``unit``, ``method``) cell (e.g. the
    conversation means of S1), then plots method against method with Pearson's r in
    the corner (pairs with a unit missing on either side are dropped); the diagonal
    shows each method's histogram.

    Returns
    -------
    numpy.ndarray of matplotlib Axes, shape (k, k)
    """
    require(data, [unit, method, score], "plot_scatter_matrix")
    ensure_cjk_fallback()
    methods = order_of(data[method], order)
    if len(methods) < 2:
        raise ValueError(f"plot_scatter_matrix: need at least two {method} values, got {methods}")
    means = (
        data.assign(_s=pd.to_numeric(data[score].astype(float)))
        .groupby([unit, method], sort=False, observed=True)["_s"]
        .mean()
        .unstack(method)
        .reindex(columns=methods)
    )
    k = len(methods)
    fig, axes = plt.subplots(
        k, k, figsize=figsize or (2.3 * k + 0.6, 2.3 * k + 0.4), layout="constrained", squeeze=False
    )
    for i, row_method in enumerate(methods):
        for j, col_method in enumerate(methods):
            ax = axes[i, j]
            if i == j:
                ax.hist(means[row_method].dropna(), bins=10, color="0.55")
            else:
                pair = means[[col_method, row_method]].dropna()
                x = pair[col_method].to_numpy()
                yv = pair[row_method].to_numpy()
                ax.scatter(x, yv, s=12, alpha=0.75, color="C0")
                if len(pair) >= 3 and np.ptp(x) > 0 and np.ptp(yv) > 0:
                    r = np.corrcoef(x, yv)[0, 1]
                    ax.text(
                        0.04,
                        0.96,
                        f"r = {r:.2f}",
                        transform=ax.transAxes,
                        ha="left",
                        va="top",
                        fontsize=8,
                    )
            if i == k - 1:
                ax.set_xlabel(str(col_method))
            if j == 0:
                ax.set_ylabel(str(row_method))
    if title:
        fig.suptitle(title)
    mark_backends(fig, data)
    return axes
