"""Validation of the canonical tables.

Every ``validate_*`` function takes a frame as read from a CSV file (all cells text)
or built in code (typed cells), checks it and returns a normalised copy with the
canonical columns first and typed values. The first problem found raises
`~workbench.errors.DatasetError` naming the file, the row and the column.

Row numbers are **1-based data rows**: row 1 is the first record under the header,
so a spreadsheet shows it on line ``row + 1`` (the messages say so). A problem with a
whole column (a missing column) has ``row=None``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pandas as pd

from workbench.datasets._schema import (
    CANONICAL_COLUMNS,
    LANGS,
    REQUIRED_COLUMNS,
    RUBRIC_KINDS,
    cell_text,
    parse_int,
    parse_number,
    split_keywords,
)
from workbench.errors import DatasetError
from workbench.text import is_missing

__all__ = [
    "validate_human_scores",
    "validate_items",
    "validate_responses",
    "validate_rubric",
]


def _error(
    message: str, *, file: str, row: int | None = None, column: str | None = None
) -> DatasetError:
    if row is not None:
        message = f"{message} (spreadsheet line {row + 1})"
    return DatasetError(message, file=file, row=row, column=column)


def _check_columns(frame: pd.DataFrame, table: str, file: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise DatasetError(
            f"expected a pandas DataFrame for the {table} table, got {type(frame).__name__}",
            file=file,
        )
    present = {str(c) for c in frame.columns}
    for column in REQUIRED_COLUMNS[table]:
        if column not in present:
            raise _error(
                f"missing column {column!r} (the {table} table needs "
                f"{', '.join(REQUIRED_COLUMNS[table])})",
                file=file,
                column=column,
            )


def _sample_alias(frame: pd.DataFrame) -> pd.DataFrame:
    """Files may name the repeat index ``sample``; the tables call it ``answer_sample``."""
    if isinstance(frame, pd.DataFrame) and "sample" in frame.columns and "answer_sample" not in frame.columns:
        return frame.rename(columns={"sample": "answer_sample"})
    return frame


def _records(frame: pd.DataFrame) -> Iterator[tuple[int, dict[str, Any]]]:
    for position, record in enumerate(frame.to_dict("records")):
        yield position + 1, record


def _required_text(record: dict, column: str, *, file: str, row: int, strip: bool = True) -> str:
    value = record.get(column)
    if is_missing(value, blank=True):
        raise _error("empty required field", file=file, row=row, column=column)
    text = str(value)
    return text.strip() if strip else text


def _choice(record: dict, column: str, choices: tuple[str, ...], *, file: str, row: int) -> str:
    value = _required_text(record, column, file=file, row=row)
    if value not in choices:
        raise _error(
            f"{value!r} is not one of {', '.join(choices)}", file=file, row=row, column=column
        )
    return value


def _check_unique(seen: dict, key: tuple, *, what: str, file: str, row: int, column: str) -> None:
    if key in seen:
        shown = key[0] if len(key) == 1 else key
        raise _error(f"duplicate {what} {shown!r} (first at row {seen[key]})",
                     file=file, row=row, column=column)
    seen[key] = row


def _check_item(item_id: str, known: set[str] | None, *, file: str, row: int) -> None:
    if known is not None and item_id not in known:
        raise _error(
            f"item_id {item_id!r} is not in the items table", file=file, row=row, column="item_id"
        )


def _known_items(items: pd.DataFrame | None) -> set[str] | None:
    if items is None:
        return None
    return {str(v) for v in items["item_id"]}


def _extras(frame: pd.DataFrame, table: str) -> list[str]:
    canonical = set(CANONICAL_COLUMNS[table])
    return [str(c) for c in frame.columns if str(c) not in canonical]


def _extra_values(record: dict, extras: list[str]) -> dict:
    """The record's values of the non-canonical columns, a missing one as ``""``."""
    return {c: "" if is_missing(record.get(c), blank=True) else record.get(c) for c in extras}


def _build(rows: list[dict], table: str, extras: list[str]) -> pd.DataFrame:
    columns = list(CANONICAL_COLUMNS[table]) + extras
    out = pd.DataFrame(rows, columns=columns)
    return out.reset_index(drop=True)


