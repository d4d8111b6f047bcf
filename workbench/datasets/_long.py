"""Bring your own judge data: two long tables of judge verdicts or scores beside people's.

A **pairwise** table has one row per verdict: a judge's (``judge`` set) or a person's
(``annotator`` set) on the pair ``item_id`` shown in ``order`` 0 (response A first) or
1 (response B first). A **pointwise** table has one row per score: a judge's or a
person's score of the output of ``system`` for ``item_id`` (on ``dimension``).

=================  ========  =============================================================
column             table     holds
=================  ========  =============================================================
``item_id``        both      the item (pair, prompt, story ...); required
``order``          pairwise  0 = A shown first, 1 = B shown first (absent: all 0)
``verdict``        pairwise  ``"A"``, ``"B"`` or ``"tie"`` **in order 0's numbering**;
                             missing = failed or unparsed (kept, never dropped)
``score``          pointwise number; missing = failed or unparsed (kept as NaN)
``judge``          both      the judge (or metric) that gave the row
``annotator``      both      the person that gave the row (instead of ``judge``)
``label``          both      the human (gold) label or score of the item, when given
                             directly rather than as annotator rows
``system``         pointwise the system whose output was scored (default ``""``)
``dimension``      pointwise what the score is about (default ``""``)
``system_a/_b``    pairwise  the systems that wrote responses A and B (Bradley-Terry)
``length_a/_b``    pairwise  the responses' lengths (length bias)
``group``          both      a group of items (scenario, category ...)
``confidence``     both      the judge's confidence (selective judging)
=================  ========  =============================================================

:func:`load_pairwise` and :func:`load_pointwise` read CSV, TSV, JSONL, JSON or a
DataFrame, rename the user's columns (``columns={"verdict": "output"}``), recode labels
(``verdicts={0: "A", 1: "B", 2: "tie"}``), map a second order's positional verdicts back
(``second_order="positional"``) and validate. :func:`validate_pairwise` and
:func:`validate_pointwise` check a whole table and raise one `DatasetError` listing every
bad row (its 1-based line: a CSV's header is line 1; a frame's first row is row 1), the
field and why; the error's ``problems`` attribute is that list as a DataFrame.

Refused because they give silent nonsense: a table with a second order whose numbering is
not declared (``second_order``: are its verdicts positional, or already mapped back?),
two rows for one (item, order, judge) or (item, system, dimension, judge), a label or
group that differs between rows of one item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import DatasetError
from workbench.text import is_missing

__all__ = [
    "PAIRWISE_COLUMNS",
    "POINTWISE_COLUMNS",
    "VERDICTS",
    "load_pairwise",
    "load_pointwise",
    "load_table",
    "validate_pairwise",
    "validate_pointwise",
]

#: The pairwise table's columns, in order (``item_id`` and ``verdict`` required).
PAIRWISE_COLUMNS = ("item_id", "order", "judge", "annotator", "verdict", "label", "group",
                    "system_a", "system_b", "length_a", "length_b", "confidence")
#: The pointwise table's columns, in order (``item_id`` and ``score`` required).
POINTWISE_COLUMNS = ("item_id", "system", "dimension", "judge", "annotator", "score", "label",
                     "group", "confidence")
#: The verdict vocabulary, in order 0's numbering.
VERDICTS = ("A", "B", "tie")
_SWAP = {"A": "B", "B": "A"}
_PROVENANCE = ("source_file", "source_line")
_MAX_SHOWN = 30


# --- reading -----------------------------------------------------------------------------

def _read(source: Any, name: str | None) -> tuple[pd.DataFrame, str]:
    """A frame with ``source_file`` and ``source_line`` (1-based line or row)."""
    if isinstance(source, pd.DataFrame):
        frame = source.reset_index(drop=True).copy()
        label = name or "<DataFrame>"
        lines = np.arange(1, len(frame) + 1)
    else:
        path = Path(source)
        label = name or str(path)
        if not path.exists():
            raise DatasetError("file not found", file=label)
        suffix = path.suffix.lower()
        if suffix in (".csv", ".tsv"):
            try:
                frame = pd.read_csv(path, dtype=str, keep_default_na=False,
                                    encoding="utf-8-sig", sep="\t" if suffix == ".tsv" else ",")
            except (pd.errors.ParserError, UnicodeDecodeError) as exc:
                raise DatasetError(f"unreadable table: {exc}", file=label) from None
            except pd.errors.EmptyDataError:
                raise DatasetError("empty file: no header row", file=label) from None
            frame.columns = [str(c).strip() for c in frame.columns]
            lines = np.arange(2, len(frame) + 2)  # line 1 is the header
        elif suffix in (".jsonl", ".json"):
            frame, lines = _read_json(path, label)
        else:
            raise DatasetError(f"unknown file type {suffix!r}: give .csv, .tsv, .jsonl or .json",
                               file=label)
    frame["source_file"], frame["source_line"] = label, lines
    return frame, label


def _read_json(path: Path, label: str) -> tuple[pd.DataFrame, np.ndarray]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                           file=label) from None
    records, lines = [], []
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"invalid JSON at line {exc.lineno}: {exc.msg}", file=label) from None
        if not isinstance(data, list):
            raise DatasetError("a .json table must be a list of objects", file=label)
        records, lines = data, list(range(1, len(data) + 1))
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"line {number}: invalid JSON: {exc.msg}", file=label) from None
            lines.append(number)
    bad = [n for n, r in zip(lines, records, strict=True) if not isinstance(r, dict)]
    if bad:
        raise DatasetError(f"line {bad[0]}: expected a JSON object", file=label)
    return pd.DataFrame.from_records(records), np.asarray(lines, dtype=int)


def _key(value: Any) -> str:
    """A code as text, so 1, 1.0, "1" and " 1 " name the same code."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else text


