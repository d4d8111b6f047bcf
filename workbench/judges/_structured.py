"""Structured replies: the JSON a judge reply must hold, asked for in the route's form.

:func:`reply_schema` turns the parse schema of a call (:class:`~workbench.judges.OutputSpec`,
the same dict :func:`~workbench.judges.parse_reply` checks a reply against) into a JSON
Schema; :func:`structured_form` picks how the judge's route takes it; :func:`request_parts`
builds the request's ``response_format`` and ``extra_body``.

=================  ===============================================================
form               request
=================  ===============================================================
``json_schema``    ``response_format={"type": "json_schema", "json_schema": {"name",
                   "schema", "strict": true}}`` (OpenAI, SGLang, Ollama >= 0.5, vLLM)
``json_object``    ``response_format={"type": "json_object", "schema": ...}``
                   (llama.cpp and llama-cpp-python servers; text and lists bounded)
``guided_json``    ``extra_body={"guided_json": schema}`` (vLLM's own parameter;
                   text and lists bounded)
``off``            nothing: the prompt alone asks for the format
=================  ===============================================================

The form is ``JudgeSpec.structured`` unless that is ``auto``; ``auto`` is ``off`` for
``sim/`` models (the simulated route declares no support, so their requests, cache keys
and committed numbers stay as they were), else ``WORKBENCH_STRUCTURED`` (one form, or
``model=form`` pairs separated by commas), else ``json_schema`` where litellm's public
``supports_response_schema`` knows the model supports it, else ``off``.
"""

from __future__ import annotations

import os
import re
from typing import Any

from workbench.judges._format import OutputSpec
from workbench.llm import supports_response_schema

#: The forms a route can take a reply schema in (``auto`` picks one per model).
FORMS: tuple[str, ...] = ("json_schema", "json_object", "guided_json", "off")
ENV = "WORKBENCH_STRUCTURED"
#: Bounds of free text (characters) and lists (items) in the grammar-based forms.
MAX_TEXT = 200
MAX_ITEMS = 8
#: An integer range of at most this many steps is also listed as an ``enum``.
MAX_ENUM = 20
#: Item shapes of the list fields the templates describe in words (CONVENTION §3):
#: meaning units, and the excess/missing items of a detection.
ITEM_SCHEMAS: dict[str, dict[str, Any]] = {
    "units": {"type": "object", "properties": {
        "id": {"type": "string"}, "role": {"enum": ["gist", "detail"]}, "text": {"type": "string"}},
        "required": ["id", "role", "text"], "additionalProperties": False},
    "excess": {"type": "object", "properties": {
        "text": {"type": "string"}, "role": {"enum": ["gist", "detail"]}},
        "required": ["text", "role"], "additionalProperties": False},
    "missing": {"type": "object", "properties": {
        "text": {"type": "string"}, "role": {"enum": ["gist", "detail"]}},
        "required": ["text", "role"], "additionalProperties": False},
}


def rule_schema(field: str, rule: Any) -> dict[str, Any]:
    """The JSON Schema of one parse rule (:func:`~workbench.judges.validate_field`).

    Examples
    --------
    >>> rule_schema("score", (1, 5))
    {'type': 'integer', 'minimum': 1, 'maximum': 5, 'enum': [1, 2, 3, 4, 5]}
    >>> rule_schema("met", [True, False])
    {'type': 'boolean'}
    """
    if isinstance(rule, tuple):
        low, high = rule
        if isinstance(low, int) and isinstance(high, int):
            # the values listed too: grammar-based servers (llama.cpp, llama-cpp-python)
            # ignore minimum/maximum but keep to an enum
            values = {"enum": list(range(low, high + 1))} if high - low <= MAX_ENUM else {}
            return {"type": "integer", "minimum": low, "maximum": high, **values}
        return {"type": "number", "minimum": low, "maximum": high}
    if rule is str:
        return {"type": "string"}
    if rule is bool or (isinstance(rule, list) and set(rule) == {True, False}):
        return {"type": "boolean"}
    if isinstance(rule, list | set | frozenset):
        values = list(rule)
        kind = "string" if all(isinstance(v, str) for v in values) else None
        return {**({"type": kind} if kind else {}), "enum": values}
    if rule is list:
        return {"type": "array", "items": ITEM_SCHEMAS.get(field, {})}
    if rule is dict:
        return {"type": "object"}
    if rule in (int, float):
        return {"type": "number"}
    raise ValueError(f"schema for {field!r}: unsupported rule {rule!r}")


