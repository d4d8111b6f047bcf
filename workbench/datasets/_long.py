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

The loaders (:mod:`workbench.datasets._long_load`) :func:`load_pairwise` and
:func:`load_pointwise` read CSV, TSV, JSONL, JSON (also nested, along a declared
``nested=`` path), one file, several, or a DataFrame, in a stated ``encoding``; rename
the user's columns (``columns={"verdict": "output"}``; an item key of several columns
is a list), recode labels (``verdicts={0: "A", 1: "B", 2: "tie"}``; free text through
a declared ``pattern``), map a second order's positional verdicts back
(``second_order="positional"``) and validate. :func:`validate_pairwise` and
:func:`validate_pointwise` check a whole table and raise one `DatasetError` listing every
bad row (its 1-based line: a CSV's header is line 1; a frame's first row is row 1), the
field and why; the error's ``problems`` attribute is that list as a DataFrame.

Refused because they give silent nonsense: a table with a second order whose numbering is
not declared (``second_order``: are its verdicts positional, or already mapped back?),
two rows for one (item, order, judge) or (item, system, dimension, judge) (summarised,
naming a column that tells them apart), a label or group that differs between rows of
one item, a score that is not a finite number (``inf``, ``1e999``) or is true/false.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import DatasetError
from workbench.text import is_missing

__all__ = [
    "PAIRWISE_COLUMNS",
    "POINTWISE_COLUMNS",
    "VERDICTS",
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
    raw = frame[column]
    truth = raw.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
    out = pd.to_numeric(raw.map(lambda v: np.nan if is_missing(v, blank=True)
                                or isinstance(v, (bool, np.bool_)) else v),
                        errors="coerce").astype(float)
    for pos in np.flatnonzero(out.isna().to_numpy() | np.isinf(out.to_numpy())):
        value = raw.iloc[pos]
        if truth[pos]:
            problems.add(pos, column, f"{value!r} is true/false, not a number")
        elif np.isinf(out.iloc[pos]):
            problems.add(pos, column, f"{value!r} is not a finite number")
        elif not is_missing(value, blank=True):
            problems.add(pos, column, f"{value!r} is not a number")
        elif required:
            problems.add(pos, column, "empty")
    return out.where(np.isfinite(out.to_numpy()), np.nan)


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


def _duplicates(frame: pd.DataFrame, keys: list[str], problems: _Problems) -> np.ndarray:
    """One problem summarising the rows that share their ``keys`` (how many, the first
    few lines, and the columns that would tell them apart); returns which rows do."""
    dup = frame.duplicated(subset=keys, keep=False).to_numpy()
    if not dup.any():
        return dup
    rows = frame[dup]
    groups = rows.groupby(keys, sort=False).indices
    shown = []
    for positions in list(groups.values())[:3]:
        lines = ", ".join(str(problems.lines[p]) for p in positions[:3])
        shown.append(f"lines {lines}" + (" ..." if len(positions) > 3 else ""))
    skip = {*keys, "score", "verdict", "label", "confidence", *_PROVENANCE}
    apart = [c for c in rows.columns if c not in skip and not str(c).startswith("_")
             and not rows.duplicated(subset=[*keys, c], keep=False).any()]
    hint = (f"; column {apart[0]!r} tells them apart: map it (e.g. columns={{'system': "
            f"{apart[0]!r}}}) or make it part of the item key (columns={{'item_id': "
            f"[<item column>, {apart[0]!r}]}})" if apart
            else "; no other column tells them apart")
    problems.add(int(list(groups.values())[0][1]), "+".join(keys),
                 f"{int(dup.sum())} rows in {len(groups)} groups share their "
                 f"({', '.join(keys)}), e.g. {'; '.join(shown)}: one row per "
                 f"({', '.join(keys)}){hint}")
    return dup


def _constant_within(frame: pd.DataFrame, column: str, unit: list[str], problems: _Problems,
                     skip: np.ndarray) -> None:
    """Rows whose ``column`` differs within their ``unit`` (rows in ``skip``, already named
    as duplicates, left out)."""
    if column not in frame:
        return
    values = frame[column].map(lambda v: None if is_missing(v, blank=True) else v)
    present = values.notna() & ~skip
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


def _opened(frame: pd.DataFrame, kind: str, value: str, file: str) -> tuple[pd.DataFrame, _Problems]:
    """The shared start of both long tables: a copy with a fresh index, its problem list,
    the required ``item_id`` and ``value`` columns, at least one row, ``item_id`` as
    non-empty text."""
    if not isinstance(frame, pd.DataFrame):
        raise DatasetError(f"expected a DataFrame, got {type(frame).__name__}", file=file)
    frame = frame.reset_index(drop=True).copy()
    problems = _Problems(frame, file)
    for column in ("item_id", value):
        if column not in frame:
            shown = [str(c) for c in frame.columns
                     if c not in _PROVENANCE and not str(c).startswith("_")]
            nested = [str(c) for c in shown if frame[c].map(
                lambda v: isinstance(v, (dict, list))).any()]
            hint = (f"; {nested[0]!r} holds nested JSON: give the path to walk, e.g. "
                    "nested='[].outputs.[].scores.{dimension}'" if nested else "")
            problems.add(None, column, f"missing column (the {kind} table needs item_id, "
                         f"{value} and a judge or annotator; columns here: {shown}){hint}")
    problems.raise_if_any(kind)
    if frame.empty:
        raise DatasetError(f"the {kind} table has no rows", file=file)
    frame["item_id"] = frame["item_id"].map(_text)
    for pos in np.flatnonzero((frame["item_id"] == "").to_numpy()):
        problems.add(pos, "item_id", "empty")
    return frame, problems


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
    if isinstance(frame, pd.DataFrame) and frame.attrs.get("workbench_table") == "pairwise":
        return frame
    frame, problems = _opened(frame, "pairwise", "verdict", file)
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
    dup = _duplicates(frame, ["item_id", "order", "judge", "annotator"], problems)
    for column in ("label", "group", "system_a", "system_b", "length_a", "length_b"):
        _constant_within(frame, column, ["item_id"], problems, dup)
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
    if isinstance(frame, pd.DataFrame) and frame.attrs.get("workbench_table") == "pointwise":
        return frame
    frame, problems = _opened(frame, "pointwise", "score", file)
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
    dup = _duplicates(frame, [*unit, "judge", "annotator"], problems)
    for column in ("label", "group"):
        _constant_within(frame, column, unit, problems, dup)
    problems.raise_if_any("pointwise")
    if (frame["group"] == "").all():
        frame = frame.drop(columns="group")
    return _finish(frame, POINTWISE_COLUMNS, "pointwise")