def _recode(series: pd.Series, codes: Mapping | None) -> pd.Series:
    """Map the user's codes (a missing value stays missing; an unknown one is kept as is
    for the validator to name)."""
    if codes is None:
        return series
    table = {_key(k): v for k, v in codes.items()}
    return series.map(lambda v: None if is_missing(v, blank=True)
                      else table.get(_key(v), v) if not isinstance(v, list) else v)


def _rename(frame: pd.DataFrame, columns: Mapping[str, str] | None, canonical: Sequence[str],
            label: str, elsewhere: set | frozenset = frozenset()) -> pd.DataFrame:
    """Rename the user's columns; a mapped column may be missing when it is in
    ``elsewhere`` (the items table)."""
    columns = {k: v for k, v in (columns or {}).items()
               if v in frame.columns or v not in elsewhere}
    unknown = [c for c in columns if c not in canonical]
    if unknown:
        raise DatasetError(f"columns= maps {unknown}, which are not columns of the table "
                           f"({', '.join(canonical)})", file=label)
    missing = [user for user in columns.values() if user not in frame.columns]
    if missing:
        raise DatasetError(f"no column {missing[0]!r} in the file (its columns: "
                           f"{', '.join(map(str, frame.columns))})", file=label,
                           column=missing[0])
    out = frame.drop(columns=[c for c in columns if c not in columns.values() and c in frame],
                     errors="ignore")
    return out.rename(columns={user: canon for canon, user in columns.items()})


def _join_items(frame: pd.DataFrame, table: pd.DataFrame, label: str,
                columns: Mapping[str, str] | None, canonical: Sequence[str]) -> pd.DataFrame:
    """Add the columns of a per-item table (joined on ``item_id``)."""
    table = _rename(table, {k: v for k, v in (columns or {}).items() if v in table.columns},
                    canonical, label)
    if "item_id" not in table:
        table["item_id"] = np.arange(1, len(table) + 1)  # the record's position, as in _gather
    table["item_id"] = table["item_id"].map(_key)
    dup = table["item_id"].duplicated()
    if dup.any():
        line = int(table.loc[dup, "source_line"].iloc[0])
        raise DatasetError(f"line {line}: item_id {table.loc[dup, 'item_id'].iloc[0]!r} repeats "
                           "in the items table", file=label, column="item_id")
    keep = [c for c in table.columns if c not in _PROVENANCE and (c == "item_id"
                                                                 or c not in frame.columns)]
    return frame.merge(table[keep], on="item_id", how="left")


