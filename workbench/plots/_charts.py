"""The ``plot_*`` charts: tidy frame in, matplotlib Axes out, no saving.

Each one draws on ``ax`` when given, else on a new figure; each checks its columns and
raises ``ValueError`` naming a missing one; each remembers the frame's ``backend``
values on the figure and writes "simulated judges" on it when a row came from ``sim``
(see ``save_figure``). Category order is the order of first appearance unless an
``order`` is given, so a study controls it by sorting its frame.

- bars: ``plot_bars`` (grouped means with error bars), ``plot_cost_cache``;
- intervals: ``plot_estimates``, ``plot_correlations`` (point estimates with CIs);
- matrices: ``plot_heatmap`` (e.g. a weakness map), ``plot_scatter_matrix``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from workbench.plots._figure import ensure_cjk_fallback, mark_backends
from workbench.plots._names import display_name


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


# --- bars -------------------------------------------------------------------------------

def finish(ax: Axes, data: pd.DataFrame, *, title: str | None, hue: str | None = None) -> Axes:
    """Title, a legend of ``hue`` outside the axes on the right, and the backend mark."""
    if title:
        ax.set_title(title)
    if hue:
        ax.legend(title=display_name(hue), loc="upper left", bbox_to_anchor=(1.0, 1.0),
                  fontsize="small")
    mark_backends(ax, data)
    return ax


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

    ``seaborn.barplot``: ``error`` is ``"sd"`` (sample standard deviation, ddof=1),
    ``"se"`` (sd / sqrt(n)) or ``None``. A group of one row has no error bar; no rows is
    a ValueError. Hue levels take the colour cycle in order (``C0``, ``C1``...).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import seaborn as sns  # here, not at the top: 0.5 s of import for two charts

    require(data, [x, y, hue], "plot_bars")
    if data.empty:
        raise ValueError("plot_bars: no rows to plot")
    if error not in {"sd", "se", None}:
        raise ValueError(f"plot_bars: error={error!r}; expected 'sd', 'se' or None")
    groups = order_of(data[x], order)
    hues = order_of(data[hue], hue_order) if hue else [None]
    frame = pd.DataFrame({"_x": data[x].map(str), "_y": pd.to_numeric(data[y].astype(float))})
    if hue:
        frame["_hue"] = data[hue].map(str)
    ax = new_axes(ax, figsize=(max(4.0, 0.9 * len(groups) * max(1, len(hues) ** 0.5) + 1.5), 4.0))
    sns.barplot(
        frame, x="_x", y="_y", hue="_hue" if hue else None, order=[str(g) for g in groups],
        hue_order=[str(h) for h in hues] if hue else None, errorbar=error,
        palette=[f"C{j % 10}" for j in range(len(hues))] if hue else None, color="C0",
        saturation=1.0, err_kws={"color": "0.2", "linewidth": 1}, capsize=0.1, ax=ax,
    )
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel if ylabel is not None else y + (f" (mean ± {error})" if error else ""))
    if hue:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.0, 1.0), title=hue, fontsize="small")
    return finish(ax, data, title=title)


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
    (replies served from the cache cost nothing now, whatever they cost once); a
    provider call with a missing cost (a model without a price: ``calls_frame`` leaves
    its cost empty) makes it "cost unknown", never "0.0000 USD".

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
                "_unpriced": (good & ~hit & data[cost].isna()) if cost else False,
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
    for p, total, hits, spent, unpriced in zip(pos, left, counts["from cache"], counts["_cost"],
                                               counts["_unpriced"], strict=True):
        note = f"{int(hits)}/{int(total)} from cache"
        if cost:
            note += ", cost unknown (no price)" if unpriced else f", {spent:.4f} USD"
        ax.text(total, p, "  " + note, va="center", ha="left", fontsize=8)
    ax.set_yticks(pos, labels=[str(s) for s in stages])
    ax.set_ylim(len(stages) - 0.5, -0.5)
    ax.set_xlim(0, max(1.0, left.max()) * 1.6)
    ax.set_xlabel("calls")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    return finish(ax, data, title=title)


# --- intervals --------------------------------------------------------------------------

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
    the frames ``workbench.stats`` returns (``estimate, ci_low, ci_high``). Drawn with
    matplotlib, not seaborn: seaborn's ``pointplot`` computes its intervals from raw
    rows and cannot draw intervals computed elsewhere (bootstrap, Fisher-z, Wilson).

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
        label = None if level is None else display_name(level)
        ax.plot(est, pos, "o", color=color, markersize=5, label=label)
    if reference is not None:
        ax.axvline(reference, color="0.4", linestyle="--", linewidth=0.9, zorder=0)
    ax.set_yticks(np.arange(len(groups)), labels=[str(g) for g in groups])
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.set_xlabel(xlabel if xlabel is not None else estimate)
    ax.set_ylabel(ylabel if ylabel is not None else y)
    return finish(ax, data, title=title, hue=hue)


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


# --- matrices ---------------------------------------------------------------------------

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
    Drawn by ``seaborn.heatmap``, whose annotations are black or white by the luminance
    of each cell's colour, so they stay readable with any colour map.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import seaborn as sns

    require(data, [index, columns, values], "plot_heatmap")
    frame = data[[index, columns]].assign(_v=pd.to_numeric(data[values].astype(float)))
    table = frame.pivot_table(index=index, columns=columns, values="_v", aggfunc=aggfunc)
    rows = order_of(data[index], index_order)
    cols = order_of(data[columns], columns_order)
    table = table.reindex(index=rows, columns=cols)
    table.index, table.columns = [str(r) for r in rows], [str(c) for c in cols]
    ax = new_axes(ax, figsize=(max(4.0, 0.7 * len(cols) + 2.5), max(3.0, 0.35 * len(rows) + 1.6)))
    sns.heatmap(
        table, ax=ax, cmap=cmap, vmin=vmin, vmax=vmax, annot=annotate, fmt=fmt,
        annot_kws={"fontsize": 7}, cbar_kws={"label": colorbar_label or values},
        xticklabels=True, yticklabels=True,
    )
    ax.tick_params(axis="x", labelrotation=30)
    ax.tick_params(axis="y", labelrotation=0)
    plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")
    ax.grid(False)
    ax.set_xlabel(columns)
    ax.set_ylabel(index)
    return finish(ax, data, title=title)


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
