"""Small text rules shared by every layer: language, missing values, sentences, lists, tags.

Foundation module: it imports nothing from ``workbench`` and no heavy library at import
time (pandas is imported only to test an unusual value in :func:`is_missing`), so the
simulated provider, the judges and the metrics all read text by the same rules.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from functools import lru_cache
from typing import Any

__all__ = [
    "DATA_TAGS",
    "clause_spans",
    "detect_lang",
    "is_missing",
    "parse_list",
    "sentence_spans",
    "split_sentences",
]

#: Tags of the prompt blocks that hold untrusted content (question, answers, rubric
#: items, ...). Templates wrap such content only in these blocks; the simulated provider
#: cuts them out before it reads instructions. Sorted by name.
DATA_TAGS: tuple[str, ...] = (
    "author",
    "bad_example",
    "criteria",
    "dimension",
    "good_example",
    "keywords",
    "question",
    "reference",
    "response",
    "response_a",
    "response_b",
    "rubric_item",
    "text",
    "units",
)

# --- language ------------------------------------------------------------------------

_KANA = re.compile(r"[\u3040-\u30ff]")
_IDEOGRAPH = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")  # CJK ext. A, unified, compatibility


@lru_cache(maxsize=8192)
def detect_lang(text: str, *, head: int | None = None) -> str:
    """The language of ``text``: ``ja``, ``zh`` or ``en``.

    ``ja`` when the text has kana (hiragana or katakana), ``zh`` when it has CJK
    ideographs but no kana, else ``en``.

    Parameters
    ----------
    text : str
    head : int, optional
        Look only at the first ``head`` characters (the simulated provider reads long
        prompts and uses 2000); by default the whole text.

    Examples
    --------
    >>> detect_lang("橋梁の種類を教えてください"), detect_lang("什么是艾滋病"), detect_lang("What is HIV?")
    ('ja', 'zh', 'en')
    >>> detect_lang("x" * 10 + "です", head=10)
    'en'
    """
    sample = text if head is None else text[:head]
    if _KANA.search(sample):
        return "ja"
    if _IDEOGRAPH.search(sample):
        return "zh"
    return "en"


# --- missing values ------------------------------------------------------------------

_CONTAINERS = (list, tuple, dict, set, frozenset)


def is_missing(value: Any, *, blank: bool = False) -> bool:
    """True for a missing value: None, a float NaN (Python or numpy), pandas NA or NaT.

    Parameters
    ----------
    value : object
    blank : bool, default False
        Also count a text of only whitespace as missing (a field a record must fill, such
        as an answer or a rubric item). Without it any text is present.

    Notes
    -----
    Containers (lists, tuples, dicts, sets, arrays) are never missing, even when empty or
    holding NaN: they are values of list-valued fields.

    Examples
    --------
    >>> [is_missing(v) for v in (None, float("nan"), "", " ", "x", 0, [])]
    [True, True, False, False, False, False, False]
    >>> is_missing(" ", blank=True), is_missing("x", blank=True)
    (True, False)
    """
    if value is None:
        return True
    if isinstance(value, str):
        return blank and not value.strip()
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (int, *_CONTAINERS)):
        return False
    import pandas as pd  # noqa: PLC0415 - only unusual values (NA, NaT, numpy scalars) get here

    try:
        result = pd.isna(value)
    except (TypeError, ValueError):
        return False
    return isinstance(result, bool) and result


# --- lists ---------------------------------------------------------------------------


def parse_list(value: Any, *, where: str, field: str) -> list:
    """A list-valued cell as a list: from a list or tuple, or from text holding a JSON list.

    ``where`` and ``field`` name the cell in the ``ValueError`` raised for anything else.

    Examples
    --------
    >>> parse_list('["a", "b"]', where="row 0", field="rubric"), parse_list(("a",), where="row 0", field="rubric")
    (['a', 'b'], ['a'])
    """
    if isinstance(value, list | tuple):
        return list(value)
    with contextlib.suppress(ValueError):
        parsed = json.loads(value) if isinstance(value, str) else None
        if isinstance(parsed, list):
            return parsed
    raise ValueError(f"{where}: field {field!r} is not a list or JSON list")


# --- sentences -----------------------------------------------------------------------
# Rule 1 (joinable): a piece ends after sentence punctuation (plus closing quotes or
# brackets) and the whitespace that follows it, or at a line break.
_EN_PIECE = re.compile(r".+?(?:[.!?]+[\"')\]]*(?:\s+|$)|\n+|$)", re.S)
_CJK_PIECE = re.compile(r".+?(?:[。！？!?]+[」』）)]*\s*|\n+|$)", re.S)
# Rule 2 (reading): sentences cut at 。．.!?！？；; and line breaks, a "." only before
# whitespace and not after a common abbreviation or an initial; trimmed spans.
# (one leading character class, so the regex engine skips to candidates in C; the same
# matches as [。．！？!?；;]+[」』）)\]]*|\n+|\.(?=\s|$)[」』）)\]\"']*)
_BOUNDARY = re.compile(
    r"[。．！？!?；;\n.](?:(?<=[。．！？!?；;])[。．！？!?；;]*[」』）)\]]*|(?<=\n)\n*"
    r"|(?<=\.)(?=\s|$)[」』）)\]\"']*)"
)
_ABBREV = re.compile(r"(?:\b(?:dr|mr|mrs|ms|st|vs|etc|fig|no|approx|e\.g|i\.e)|\b[A-Z])$", re.I)
_LEAD = re.compile(r"^[\s・•\-–*#>]+|^\(?\d{1,2}[.)）]\s+")
_CLAUSE_JA = re.compile(r"(?:が|ため|ので|から|おり|であり|一方|なお|また|および)、")
_COMMA = re.compile("[、，]")
_ALNUM = re.compile(r"[^\W_]")  # exactly the characters for which str.isalnum() is True
_CLAUSE_EN = re.compile(r",\s+(?=(?:and|but|which|while|whereas|so|although|because)\b)|;\s+")


def split_sentences(text: str, lang: str | None = None, *, joinable: bool = True) -> list[str]:
    """The sentences of ``text``, by one of two rules.

    Parameters
    ----------
    text : str
    lang : str, optional
        ``ja`` or ``zh`` for CJK sentence punctuation, anything else for English. Used
        only by the joinable rule.
    joinable : bool, default True
        True: pieces that concatenate back to ``text`` exactly (each keeps the whitespace
        after it), cut after ``.!?`` (English) or ``。！？!?`` (CJK) plus closing quotes
        or brackets, and at line breaks — so an operator can insert a sentence between
        two pieces. False: the sentences as the simulated provider reads them, in any
        language (:func:`sentence_spans`): trimmed verbatim substrings, cut also at
        ``．；;``, not after an abbreviation (``Dr.``, ``e.g.``) or an initial, without
        a list marker that opens the text, and without pieces holding no letter or
        digit.

    Examples
    --------
    >>> split_sentences("HIV is a virus. It is treatable.", "en")
    ['HIV is a virus. ', 'It is treatable.']
    >>> split_sentences("桁橋がある。吊橋もある。", "ja")
    ['桁橋がある。', '吊橋もある。']
    >>> split_sentences("- Dr. Ito sees it.\\nIt is treatable.", joinable=False)
    ['Dr. Ito sees it.', 'It is treatable.']
    """
    if not joinable:
        return [text[s:e] for s, e in sentence_spans(text)]
    if not text:
        return []
    pattern = _CJK_PIECE if lang in ("ja", "zh") else _EN_PIECE
    pieces = [m.group(0) for m in pattern.finditer(text) if m.group(0)]
    assert "".join(pieces) == text
    return pieces


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    lead = _LEAD.match(text, start, end)
    if lead and lead.end() < end:
        start = lead.end()
    return start, end


@lru_cache(maxsize=8192)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` spans of the sentences of ``text`` (the reading rule of
    :func:`split_sentences`, ``joinable=False``).

    Examples
    --------
    >>> sentence_spans("It works. See Fig. 2!")
    ((0, 9), (10, 21))
    """
    cuts: list[tuple[int, int]] = []  # (where a sentence ends, where the next starts)
    for match in _BOUNDARY.finditer(text):
        start = match.start()
        if text[start] == "." and _ABBREV.search(text, max(0, start - 10), start):
            continue
        cuts.append((start if text[start] == "\n" else match.end(), match.end()))
    spans: list[tuple[int, int]] = []
    pos = 0
    for end, after in [*cuts, (len(text), len(text))]:
        if end > pos:  # (an empty piece trims to nothing)
            s, e = _trim(text, pos, end)
            if e - s > 0 and _ALNUM.search(text, s, e):
                spans.append((s, e))
        pos = after
    return tuple(spans)