def _gather(source: Any, columns, canonical, name, items) -> pd.DataFrame:
    """Read ``source`` (one table, or ``{order: table}``), rename, join ``items``."""
    parts = source.items() if isinstance(source, Mapping) else [(None, source)]
    item_table, item_label = _read(items, None) if items is not None else (None, "")
    elsewhere = set() if item_table is None else set(item_table.columns)
    frames = []
    for order, part in parts:
        frame, label = _read(part, name if order is None else None)
        frame = _rename(frame, columns, canonical, label, elsewhere)
        if "item_id" not in frame:
            # no item column: the record's position in its file (1-based)
            frame["item_id"] = np.arange(1, len(frame) + 1)
            frame["_item_from_position"] = True
        if order is not None:
            frame["order"] = order
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    frame["item_id"] = frame["item_id"].map(lambda v: v if is_missing(v, blank=True) else _key(v))
    if item_table is not None:
        frame = _join_items(frame, item_table, item_label, columns, canonical)
    return frame


def _recode_columns(frame: pd.DataFrame, recode: Mapping[str, Mapping] | None) -> pd.DataFrame:
    for column, codes in (recode or {}).items():
        if column not in frame:
            raise DatasetError(f"recode= names {column!r}, which the table does not have",
                               column=column)
        table = {_key(k): v for k, v in codes.items()}
        frame[column] = [v if is_missing(v, blank=True) else table.get(_key(v), v)
                         for v in frame[column]]
    return frame


def _constants(frame: pd.DataFrame, constants: Mapping | None) -> pd.DataFrame:
    for column, value in (constants or {}).items():
        frame[column] = value
    return frame


# --- validation --------------------------------------------------------------------------

class _Problems:
    """Every bad row of a table: (line, field, why)."""

    def __init__(self, frame: pd.DataFrame, file: str):
        self.file = file
        self.files = frame["source_file"].astype(str).to_numpy() if "source_file" in frame \
            else np.full(len(frame), file, dtype=object)
        self.lines = frame["source_line"].to_numpy() if "source_line" in frame \
            else np.arange(1, len(frame) + 1)
        self.rows: list[dict] = []

    def add(self, position: int | None, field: str, why: str) -> None:
        if position is None:
            self.rows.append({"file": self.file, "line": None, "field": field, "problem": why})
        else:
            self.rows.append({"file": str(self.files[position]),
                              "line": int(self.lines[position]), "field": field, "problem": why})

    def raise_if_any(self, table: str) -> None:
        if not self.rows:
            return
        lines = []
        for p in self.rows[:_MAX_SHOWN]:
            where = p["file"] if p["line"] is None else f"{p['file']} line {p['line']}"
            lines.append(f"  {where}, {p['field']!r}: {p['problem']}")
        more = len(self.rows) - _MAX_SHOWN
        if more > 0:
            lines.append(f"  ... and {more} more (the error's .problems lists them all)")
        error = DatasetError(f"the {table} table has {len(self.rows)} problem(s):\n"
                             + "\n".join(lines), file=self.file)
        error.problems = pd.DataFrame(self.rows, columns=["file", "line", "field", "problem"])
        raise error


def _text(value: Any) -> str:
    return "" if is_missing(value, blank=True) else str(value).strip()


def _numbers(frame: pd.DataFrame, column: str, problems: _Problems, *, required: bool = False
             ) -> pd.Series:
    if column not in frame:
        return pd.Series(np.nan, index=frame.index, dtype=float)
    out = pd.to_numeric(frame[column].map(lambda v: np.nan if is_missing(v, blank=True) else v),
                        errors="coerce").astype(float)
    for pos in np.flatnonzero(out.isna().to_numpy()):
        raw = frame[column].iloc[pos]
        if not is_missing(raw, blank=True):
            problems.add(pos, column, f"{raw!r} is not a number")
        elif required:
            problems.add(pos, column, "empty")
    return out