def reply_schema(out: OutputSpec | None) -> dict[str, Any] | None:
    """The JSON Schema of a reply in ``out``'s form: an object of every field of a JSON
    or verdict reply (all required, no others), a bare integer of a ``Score only`` reply;
    None for text replies.

    Examples
    --------
    >>> from workbench.judges import output_spec
    >>> reply_schema(output_spec('<output_format>\\nReturn JSON only: {"score": '
    ...                          '"integer 1-5", "explanation": "string"}\\n</output_format>'))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'type': 'object', 'properties': {'score': {'type': 'integer', 'minimum': 1, 'maximum': 5,
     'enum': [1, 2, 3, 4, 5]}, 'explanation': {'type': 'string'}}, 'required': ['score', 'explanation'],
     'additionalProperties': False}
    """
    if out is None:
        return None
    if out.form == "score_only" and out.scale is not None:
        return rule_schema("score", tuple(out.scale))
    if out.form not in ("json", "verdict") or not out.schema:
        return None
    return {"type": "object",
            "properties": {name: rule_schema(name, rule) for name, rule in out.schema.items()},
            "required": list(out.schema), "additionalProperties": False}


def _declared(model: str) -> str | None:
    """The form ``WORKBENCH_STRUCTURED`` declares for ``model`` (None: it says nothing)."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    pairs = [part.strip() for part in value.split(",") if part.strip()]
    if len(pairs) == 1 and "=" not in pairs[0]:
        form = pairs[0]
    else:
        found = dict(p.rsplit("=", 1) for p in pairs if "=" in p)
        form = found.get(model)
        if form is None:
            return None
    form = form.strip().lower()
    if form not in FORMS:
        raise ValueError(f"{ENV}={value!r}: a form must be one of {', '.join(FORMS)}")
    return form


def structured_form(setting: str, model: str) -> str:
    """The form a request of ``model`` takes its reply schema in (``setting``: the spec's)."""
    if setting != "auto":
        return setting
    if model.startswith("sim/"):
        return "off"
    declared = _declared(model)
    if declared is not None:
        return declared
    return "json_schema" if supports_response_schema(model) else "off"


def bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with free text at most :data:`MAX_TEXT` characters and lists at most
    :data:`MAX_ITEMS` long (``WORKBENCH_STRUCTURED_MAX_TEXT`` / ``_MAX_ITEMS`` set
    others, e.g. for a small slow model): for the grammar-based forms (``json_object``, ``guided_json``),
    where a small model could otherwise write until its context is full. Narrower than
    the parser, never wider: every reply it allows parses.

    Examples
    --------
    >>> bounded({"type": "object", "properties": {"why": {"type": "string"}}})
    {'type': 'object', 'properties': {'why': {'type': 'string', 'maxLength': 200}}}
    """
    text = int(os.environ.get(f"{ENV}_MAX_TEXT") or MAX_TEXT)
    items = int(os.environ.get(f"{ENV}_MAX_ITEMS") or MAX_ITEMS)
    return _bound(schema, text, items)


def _bound(schema: dict[str, Any], text: int, items: int) -> dict[str, Any]:
    out = dict(schema)
    if out.get("type") == "string" and "enum" not in out:
        out.setdefault("maxLength", text)
    if out.get("type") == "array":
        out.setdefault("maxItems", items)
        if out.get("items"):
            out["items"] = _bound(out["items"], text, items)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _bound(v, text, items) for k, v in out["properties"].items()}
    return out


def request_parts(form: str, schema: dict[str, Any] | None, name: str) -> tuple[dict | None, dict | None]:
    """``(response_format, extra_body)`` asking for ``schema`` in ``form`` (None, None when
    there is nothing to ask; OpenAI's strict form takes only an object at the top).

    Examples
    --------
    >>> request_parts("json_object", {"type": "object"}, "holistic")
    ({'type': 'json_object', 'schema': {'type': 'object'}}, None)
    >>> request_parts("guided_json", {"type": "object"}, "holistic")
    (None, {'guided_json': {'type': 'object'}})
    """
    if schema is None or form == "off":
        return None, None
    if form == "guided_json":
        return None, {"guided_json": bounded(schema)}
    if form == "json_object":
        return {"type": "json_object", "schema": bounded(schema)}, None
    if schema.get("type") != "object":
        return None, None
    label = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "reply"
    return {"type": "json_schema", "json_schema": {"name": label, "schema": schema, "strict": True}}, None


def describe_structured(setting: str, models: list[str] | tuple[str, ...]) -> str:
    """What a study's headline says it used: ``model: form`` for each judge model.

    Examples
    --------
    >>> describe_structured("auto", ["sim/judge-a", "sim/judge-b"])
    'sim/judge-a: off; sim/judge-b: off'
    """
    return "; ".join(f"{m}: {structured_form(setting, m)}" for m in dict.fromkeys(models))
