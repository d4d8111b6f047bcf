"""Point estimates with confidence intervals: ``plot_estimates``, ``plot_correlations``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from workbench.plots._common import dodge, new_axes, order_of, require
from workbench.plots._style import mark_backends


def plot_estimates(
    data: pd.DataFrame,
    *,
    y: str,
    estimate: str = "estimate",
    ci_low: str | None = "ci_low",
    ci_high: str | None = "ci_high",
    hue: str | None = None,
    order: Sequence[Any] | None = None,
    hue_order: Sequence[Any] | None = None,
    reference: float | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
) -> Axes:
    """Point estimates with confidence intervals, one row per group (and hue).

    For indices per method, effects per bias x judge, correlations per metric x level:
    the frames ``workbench.stats`` returns (``estimate, ci_low, ci_high``).

    Parameters
    ----------
    data : pandas.DataFrame
        One row per (``y``, ``hue``) pair.
    y : str
        Column of the groups shown on the vertical axis (first group on top).
    estimate, ci_low, ci_high : str
        Columns of the point and the interval; ``ci_low=None`` draws points only. A
        missing (NaN) interval draws the point alone.
    hue : str, optional
        Column whose levels are drawn side by side within a group, with a legend.
    order, hue_order : sequence, optional
        Group and hue orders (default: order of first appearance).
    reference : float, optional
        Draw a dashed vertical line there (0 for effects and correlations).
    ax : matplotlib Axes, optional
    title, xlabel, ylabel : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    require(data, [y, estimate, ci_low, ci_high, hue], "plot_estimates")
    groups = order_of(data[y], order)
    hues = order_of(data[hue], hue_order) if hue else [None]
    ax = new_axes(ax, figsize=(6.4, max(2.5, 0.45 * len(groups) * max(1, len(hues) ** 0.5) + 1.2)))
    offsets = dodge(len(hues))
    for j, level in enumerate(hues):
        part = data if level is None else data[data[hue] == level]
        if part[y].duplicated().any():
            dup = part.loc[part[y].duplicated(), y].iloc[0]
            raise ValueError(
                f"plot_estimates: several rows for {y}={dup!r}"
                + (f", {hue}={level!r}" if hue else "")
                + "; aggregate first or pass hue"
            )
        part = part.set_index(y).reindex(groups)
        pos = np.arange(len(groups)) + offsets[j]
        est = part[estimate].to_numpy(dtype=float)
        color = f"C{j % 10}"
        if ci_low and ci_high:
            lo = part[ci_low].to_numpy(dtype=float)
            hi = part[ci_high].to_numpy(dtype=float)
            ok = np.isfinite(lo) & np.isfinite(hi)
            ax.hlines(pos[ok], lo[ok], hi[ok], color=color, linewidth=1.6)
        label = None if level is None else str(level)
        ax.plot(est, pos, "o", color=color, markersize=5, label=label)
    if reference is not None:
        ax.axvline(reference, color="0.4", linestyle="--", linewidth=0.9, zorder=0)
    ax.set_yticks(np.arange(len(groups)), labels=[str(g) for g in groups])
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.set_xlabel(xlabel if xlabel is not None else estimate)
    ax.set_ylabel(ylabel if ylabel is not None else y)
    if title:
        ax.set_title(title)
    if hue:
        ax.legend(title=hue, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    mark_backends(ax, data)
    return ax


def plot_correlations(
    data: pd.DataFrame,
    *,
    metric: str = "metric",
    level: str | None = "level",
    estimate: str = "estimate",
    ci_low: str | None = "ci_low",
    ci_high: str | None = "ci_high",
    order: Sequence[Any] | None = None,
    level_order: Sequence[Any] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str = "correlation with the human score",
) -> Axes:
    """Correlation coefficients with CIs per metric (rows) and level (colours), on [-1, 1].

    Takes the frame of ``workbench.stats.correlate`` with a column naming the metric;
    ``level`` is e.g. pooled / per_group_mean, or an answer model. A dashed line marks 0.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = plot_estimates(
        data,
        y=metric,
        estimate=estimate,
        ci_low=ci_low,
        ci_high=ci_high,
        hue=level,
        order=order,
        hue_order=level_order,
        reference=0.0,
        ax=ax,
        title=title,
        xlabel=xlabel,
        ylabel=metric,
    )
    ax.set_xlim(-1.05, 1.05)
    return ax