def _who(frame: pd.DataFrame, problems: _Problems) -> tuple[pd.Series, pd.Series]:
    """The ``judge`` and ``annotator`` columns: exactly one of them set per row."""
    if "judge" not in frame and "annotator" not in frame:
        problems.add(None, "judge", "no judge column: map one (columns={'judge': ...}) or give "
                     "constants={'judge': 'name'}")
        empty = pd.Series("", index=frame.index)
        return empty, empty
    judge = frame["judge"].map(_text) if "judge" in frame else pd.Series("", index=frame.index)
    annotator = (frame["annotator"].map(_text) if "annotator" in frame
                 else pd.Series("", index=frame.index))
    for pos in np.flatnonzero(((judge == "") == (annotator == "")).to_numpy()):
        problems.add(pos, "judge", "give exactly one of judge and annotator"
                     if judge.iloc[pos] else "neither judge nor annotator is given")
    return judge, annotator


def _duplicates(frame: pd.DataFrame, keys: list[str], problems: _Problems) -> None:
    dup = frame.duplicated(subset=keys, keep=False).to_numpy()
    first: dict = {}
    for pos in np.flatnonzero(dup):
        key = tuple(frame[k].iloc[pos] for k in keys)
        if key in first:
            shown = dict(zip(keys, key, strict=True))
            problems.add(pos, "+".join(keys), f"a second row for {shown} (first at line "
                         f"{problems.lines[first[key]]}): one row per "
                         f"({', '.join(keys)})")
        else:
            first[key] = pos


def _constant_within(frame: pd.DataFrame, column: str, unit: list[str], problems: _Problems
                     ) -> None:
    if column not in frame:
        return
    values = frame[column].map(lambda v: None if is_missing(v, blank=True) else v)
    present = values.notna()
    counts = frame.loc[present].assign(_v=values[present].astype(str)).groupby(
        unit, sort=False)["_v"].transform("nunique")
    for pos in np.flatnonzero(frame.index.isin(counts.index[counts > 1])):
        problems.add(pos, column, f"{values.iloc[pos]!r} differs from another row of the same "
                     f"({', '.join(unit)})")


def _verdicts(frame: pd.DataFrame, column: str, problems: _Problems, *, required: bool
              ) -> pd.Series:
    if column not in frame:
        return pd.Series(None, index=frame.index, dtype=object)
    lower = {v.lower(): v for v in VERDICTS}
    out = []
    for pos, value in enumerate(frame[column]):
        if is_missing(value, blank=True):
            out.append(None)
            continue
        text = lower.get(str(value).strip().lower())
        if text is None:
            problems.add(pos, column, f"{value!r} is not one of A, B, tie (map your codes with "
                         f"{'verdicts' if column == 'verdict' else 'labels'}=...)")
        out.append(text)
    return pd.Series(out, index=frame.index, dtype=object)


def _finish(frame: pd.DataFrame, canonical: Sequence[str], kind: str) -> pd.DataFrame:
    extras = [c for c in frame.columns if c not in canonical and c not in _PROVENANCE
              and not str(c).startswith("_")]
    present = [c for c in canonical if c in frame.columns]
    out = frame[present + extras + [c for c in _PROVENANCE if c in frame]].reset_index(drop=True)
    out.attrs["workbench_table"] = kind
    return out


