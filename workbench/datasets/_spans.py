"""Validation of the spans table: character ranges into references and responses.

Row numbers follow `workbench.datasets._validate`: 1-based data rows, header not
counted.
"""

from __future__ import annotations

import pandas as pd

from workbench.datasets._schema import (
    REFERENCE_SOURCE,
    SPAN_LABELS,
    SPAN_ROLES,
    cell_text,
    parse_int,
)
from workbench.datasets._validate import (
    _build,
    _check_columns,
    _check_item,
    _check_unique,
    _choice,
    _error,
    _extra_values,
    _extras,
    _known_items,
    _records,
    _required_text,
    _sample_alias,
)
from workbench.errors import DatasetError
from workbench.text import is_missing

__all__ = ["validate_spans"]


def validate_spans(
    frame: pd.DataFrame,
    *,
    items: pd.DataFrame,
    responses: pd.DataFrame | None = None,
    file: str = "spans.csv",
) -> pd.DataFrame:
    """Check a spans table against the texts it points into; return it normalised.

    A span is the half-open character range ``[start, end)`` of the text named by
    ``text_source``: ``"reference"`` (the item's reference answer) or an
    ``answer_model`` whose response (``sample`` 0 unless a ``sample`` column says
    otherwise) holds the span. Labels: ``unit`` (a gist/detail meaning unit of the
    reference), ``excess`` (in a response, not in the reference; ``text_source`` is
    that answer model) and ``missing`` (a reference unit the answer in
    ``answer_model`` lacks; ``text_source`` is ``"reference"``).

    Parameters
    ----------
    frame : DataFrame
        Columns ``item_id, unit_id, role, start, end, label, text_source`` and
        optionally ``answer_model``, ``sample`` and ``text`` (the spanned text: when
        given it must equal the slice, so an edited offset cannot go unnoticed).
    items : DataFrame
        The validated items (for the reference texts).
    responses : DataFrame, optional
        The validated responses (needed for spans in responses).
    file : str
        Name used in error messages.

    Returns
    -------
    DataFrame
        ``item_id, unit_id, role, start, end, label, text_source, answer_model``
        (``""`` for units), ``text`` (the slice), then extras.

    Raises
    ------
    DatasetError
        Missing column, empty required field, role/label outside the vocabulary,
        ``start``/``end`` not integers, a span outside its text (``start < 0``,
        ``start >= end`` or ``end > len(text)``), a ``text`` cell that differs from
        the slice, an unknown ``item_id`` or answer model, a ``text_source`` that
        does not fit the label, a duplicate ``(item_id, label, answer_model,
        unit_id)``.
    """
    frame = _sample_alias(frame)
    _check_columns(frame, "spans", file)
    extras = _extras(frame, "spans")
    known = _known_items(items)
    references = {str(i): str(r) for i, r in zip(items["item_id"], items["reference"], strict=True)}
    texts: dict[tuple[str, str, int], str] = {}
    if responses is not None:
        columns = ("item_id", "answer_model", "answer_sample", "response")
        for item_id, model, sample, text in responses[list(columns)].itertuples(index=False):
            texts[(str(item_id), str(model), int(sample))] = str(text)
    models_of = {}
    for item_id, model, _sample in texts:
        models_of.setdefault(item_id, set()).add(model)
    rows: list[dict] = []
    seen: dict = {}
    for row, record in _records(frame):

        def fail(message: str, column: str, row: int = row) -> DatasetError:
            return _error(message, file=file, row=row, column=column)

        item_id = _required_text(record, "item_id", file=file, row=row)
        _check_item(item_id, known, file=file, row=row)
        unit_id = _required_text(record, "unit_id", file=file, row=row)
        role = _choice(record, "role", SPAN_ROLES, file=file, row=row)
        label = _choice(record, "label", SPAN_LABELS, file=file, row=row)
        source = _required_text(record, "text_source", file=file, row=row)
        answer_model = cell_text(record.get("answer_model")).strip()
        sample = parse_int(record.get("answer_sample"), file=file, row=row, column="answer_sample") or 0
        if label in ("unit", "missing") and source != REFERENCE_SOURCE:
            raise fail(f"a {label!r} span lies in the reference: text_source must be "
                       f"{REFERENCE_SOURCE!r}, not {source!r}", "text_source")
        if label == "excess":
            if source == REFERENCE_SOURCE:
                raise fail("an 'excess' span lies in a response: text_source must be "
                           "the answer_model, not 'reference'", "text_source")
            if answer_model and answer_model != source:
                raise fail(f"answer_model {answer_model!r} differs from text_source {source!r}",
                           "answer_model")
            answer_model = source
        if label == "missing" and not answer_model:
            raise fail("a 'missing' annotation needs the answer_model it belongs to",
                       "answer_model")
        if label == "unit" and answer_model:
            raise fail("a reference 'unit' belongs to no answer: leave answer_model empty",
                       "answer_model")
        if answer_model and answer_model not in models_of.get(item_id, set()):
            raise fail(f"no response of answer_model {answer_model!r} for item {item_id!r}",
                       "text_source" if label == "excess" else "answer_model")
        if source == REFERENCE_SOURCE:
            text = references[item_id]
        else:
            key = (item_id, source, sample)
            if key not in texts:
                raise fail(f"no response (item {item_id!r}, answer_model {source!r}, "
                           f"sample {sample}) holds this span", "text_source")
            text = texts[key]
        start = parse_int(record.get("start"), file=file, row=row, column="start")
        end = parse_int(record.get("end"), file=file, row=row, column="end")
        if start is None:
            raise fail("empty required field", "start")
        if end is None:
            raise fail("empty required field", "end")
        if start < 0:
            raise fail(f"span start {start} is negative", "start")
        if start >= end:
            raise fail(f"span [{start}, {end}) is empty or reversed", "end")
        if end > len(text):
            raise fail(f"span [{start}, {end}) runs past the end of its text "
                       f"({source}, {len(text)} characters)", "end")
        piece = text[start:end]
        given = record.get("text")
        if not is_missing(given, blank=True) and str(given) != piece:
            raise fail(f"text {str(given)[:40]!r} differs from the characters "
                       f"[{start}, {end}) of the {source}: {piece[:40]!r}", "text")
        _check_unique(
            seen,
            (item_id, label, answer_model, unit_id),
            what="(item_id, label, answer_model, unit_id)",
            file=file, row=row, column="unit_id")
        out = {
            "item_id": item_id,
            "unit_id": unit_id,
            "role": role,
            "start": start,
            "end": end,
            "label": label,
            "text_source": source,
            "answer_model": answer_model,
            "text": piece,
        }
        out.update(_extra_values(record, extras))
        if "answer_sample" in extras:
            out["answer_sample"] = sample
        rows.append(out)
    return _build(rows, "spans", extras).astype({"start": int, "end": int})
