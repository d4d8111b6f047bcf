"""Charts with one row per long-named group: ``plot_weakness_map`` (checklist items with
their whole text, wrapped, in side-by-side panels of capped height) and
``plot_width_ratio`` (interval widths relative to a baseline, as points with intervals on
an axis from 0)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from workbench.plots._charts import finish, order_of, require
from workbench.plots._figure import ensure_cjk_fallback, mark_backends

#: Font size of a weakness-map row label (points) and the height of one of its lines.
ROW_FONT = 7.0
_LINE_IN = ROW_FONT * 1.25 / 72
#: Characters that never start a line (Japanese line-breaking rules, kinsoku).
_NO_LINE_START = set("、。，．）」』】〕・ー々,.;:)!?")


def text_width(text: str) -> int:
    """Display columns of ``text``: 2 for a wide (CJK) character, else 1."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_label(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` display columns, nothing left out.

    Latin words stay whole (a word longer than a line is cut); CJK text breaks between
    any two characters, never before closing punctuation.

    Examples
    --------
    >>> wrap_label("Explains medication-overuse headache and advises care", 24)
    ['Explains', 'medication-overuse', 'headache and advises', 'care']
    >>> wrap_label("市販の鎮痛薬を月に10〜15日以上使う状態が続くと", 16)
    ['市販の鎮痛薬を月', 'に10〜15日以上使', 'う状態が続くと']
    """
    tokens = re.findall(r"\s+|[!-~]+|.", " ".join(text.split()))
    lines: list[str] = [""]
    for token in tokens:
        if token.isspace():
            if lines[-1]:
                lines[-1] += " "
            continue
        if lines[-1] and (text_width(lines[-1] + token) <= width or token in _NO_LINE_START):
            lines[-1] += token
            continue
        if lines[-1]:
            lines[-1] = lines[-1].rstrip()
            lines.append(token)
        else:
            lines[-1] = token
        while text_width(lines[-1]) > width and len(lines[-1]) > 1:  # a word too long
            cut = max(i for i in range(1, len(lines[-1]) + 1) if text_width(lines[-1][:i]) <= width)
            lines[-1:] = [lines[-1][:cut], lines[-1][cut:]]
    return [line.rstrip() for line in lines if line.strip()]


def _fill(heights: list[float], room: float) -> list[slice]:
    """Consecutive rows, each panel filled up to ``room`` (a taller row alone)."""
    out, start, used = [], 0, 0.0
    for i, h in enumerate(heights):
        if i > start and used + h > room:
            out.append(slice(start, i))
            start, used = i, 0.0
        used += h
    return [*out, slice(start, len(heights))]


def _panels(heights: list[float], room: float) -> list[slice]:
    """Consecutive rows cut into the fewest panels that fit ``room``, as even as can be
    (the least height that still needs no more panels, by bisection)."""
    n = len(_fill(heights, room))
    low, high = max(max(heights), sum(heights) / n), room
    for _ in range(30):
        mid = (low + high) / 2
        low, high = (low, mid) if len(_fill(heights, mid)) <= n else (mid, high)
    return _fill(heights, high)


def plot_weakness_map(
    data: pd.DataFrame,
    *,
    label: str = "criterion",
    text: str | None = "criterion_text",
    columns: str = "answer_model",
    values: str = "met_rate",
    columns_order: Sequence[Any] | None = None,
    wrap: int = 60,
    max_height: float = 12.0,
    vmin: float = 0.0,
    vmax: float = 1.0,
    cmap: str = "viridis",
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    colorbar_label: str | None = None,
) -> np.ndarray:
    """A matrix of ``values`` per row (``label`` and its whole ``text``, wrapped to
    ``wrap`` display columns) and ``columns``, e.g. checklist items x answer models.

    Rows that would make the figure taller than ``max_height`` inches go to further
    panels side by side (one colour bar for all), so no text is cut and the figure stays
    readable. Rows sharing a (row, column) cell are averaged; empty cells stay blank.

    Returns
    -------
    numpy.ndarray of matplotlib Axes, one per panel
    """
    require(data, [label, text, columns, values], "plot_weakness_map")
    if data.empty:
        raise ValueError("plot_weakness_map: no rows to plot")
    ensure_cjk_fallback()
    rows = order_of(data[label], None)
    cols = order_of(data[columns], columns_order)
    table = (data.assign(_v=pd.to_numeric(data[values].astype(float)))
             .pivot_table(index=label, columns=columns, values="_v", aggfunc="mean")
             .reindex(index=rows, columns=cols))
    texts = data.groupby(label, sort=False)[text].first() if text else pd.Series(dtype=object)
    names = []
    for row in rows:
        body = texts.get(row) if text else None
        lines = [str(row)] if not isinstance(body, str) or not body.strip() else \
            wrap_label(f"{row}  {body}", wrap)
        names.append(lines)
    heights = [len(lines) * _LINE_IN + 0.04 for lines in names]
    margin = 1.3 + (0.2 * (title.count("\n") + 1) if title else 0)  # title, column names
    parts = _panels(heights, max(1.0, max_height - margin))
    label_in = max(text_width(line) for lines in names for line in lines) * ROW_FONT * 0.5 / 72
    panel_in = label_in + 0.3 * len(cols) + 0.2
    height = min(max_height, max(sum(heights[p]) for p in parts) + margin)
    fig, axes = plt.subplots(1, len(parts), figsize=(panel_in * len(parts) + 1.0, height),
                             layout="constrained", squeeze=False)
    for ax, part in zip(axes[0], parts, strict=True):
        edges = np.concatenate([[0.0], np.cumsum(heights[part])])
        mesh = ax.pcolormesh(np.arange(len(cols) + 1), edges,
                             np.ma.masked_invalid(table.to_numpy(dtype=float)[part]),
                             cmap=cmap, vmin=vmin, vmax=vmax)
        ax.set_yticks((edges[:-1] + edges[1:]) / 2,
                      labels=["\n".join(lines) for lines in names[part]], fontsize=ROW_FONT,
                      multialignment="left")
        ax.set_ylim(edges[-1], 0)
        ax.set_xticks(np.arange(len(cols)) + 0.5, labels=[str(c) for c in cols], fontsize=7,
                      rotation=55, ha="right", rotation_mode="anchor")
        ax.tick_params(length=0)
        ax.grid(False)
        ax.set_xlabel(xlabel if xlabel is not None else columns)
    axes[0, 0].set_ylabel(ylabel if ylabel is not None else label)
    fig.colorbar(mesh, ax=axes[0].tolist(), label=colorbar_label or values, shrink=0.6)
    if title:
        fig.suptitle(title, fontsize="medium")
    mark_backends(fig, data)
    return axes[0]


def plot_width_ratio(
    data: pd.DataFrame,
    *,
    y: str = "scenario",
    method: str = "method",
    ratio: str = "width_ratio",
    se: str | None = "width_ratio_se",
    methods: Sequence[str] = ("active", "oracle rule"),
    bound: str | None = "ceiling",
    z: float = 2.0,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str = "width / uniform sampling's width",
) -> Axes:
    """Ratios to a baseline (1, dashed) per row ``y``: a point per ``methods`` level with
    ``± z`` standard errors, and the ``bound`` column (e.g. the best any rule can do) as
    a cross. The axis starts at 0, so a ratio's distance from 1 is drawn to scale.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require(data, [y, method, ratio, se, bound], "plot_width_ratio")
    shown = data[data[method].isin(methods)]
    if shown.empty:
        raise ValueError(f"plot_width_ratio: no rows with {method} in {list(methods)}")
    groups = order_of(shown[y], None)
    if ax is None:
        ensure_cjk_fallback()
        _, ax = plt.subplots(figsize=(7.5, 0.32 * len(groups) + 1.8), layout="constrained")
    offsets = (np.arange(len(methods)) - (len(methods) - 1) / 2) * 0.25
    for j, level in enumerate(methods):
        part = shown[shown[method] == level].drop_duplicates(y).set_index(y).reindex(groups)
        est = part[ratio].to_numpy(dtype=float)
        err = z * part[se].to_numpy(dtype=float) if se else None
        note = f" (± {z:g} s.e.)" if se else ""
        ax.errorbar(est, np.arange(len(groups)) + offsets[j], xerr=err, fmt="o", markersize=4,
                    color=f"C{j}", elinewidth=1.2, capsize=2, label=f"{level}{note}")
    if bound:
        best = shown.groupby(y, sort=False)[bound].first().reindex(groups)
        ax.scatter(best.to_numpy(dtype=float), np.arange(len(groups)), marker="x", color="0.3",
                   zorder=3, label=f"{bound} (any rule)")
    ax.axvline(1.0, color="0.3", linestyle="--", linewidth=0.9, label="uniform sampling (1)")
    high = np.nanmax(shown[[ratio, *([bound] if bound else [])]].to_numpy(dtype=float))
    ax.set_xlim(0, max(1.1, high * 1.05))
    ax.set_yticks(np.arange(len(groups)), labels=[str(g) for g in groups], fontsize=7)
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    return finish(ax, data, title=title)