def validate_pairwise(frame: pd.DataFrame, *, file: str = "<table>",
                      second_order: str | None = None) -> pd.DataFrame:
    """Check a pairwise table (canonical column names) and return it normalised.

    Parameters
    ----------
    frame : DataFrame
        Columns of :data:`PAIRWISE_COLUMNS` (``item_id`` and ``verdict`` required, one
        of ``judge`` / ``annotator`` set per row).
    file : str
        Name used in messages (rows read by a loader carry their own file and line).
    second_order : {"positional", "original"}, required when any row has order 1
        ``"positional"``: order-1 verdicts name the position shown (``"A"`` = the
        response shown first, i.e. response B): they are mapped back here.
        ``"original"``: they already use order 0's numbering.

    Returns
    -------
    DataFrame
        The present columns of :data:`PAIRWISE_COLUMNS` in order (``order`` int 0/1,
        ``verdict`` and ``label`` ``"A"`` / ``"B"`` / ``"tie"`` or None, ``judge`` and
        ``annotator`` text with ``""`` where not set, ``length_*`` and ``confidence``
        float), then other columns, then ``source_file``, ``source_line``.

    Raises
    ------
    DatasetError
        Listing every problem (``.problems``): a missing required column; an empty
        ``item_id``; an order other than 0/1; a verdict or label outside A/B/tie; a row
        with both or neither of judge and annotator; an annotator row without a verdict;
        duplicate (item_id, order, judge, annotator); a label, group or system that
        differs within an item; a second order without ``second_order``.

    Examples
    --------
    >>> t = pd.DataFrame({"item_id": [1, 1], "order": [0, 1], "judge": "j",
    ...                   "verdict": ["A", "B"], "label": "A"})
    >>> validate_pairwise(t, second_order="positional")["verdict"].tolist()
    ['A', 'A']
    """
    if not isinstance(frame, pd.DataFrame):
        raise DatasetError(f"expected a DataFrame, got {type(frame).__name__}", file=file)
    if frame.attrs.get("workbench_table") == "pairwise":
        return frame
    frame = frame.reset_index(drop=True).copy()
    problems = _Problems(frame, file)
    for column in ("item_id", "verdict"):
        if column not in frame:
            problems.add(None, column, f"missing column (the pairwise table needs item_id, "
                         f"verdict and a judge or annotator; columns here: {list(frame.columns)})")
    problems.raise_if_any("pairwise")
    if frame.empty:
        raise DatasetError("the pairwise table has no rows", file=file)
    frame["item_id"] = frame["item_id"].map(_text)
    for pos in np.flatnonzero((frame["item_id"] == "").to_numpy()):
        problems.add(pos, "item_id", "empty")
    if "order" not in frame:
        frame["order"] = 0
    order = pd.to_numeric(frame["order"].map(_text), errors="coerce")
    for pos in np.flatnonzero(~order.isin([0, 1]).to_numpy()):
        problems.add(pos, "order", f"{frame['order'].iloc[pos]!r} is not 0 (A shown first) or 1 "
                     "(B shown first)")
    frame["order"] = order.fillna(-1).astype(int)
    frame["judge"], frame["annotator"] = _who(frame, problems)
    frame["verdict"] = _verdicts(frame, "verdict", problems, required=False)
    for pos in np.flatnonzero(((frame["annotator"] != "") & frame["verdict"].isna()).to_numpy()):
        problems.add(pos, "verdict", "an annotator row without a label")
    if "label" in frame:
        frame["label"] = _verdicts(frame, "label", problems, required=False)
    for column in ("length_a", "length_b", "confidence"):
        if column in frame:
            frame[column] = _numbers(frame, column, problems)
    for column in ("group", "system_a", "system_b"):
        if column in frame:
            frame[column] = frame[column].map(_text)
    _duplicates(frame, ["item_id", "order", "judge", "annotator"], problems)
    for column in ("label", "group", "system_a", "system_b", "length_a", "length_b"):
        _constant_within(frame, column, ["item_id"], problems)
    second = frame["order"] == 1
    if second.any():
        if second_order not in ("positional", "original"):
            problems.add(None, "order", "the table has a second order (order 1): say whether its "
                         "verdicts name the position shown (second_order='positional': 'A' = "
                         "the response shown first, mapped back here) or are already in order "
                         "0's numbering (second_order='original')")
        elif second_order == "positional":
            frame.loc[second, "verdict"] = frame.loc[second, "verdict"].map(
                lambda v: _SWAP.get(v, v))
    problems.raise_if_any("pairwise")
    return _finish(frame, PAIRWISE_COLUMNS, "pairwise")


