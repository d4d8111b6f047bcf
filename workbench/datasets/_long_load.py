"""Loaders of the judge tables (:mod:`workbench.datasets._long`): CSV, TSV, JSONL, JSON or a
DataFrame, one file or one per presentation order, with the user's column names, label
codes, value recodings, wide metric columns and list cells mapped in one call; the result
is validated by :func:`~workbench.datasets._long.validate_pairwise` or
:func:`~workbench.datasets._long.validate_pointwise`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.datasets._long import (
    _PROVENANCE,
    PAIRWISE_COLUMNS,
    POINTWISE_COLUMNS,
    validate_pairwise,
    validate_pointwise,
)
from workbench.datasets._long_read import _composite, _key, _read, _sources, match_verdicts
from workbench.errors import DatasetError
from workbench.text import is_missing

__all__ = ["load_pairwise", "load_pointwise", "load_table"]


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
        shown = [str(c) for c in frame.columns if c not in _PROVENANCE]
        raise DatasetError(f"no column {missing[0]!r} in the file (its columns: "
                           f"{', '.join(shown)})", file=label, column=missing[0])
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


def _gather(source: Any, columns, canonical, name, items, encoding=None, nested=None
            ) -> pd.DataFrame:
    """Read ``source`` (one table, a list of tables, or ``{order: table}``), rename, join
    ``items``."""
    columns = dict(columns or {})
    key = columns.pop("item_id") if isinstance(columns.get("item_id"), (list, tuple)) else None
    parts = _sources(source)
    item_table, item_label = (_read(items, None, encoding) if items is not None
                              else (None, ""))
    elsewhere = set() if item_table is None else set(item_table.columns)
    frames = []
    for order, part in parts:
        frame, label = _read(part, name if order is None and len(parts) == 1 else None,
                             encoding, nested)
        composite = _composite(frame, key, label) if key else None
        frame = _rename(frame, columns, canonical, label, elsewhere)
        if composite is not None:
            frame["item_id"] = composite.to_numpy()
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
        if key and all(c in item_table.columns for c in key):
            item_table["item_id"] = _composite(item_table, key, item_label).to_numpy()
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


# --- loaders -----------------------------------------------------------------------------

def load_pairwise(source: Any, *, columns: Mapping[str, str] | None = None,
                  verdicts: Mapping | None = None, labels: Mapping | None = None,
                  second_order: str | None = None, items: Any = None,
                  constants: Mapping[str, Any] | None = None,
                  recode: Mapping[str, Mapping] | None = None,
                  name: str | None = None, encoding: str | None = None,
                  pattern: str | Mapping | None = None, nested: str | None = None
                  ) -> pd.DataFrame:
    r"""Read a pairwise table of verdicts and validate it (:func:`validate_pairwise`).

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
    encoding : str, optional
        The files' text encoding (default UTF-8), e.g. ``"latin-1"``, ``"shift_jis"``.
    pattern : str or mapping, optional
        Free-text verdicts: a regular expression whose first group (or named group
        ``verdict``) is the code, mapped by ``verdicts`` (e.g. ``r"\[\[(A|B|C)\]\]"``
        with ``{"A": "A", "B": "B", "C": "tie"}``); or a mapping verdict -> regular
        expression, the first that matches wins. A reply no pattern matches is unparsed
        (missing), never a verdict.
    nested : str, optional
        A nested JSON release: the path to walk (see :func:`load_pointwise`).

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
    frame = _gather(source, columns, PAIRWISE_COLUMNS, name, items, encoding, nested)
    if pattern is not None and "verdict" in frame:
        frame["verdict"] = match_verdicts(frame["verdict"], pattern)
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
    if isinstance(source, (list, tuple)):
        return " + ".join(_file_name(s) for s in source)
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
                   name: str | None = None, encoding: str | None = None,
                   nested: str | None = None) -> pd.DataFrame:
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
    items, constants, recode, name, encoding
        As in :func:`load_pairwise`.
    nested : str, optional
        A nested JSON release (item, then system, then scores): the path to walk, e.g.
        ``"{item_id}.{system}.{dimension}"`` for ``{"story1": {"sysA": {"coherence": 3}}}``
        (:func:`~workbench.datasets._long_read.flatten`).

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
    frame = _gather(source, columns, POINTWISE_COLUMNS, name, items, encoding, nested)
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


_PAIRWISE_ONLY = {"verdicts", "labels", "second_order", "pattern"}
_POINTWISE_ONLY = {"judges", "annotators", "explode"}


def _header(source: Any, encoding: str | None = None) -> list[str]:
    """The column names of a table source without reading it all (for ``kind="auto"``;
    an unreadable file gives none, its loader says why)."""
    if isinstance(source, pd.DataFrame):
        return [str(c) for c in source.columns]
    if isinstance(source, Mapping):
        return [c for part in source.values() for c in _header(part, encoding)]
    if isinstance(source, (list, tuple)):
        return [c for part in source for c in _header(part, encoding)]
    path = Path(source)
    try:
        with path.open(encoding=encoding or "utf-8-sig") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError, LookupError):
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
                    or "verdict" in _header(source, options.get("encoding")))
        kind = "pairwise" if pairwise else "pointwise"
    if kind not in ("pairwise", "pointwise"):
        raise ValueError(f"kind must be 'pairwise', 'pointwise' or 'auto', got {kind!r}")
    wrong = sorted(set(options) & (_POINTWISE_ONLY if kind == "pairwise" else _PAIRWISE_ONLY))
    if wrong:
        raise ValueError(f"options {wrong} do not apply to a {kind} table")
    loader = load_pairwise if kind == "pairwise" else load_pointwise
    return loader(source, **options)
