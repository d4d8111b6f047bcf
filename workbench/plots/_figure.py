"""A figure as a whole: the style and fonts, the "simulated judges" mark, ``save_figure``."""

from __future__ import annotations

import importlib.util
import io
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.config import check_name, figures_dir

#: Text written on every figure made from simulated results (DESIGN §3).
SIM_LABEL = "simulated judges"
#: Size (points) and colour of that text: big and dark enough to be read at a glance (not
#: bold: IPAexGothic, the CJK fallback, has no bold face, and matplotlib warns on stderr).
SIM_FONTSIZE = 9
SIM_COLOR = "0.1"
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
        fontsize=SIM_FONTSIZE,
        color=SIM_COLOR,
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


# --- saving -------------------------------------------------------------------

#: Per-format ``Figure.savefig`` metadata: volatile entries dropped (``None``).
_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None},
}
FORMATS = tuple(_METADATA)


# ids matplotlib derives from a hash of float reprs (clip rectangles, markers, hatches):
# a letter and ten hex digits. A re-drawn layout can move a clip box by 1e-13, which
# changes the hash but not the drawing, so they are renumbered in order of appearance.
_HASHED_ID = re.compile(r"(?<=[#\"])([a-z])([0-9a-f]{10})(?=[\")])")


def _stable_svg_ids(svg: bytes) -> bytes:
    text = svg.decode("utf-8")
    mapping: dict[str, str] = {}
    for match in _HASHED_ID.finditer(text):
        mapping.setdefault(match.group(0), f"{match.group(1)}{len(mapping):010x}")
    return _HASHED_ID.sub(lambda m: mapping[m.group(0)], text).encode("utf-8")


def _write_if_changed(path: Path, content: bytes) -> None:
    if path.exists() and path.read_bytes() == content:
        return  # keep the file (and its mtime) when a rerun draws the same bytes
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(content)
    tmp.replace(path)


def _show_inline(fig: Figure, png: bytes, dpi: int) -> None:
    """Under the inline backend, show the saved PNG at its on-screen width (``figure.dpi``)
    and close the figure (why: :func:`save_figure`)."""
    if "inline" not in mpl.get_backend():
        return
    from IPython.display import Image, display
    from matplotlib import pyplot as plt

    width = int.from_bytes(png[16:20], "big")  # the IHDR chunk: width, height
    display(Image(data=png, width=round(width * fig.dpi / dpi)))
    plt.close(fig)


def _decide_simulated(fig: Any, simulated: bool | pd.DataFrame | None, name: str) -> bool:
    drawn = figure_backends(fig)
    if isinstance(simulated, pd.DataFrame):
        given = backends_of(simulated)
        if not given:
            raise ValueError(
                f"save_figure({name!r}): the frame passed as simulated= has no 'backend' values"
            )
        return "sim" in given or "sim" in drawn
    if simulated is None:
        if not drawn:
            raise ValueError(
                f"save_figure({name!r}): cannot tell whether the figure shows simulated "
                "results; pass simulated=True/False or a frame with a 'backend' column"
            )
        return "sim" in drawn
    if simulated is False and "sim" in drawn:
        raise ValueError(
            f"save_figure({name!r}): simulated=False, but the figure was drawn "
            "from rows whose backend is 'sim'"
        )
    return bool(simulated)


def save_figure(
    fig_or_ax: Any,
    study: str,
    name: str,
    *,
    formats: Sequence[str] = ("png",),
    simulated: bool | pd.DataFrame | None = None,
    directory: str | Path | None = None,
    dpi: int = PNG_DPI,
) -> list[Path]:
    """Save a figure as ``figures/<study>/<name>.<format>`` with reproducible bytes.

    PNG files are written without the ``Software`` entry and at a fixed ``dpi``; SVG
    files without a date and with a fixed id salt (``svg.hashsalt``), so the same figure
    gives the same bytes on every run (an unchanged file is not rewritten). Figures of
    simulated results get the "simulated judges" text before saving, and the same words
    as the file's ``Description`` metadata (a PNG text chunk, the SVG ``dc:description``).

    Under the inline backend of a Jupyter kernel, the saved PNG (when ``"png"`` is among
    ``formats``) is shown at the size the inline backend would use and the figure is
    closed: otherwise the backend draws it once more at the end of the cell. Under any
    other backend (Agg in the tests and for the stored notebook outputs) nothing is
    shown and the figure stays open.

    Parameters
    ----------
    fig_or_ax : Figure, Axes or array of Axes
    study : str
        Folder below ``figures/`` (or below ``$WORKBENCH_OUTPUT_DIR/figures``).
    name : str
        File stem (no extension, no folder).
    formats : sequence of str
        Any of ``"png"``, ``"svg"``.
    simulated : bool, DataFrame or None
        Whether the figure shows results of simulated judges. ``None`` decides from the
        ``backend`` column of the frames the ``plot_*`` functions drew (an error when
        they had none: the caller must say); a DataFrame decides from its ``backend``
        column. ``False`` for a figure drawn from ``sim`` rows is an error.
    directory : path, optional
        Save there instead of the study's figure folder.
    dpi : int
        PNG resolution.

    Returns
    -------
    list of pathlib.Path
        The files written, in ``formats`` order.
    """
    fig = figure_of(fig_or_ax)
    check_name(study, "study")
    check_name(name, "figure name")
    formats = (formats,) if isinstance(formats, str) else tuple(formats)
    bad = [f for f in formats if f not in _METADATA]
    if bad or not formats:
        raise ValueError(f"save_figure: formats {bad or formats!r} not supported; use {FORMATS}")
    is_sim = _decide_simulated(fig, simulated, name)
    if is_sim:
        add_sim_label(fig)
    folder = Path(directory) if directory is not None else figures_dir(study)
    folder.mkdir(parents=True, exist_ok=True)
    contents = []
    with mpl.rc_context({"svg.hashsalt": SVG_HASHSALT, "svg.fonttype": "path"}):
        for fmt in formats:
            metadata = dict(_METADATA[fmt])
            if is_sim:  # also in the file's metadata, so tests can check any format
                metadata["Description"] = SIM_LABEL
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, dpi=dpi, bbox_inches="tight", facecolor="white",
                        metadata=metadata)
            content = buffer.getvalue()
            contents.append(_stable_svg_ids(content) if fmt == "svg" else content)
    paths = [folder / f"{name}.{fmt}" for fmt in formats]
    for path, content in zip(paths, contents, strict=True):
        _write_if_changed(path, content)
    if "png" in formats:
        _show_inline(fig, contents[formats.index("png")], dpi)
    return paths
