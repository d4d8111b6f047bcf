"""Read the ``<output_format>`` block of a rendered prompt (CONVENTION §3).

The parse schema of a judge call is derived from the prompt that was sent, so the prompt
and the parser can never disagree: ``Return JSON only: {...}`` gives a field schema for
:func:`~workbench.judges.parse_reply`, ``Score only: integer L-H`` a bare-score range,
``Verdict: [[A]] | [[B]] | [[C]]`` a pairwise verdict, ``Text only: <op>`` plain text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from workbench.judges._parse import VERDICT_SCHEMA

_BLOCK = re.compile(r"<output_format>\s*\n(.*?)\n\s*</output_format>", re.S)
_RANGE = re.compile(r"^(integer|number)\s+(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class OutputSpec:
    """What a prompt asks the model to return.

    Attributes
    ----------
    form : str
        ``json`` | ``score_only`` | ``verdict`` | ``text``.
    schema : dict
        ``json``: field -> rule for :func:`parse_reply` (in the order the prompt lists them).
    numeric : tuple of str
        ``json``: the numeric fields (scores), in order.
    scale : tuple or None
        ``score_only``: ``(low, high)``; ``json``: the range of the first numeric field.
    operation : str or None
        ``text``: the operation (``summary``, ``paraphrase``, ``rewrite positive`` …).
    """

    form: str
    schema: dict[str, Any] = field(default_factory=dict)
    numeric: tuple[str, ...] = ()
    scale: tuple[float, float] | None = None
    operation: str | None = None


def _number(text: str) -> float | int:
    return float(text) if "." in text else int(text)


def _rule(type_string: str) -> Any:
    text = type_string.strip()
    match = _RANGE.match(text)
    if match:
        return (_number(match.group(2)), _number(match.group(3)))
    if text == "string":
        return str
    if text == "boolean":
        return [True, False]
    if text == "list":
        return list
    if text.startswith("one of "):
        return [v.strip() for v in text[len("one of "):].split("|")]
    raise ValueError(f"output format: unknown field type {type_string!r}")


def output_spec(prompt: str | list[dict]) -> OutputSpec:
    """The :class:`OutputSpec` of a rendered prompt (text or chat messages).

    A prompt without an ``<output_format>`` block is plain text (``answer``), as
    CONVENTION §5 says.

    Examples
    --------
    >>> spec = output_spec('<output_format>\\nReturn JSON only: {"score": "integer 1-5", '
    ...                    '"rationale": "string"}\\n</output_format>')
    >>> spec.form, spec.numeric, spec.scale
    ('json', ('score',), (1, 5))
    """
    if isinstance(prompt, list):
        prompt = "\n".join(m.get("content", "") for m in prompt if m.get("role") == "user")
    blocks = _BLOCK.findall(prompt)
    if not blocks:
        return OutputSpec(form="text", operation="answer")
    for line in blocks[-1].splitlines():
        line = line.strip()
        if line.startswith("Return JSON only:"):
            obj = json.loads(line[len("Return JSON only:"):].strip())
            schema = {name: _rule(kind) for name, kind in obj.items()}
            numeric = tuple(n for n, r in schema.items() if isinstance(r, tuple))
            scale = schema[numeric[0]] if numeric else None
            return OutputSpec(form="json", schema=schema, numeric=numeric, scale=scale)
        if line.startswith("Score only:"):
            rule = _rule(line[len("Score only:"):])
            if not isinstance(rule, tuple):
                raise ValueError(f"output format: 'Score only' needs a range, got {line!r}")
            return OutputSpec(form="score_only", scale=rule)
        if line.startswith("Verdict:"):
            return OutputSpec(form="verdict", schema=dict(VERDICT_SCHEMA))
        if line.startswith("Text only:"):
            return OutputSpec(form="text", operation=line[len("Text only:"):].strip())
    raise ValueError("output format block has no 'Return JSON only' / 'Score only' / "
                     "'Verdict' / 'Text only' line")
