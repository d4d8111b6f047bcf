"""Where a notebook's figures and tables go.

Figures go to ``figures/<study>/`` and tables (and the headline numbers) to
``data/results/<study>/``, below the project root (``workbench.config``). Setting
``WORKBENCH_OUTPUT_DIR`` redirects both below one folder, ``<dir>/figures/<study>/`` and
``<dir>/results/<study>/``, without moving the bundled data; the test suite uses it to
run the notebooks into a temporary folder. The variable is read at each call and is
inherited by the kernels that Papermill starts.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from workbench import config

OUTPUT_ENV = "WORKBENCH_OUTPUT_DIR"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def check_name(value: str, what: str) -> str:
    """Return ``value`` if it is a plain file-name stem, else raise ``ValueError``.

    Study and figure names become folder and file names: letters, digits, ``_``,
    ``-`` and ``.``, starting with a letter or digit, no path separators.
    """
    if not isinstance(value, str) or not _NAME.match(value) or value in {".", ".."}:
        raise ValueError(
            f"{what} {value!r} is not a plain name (letters, digits, '_', '-', '.'; no '/')"
        )
    return value


def _output_root() -> Path | None:
    value = os.environ.get(OUTPUT_ENV)
    return Path(value).expanduser() if value else None


def figures_dir(study: str | None = None) -> Path:
    """Folder of a study's figures: ``figures/<study>/`` (or below ``WORKBENCH_OUTPUT_DIR``).

    Examples
    --------
    >>> figures_dir("00_tour").parts[-2:]
    ('figures', '00_tour')
    """
    base = _output_root()
    base = base / "figures" if base is not None else config.figures_dir()
    return base / check_name(study, "study") if study is not None else base


def results_dir(study: str | None = None) -> Path:
    """Folder of a study's tables: ``data/results/<study>/`` (or below ``WORKBENCH_OUTPUT_DIR``).

    Examples
    --------
    >>> results_dir("00_tour").parts[-2:]
    ('results', '00_tour')
    """
    base = _output_root()
    base = base / "results" if base is not None else config.results_dir()
    return base / check_name(study, "study") if study is not None else base


def headline_path(study: str) -> Path:
    """The JSON file holding a notebook's headline numbers (see ``record``)."""
    return results_dir(study) / "headline.json"
