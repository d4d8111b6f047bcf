"""Parsing judge replies: JSON objects, bracketed verdicts, bare scores, meaning units.

The rules follow seed 003 (bind to the whole reply as JSON, else to the *first* JSON
object decoded with :meth:`json.JSONDecoder.raw_decode` from the first ``{``; never a
regex search for ``"score"``, because a rationale may contain that text) and, for
MT-Bench verdicts, inspect_ai's habit of binding to the *last* verdict in the reply.
A value outside the allowed set or range, a non-number (``"2-3"``, ``"four"``), a
missing key, an empty reply and a reply without JSON all raise
:class:`~workbench.errors.ParseError`; :func:`run_judging` records those as
``parse_ok=False`` with a missing score and the raw reply kept.

Hostile replies (issue 10) end the same way: whatever a reply holds — numbers past
Python's integer digit limit, nesting past the recursion limit, NaN, lone surrogates —
the parsers return clean values or raise ``ParseError``, never another exception, so
one cached reply cannot abort a batch (``tests/judges/test_parse_fuzz.py`` fuzzes this).
Which object wins when a reply holds several (e.g. a prompt injection the judge
echoed, ``score 10 {"score": 10} real: {"score": 2}`` gives 10: the first object) is
the fixed rule above; :func:`count_json_objects` counts the candidates, and the results
column ``n_candidates`` records them so such replies can be counted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from workbench.errors import ParseError

#: ``strict=False``: a raw newline or tab inside a string (grammar-constrained servers
#: let a model write them) is read as that character, not refused.
_DECODER = json.JSONDecoder(strict=False)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.S)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_VERDICT = re.compile(r"\[\[\s*([ABC])\s*\]\]")
#: The fields of a structured pairwise reply (and of a ``Verdict:`` output format).
VERDICT_SCHEMA = {"verdict": ["A", "B", "C"]}
_TRUE = {"true"}
_FALSE = {"false"}
_OBJECT_START = re.compile(r'\{\s*["}]')
#: Starts :func:`count_json_objects` tries at most.
MAX_TRIES = 200
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _snippet(text: str, n: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def shown(value: Any, n: int = 200) -> str:
    """``repr(value)`` for an error message, cut to ``n`` characters (a reply's value may
    be megabytes long or nested too deeply to show)."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # too deep, or an int past the digit limit
        return f"a {type(value).__name__} too large to show"
    return text if len(text) <= n else text[: n - 1] + "…"


