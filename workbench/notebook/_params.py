"""Notebook parameters: the ``parameters`` cell read by Papermill, checked values, YAML input.

A notebook's ``parameters`` cell is the one declaration of its parameters (DESIGN §7):
:func:`notebook_parameters` reads each name's annotation, default and comment from the
cell's Python syntax tree (the same fields as ``papermill.inspect_notebook``, without
importing papermill and nbformat, which cost a notebook kernel about 1.5 s). Before
any kernel starts, :func:`check_parameters` rejects an unknown name (with a "did you
mean") and a value of the wrong type (naming the parameter: ``trials`` is an int).
:func:`changed_parameters` tells a default run from any other: only the default run may
write to ``figures/`` and ``data/results/`` (see ``run_notebook`` and ``setup``).

Lists and dicts are given as YAML (``-y 'judges: [a, b]'``); Papermill's ``-p`` turns
them into strings, which :func:`check_values` reports as such.
"""

from __future__ import annotations

import ast
import difflib
import io
import json
import os
import re
import tokenize
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

#: Parameters that change how calls are made or shown, never what a run computes: a run
#: that sets only these is still the default run.
RUN_NEUTRAL = ("cache_mode", "fresh_cache", "progress")

#: Columns of :func:`parameter_table`.
PARAMETER_COLUMNS = ("name", "type", "default", "comment")

_TYPES: dict[str, type] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "list": list,
    "dict": dict,
    "tuple": tuple,
    "None": type(None),
}
_CONTAINERS = (list, dict, tuple)


def _annotation_types(annotation: Any) -> tuple[type, ...] | None:
    """The types an annotation allows (``"list[str]"``, ``"bool | None"``,
    ``"Optional[bool]"`` — the spelling Papermill's parameter parser reads), or None."""
    if annotation is None:
        return None
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    optional = re.fullmatch(r"\s*Optional\[(.+)\]\s*", text)
    if optional:
        text = f"{optional.group(1)} | None"
    types = []
    for part in text.split("|"):
        base = part.strip().split("[", 1)[0].strip()
        if base not in _TYPES:
            return None  # Any, Path, a class ...: not checked
        types.append(_TYPES[base])
    return tuple(types)


def _expected(default: Any, annotation: Any) -> tuple[type, ...] | None:
    types = _annotation_types(annotation)
    if types is not None and types != (type(None),):  # papermill writes "None" for "unknown"
        return types
    if default is None or type(default) not in _TYPES.values():
        return None
    return (type(default),)


