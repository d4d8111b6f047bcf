"""Style, fonts and the "simulated judges" mark shared by every plot."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure

#: Text written on every figure made from simulated results (DESIGN §3).
SIM_LABEL = "simulated judges"
#: ``gid`` of that text, to find it again (idempotent marking, tests).
SIM_GID = "workbench-simulated-judges"
#: Japanese fallback font shipped by the japanize-matplotlib package.
CJK_FONT = "IPAexGothic"
#: Resolution of saved PNG files.
PNG_DPI = 150
#: Fixed salt for the ids matplotlib writes into SVG files (else random per run).
SVG_HASHSALT = "workbench"

#: rcParams set by ``use_style`` (``font.family`` gets the CJK fallback on top).
STYLE: dict[str, Any] = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": PNG_DPI,
    "savefig.facecolor": "white",
    "axes.grid": True,
    "axes.axisbelow": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": "medium",
    "grid.alpha": 0.3,
    "font.size": 10,
    "legend.frameon": False,
    "image.cmap": "viridis",
    "svg.fonttype": "path",
    "svg.hashsalt": SVG_HASHSALT,
}

_BACKENDS_ATTR = "_workbench_backends"


@cache
def cjk_font_path() -> Path | None:
    """Path of IPAexGothic inside japanize-matplotlib, found without importing it.

    Importing japanize_matplotlib changes rcParams as a side effect (and imports
    ``distutils``), so only its location is looked up.
    """
    spec = importlib.util.find_spec("japanize_matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "fonts" / "ipaexg.ttf"
        if path.is_file():
            return path
    return None


def register_fonts() -> str | None:
    """Register IPAexGothic with matplotlib's font manager; return its family name.

    Returns ``None`` when japanize-matplotlib is not installed (Japanese text then
    renders as boxes, with matplotlib's "missing glyph" warning).
    """
    path = cjk_font_path()
    if path is None:
        return None
    if not any(entry.name == CJK_FONT for entry in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(str(path))
    return CJK_FONT


def ensure_cjk_fallback() -> None:
    """Make IPAexGothic the fallback for glyphs the main font lacks (kana, kanji).

    Appends it to ``rcParams["font.family"]`` (matplotlib >= 3.6 falls back along that
    list glyph by glyph), keeping the user's first choice for Latin text.
    """
    name = register_fonts()
    families = mpl.rcParams["font.family"]
    families = [families] if isinstance(families, str) else list(families)
    if name and name not in families:
        mpl.rcParams["font.family"] = [*families, name]


def use_style() -> None:
    """Apply the workbench's matplotlib style (``STYLE``) and the Japanese font fallback.

    Leaves the backend alone. ``workbench.notebook.setup`` calls it; every ``plot_*``
    function also makes sure of the font fallback.
    """
    mpl.rcParams.update(STYLE)
    mpl.rcParams["font.family"] = ["sans-serif"]
    ensure_cjk_fallback()


def figure_of(obj: Any) -> Figure:
    """The Figure of a Figure, an Axes or an array/list of Axes."""
    if isinstance(obj, np.ndarray | list | tuple) and len(obj):
        obj = np.asarray(obj, dtype=object).ravel()[0]
    if isinstance(obj, Figure | Axes):
        fig = obj if isinstance(obj, Figure) else obj.figure
        while not isinstance(fig, Figure):  # an Axes on a SubFigure
            fig = fig.figure
        return fig
    raise TypeError(f"expected a matplotlib Figure or Axes, got {type(obj).__name__}")


def add_sim_label(fig_or_ax: Any) -> Any:
    """Write "simulated judges" in the figure's lower right corner (once); return the Text."""
    fig = figure_of(fig_or_ax)
    for text in fig.texts:
        if text.get_gid() == SIM_GID:
            return text
    # just below the canvas: never over an axis label; ``bbox_inches="tight"`` (used by
    # save_figure and by the inline backend) grows the saved image to include it
    return fig.text(
        0.995,
        -0.005,
        SIM_LABEL,
        ha="right",
        va="top",
        fontsize=7,
        color="0.35",
        gid=SIM_GID,
    )


def has_sim_label(fig_or_ax: Any) -> bool:
    """Whether the figure carries the "simulated judges" text."""
    return any(t.get_text() == SIM_LABEL for t in figure_of(fig_or_ax).texts)


def backends_of(data: Any) -> set[str]:
    """Distinct values of a frame's ``backend`` column (empty set without one)."""
    if isinstance(data, pd.DataFrame) and "backend" in data.columns:
        return {str(b) for b in data["backend"].dropna().unique()}
    return set()


def mark_backends(fig_or_ax: Any, data: Any) -> None:
    """Remember which backends a figure's data came from; label it if any was ``sim``."""
    found = backends_of(data)
    if not found:
        return
    fig = figure_of(fig_or_ax)
    known = getattr(fig, _BACKENDS_ATTR, set())
    setattr(fig, _BACKENDS_ATTR, known | found)
    if "sim" in found:
        add_sim_label(fig)


def figure_backends(fig_or_ax: Any) -> set[str]:
    """Backends recorded on a figure by the ``plot_*`` functions."""
    return set(getattr(figure_of(fig_or_ax), _BACKENDS_ATTR, set()))
