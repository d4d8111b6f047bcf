"""Bars: ``plot_bars`` (grouped means with error bars) and ``plot_cost_cache``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from workbench.plots._common import dodge, new_axes, order_of, require
from workbench.plots._style import mark_backends


def plot_bars(
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    hue: str | None = None,
    error: str | None = "sd",
    order: Sequence[Any] | None = None,
    hue_order: Sequence[Any] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    ylabel: str | None = None,
) -> Axes:
    """Grouped bars of the mean of ``y`` per ``x`` (and ``hue``), with error bars.

    ``error`` is ``"sd"`` (sample standard deviation, ddof=1), ``"se"`` (sd / sqrt(n))
    or ``None``. A group of one row has no error bar.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require(data, [x, y, hue], "plot_bars")
    if error not in {"sd", "se", None}:
        raise ValueError(f"plot_bars: error={error!r}; expected 'sd', 'se' or None")
    keys = [x] + ([hue] if hue else [])
    stats = (
        data.assign(_y=pd.to_numeric(data[y].astype(float)))
        .groupby(keys, sort=False, observed=True)["_y"]
        .agg(["mean", "std", "count"])
    )
    groups = order_of(data[x], order)
    hues = order_of(data[hue], hue_order) if hue else [None]
    ax = new_axes(ax, figsize=(max(4.0, 0.9 * len(groups) * max(1, len(hues) ** 0.5) + 1.5), 4.0))
    width = 0.8 / len(hues)
    offsets = dodge(len(hues))
    for j, level in enumerate(hues):
        index = groups if level is None else [(g, level) for g in groups]
        part = stats.reindex(pd.Index(index) if level is None else pd.MultiIndex.from_tuples(index))
        pos = np.arange(len(groups)) + offsets[j]
        mean = part["mean"].to_numpy(dtype=float)
        ax.bar(
            pos,
            np.nan_to_num(mean),
            width=width * 0.95,
            color=f"C{j % 10}",
            label=None if level is None else str(level),
        )
        if error:
            err = part["std"].to_numpy(dtype=float)
            if error == "se":
                err = err / np.sqrt(part["count"].to_numpy(dtype=float))
            ok = np.isfinite(err) & np.isfinite(mean)
            ax.errorbar(
                pos[ok], mean[ok], yerr=err[ok], fmt="none", ecolor="0.2", elinewidth=1, capsize=3
            )
    ax.set_xticks(np.arange(len(groups)), labels=[str(g) for g in groups])
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel if ylabel is not None else y + (f" (mean ± {error})" if error else ""))
    if title:
        ax.set_title(title)
    if hue:
        ax.legend(title=hue, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    mark_backends(ax, data)
    return ax


def plot_cost_cache(
    data: pd.DataFrame,
    *,
    stage: str = "stage",
    cached: str = "cached",
    ok: str | None = "ok",
    cost: str | None = "cost_usd",
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Calls per stage split into cache hits, provider calls and failures, with cost.

    Takes one row per call (``workbench.notebook.calls_frame``). Each stage is one
    stacked horizontal bar; its label gives the hits and the cost of the provider calls
    (replies served from the cache cost nothing now, whatever they cost once).

    Returns
    -------
    matplotlib.axes.Axes
    """
    require(data, [stage, cached, ok, cost], "plot_cost_cache")
    stages = order_of(data[stage], None)
    good = data[ok].astype(bool) if ok else pd.Series(True, index=data.index)
    hit = good & data[cached].astype(bool)
    counts = (
        pd.DataFrame(
            {
                "stage": data[stage],
                "from cache": hit,
                "provider calls": good & ~hit,
                "failed": ~good,
                "_cost": data[cost].where(good & ~hit) if cost else np.nan,
            }
        )
        .groupby("stage", sort=False)
        .sum(min_count=0)
        .reindex(stages)
    )
    ax = new_axes(ax, figsize=(6.4, max(2.2, 0.55 * len(stages) + 1.3)))
    pos = np.arange(len(stages))
    left = np.zeros(len(stages))
    colors = {"from cache": "C2", "provider calls": "C0", "failed": "C3"}
    for name, color in colors.items():
        values = counts[name].to_numpy(dtype=float)
        if name == "failed" and not values.any():
            continue
        ax.barh(pos, values, left=left, color=color, label=name, height=0.6)
        left += values
    for p, total, hits, spent in zip(pos, left, counts["from cache"], counts["_cost"], strict=True):
        note = f"{int(hits)}/{int(total)} from cache"
        if cost:
            note += f", {spent:.4f} USD"
        ax.text(total, p, "  " + note, va="center", ha="left", fontsize=8)
    ax.set_yticks(pos, labels=[str(s) for s in stages])
    ax.set_ylim(len(stages) - 0.5, -0.5)
    ax.set_xlim(0, max(1.0, left.max()) * 1.6)
    ax.set_xlabel("calls")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    if title:
        ax.set_title(title)
    mark_backends(ax, data)
    return ax
