"""Reading a prompt by the template convention (``prompts/templates/CONVENTION.md``).

The simulated provider reads the *task* from the ``<output_format>`` block and the
*content* from the tagged data blocks. Data blocks are cut out of the text first, so
nothing inside them — an ``<output_format>`` line, "ignore the rubric", a fake
``<judging_rules>`` — is ever read as an instruction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from workbench.sim._text import lang_of
from workbench.text import DATA_TAGS

_TAGS = "|".join(sorted(DATA_TAGS, key=len, reverse=True))
# a block on its own lines (the convention) ...
# (the body taken line by line: the same matches as (?P<body>.*?)^ with re.S, faster)
_BLOCK_LINES = re.compile(
    rf"^[ \t]*<(?P<tag>{_TAGS})>[ \t]*\r?\n(?P<body>(?:[^\n]*\n)*?)[ \t]*</(?P=tag)>[ \t]*$",
    re.M,
)
# ... or, leniently, inline (used only for tags not found on their own lines)
_BLOCK_INLINE = re.compile(rf"<(?P<tag>{_TAGS})>(?P<body>.*?)</(?P=tag)>", re.S)
_OPENER = re.compile(rf"<(?:{_TAGS})>")
_CLOSER = re.compile(rf"</(?:{_TAGS})>")
_OUTPUT = re.compile(r"<output_format>(.*?)</output_format>", re.S)
_RULES = re.compile(r"<judging_rules>(.*?)</judging_rules>", re.S)
_RULE_LINE = re.compile(r"^\s*-\s*([A-Za-z_]+)\s*:", re.M)
_JSON_LINE = re.compile(r"Return JSON only:\s*")
_SCORE_LINE = re.compile(
    r"Score only:\s*(integer|number)\s+(-?\d+(?:\.\d+)?)\s*[-–~]\s*(-?\d+(?:\.\d+)?)"
)
_VERDICT_LINE = re.compile(r"Verdict:\s*\[\[A\]\]")
_TEXT_LINE = re.compile(r"Text only:\s*([^\n<]+)")
_RANGE = re.compile(r"^(integer|number)\s+(-?\d+(?:\.\d+)?)\s*[-–~]\s*(-?\d+(?:\.\d+)?)$")
_CRITERIA = re.compile(
    r"^\s*(must|bonus|penalty|必須(?:項目)?|加点(?:項目)?|減点(?:項目)?)\s*[:：]\s*(.+?)\s*$",
    re.M | re.I,
)
_CRIT_KIND = {"必須": "must", "加点": "bonus", "減点": "penalty"}


@dataclass(frozen=True)
class FieldSpec:
    """One field of a ``Return JSON only`` object: its name and type."""

    name: str
    kind: str  # string | integer | number | boolean | one_of | list
    low: float = 0.0
    high: float = 0.0
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class OutputFormat:
    """The task the prompt asks for (CONVENTION §3)."""

    form: str  # json | score | verdict | text
    fields: tuple[FieldSpec, ...] = ()
    low: float = 0.0
    high: float = 0.0
    integer: bool = True
    operation: str = "answer"


@dataclass
class Prompt:
    """A parsed prompt: data blocks, output format, judging rules, instruction language."""

    blocks: dict[str, str] = field(default_factory=dict)
    output: OutputFormat = OutputFormat(form="text")
    rules: frozenset[str] = frozenset()
    lang: str = "en"
    plain: str = ""  # the instruction text outside data blocks

    def get(self, tag: str) -> str | None:
        return self.blocks.get(tag)


def _content(message: dict) -> str:
    content = message.get("content", "")
    if isinstance(content, list):  # OpenAI content parts
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _field(name: str, spec: object) -> FieldSpec:
    text = str(spec).strip()
    low = text.lower()
    match = _RANGE.match(low)
    if match:
        return FieldSpec(name, match.group(1), float(match.group(2)), float(match.group(3)))
    if low.startswith("one of"):
        options = tuple(o.strip() for o in text[6:].split("|") if o.strip())
        return FieldSpec(name, "one_of", options=options)
    if low.startswith("bool"):
        return FieldSpec(name, "boolean")
    if low.startswith("list"):
        return FieldSpec(name, "list")
    return FieldSpec(name, "string")


def parse_output_format(text: str) -> OutputFormat:
    """The output format of a prompt (text outside data blocks), CONVENTION §3."""
    blocks = _OUTPUT.findall(text)
    scope = blocks[-1] if blocks else text
    match = _JSON_LINE.search(scope)
    if match:
        brace = scope.find("{", match.end())
        if brace >= 0:
            try:
                obj, _ = json.JSONDecoder().raw_decode(scope[brace:])
            except json.JSONDecodeError:
                obj = None
            if isinstance(obj, dict) and obj:
                return OutputFormat("json", tuple(_field(k, v) for k, v in obj.items()))
    match = _SCORE_LINE.search(scope)
    if match:
        return OutputFormat(
            "score",
            low=float(match.group(2)),
            high=float(match.group(3)),
            integer=match.group(1) == "integer",
        )
    if _VERDICT_LINE.search(scope):
        return OutputFormat("verdict")
    match = _TEXT_LINE.search(scope)
    if match:
        return OutputFormat("text", operation=" ".join(match.group(1).lower().split()))
    return OutputFormat("text", operation="answer")


def _line_blocks(text: str) -> Iterator[re.Match]:
    """The matches of ``_BLOCK_LINES.finditer(text)``, tried only at the line starts that
    an opening data tag follows (found in C), not at every character."""
    pos = 0
    for opener in _OPENER.finditer(text):
        at = opener.start()
        if at < pos:  # inside the last block
            continue
        start = text.rfind("\n", 0, at) + 1
        if not text[start:at].strip(" \t"):
            match = _BLOCK_LINES.match(text, start)
            if match:
                yield match
                pos = match.end()


@lru_cache(maxsize=512)
def _cut_blocks(text: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """The data blocks of one message text, ``((tag, body), ...)``, and the rest of it
    (cached: system prompts and instructions repeat)."""
    if "</" not in text:  # every block ends with a closing tag
        return (), text
    blocks: dict[str, str] = {}
    pieces: list[str] = []
    pos = 0
    for match in _line_blocks(text):
        body = match.group("body").removesuffix("\n").removesuffix("\r")
        blocks.setdefault(match.group("tag"), body)
        pieces.append(text[pos : match.start()])
        pos = match.end()
    pieces.append(text[pos:])
    rest = "".join(pieces)
    if _CLOSER.search(rest):
        pieces, pos = [], 0
        for match in _BLOCK_INLINE.finditer(rest):
            tag = match.group("tag")
            if tag not in blocks:
                blocks[tag] = match.group("body").strip("\r\n")
                pieces.append(rest[pos : match.start()])
                pos = match.end()
        pieces.append(rest[pos:])
        rest = "".join(pieces)
    return tuple(blocks.items()), rest


@lru_cache(maxsize=1024)
def _instructions(plain: str) -> tuple[frozenset[str], OutputFormat | None, str | None]:
    """Judging rules, output format (None: the prompt states none) and language (None:
    too little instruction text to tell) of a prompt's text outside data blocks (cached:
    many prompts share it)."""
    rules: set[str] = set()
    for body in _RULES.findall(plain):
        rules.update(r.lower() for r in _RULE_LINE.findall(body))
    has_format = bool(_OUTPUT.search(plain)) or any(
        p.search(plain) for p in (_JSON_LINE, _SCORE_LINE, _VERDICT_LINE, _TEXT_LINE)
    )
    output = parse_output_format(plain) if has_format else None
    instructions = _OUTPUT.sub("", _RULES.sub("", plain)) if has_format else plain
    lang = lang_of(instructions) if len(instructions.strip()) > 10 else None
    return frozenset(rules), output, lang


_ANSWER = OutputFormat("text", operation="answer")


@lru_cache(maxsize=4096)
def _parse(texts: tuple[str, ...]) -> Prompt:
    blocks: dict[str, str] = {}
    plain_parts: list[str] = []
    for text in texts:
        found, rest = _cut_blocks(text)
        for tag, body in found:
            blocks.setdefault(tag, body)
        plain_parts.append(rest)
    plain = "\n".join(plain_parts)
    rules, output, lang = _instructions(plain)
    if output is None:  # CONVENTION §5: no output format -> "Text only: answer"
        output = _ANSWER
        if "question" not in blocks and plain.strip():
            blocks["question"] = plain.strip()
    return Prompt(
        blocks=blocks,
        output=output,
        rules=rules,
        lang=lang or lang_of(" ".join(blocks.values())),
        plain=plain,
    )


def parse_prompt(messages: list[dict]) -> Prompt:
    """Parse chat ``messages`` (system and user turns) by the template convention."""
    texts = tuple(
        _content(m) for m in messages if isinstance(m, dict) and m.get("role") != "assistant"
    )
    return _parse(texts)


def criteria_lines(body: str) -> list[tuple[str, str]]:
    """``(kind, text)`` pairs of a ``<criteria>`` block (``must:``/``bonus:``/``penalty:``)."""
    return [
        (_CRIT_KIND.get(kind.lower()[:2], kind.lower()), text)
        for kind, text in _CRITERIA.findall(body)
    ]


def keyword_lines(body: str) -> list[str]:
    """Keywords of a ``<keywords>`` block: one per line (also ``|``/``、``/``,`` lists)."""
    items = re.split(r"[\n|、,，;；]+", body)
    return [k.strip(" \t-・•*") for k in items if k.strip(" \t-・•*")]