def validate_pointwise(frame: pd.DataFrame, *, file: str = "<table>") -> pd.DataFrame:
    """Check a pointwise table (canonical column names) and return it normalised.

    Parameters
    ----------
    frame : DataFrame
        Columns of :data:`POINTWISE_COLUMNS` (``item_id`` and ``score`` required, one of
        ``judge`` / ``annotator`` set per row).
    file : str
        Name used in messages.

    Returns
    -------
    DataFrame
        The present columns of :data:`POINTWISE_COLUMNS` in order (``system`` and
        ``dimension`` text, ``""`` when absent; ``score``, ``label``, ``confidence``
        float), then other columns, then ``source_file``, ``source_line``.

    Raises
    ------
    DatasetError
        Listing every problem (``.problems``): a missing required column, an empty
        ``item_id``, a score or label that is not a number, a row with both or neither
        of judge and annotator, an annotator row without a score, duplicate
        (item_id, system, dimension, judge, annotator), a label or group that differs
        within one (item_id, system, dimension).

    Examples
    --------
    >>> t = pd.DataFrame({"item_id": [1, 1], "system": ["s", "s"], "judge": ["bleu", ""],
    ...                   "annotator": ["", "ann1"], "score": ["0.4", 3]})
    >>> validate_pointwise(t)["score"].tolist()
    [0.4, 3.0]
    """
    if not isinstance(frame, pd.DataFrame):
        raise DatasetError(f"expected a DataFrame, got {type(frame).__name__}", file=file)
    if frame.attrs.get("workbench_table") == "pointwise":
        return frame
    frame = frame.reset_index(drop=True).copy()
    problems = _Problems(frame, file)
    for column in ("item_id", "score"):
        if column not in frame:
            problems.add(None, column, f"missing column (the pointwise table needs item_id, "
                         f"score and a judge or annotator; columns here: {list(frame.columns)})")
    problems.raise_if_any("pointwise")
    if frame.empty:
        raise DatasetError("the pointwise table has no rows", file=file)
    frame["item_id"] = frame["item_id"].map(_text)
    for pos in np.flatnonzero((frame["item_id"] == "").to_numpy()):
        problems.add(pos, "item_id", "empty")
    for column in ("system", "dimension", "group"):
        frame[column] = frame[column].map(_text) if column in frame else ""
    frame["judge"], frame["annotator"] = _who(frame, problems)
    frame["score"] = _numbers(frame, "score", problems)
    for pos in np.flatnonzero(((frame["annotator"] != "") & frame["score"].isna()).to_numpy()):
        problems.add(pos, "score", "an annotator row without a score")
    for column in ("label", "confidence"):
        if column in frame:
            frame[column] = _numbers(frame, column, problems)
    unit = ["item_id", "system", "dimension"]
    _duplicates(frame, [*unit, "judge", "annotator"], problems)
    for column in ("label", "group"):
        _constant_within(frame, column, unit, problems)
    problems.raise_if_any("pointwise")
    if (frame["group"] == "").all():
        frame = frame.drop(columns="group")
    return _finish(frame, POINTWISE_COLUMNS, "pointwise")


# --- loaders -----------------------------------------------------------------------------

def load_pairwise(source: Any, *, columns: Mapping[str, str] | None = None,
                  verdicts: Mapping | None = None, labels: Mapping | None = None,
                  second_order: str | None = None, items: Any = None,
                  constants: Mapping[str, Any] | None = None,
                  recode: Mapping[str, Mapping] | None = None,
                  name: str | None = None) -> pd.DataFrame:
    """Read a pairwise table of verdicts and validate it (:func:`validate_pairwise`).

    Parameters
    ----------
    source : path, DataFrame, or mapping of order -> path or DataFrame
        A CSV/TSV (header row), JSONL, JSON (list of objects) file or a frame; or one per
        presentation order, e.g. ``{0: "pred.jsonl", 1: "pred_swapped.jsonl"}`` (then
        ``order`` comes from the key). A table without an item column gets ``item_id`` =
        the record's position (1, 2, ...) in its file, so files aligned line by line join.
    columns : mapping, optional
        Canonical name -> the user's column, e.g. ``{"verdict": "output", "group":
        "scenario"}``. Columns already named canonically need no entry.
    verdicts : mapping, optional
        The user's verdict codes -> ``"A"`` / ``"B"`` / ``"tie"`` / None (unparsed), e.g.
        ``{0: "A", 1: "B", 2: "tie"}`` or ``{"A>B": "A", "B>A": "B", "A=B": "tie"}``;
        1, 1.0 and "1" are one code.
    labels : mapping, optional
        The same for ``label`` (default: ``verdicts``).
    second_order : {"positional", "original"}
        Required when the table holds order 1 (see :func:`validate_pairwise`).
    items : path or DataFrame, optional
        A per-item table (label, group, systems ...) joined on ``item_id`` (or on the
        record position when it has no item column).
    constants : mapping, optional
        Columns set to one value, e.g. ``{"judge": "auto-j"}``.
    recode : mapping, optional
        Per column, a mapping of its values (values not in it are kept), e.g.
        ``{"group": {"post_summarization": "Summarization"}}``.
    name : str, optional
        Name of a DataFrame source in messages.

    Returns
    -------
    DataFrame
        The validated pairwise table.

    Examples
    --------
    >>> raw = pd.DataFrame({"pair": ["p1", "p1", "p2", "p2"], "swap": [0, 1, 0, 1],
    ...                     "out": [0, 1, 1, 1], "gold": 0})
    >>> t = load_pairwise(raw, columns={"item_id": "pair", "order": "swap",
    ...                   "verdict": "out", "label": "gold"}, verdicts={0: "A", 1: "B"},
    ...                   second_order="positional", constants={"judge": "j"})
    >>> t[["item_id", "order", "verdict", "label"]].values.tolist()
    [['p1', 0, 'A', 'A'], ['p1', 1, 'A', 'A'], ['p2', 0, 'B', 'A'], ['p2', 1, 'A', 'A']]
    """
    frame = _gather(source, columns, PAIRWISE_COLUMNS, name, items)
    frame = _recode_columns(_constants(frame, constants), recode)
    if "verdict" in frame:
        frame["verdict"] = _recode(frame["verdict"], verdicts)
    if "label" in frame:
        frame["label"] = _recode(frame["label"], labels if labels is not None else verdicts)
    return validate_pairwise(frame, file=name or _file_name(source), second_order=second_order)