def _fits(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    if isinstance(value, list | tuple) and (list in types or tuple in types):
        return True
    return isinstance(value, types)


def _type_label(types: tuple[type, ...]) -> str:
    names = [t.__name__ if t is not type(None) else "None" for t in types]
    first = names[0]
    article = "an" if first[0] in "aeiou" else "a"
    return f"{article} {' or '.join(names)}"


def expected_type(value: Any, default: Any, annotation: Any = None) -> str | None:
    """The type ``value`` should have (``"an int"``, ``"a bool or None"``), or None when it
    has it: the annotation's when it names built-in types, else the default's type.

    Examples
    --------
    >>> expected_type("three", 5), expected_type(3, 0.5), expected_type(True, 5)
    ('an int', None, 'an int')
    >>> expected_type((1, 2), [], "list[int]"), expected_type("yes", None, "bool | None")
    (None, 'a bool or None')
    """
    types = _expected(default, annotation)
    return None if types is None or _fits(value, types) else _type_label(types)


def check_values(
    values: Mapping[str, Any],
    defaults: Mapping[str, Any],
    *,
    annotations: Mapping[str, Any] | None = None,
) -> None:
    """Raise ``ValueError`` naming the first parameter whose value has the wrong type.

    The expected type is the annotation's (``int``, ``list[str]``, ``bool | None``) when
    it names built-in types, else the type of the default. An ``int`` is a ``float``; a
    ``bool`` is not an ``int``; a string given for a list or dict parameter is what
    Papermill's ``-p`` makes of a list, and the message says to use ``-y``.

    Examples
    --------
    >>> check_values({"trials": 3, "temperature": 1}, {"trials": 5, "temperature": 0.0})
    >>> check_values({"trials": "three"}, {"trials": 5})
    Traceback (most recent call last):
    ...
    ValueError: parameter 'trials' is an int (default 5), got str 'three'
    >>> check_values({"progress": "yes"}, {"progress": None}, annotations={"progress": "Optional[bool]"})
    Traceback (most recent call last):
    ...
    ValueError: parameter 'progress' is a bool or None (default None), got str 'yes'
    >>> check_values({"judges": "[sim/judge-a]"}, {"judges": ["sim/judge-b"]})
    Traceback (most recent call last):
    ...
    ValueError: parameter 'judges' is a list, got the string '[sim/judge-a]': give a YAML list with -y, e.g. -y 'judges: [a, b]' (papermill's -p passes every value as text)
    """
    annotations = annotations or {}
    for name, value in values.items():
        if name not in defaults:
            continue
        label = expected_type(value, defaults[name], annotations.get(name))
        if label is None:
            continue
        words = label.split()
        if isinstance(value, str) and any(t.__name__ in words for t in _CONTAINERS):
            kind, example = ("mapping", "{a: 1}") if "dict" in words else ("list", "[a, b]")
            raise ValueError(
                f"parameter {name!r} is {label}, got the string {value!r}: give a YAML {kind} "
                f"with -y, e.g. -y '{name}: {example}' (papermill's -p passes every value as text)"
            )
        raise ValueError(
            f"parameter {name!r} is {label} (default {defaults[name]!r}), "
            f"got {type(value).__name__} {value!r}"
        )



def notebook_parameters(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The parameters a notebook declares in its cell tagged ``parameters``.

    Returns a dict name -> ``{"name", "inferred_type_name", "default", "help"}`` in the
    order of the cell, as ``papermill.inspect_notebook`` does: the annotation's text
    (``"None"`` without one), the value's source text (a value over several lines is
    joined without its line breaks and comments) and the comment at the end of the
    assignment's last line. Only top-level assignments to one name count. Raises
    ``ValueError`` when the notebook has no cell tagged ``parameters``, when that cell
    assigns nothing or is not valid Python.
    """
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
    except ValueError as exc:
        raise ValueError(f"{path}: not a notebook ({exc})") from None
    tagged = [c for c in cells
              if c.get("cell_type") == "code" and "parameters" in c.get("metadata", {}).get("tags", [])]
    declared = _parameters_of(_text(tagged[0].get("source", "")), path) if tagged else {}
    if not declared:
        raise ValueError(f"{path}: no cell tagged 'parameters' (or it assigns nothing)")
    return declared


def _text(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else source


def _parameters_of(source: str, path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Name -> ``{"name", "inferred_type_name", "default", "help"}`` of a parameters cell."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError) as exc:
        raise ValueError(f"{path}: the parameters cell is not valid Python ({exc})") from None
    comments = {tok.start[0]: tok.string for tok in tokens if tok.type == tokenize.COMMENT}
    out: dict[str, dict[str, Any]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, annotation = stmt.target, stmt.annotation
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, annotation = stmt.targets[0], None
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            type_name = annotation.value  # a quoted annotation: "int"
        else:
            type_name = ast.get_source_segment(source, annotation) if annotation else "None"
        value = ast.get_source_segment(source, stmt.value)
        if "\n" in value:  # one line, as papermill shows it: no breaks, no inner comments
            first = stmt.value.lineno
            value = "".join(_without_comment(line, comments.get(first + i)).strip()
                            for i, line in enumerate(value.splitlines()))
        comment = comments.get(stmt.end_lineno or stmt.lineno, "")
        out[target.id] = {
            "name": target.id,
            "inferred_type_name": (type_name or "None").strip(),
            "default": value.strip(),
            "help": comment.lstrip("#").strip(),
        }
    return out


def _without_comment(line: str, comment: str | None) -> str:
    return line[: line.rindex(comment)] if comment and comment in line else line


def parameter_defaults(declared: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Name -> default value of ``notebook_parameters`` (the literals, evaluated).

    Examples
    --------
    >>> parameter_defaults({"trials": {"default": "5"}, "judges": {"default": "['a']"}})
    {'trials': 5, 'judges': ['a']}
    """
    out = {}
    for name, info in declared.items():
        try:
            out[name] = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError):
            raise ValueError(f"parameter {name!r}: its default {info['default']!r} is not a literal") from None
    return out