def _split_clause(text: str, start: int, end: int, cjk: bool) -> list[tuple[int, int]]:
    min_len = 15 if cjk else 25
    pattern = _CLAUSE_JA if cjk else _CLAUSE_EN
    cuts = [m.end() if cjk else m.start() for m in pattern.finditer(text, start, end)]
    if cjk and end - start > 100:
        cuts += [start + m.end() for m in _COMMA.finditer(text[start:end])]
    cuts = sorted(set(cuts))
    out: list[tuple[int, int]] = []
    pos = start
    for cut in cuts:
        if cut - pos >= min_len and end - cut >= min_len:
            s, e = _trim(text, pos, cut)
            if not cjk:
                e = e if text[e - 1] not in ",;" else e - 1
            out.append((s, e))
            pos = cut
            if not cjk:
                while pos < end and text[pos] in ",; ":
                    pos += 1
    s, e = _trim(text, pos, end)
    if e > s:
        out.append((s, e))
    return out


@lru_cache(maxsize=8192)
def clause_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Meaning-unit spans: sentences (:func:`sentence_spans`), long ones split at clauses.

    Japanese/Chinese sentences split after a conjunctive 、 (が、 ため、 ので、 おり、 …)
    and at any 、 once a sentence is longer than 100 characters; English sentences
    before ", and / but / which / while / so …" and at semicolons. A part shorter
    than 15 characters (CJK) or 25 characters (English) is not split off. The
    language is :func:`detect_lang` of the first 2000 characters.

    Examples
    --------
    >>> t = "The virus attacks immune cells, and treatment keeps the load undetectable."
    >>> [t[s:e] for s, e in clause_spans(t)]
    ['The virus attacks immune cells', 'and treatment keeps the load undetectable.']
    """
    cjk = detect_lang(text, head=2000) != "en"
    out: list[tuple[int, int]] = []
    for s, e in sentence_spans(text):
        out.extend(_split_clause(text, s, e, cjk))
    return tuple(out)
