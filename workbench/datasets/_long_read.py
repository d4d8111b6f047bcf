"""Reading the judge tables' files (:mod:`workbench.datasets._long_load`): CSV, TSV, JSONL or
JSON in a stated encoding, with one-line errors naming the file and line; and free-text
verdicts matched by a declared pattern.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.datasets._long import _PROVENANCE
from workbench.errors import DatasetError
from workbench.text import is_missing


def _read(source: Any, name: str | None, encoding: str | None = None,
          nested: str | None = None) -> tuple[pd.DataFrame, str]:
    """A frame with ``source_file`` and ``source_line`` (1-based line or row); ``nested``:
    the path of a nested JSON release (:func:`flatten`)."""
    if isinstance(source, pd.DataFrame):
        frame = source.reset_index(drop=True).copy()
        label = name or "<DataFrame>"
        lines = np.arange(1, len(frame) + 1)
    else:
        path = Path(source)
        label = name or str(path)
        suffix = path.suffix.lower()
        if suffix not in (".csv", ".tsv", ".jsonl", ".json"):
            raise DatasetError(f"unknown file type {suffix!r}: give .csv, .tsv, .jsonl or .json",
                               file=label)
        text = _decoded(path, label, encoding)
        if suffix in (".csv", ".tsv"):
            frame, lines = _read_csv(text, "\t" if suffix == ".tsv" else ",", label)
        else:
            frame, lines = _read_json(text, suffix == ".json", label, nested)
    frame["source_file"], frame["source_line"] = label, lines
    return frame, label


def _decoded(path: Path, label: str, encoding: str | None) -> str:
    """The file's text; a directory, an unreadable file or bytes not in ``encoding``
    (default UTF-8) are one-line errors naming the file (and the line)."""
    if path.is_dir():
        raise DatasetError("is a directory, not a table file", file=label)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError("file not found", file=label) from None
    except OSError as exc:
        raise DatasetError(f"cannot read it ({exc.strerror})", file=label) from None
    codec = encoding or "utf-8-sig"
    try:
        return data.decode(codec)
    except LookupError:
        raise DatasetError(f"unknown encoding {encoding!r}", file=label) from None
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise DatasetError(f"line {line}: not {encoding or 'UTF-8'} text ({exc.reason}); give "
                           "the file's encoding (encoding='latin-1', --encoding latin-1)",
                           file=label) from None


def _read_csv(text: str, sep: str, label: str) -> tuple[pd.DataFrame, np.ndarray]:
    header = next(csv.reader(io.StringIO(text), delimiter=sep), None)
    if not header:
        raise DatasetError("empty file: no header row", file=label)
    names = [h.strip() for h in header]
    for pos, column in enumerate(names):
        if column in names[:pos]:
            same = "" if header[pos] == header[names.index(column)] else " (after trimming spaces)"
            raise DatasetError(f"line 1: two columns named {column!r}{same}: rename one",
                               file=label, column=column)
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, sep=sep)
    except pd.errors.ParserError as exc:
        raise DatasetError(f"unreadable table: {exc}", file=label) from None
    except pd.errors.EmptyDataError:
        raise DatasetError("empty file: no header row", file=label) from None
    frame.columns = names
    return frame, np.arange(2, len(frame) + 2)  # line 1 is the header


def _unique_keys(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    twice = [k for pos, k in enumerate(keys) if k in keys[:pos]]
    if twice:
        raise ValueError(f"the key {twice[0]!r} appears twice in one object")
    return dict(pairs)


def _parse(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def _read_json(text: str, whole: bool, label: str, nested: str | None = None
               ) -> tuple[pd.DataFrame, np.ndarray]:
    records, lines = [], []
    if whole:
        try:
            data = _parse(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"line {exc.lineno}: invalid JSON: {exc.msg}", file=label) from None
        except ValueError as exc:
            raise DatasetError(f"invalid JSON: {exc}", file=label) from None
        if nested is not None:
            rows = list(flatten(data, nested, label))
            return pd.DataFrame.from_records(rows), np.arange(1, len(rows) + 1)
        if not isinstance(data, list):
            raise DatasetError("a .json table must be a list of objects (a nested release: "
                               "give its path, nested='{item_id}.{system}.{dimension}')",
                               file=label)
        records, lines = data, list(range(1, len(data) + 1))
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = _parse(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"line {number}: invalid JSON: {exc.msg}", file=label) from None
            except ValueError as exc:
                raise DatasetError(f"line {number}: invalid JSON: {exc}", file=label) from None
            if nested is None:
                records.append(record)
                lines.append(number)
            else:
                rows = list(flatten(record, nested, f"{label} line {number}"))
                records += rows
                lines += [number] * len(rows)
    bad = [n for n, r in zip(lines, records, strict=True) if not isinstance(r, dict)]
    if bad:
        raise DatasetError(f"line {bad[0]}: expected a JSON object", file=label)
    return pd.DataFrame.from_records(records), np.asarray(lines, dtype=int)


def flatten(data: Any, path: str, label: str = "<json>") -> Any:
    """The rows of a nested JSON release, walked along a declared ``path`` of steps joined
    by ``.``:

    - ``{column}``: the keys of an object (or positions 1, 2 ... of a list) at this level
      become the values of ``column``;
    - ``[]``: each element of a list, in turn;
    - ``name``: the field ``name`` of an object (its other plain fields become columns).

    Where the path ends, a number is the ``score`` and an object's plain fields are
    columns. A step that does not fit the data is a one-line error naming where.

    Examples
    --------
    >>> data = {"s1": {"sysA": {"coherence": 3, "fluency": 4}}}
    >>> list(flatten(data, "{item_id}.{system}.{dimension}"))  # doctest: +NORMALIZE_WHITESPACE
    [{'item_id': 's1', 'system': 'sysA', 'dimension': 'coherence', 'score': 3},
     {'item_id': 's1', 'system': 'sysA', 'dimension': 'fluency', 'score': 4}]
    """
    steps = [step.strip() for step in path.split(".") if step.strip()]
    if not steps:
        raise DatasetError(f"nested path {path!r} has no step", file=label)
    return _walk(data, steps, {}, "$", label)


def _plain(node: dict) -> dict:
    return {k: v for k, v in node.items() if not isinstance(v, (dict, list))}


def _walk(node: Any, steps: list[str], row: dict, where: str, label: str):
    if not steps:
        if isinstance(node, dict):
            yield {**row, **_plain(node)}
        elif isinstance(node, list):
            raise DatasetError(f"{where}: a list where the nested path ends (add a step: "
                               "'[]' or '{column}')", file=label)
        else:
            yield {**row, "score": node}
        return
    step, rest = steps[0], steps[1:]
    if step.startswith("{") and step.endswith("}"):
        column = step[1:-1]
        if isinstance(node, dict):
            pairs = node.items()
        elif isinstance(node, list):
            pairs = enumerate(node, 1)
        else:
            raise DatasetError(f"{where}: {step} expects an object or a list, found "
                               f"{json.dumps(node)[:40]}", file=label)
        for key, value in pairs:
            yield from _walk(value, rest, {**row, column: key}, f"{where}.{key}", label)
    elif step == "[]":
        if not isinstance(node, list):
            raise DatasetError(f"{where}: '[]' expects a list, found {type(node).__name__}",
                               file=label)
        for pos, value in enumerate(node, 1):
            yield from _walk(value, rest, row, f"{where}[{pos}]", label)
    else:
        if not isinstance(node, dict) or step not in node:
            found = list(node)[:8] if isinstance(node, dict) else type(node).__name__
            raise DatasetError(f"{where}: no field {step!r} (found {found})", file=label)
        yield from _walk(node[step], rest, {**row, **{k: v for k, v in _plain(node).items()
                                                       if k != step}}, f"{where}.{step}", label)


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


def _composite(frame: pd.DataFrame, key: Sequence[str], label: str) -> pd.Series:
    """An item key made of several columns (e.g. story and system), joined by ``" | "``."""
    missing = [c for c in key if c not in frame.columns]
    if missing:
        shown = [str(c) for c in frame.columns if c not in _PROVENANCE]
        raise DatasetError(f"item_id: no column {missing[0]!r} in the file (its columns: "
                           f"{', '.join(shown)})", file=label, column=missing[0])
    parts = [frame[c].map(lambda v: "" if is_missing(v, blank=True) else _key(v)) for c in key]
    joined = parts[0].str.cat(parts[1:], sep=" | ")
    empty = np.logical_or.reduce([(p == "").to_numpy() for p in parts])
    return joined.where(~empty, None)


def _sources(source: Any) -> list[tuple[Any, Any]]:
    """(order, part) pairs: ``{order: table}``, a list of tables (one after the other), or
    one table."""
    if isinstance(source, Mapping):
        return list(source.items())
    if isinstance(source, (list, tuple)):
        if not source:
            raise DatasetError("no file given (an empty list)")
        return [(None, part) for part in source]
    return [(None, source)]


def match_verdicts(replies: pd.Series, pattern: str | Mapping[str, str]) -> pd.Series:
    r"""Free-text replies to verdict codes by a declared pattern; a reply no pattern matches
    (or a missing one) is None (unparsed), never a verdict.

    ``pattern``: a regular expression (searched, case-sensitive) whose named group
    ``verdict``, else first group, else whole match is the code; or a mapping code ->
    regular expression, tried in order, the first that matches giving its code.

    Examples
    --------
    >>> replies = pd.Series(["[[A]]", "I think [[B]] is better", "both are fine", None])
    >>> match_verdicts(replies, r"\[\[(A|B|C)\]\]").tolist()
    ['A', 'B', None, None]
    """
    if isinstance(pattern, Mapping):
        compiled = [(code, _compile(p)) for code, p in pattern.items()]

        def one(text: str):
            return next((code for code, rx in compiled if rx.search(text)), None)
    else:
        rx = _compile(pattern)

        def one(text: str):
            found = rx.search(text)
            if found is None:
                return None
            if "verdict" in rx.groupindex:
                return found.group("verdict")
            return found.group(1) if rx.groups else found.group(0)
    return pd.Series([None if is_missing(v, blank=True) else one(str(v)) for v in replies],
                     index=replies.index, dtype=object)


def _compile(pattern: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise DatasetError(f"pattern {pattern!r} is not a regular expression ({exc})",
                           column="verdict") from None