def _rows_table(
    frame: pd.DataFrame,
    table: str,
    extras: list[str],
    row_values: Callable[[dict, int, str], dict],
    *,
    file: str,
    items: pd.DataFrame | None = None,
    dtypes: dict[str, type] | None = None,
) -> pd.DataFrame:
    """The shared row loop: a required ``item_id`` (one of ``items`` when given), then
    ``row_values(record, row, item_id)`` for the table's own fields, then the extras;
    ``dtypes`` sets the type of the columns that have one."""
    known = _known_items(items)
    rows: list[dict] = []
    for row, record in _records(frame):
        item_id = _required_text(record, "item_id", file=file, row=row)
        _check_item(item_id, known, file=file, row=row)
        out = {"item_id": item_id, **row_values(record, row, item_id)}
        out.update(_extra_values(record, extras))
        rows.append(out)
    return _build(rows, table, extras).astype(dtypes or {})


def validate_items(
    frame: pd.DataFrame, *, file: str = "<items table>", require_reference: bool = True
) -> pd.DataFrame:
    """Check an items table and return it normalised.

    Parameters
    ----------
    frame : DataFrame
        Columns ``item_id, lang, category, question, reference, keywords`` and
        optionally ``perturbation``, ``source_item`` and set-specific columns.
    file : str
        Name used in error messages (the file the frame was read from; an in-memory
        frame is called ``<items table>``). Pairwise verdicts and pointwise scores that
        already exist need none of these columns: see
        :func:`workbench.datasets.load_pairwise` and :func:`~workbench.datasets.load_pointwise`.
    require_reference : bool
        When False an empty ``reference`` is allowed (sets without gold answers).

    Returns
    -------
    DataFrame
        ``item_id`` (str, unique), ``lang`` (ja/en/zh), ``category`` (int when every
        value is an integer, else str), ``question``, ``reference`` (str, verbatim),
        ``keywords`` (list of str), ``perturbation`` (``"none"`` when absent),
        ``source_item`` (``item_id`` when absent), then the extra columns unchanged
        (empty cells of text columns as ``""``).

    Raises
    ------
    DatasetError
        Missing column, no rows (a file with only its header: nothing could be judged),
        empty required field, ``lang`` outside ja/en/zh, duplicate ``item_id``, or a
        ``source_item`` that is not an item of the table.
    """
    _check_columns(frame, "items", file)
    if frame.empty:
        raise DatasetError("no items: the table has a header but no data rows", file=file)
    extras = _extras(frame, "items")
    seen: dict = {}

    def item_values(record: dict, row: int, item_id: str) -> dict:
        _check_unique(seen, (item_id,), what="item_id", file=file, row=row, column="item_id")
        lang = _choice(record, "lang", LANGS, file=file, row=row)
        category = _required_text(record, "category", file=file, row=row)
        question = _required_text(record, "question", file=file, row=row, strip=False)
        if require_reference:
            reference = _required_text(record, "reference", file=file, row=row, strip=False)
        else:
            reference = cell_text(record.get("reference"))
        return {
            "lang": lang,
            "category": category,
            "question": question,
            "reference": reference,
            "keywords": split_keywords(record.get("keywords")),
            "perturbation": cell_text(record.get("perturbation")).strip() or "none",
            "source_item": cell_text(record.get("source_item")).strip() or item_id,
        }

    result = _rows_table(frame, "items", extras, item_values, file=file)
    known = set(result["item_id"])
    for row, source_item in enumerate(result["source_item"], start=1):
        if source_item not in known:
            raise _error(f"source_item {source_item!r} is not an item_id of this table",
                         file=file, row=row, column="source_item")
    categories = [str(c) for c in result["category"]]
    if categories and all(_is_int_text(c) for c in categories):
        result["category"] = [int(c) for c in categories]
    return result


def _is_int_text(text: str) -> bool:
    stripped = text.strip().lstrip("+-")
    return stripped.isdigit() and stripped.isascii()


def validate_rubric(
    frame: pd.DataFrame, *, items: pd.DataFrame | None = None, file: str = "<rubric table>"
) -> pd.DataFrame:
    """Check a rubric table and return it normalised.

    Parameters
    ----------
    frame : DataFrame
        Columns ``item_id, criterion_id, text, weight, kind``.
    items : DataFrame, optional
        The validated items; when given, every ``item_id`` must be one of them.
    file : str
        Name used in error messages.

    Returns
    -------
    DataFrame
        ``item_id``, ``criterion_id`` (unique within the item), ``text``, ``weight``
        (float, NaN when empty), ``kind`` (must / bonus / penalty / item), then extras.

    Raises
    ------
    DatasetError
        Missing column, empty required field, ``weight`` not a number, a checklist
        item (``kind="item"``) without weight, ``kind`` outside the vocabulary,
        duplicate ``(item_id, criterion_id)``, unknown ``item_id``.
    """
    _check_columns(frame, "rubric", file)
    extras = _extras(frame, "rubric")
    seen: dict = {}

    def criterion_values(record: dict, row: int, item_id: str) -> dict:
        criterion_id = _required_text(record, "criterion_id", file=file, row=row)
        _check_unique(seen, (item_id, criterion_id), what="(item_id, criterion_id)",
                      file=file, row=row, column="criterion_id")
        text = _required_text(record, "text", file=file, row=row, strip=False)
        kind = _choice(record, "kind", RUBRIC_KINDS, file=file, row=row)
        weight = parse_number(record.get("weight"), file=file, row=row, column="weight")
        if weight is None and kind == "item":
            raise _error("a checklist item (kind 'item') needs a numeric weight",
                         file=file, row=row, column="weight")
        return {
            "criterion_id": criterion_id,
            "text": text,
            "weight": float("nan") if weight is None else weight,
            "kind": kind,
        }

    return _rows_table(frame, "rubric", extras, criterion_values, file=file, items=items,
                       dtypes={"weight": float})


