"""Parsing judge replies: JSON objects, bracketed verdicts, bare scores.

The rules follow seed 003 (bind to the whole reply as JSON, else to the *first* JSON
object decoded with :meth:`json.JSONDecoder.raw_decode` from the first ``{``; never a
regex search for ``"score"``, because a rationale may contain that text) and, for
MT-Bench verdicts, inspect_ai's habit of binding to the *last* verdict in the reply.
A value outside the allowed set or range, a non-number (``"2-3"``, ``"four"``), a
missing key, an empty reply and a reply without JSON all raise
:class:`~workbench.errors.ParseError`; :func:`run_judging` records those as
``parse_ok=False`` with a missing score and the raw reply kept.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from workbench.errors import ParseError

_DECODER = json.JSONDecoder()
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.S)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_VERDICT = re.compile(r"\[\[\s*([ABC])\s*\]\]")
_TRUE = {"true"}
_FALSE = {"false"}


def _snippet(text: str, n: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def extract_json_object(text: str | None) -> dict[str, Any]:
    """The JSON object a reply holds, by the binding rule of seed 003.

    1. the whole reply (stripped) parsed as JSON, when that is an object;
    2. else, when the reply has a fenced block (```` ```json ````), the fence's content as
       a whole, else the object decoded with ``raw_decode`` from the first ``{`` inside it;
    3. else the object decoded with ``raw_decode`` from the first ``{`` of the reply.

    Parameters
    ----------
    text : str
        The reply.

    Returns
    -------
    dict
        The decoded object.

    Raises
    ------
    ParseError
        Empty reply, no ``{``, or the first ``{`` does not start a JSON object.

    Examples
    --------
    >>> extract_json_object('The "score": 9 is tempting. {"score": 4, "rationale": "ok"}')
    {'score': 4, 'rationale': 'ok'}
    """
    if text is None or not str(text).strip():
        raise ParseError("empty reply", text=text)
    text = str(text)
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return whole
    fence = _FENCE.search(text)
    if fence is not None:
        inner = fence.group(1).strip()
        try:
            value = json.loads(inner)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        if "{" in inner:
            return _decode_from_first_brace(inner, text)
    if "{" not in text:
        raise ParseError(f"no JSON object in reply: {_snippet(text)!r}", text=text)
    return _decode_from_first_brace(text, text)


def _decode_from_first_brace(segment: str, text: str) -> dict[str, Any]:
    start = segment.find("{")
    try:
        value, _ = _DECODER.raw_decode(segment, start)
    except ValueError as exc:
        raise ParseError(
            f"the first '{{' of the reply does not start a JSON object ({exc.msg}): "
            f"{_snippet(segment[start:])!r}",
            text=text,
        ) from None
    if not isinstance(value, dict):  # pragma: no cover - raw_decode at '{' yields a dict
        raise ParseError("the first JSON value is not an object", text=text)
    return value


def _as_number(value: Any, field: str) -> float | int:
    """A JSON number, or a string holding exactly one number; else ParseError."""
    if isinstance(value, bool) or value is None:
        raise ParseError(f"field {field!r}: expected a number, got {value!r}")
    if isinstance(value, int | float):
        number = value
    elif isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        text = value.strip()
        number = float(text) if any(c in text for c in ".eE") else int(text)
    else:
        raise ParseError(f"field {field!r}: expected a single number, got {value!r}")
    if isinstance(number, float) and not math.isfinite(number):
        raise ParseError(f"field {field!r}: expected a finite number, got {value!r}")
    return number


def _same(value: Any, allowed: Any) -> bool:
    """Type-aware equality: True never equals 1, '4' equals 4 for numeric allowed values."""
    if isinstance(allowed, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(allowed, bool) and value is allowed
    return value == allowed


def _check_allowed(value: Any, allowed: Any, field: str) -> Any:
    options = list(allowed)
    has_bool = any(isinstance(a, bool) for a in options)
    has_number = any(isinstance(a, int | float) and not isinstance(a, bool) for a in options)
    candidate = value
    if has_bool and isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        candidate = value.strip().lower() in _TRUE
    elif has_number and isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        candidate = _as_number(value, field)
    elif isinstance(value, str):
        candidate = value.strip()
    for option in options:
        if _same(candidate, option):
            return option
    shown = ", ".join(repr(a) for a in options)
    raise ParseError(f"field {field!r}: {value!r} is not one of {shown}")


def validate_field(obj: Mapping[str, Any], field: str, rule: Any) -> Any:
    """Check one field of a decoded reply against its schema rule; return the clean value.

    Parameters
    ----------
    obj : mapping
        The decoded JSON object.
    field : str
        The field name.
    rule
        ``(low, high)`` tuple: a number in the closed range (a string holding one number
        counts as that number); list / set / frozenset: one of the allowed values
        (booleans accept JSON ``true``/``false`` and the strings ``"true"``/``"false"``);
        ``str``: free text; ``list`` / ``dict``: a JSON list / object; ``bool``: a boolean;
        ``int`` / ``float``: any number.

    Raises
    ------
    ParseError
        The field is missing or its value is not allowed.
    """
    if field not in obj:
        raise ParseError(f"missing field {field!r}")
    value = obj[field]
    if isinstance(rule, tuple):
        if len(rule) != 2:
            raise ValueError(f"schema for {field!r}: a range must be (low, high), got {rule!r}")
        low, high = rule
        number = _as_number(value, field)
        if not low <= number <= high:
            raise ParseError(f"field {field!r}: {value!r} is outside [{low}, {high}]")
        return number
    if isinstance(rule, list | set | frozenset):
        return _check_allowed(value, rule, field)
    if rule is bool:
        return _check_allowed(value, [True, False], field)
    if rule is str:
        if not isinstance(value, str):
            raise ParseError(f"field {field!r}: expected text, got {type(value).__name__}")
        return value
    if rule in (int, float):
        return _as_number(value, field)
    if rule is list or rule is dict:
        if not isinstance(value, rule):
            raise ParseError(f"field {field!r}: expected a JSON {rule.__name__}, got {value!r}")
        return value
    raise ValueError(f"schema for {field!r}: unsupported rule {rule!r}")


def parse_fields(text: str | None, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Parse a reply field by field: each field maps to its value or to a ParseError.

    Use this when one bad field should cost only that field (e.g. five MedGPT dimensions
    scored in one reply). When the reply holds no JSON object at all, every field maps to
    the same ParseError.

    Examples
    --------
    >>> out = parse_fields('{"harm": 5, "reasoning": "2-3"}', {"harm": (0, 5), "reasoning": (0, 5)})
    >>> out["harm"], type(out["reasoning"]).__name__
    (5, 'ParseError')
    """
    try:
        obj = extract_json_object(text)
    except ParseError as exc:
        return dict.fromkeys(schema, exc)
    out: dict[str, Any] = {}
    for field, rule in schema.items():
        try:
            out[field] = validate_field(obj, field, rule)
        except ParseError as exc:
            exc.text = text
            out[field] = exc
    return out


def parse_reply(text: str | None, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Parse a judge reply into the fields of ``schema`` (fixed API, DESIGN §4).

    Parameters
    ----------
    text : str
        The reply.
    schema : mapping
        Field name -> rule: a ``(low, high)`` tuple for a number in a closed range, a
        list or set of allowed values, or ``str`` for free text (also ``bool``, ``list``,
        ``dict``; see :func:`validate_field`).

    Returns
    -------
    dict
        Exactly the schema's fields, with clean values (``"4"`` becomes ``4``,
        ``"true"`` becomes ``True``).

    Raises
    ------
    ParseError
        Empty reply, no JSON object, missing key, value outside the allowed set or range,
        or a value that is not a single number where one is required.

    Notes
    -----
    Binding rule (seed 003): the whole reply as JSON; else the first JSON object decoded
    with ``raw_decode`` from the first ``{`` (inside a ```` ```json ```` fence when there is
    one). Never a regex search for ``"score"``.

    Examples
    --------
    >>> parse_reply('{"explanation": "fine", "score": "4"}', {"score": (1, 10), "explanation": str})
    {'score': 4, 'explanation': 'fine'}
    >>> parse_reply('```json\\n{"criteriaMet": "true"}\\n```', {"criteriaMet": [True, False]})
    {'criteriaMet': True}
    """
    fields = parse_fields(text, schema)
    errors = [value for value in fields.values() if isinstance(value, ParseError)]
    if errors:
        message = "; ".join(dict.fromkeys(str(e) for e in errors))
        raise ParseError(message, text=text) from None
    return fields


def parse_verdict(text: str | None) -> str:
    """The MT-Bench verdict of a pairwise reply: the LAST ``[[A]]``, ``[[B]]`` or ``[[C]]``.

    Binding to the last verdict follows inspect_ai's model-graded scorers: a judge often
    quotes the format (``[[A]]`` / ``[[B]]``) before giving its final verdict.

    Returns
    -------
    str
        ``"A"`` (first shown answer better), ``"B"`` (second) or ``"C"`` (tie).

    Raises
    ------
    ParseError
        Empty reply or no bracketed verdict.

    Examples
    --------
    >>> parse_verdict("Format: [[A]] or [[B]]. Final verdict: [[B]]")
    'B'
    """
    if text is None or not str(text).strip():
        raise ParseError("empty reply", text=text)
    found = _VERDICT.findall(str(text))
    if not found:
        raise ParseError(f"no [[A]]/[[B]]/[[C]] verdict in reply: {_snippet(text)!r}", text=text)
    return found[-1]


def parse_score_only(text: str | None, low: float, high: float) -> float | int:
    """A bare score (G-Eval form filling, ``Score only: integer L-H``).

    The reply, stripped, must be one number, optionally after a label ending in a colon
    (``Relevance: 4``, ``- スコア：4``) and before a final period. Anything else
    (``2-3``, ``four``, two numbers) raises.

    Examples
    --------
    >>> parse_score_only(" 4\\n", 1, 5)
    4
    >>> parse_score_only("- Relevance: 3.5", 1, 5)
    3.5
    """
    if text is None or not str(text).strip():
        raise ParseError("empty reply", text=text)
    body = str(text).strip()
    for colon in (":", "："):
        if colon in body:
            body = body.rsplit(colon, 1)[1]
    body = body.strip().rstrip("。.").strip()
    if not _NUMBER.fullmatch(body):
        raise ParseError(f"not a single number: {_snippet(text)!r}", text=text)
    number = float(body) if any(c in body for c in ".eE") else int(body)
    if not low <= number <= high:
        raise ParseError(f"score {number} is outside [{low}, {high}]", text=text)
    return number
