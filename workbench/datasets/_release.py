"""Shared helpers of the importers of public data releases.

Releases are folders a user downloaded; they are larger and messier than their
documentation: old runs sit beside current ones, files may hold empty lists. These
helpers read JSON with errors that name the file and record, and decide which folders
are old copies to skip.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.errors import DatasetError

# Folder names of older runs and tool droppings that importers skip:
# ``old*``, ``*_old``, ``old_api*`` (covered by ``old*``), ``.ipynb_checkpoints``,
# any hidden folder and ``__pycache__``.
_IGNORED_DIR_RE = re.compile(r"^(old.*|.*_old|\..*|__pycache__)$", re.IGNORECASE)


def is_ignored_dir(name: str) -> bool:
    """True for folders of old runs or tools (``old*``, ``*_old``, hidden, caches).

    Examples
    --------
    >>> [is_ignored_dir(n) for n in ("old_api", "19.01.25_old", ".ipynb_checkpoints",
    ...                              "Llama_cluster", "Gold")]
    [True, True, True, False, False]
    """
    return bool(_IGNORED_DIR_RE.match(name))


def relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form (for messages and ``file`` columns)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


@contextmanager
def reading(label: str) -> Iterator[None]:
    """Raise a missing file, or bytes that are not UTF-8, met in the ``with`` block as a
    `DatasetError` naming ``label``."""
    try:
        yield
    except FileNotFoundError:
        raise DatasetError("file not found", file=label) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=label
        ) from None


def read_json(path: Path, *, label: str) -> Any:
    """Parse a JSON file; invalid UTF-8 or JSON raises `DatasetError` naming the file."""
    with reading(label):
        text = path.read_text(encoding="utf-8-sig")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", file=label
        ) from None


def read_json_list(path: Path, *, label: str) -> list:
    """A JSON file whose top level must be a list (``[]`` is fine)."""
    data = read_json(path, label=label)
    if not isinstance(data, list):
        raise DatasetError(
            f"expected a JSON list at the top level, got {type(data).__name__}", file=label
        )
    return data


def record_error(index: int, problem: str, *, file: str, column: str | None = None) -> DatasetError:
    """The error of record ``index`` (0-based) of a JSON list in ``file``."""
    return DatasetError(f"record {index} (0-based): {problem}", file=file, column=column)


def records(data: list, *, label: str) -> Iterator[tuple[int, dict]]:
    """``(index, element)`` of a JSON list (index 0-based, named in errors); each must be an
    object."""
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise record_error(index, f"expected a JSON object, got {type(record).__name__}",
                               file=label)
        yield index, record