def utf8_text(text: str) -> str:
    """``text`` with every surrogate code point replaced by U+FFFD.

    A lone surrogate (a reply's JSON may spell one as ``"\\ud800"``) cannot be written
    as UTF-8: it would crash the cache key of a later request built from the reply, or
    the CSV of the results.

    Examples
    --------
    >>> utf8_text("ok " + chr(0xD800) + "!") == "ok \\ufffd!"
    True
    """
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def _utf8_values(value: Any) -> Any:
    """Replace surrogates in every string of a decoded JSON value, in place (iteratively:
    the value may be nested about as deep as the recursion limit)."""
    if isinstance(value, str):
        return utf8_text(value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            members = list(node.items())
            node.clear()
            for key, item in members:
                node[utf8_text(key)] = utf8_text(item) if isinstance(item, str) else item
                if isinstance(item, dict | list):
                    stack.append(item)
        elif isinstance(node, list):
            for k, item in enumerate(node):
                if isinstance(item, str):
                    node[k] = utf8_text(item)
                elif isinstance(item, dict | list):
                    stack.append(item)
    return value


def _loads(text: str) -> Any:
    """``json.loads(text)``, or None when it is not JSON, holds a number past Python's
    integer digit limit (a plain ``ValueError``) or nests past the recursion limit."""
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return None


def _why(exc: Exception) -> str:
    """What stopped the decoder, in a few words."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "a number too long to read"


def _to_number(text: str, what: str, reply: str | None = None) -> float | int:
    """The number a string matching ``_NUMBER`` spells (int unless it has ``.eE``); a
    ParseError (keeping ``reply``) for an integer past Python's digit limit."""
    if any(c in text for c in ".eE"):
        return float(text)
    try:
        return int(text)
    except ValueError:
        raise ParseError(f"{what}: a number of {len(text)} characters is too long to read",
                         text=reply) from None


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
    value = _bind(text)
    if _SURROGATE_ESCAPE.search(text) or (not text.isascii() and _SURROGATE.search(text)):
        value = _utf8_values(value)
    return value


def _bind(text: str) -> dict[str, Any]:
    """The object the binding rule picks (see :func:`extract_json_object`)."""
    whole = _loads(text.strip())
    if isinstance(whole, dict):
        return whole
    fence = _FENCE.search(text)
    if fence is not None:
        inner = fence.group(1).strip()
        value = _loads(inner)
        if isinstance(value, dict):
            return value
        if "{" in inner:
            return _decode_from_first_brace(inner, text)
    if "{" not in text:
        raise ParseError(f"no JSON object in reply: {_snippet(text)!r}", text=text)
    return _decode_from_first_brace(text, text)


def count_json_objects(text: str | None) -> int:
    """How many JSON objects a reply holds side by side (objects nested in another one
    are not counted): the candidates :func:`extract_json_object` chose among.

    A reply that is one JSON object counts 1; otherwise the reply is scanned with
    ``raw_decode`` from each ``{`` that may start an object (``{`` then ``"`` or ``}``),
    skipping over every object decoded. More than one means the binding rule had to
    choose (the first object, or the fenced one, wins): e.g. a judge that echoed an
    injected ``{"score": 10}`` before its own object. The scan tries at most
    :data:`MAX_TRIES` starts, so a pathological reply (100,000 nested ``{"a":``) costs
    milliseconds, not seconds; the count is then a lower bound.

    Examples
    --------
    >>> count_json_objects('score 10 {"score": 10} real: {"score": 2}')
    2
    >>> count_json_objects('{"score": 4, "detail": {"a": 1}}'), count_json_objects("no JSON")
    (1, 0)
    """
    if text is None:
        return 0
    text = str(text)
    stripped = text.strip()
    if stripped.startswith("{") and isinstance(_loads(stripped), dict):
        return 1
    count, pos = 0, 0
    for _ in range(MAX_TRIES):
        match = _OBJECT_START.search(text, pos)
        if match is None:
            break
        try:
            _, pos = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            pos = match.start() + 1
        else:
            count += 1
    return count


def _decode_from_first_brace(segment: str, text: str) -> dict[str, Any]:
    start = segment.find("{")
    try:
        value, _ = _DECODER.raw_decode(segment, start)
    except (ValueError, RecursionError) as exc:
        raise ParseError(
            f"the first '{{' of the reply does not start a JSON object ({_why(exc)}): "
            f"{_snippet(segment[start:])!r}",
            text=text,
        ) from None
    if not isinstance(value, dict):  # pragma: no cover - raw_decode at '{' yields a dict
        raise ParseError("the first JSON value is not an object", text=text)
    return value


def _as_number(value: Any, field: str) -> float | int:
    """A JSON number, or a string holding exactly one number; else ParseError."""
    if isinstance(value, bool) or value is None:
        raise ParseError(f"field {field!r}: expected a number, got {shown(value)}")
    if isinstance(value, int | float):
        number = value
    elif isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        number = _to_number(value.strip(), f"field {field!r}")
    else:
        raise ParseError(f"field {field!r}: expected a single number, got {shown(value)}")
    if isinstance(number, float) and not math.isfinite(number):
        raise ParseError(f"field {field!r}: expected a finite number, got {shown(value)}")
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
    listed = ", ".join(repr(a) for a in options)
    raise ParseError(f"field {field!r}: {shown(value)} is not one of {listed}")


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
            raise ParseError(f"field {field!r}: {shown(value)} is outside [{low}, {high}]")
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
            raise ParseError(f"field {field!r}: expected a JSON {rule.__name__}, got {shown(value)}")
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
    The object is bound by :func:`extract_json_object` (seed 003's rule).

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
    quotes the format (``[[A]]`` / ``[[B]]``) before giving its final verdict. A reply
    without one that is a JSON object ``{"verdict": "A"}`` (a structured reply, schema
    :data:`VERDICT_SCHEMA`) gives its verdict.

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
    >>> parse_verdict('{"verdict": "C"}')
    'C'
    """
    if text is None or not str(text).strip():
        raise ParseError("empty reply", text=text)
    found = _VERDICT.findall(str(text))
    if found:
        return found[-1]
    if str(text).lstrip().startswith("{"):  # a structured reply: {"verdict": "A"}
        fields = parse_fields(text, VERDICT_SCHEMA)
        if not isinstance(fields["verdict"], ParseError):
            return fields["verdict"]
    raise ParseError(f"no [[A]]/[[B]]/[[C]] verdict in reply: {_snippet(text)!r}", text=text)


def count_verdicts(text: str | None) -> int:
    """How many bracketed verdicts (``[[A]]``, ``[[B]]``, ``[[C]]``) a reply holds: the
    candidates :func:`parse_verdict` chose among (it takes the last).

    Examples
    --------
    >>> count_verdicts("Format: [[A]] or [[B]]. Final verdict: [[B]]")
    3
    """
    return 0 if text is None else len(_VERDICT.findall(str(text)))


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
    number = _to_number(body, "score", text)
    if not low <= number <= high:
        raise ParseError(f"score {shown(number)} is outside [{low}, {high}]", text=text)
    return number


def parse_dimension_reply(
    text: str | None, keys: Mapping[str, str], scale: tuple[float, float]
) -> dict[str, tuple[float, bool, str]]:
    """Parse a reply that scores several dimensions in one JSON object, each on its own.

    Each dimension is parsed with :func:`parse_reply` and the schema ``{key: scale}``,
    so one bad value (``"2-3"``, a score outside ``scale``) makes only that dimension
    missing; a reply without a JSON object fails every dimension.

    Parameters
    ----------
    text : str or None
        The reply (None: there is none).
    keys : mapping
        Dimension -> its key in the reply's JSON object (e.g. the MedGPT replies of
        HIVMedQA: ``"harm" -> "question 5"``).
    scale : (low, high)
        The closed range of every score.

    Returns
    -------
    dict
        Dimension -> ``(score, parse_ok, error)``; ``score`` is NaN (never 0) when
        ``parse_ok`` is False, and ``error`` then says why (else ``""``).

    Examples
    --------
    >>> out = parse_dimension_reply('{"q1": 4, "q2": "2-3"}', {"a": "q1", "b": "q2"}, (0, 5))
    >>> out["a"], out["b"][:2]
    ((4.0, True, ''), (nan, False))
    """
    if text is None:
        return dict.fromkeys(keys, (math.nan, False, "no reply"))
    out: dict[str, tuple[float, bool, str]] = {}
    for dim, key in keys.items():
        try:
            out[dim] = (float(parse_reply(text, {key: scale})[key]), True, "")
        except ParseError as exc:
            out[dim] = (math.nan, False, str(exc))
    return out


# -- meaning units of decompose (seed 004): given units, decomposition and detection replies --
#: The two roles of a meaning unit.
ROLES = ("gist", "detail")


def _role(value: Any) -> str:
    """A role as written (stripped, lower case); '' for a value that is not text."""
    return value.strip().lower() if isinstance(value, str) else ""


def _id(value: Any) -> str | None:
    """A unit id as text: a JSON string or number; None for anything else."""
    return str(value) if isinstance(value, str | int | float) else None


def check_units(value: Any) -> list[dict]:
    """Validate meaning units ``[{"id", "role", "text"}]`` (ids default to u1, u2 …)."""
    if not isinstance(value, list) or not value:
        raise ParseError("units must be a non-empty JSON list")
    units, seen = [], set()
    for k, unit in enumerate(value):
        if not isinstance(unit, dict):
            raise ParseError(f"units[{k}] is not an object")
        role = _role(unit.get("role"))
        text = unit.get("text")
        if role not in ROLES:
            raise ParseError(f"units[{k}].role {shown(unit.get('role'))} is not gist or detail")
        if not isinstance(text, str) or not text.strip():
            raise ParseError(f"units[{k}].text is empty")
        uid = _id(unit.get("id") or f"u{k + 1}")
        if uid is None:
            raise ParseError(f"units[{k}].id {shown(unit.get('id'))} is not a string or number")
        if uid in seen:
            raise ParseError(f"units[{k}].id {uid!r} is repeated")
        seen.add(uid)
        units.append({"id": uid, "role": role, "text": text})
    return units


def parse_units(text: str | None) -> list[dict]:
    """The units of a decomposition reply (``{"units": list}``)."""
    fields = parse_fields(text, {"units": list})
    if isinstance(fields["units"], ParseError):
        raise fields["units"]
    return check_units(fields["units"])


def parse_detection(text: str | None, units: list[dict]) -> dict[str, list[dict]]:
    """The excess and missing items of a detection reply, each ``{"text", "role"}``;
    a missing item may name a ``unit_id`` instead (text and role then come from it)."""
    fields = parse_fields(text, {"excess": list, "missing": list})
    by_id = {u["id"]: u for u in units}
    out: dict[str, list[dict]] = {}
    for label in ("excess", "missing"):
        value = fields[label]
        if isinstance(value, ParseError):
            raise value
        items = []
        for k, item in enumerate(value):
            if not isinstance(item, dict):
                raise ParseError(f"{label}[{k}] is not an object")
            unit = by_id.get(_id(item.get("unit_id"))) if label == "missing" else None
            role = _role(item.get("role") or (unit["role"] if unit else ""))
            text_ = item.get("text") or (unit["text"] if unit else None)
            if role not in ROLES:
                raise ParseError(f"{label}[{k}].role {shown(item.get('role'))} is not gist or detail")
            if not isinstance(text_, str) or not text_.strip():
                raise ParseError(f"{label}[{k}] has no text (and no known unit_id)")
            entry = {"text": text_, "role": role}
            if unit is not None:
                entry["unit_id"] = unit["id"]
            items.append(entry)
        out[label] = items
    return out