def validate_responses(
    frame: pd.DataFrame, *, items: pd.DataFrame | None = None, file: str = "<responses table>"
) -> pd.DataFrame:
    """Check a responses table and return it normalised.

    Parameters
    ----------
    frame : DataFrame
        Columns ``item_id, answer_model, response`` and optionally ``sample``.
    items, file
        As in :func:`validate_rubric`.

    Returns
    -------
    DataFrame
        ``item_id``, ``answer_model``, ``sample`` (int >= 0; 0 when the column is
        absent), ``response`` (verbatim text), then extras.

    Raises
    ------
    DatasetError
        Missing column, empty required field, ``answer_sample`` not a non-negative
        integer, duplicate ``(item_id, answer_model, answer_sample)``, unknown ``item_id``.
    """
    _check_columns(_sample_alias(frame), "responses", file)
    columns = {str(c) for c in frame.columns}
    sample_col = "sample" if "sample" in columns and "answer_sample" not in columns else "answer_sample"
    extras = [c for c in _extras(frame, "responses") if c != sample_col]
    has_sample = sample_col in columns
    seen: dict = {}

    def response_values(record: dict, row: int, item_id: str) -> dict:
        answer_model = _required_text(record, "answer_model", file=file, row=row)
        sample = 0
        if has_sample:
            parsed = parse_int(record.get(sample_col), file=file, row=row, column=sample_col)
            if parsed is None:
                raise _error("empty required field", file=file, row=row, column=sample_col)
            if parsed < 0:
                raise _error(f"{sample_col} {parsed} is negative", file=file, row=row, column=sample_col)
            sample = parsed
        _check_unique(seen, (item_id, answer_model, sample),
                      what="(item_id, answer_model, answer_sample)",
                      file=file, row=row, column="answer_model")
        response = _required_text(record, "response", file=file, row=row, strip=False)
        return {"answer_model": answer_model, "answer_sample": sample, "response": response}

    return _rows_table(frame, "responses", extras, response_values, file=file, items=items,
                       dtypes={"answer_sample": int})


def validate_human_scores(
    frame: pd.DataFrame, *, items: pd.DataFrame | None = None, file: str = "<human_scores table>"
) -> pd.DataFrame:
    """Check a human-scores table and return it normalised.

    Parameters
    ----------
    frame : DataFrame
        Columns ``item_id, answer_model, rater, dimension, score`` (and optionally
        ``sample``, which then joins the uniqueness key).
    items, file
        As in :func:`validate_rubric`.

    Returns
    -------
    DataFrame
        The five canonical columns with ``score`` as float, then extras.

    Raises
    ------
    DatasetError
        Missing column, empty required field, ``score`` not a number, duplicate
        ``(item_id, answer_model, rater, dimension[, sample])``, unknown ``item_id``.
    """
    frame = _sample_alias(frame)
    _check_columns(frame, "human_scores", file)
    extras = _extras(frame, "human_scores")
    seen: dict = {}

    def score_values(record: dict, row: int, item_id: str) -> dict:
        answer_model = _required_text(record, "answer_model", file=file, row=row)
        rater = _required_text(record, "rater", file=file, row=row)
        dimension = _required_text(record, "dimension", file=file, row=row)
        score = parse_number(record.get("score"), file=file, row=row, column="score")
        if score is None:
            raise _error("empty required field", file=file, row=row, column="score")
        key = (item_id, answer_model, rater, dimension, cell_text(record.get("answer_sample")).strip())
        _check_unique(seen, key, what="(item_id, answer_model, rater, dimension)",
                      file=file, row=row, column="score")
        return {"answer_model": answer_model, "rater": rater, "dimension": dimension, "score": score}

    return _rows_table(frame, "human_scores", extras, score_values, file=file, items=items,
                       dtypes={"score": float})
