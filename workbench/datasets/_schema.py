"""The canonical tables: their columns, vocabularies and cell parsers.

One place holds the column vocabulary of every table the loaders return, so the
validators, the bundled loaders and the importers cannot drift apart.
"""

from __future__ import annotations

import math
import re
from typing import Any

from workbench.errors import DatasetError
from workbench.text import is_missing

LANGS = ("ja", "en", "zh")
RUBRIC_KINDS = ("must", "bonus", "penalty", "item")
SPAN_ROLES = ("gist", "detail")
SPAN_LABELS = ("unit", "excess", "missing")
REFERENCE_SOURCE = "reference"

# Canonical columns of each table, in output order. Optional set-specific columns
# (e.g. ``wrong_answer``) are kept after them.
CANONICAL_COLUMNS: dict[str, tuple[str, ...]] = {
    "items": (
        "item_id",
        "lang",
        "category",
        "question",
        "reference",
        "keywords",
        "perturbation",
        "source_item",
    ),
    "rubric": ("item_id", "criterion_id", "text", "weight", "kind"),
    "responses": ("item_id", "answer_model", "answer_sample", "response"),
    "human_scores": ("item_id", "answer_model", "rater", "dimension", "score"),
    "spans": (
        "item_id",
        "unit_id",
        "role",
        "start",
        "end",
        "label",
        "text_source",
        "answer_model",
        "text",
    ),
}

# Columns a file must have (the others are filled in by the loader when absent).
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "items": ("item_id", "lang", "category", "question", "reference", "keywords"),
    "rubric": ("item_id", "criterion_id", "text", "weight", "kind"),
    "responses": ("item_id", "answer_model", "response"),
    "human_scores": ("item_id", "answer_model", "rater", "dimension", "score"),
    "spans": ("item_id", "unit_id", "role", "start", "end", "label", "text_source"),
}

TABLE_FILES: dict[str, str] = {
    "items": "items.csv",
    "rubric": "rubric.csv",
    "responses": "responses.csv",
    "human_scores": "human_scores.csv",
    "spans": "spans.csv",
}

_INT_RE = re.compile(r"^[+-]?\d+$")


def cell_text(value: Any) -> str:
    """A cell as text: missing cells become ``""``; other values ``str(value)``."""
    return "" if is_missing(value, blank=True) else str(value)


def parse_number(value: Any, *, file: str, row: int | None, column: str) -> float | None:
    """A cell as a float, ``None`` when empty; a non-numeric cell raises `DatasetError`."""
    if is_missing(value, blank=True):
        return None
    if isinstance(value, bool):
        raise DatasetError(f"{value!r} is not a number", file=file, row=row, column=column)
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        raise DatasetError(f"{text!r} is not a number", file=file, row=row, column=column) from None
    if math.isnan(number) or math.isinf(number):
        raise DatasetError(f"{text!r} is not a finite number", file=file, row=row, column=column)
    return number


def parse_int(value: Any, *, file: str, row: int | None, column: str) -> int | None:
    """A cell as an int, ``None`` when empty; ``"2.5"`` or ``"x"`` raise `DatasetError`."""
    if is_missing(value, blank=True):
        return None
    if isinstance(value, bool):
        raise DatasetError(f"{value!r} is not an integer", file=file, row=row, column=column)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise DatasetError(f"{value!r} is not an integer", file=file, row=row, column=column)
    text = str(value).strip()
    if not _INT_RE.match(text):
        raise DatasetError(f"{text!r} is not an integer", file=file, row=row, column=column)
    return int(text)


def split_keywords(value: Any) -> list[str]:
    """Keywords of one item as a list: split on ``|``, stripped, empties removed.

    Examples
    --------
    >>> split_keywords("消費税| インボイス ||登録番号")
    ['消費税', 'インボイス', '登録番号']
    >>> split_keywords("")
    []
    """
    if isinstance(value, list | tuple):
        parts = [str(part) for part in value]
    elif is_missing(value, blank=True):
        return []
    else:
        parts = str(value).split("|")
    return [part.strip() for part in parts if part.strip()]
