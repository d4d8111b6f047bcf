"""``save_figure``: deterministic PNG/SVG files under ``figures/<study>/``."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib as mpl
import pandas as pd

from workbench.notebook._outputs import check_name, figures_dir
from workbench.plots._style import (
    PNG_DPI,
    SIM_LABEL,
    SVG_HASHSALT,
    add_sim_label,
    backends_of,
    figure_backends,
    figure_of,
)

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
    paths = []
    with mpl.rc_context({"svg.hashsalt": SVG_HASHSALT, "svg.fonttype": "path"}):
        for fmt in formats:
            buffer = io.BytesIO()
            metadata = dict(_METADATA[fmt])
            if is_sim:  # also in the file's metadata, so tests can check any format
                metadata["Description"] = SIM_LABEL
            fig.savefig(
                buffer,
                format=fmt,
                dpi=dpi,
                bbox_inches="tight",
                facecolor="white",
                metadata=metadata,
            )
            content = buffer.getvalue()
            if fmt == "svg":
                content = _stable_svg_ids(content)
            path = folder / f"{name}.{fmt}"
            _write_if_changed(path, content)
            paths.append(path)
    return paths