def check_parameters(
    path: str | os.PathLike, parameters: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """Check names and value types against the notebook's parameters cell; return it.

    Raises ``ValueError`` for a name the notebook does not declare (with a "did you
    mean" when a declared name is close, else the valid names) and for a value of the
    wrong type (:func:`check_values`).
    """
    declared = notebook_parameters(path)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, list(declared), n=1)
            hints.append(f"{name} (did you mean {close[0]}?)" if close else name)
        raise ValueError(
            f"{Path(path).name}: unknown parameter(s) {', '.join(hints)}; "
            f"valid: {', '.join(sorted(declared))}"
        )
    check_values(
        parameters,
        parameter_defaults(declared),
        annotations={name: info["inferred_type_name"] for name, info in declared.items()},
    )
    return declared


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def changed_parameters(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The values that differ from their defaults, leaving out :data:`RUN_NEUTRAL` names.

    A run with any is not the default run (its outputs go to a run folder). Lists and
    tuples compare alike, and so do ``1`` and ``1.0``.

    Examples
    --------
    >>> defaults = {"trials": 5, "temperatures": [0.0, 1.0], "progress": False}
    >>> changed_parameters({"trials": 5, "temperatures": (0, 1), "progress": True}, defaults)
    {}
    >>> changed_parameters({"trials": 3}, defaults)
    {'trials': 3}
    """
    return {
        name: value
        for name, value in values.items()
        if name not in RUN_NEUTRAL and name in defaults and _plain(value) != _plain(defaults[name])
    }


def parameter_table(path: str | os.PathLike) -> pd.DataFrame:
    """One row per parameter of a notebook: ``PARAMETER_COLUMNS`` (``type`` is the
    annotation, ``default`` the literal as written, ``comment`` the line's comment)."""
    rows = [
        {
            "name": name,
            "type": "" if info["inferred_type_name"] in (None, "None") else info["inferred_type_name"],
            "default": info["default"],
            "comment": (info.get("help") or "").strip(),
        }
        for name, info in notebook_parameters(path).items()
    ]
    return pd.DataFrame(rows, columns=list(PARAMETER_COLUMNS))


def parse_parameters(
    *, files: Iterable[str | os.PathLike] = (), yaml_strings: Iterable[str] = ()
) -> dict[str, Any]:
    """Merge notebook parameters from YAML files (``-f``) and YAML strings (``-y``).

    Files are read first, then the strings, in order; a later value wins. Each source
    must be a YAML mapping with string keys. Values keep their YAML types.

    Examples
    --------
    >>> parse_parameters(yaml_strings=["judges: [sim/judge-a, sim/judge-b]", "trials: 2"])
    {'judges': ['sim/judge-a', 'sim/judge-b'], 'trials': 2}
    """
    merged: dict[str, Any] = {}
    sources = [(f"file {str(f)!r}", Path(f).read_text(encoding="utf-8")) for f in files]
    sources += [(f"-y {text!r}", text) for text in yaml_strings]
    for label, text in sources:
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"{label}: not valid YAML ({' '.join(str(exc).split())})") from None
        if not isinstance(value, dict) or not value:
            raise ValueError(f"{label}: expected a YAML mapping such as 'n_batch: 5'")
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise ValueError(f"{label}: parameter names must be strings, got {bad!r}")
        merged.update(value)
    return merged