def _file_name(source: Any) -> str:
    if isinstance(source, pd.DataFrame):
        return "<DataFrame>"
    if isinstance(source, Mapping):
        return " + ".join(_file_name(s) for s in source.values())
    return str(source)


def _explode(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """Spread cells holding lists (or JSON text of lists) to one row per position."""
    def as_list(v):
        if isinstance(v, str) and v.strip().startswith("["):
            try:
                return json.loads(v)
            except json.JSONDecodeError:
                return v
        return list(v) if isinstance(v, (list, tuple, np.ndarray)) else v

    frame = frame.map(as_list)
    listed = [c for c in frame.columns if frame[c].map(lambda v: isinstance(v, list)).any()]
    if not listed:
        return frame
    lengths = frame[listed].map(lambda v: len(v) if isinstance(v, list) else -1)
    for pos in range(len(frame)):
        if lengths.iloc[pos].nunique() != 1:
            raise DatasetError(f"line {frame['source_line'].iloc[pos]}: list cells of different "
                               f"lengths ({dict(lengths.iloc[pos])})", file=label)
    if "_item_from_position" in frame:
        frame["item_id"] = [list(range(1, n + 1)) for n in lengths.iloc[:, 0]]
        listed.append("item_id")
    return frame.explode(listed, ignore_index=True)


def load_pointwise(source: Any, *, columns: Mapping[str, str] | None = None,
                   judges: Sequence[str] | Mapping[str, str] | None = None,
                   annotators: Sequence[str] | Mapping[str, str] | None = None,
                   explode: bool = False, items: Any = None,
                   constants: Mapping[str, Any] | None = None,
                   recode: Mapping[str, Mapping] | None = None,
                   name: str | None = None) -> pd.DataFrame:
    """Read a pointwise table of scores and validate it (:func:`validate_pointwise`).

    Parameters
    ----------
    source : path, DataFrame
        CSV/TSV, JSONL, JSON or a frame (see :func:`load_pairwise`).
    columns : mapping, optional
        Canonical name -> the user's column, e.g. ``{"system": "Model", "label":
        "Relevance"}``.
    judges : list or mapping, optional
        Wide input: columns that each hold one judge's (or metric's) score; each becomes
        rows with ``judge`` = the column name (a mapping renames: column -> judge).
    annotators : list or mapping, optional
        Wide input: columns that each hold one person's score (``annotator`` rows).
    explode : bool
        Cells holding lists (or JSON text of lists), one value per item, are spread to
        one row per position; ``item_id`` becomes the position (1, 2, ...) when the table
        has no item column.
    items, constants, recode, name
        As in :func:`load_pairwise`.

    Returns
    -------
    DataFrame
        The validated pointwise table.

    Examples
    --------
    >>> raw = pd.DataFrame({"story": [1, 2, 3], "Model": "gpt", "human": [3, 4, 2],
    ...                     "BLEU": [0.1, 0.3, 0.2]})
    >>> t = load_pointwise(raw, columns={"item_id": "story", "system": "Model",
    ...                    "label": "human"}, judges=["BLEU"])
    >>> t[["item_id", "system", "judge", "score", "label"]].values.tolist()
    [['1', 'gpt', 'BLEU', 0.1, 3.0], ['2', 'gpt', 'BLEU', 0.3, 4.0], ['3', 'gpt', 'BLEU', 0.2, 2.0]]
    """
    frame = _gather(source, columns, POINTWISE_COLUMNS, name, items)
    label = name or _file_name(source)
    if explode:
        frame = _explode(frame, label)
        frame["item_id"] = frame["item_id"].map(_key)
    wide = []
    for role, spec in (("judge", judges), ("annotator", annotators)):
        if not spec:
            continue
        mapping = dict(spec) if isinstance(spec, Mapping) else {c: c for c in spec}
        missing = [c for c in mapping if c not in frame.columns]
        if missing:
            raise DatasetError(f"no column {missing[0]!r} in the table (its columns: "
                               f"{', '.join(map(str, frame.columns))})", file=label,
                               column=missing[0])
        keep = [c for c in frame.columns if c not in mapping and c not in (judges or ())
                and c not in (annotators or ()) and c != "score"]
        for column, who in mapping.items():
            part = frame[keep].copy()
            part[role], part["score"] = who, frame[column].to_numpy()
            wide.append(part)
    if wide:
        frame = pd.concat(wide, ignore_index=True)
    frame = _recode_columns(_constants(frame, constants), recode)
    return validate_pointwise(frame, file=label)


_PAIRWISE_ONLY = {"verdicts", "labels", "second_order"}
_POINTWISE_ONLY = {"judges", "annotators", "explode"}


def _header(source: Any) -> list[str]:
    """The column names of a table source without reading it all (for ``kind="auto"``)."""
    if isinstance(source, pd.DataFrame):
        return [str(c) for c in source.columns]
    if isinstance(source, Mapping):
        return [c for part in source.values() for c in _header(part)]
    path = Path(source)
    try:
        with path.open(encoding="utf-8-sig") as handle:
            first = handle.readline()
    except OSError:
        return []
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return [c.strip() for c in first.split("\t" if suffix == ".tsv" else ",")]
    try:
        record = json.loads(first)
    except json.JSONDecodeError:
        return []
    return list(record) if isinstance(record, dict) else []


def load_table(source: Any, *, kind: str = "auto", swapped: Any = None,
               **options: Any) -> pd.DataFrame:
    """Read a judge table with :func:`load_pairwise` or :func:`load_pointwise`.

    ``swapped`` (pairwise): a second file of the same items judged in the other order,
    line-aligned with ``source`` (read as ``{0: source, 1: swapped}``).

    ``kind="auto"`` takes pairwise when an option only a pairwise table has is given
    (``verdicts``, ``labels``, ``second_order``), when ``columns`` maps ``verdict``, when
    ``source`` is a mapping of orders, or when the table has a ``verdict`` column;
    pointwise otherwise. An option of the other kind is an error naming it.

    Examples
    --------
    >>> raw = pd.DataFrame({"item_id": [1, 2], "judge": "j", "verdict": ["A", "B"]})
    >>> load_table(raw).attrs["workbench_table"]
    'pairwise'
    """
    if swapped is not None and str(swapped) != "":
        source = {0: source, 1: swapped}
    if kind == "auto":
        pairwise = (bool(_PAIRWISE_ONLY & set(options)) or isinstance(source, Mapping)
                    or "verdict" in (options.get("columns") or {})
                    or "verdict" in _header(source))
        kind = "pairwise" if pairwise else "pointwise"
    if kind not in ("pairwise", "pointwise"):
        raise ValueError(f"kind must be 'pairwise', 'pointwise' or 'auto', got {kind!r}")
    wrong = sorted(set(options) & (_POINTWISE_ONLY if kind == "pairwise" else _PAIRWISE_ONLY))
    if wrong:
        raise ValueError(f"options {wrong} do not apply to a {kind} table")
    loader = load_pairwise if kind == "pairwise" else load_pointwise
    return loader(source, **options)
