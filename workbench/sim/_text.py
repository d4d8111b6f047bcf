"""Light, fast text utilities of the simulated provider.

No fugashi, no jieba, no pandas: the simulator makes tens of thousands of calls, so it
uses its own tokenisation, cached per text.

- Language: ``ja`` when the text has kana, ``zh`` when it has CJK ideographs but no
  kana, else ``en``.
- Content tokens: for ``en`` lower-cased word tokens minus a short stop-word list, with
  a crude plural strip; for ``ja``/``zh`` character bigrams inside CJK runs (all-hiragana
  bigrams dropped: they are mostly particles and endings) plus latin/digit words.
- Key terms (rubric items, criteria, keywords): kanji/katakana runs of two or more
  characters for CJK text, content words for English.
- Sentences and clauses keep their character offsets, so meaning units are verbatim
  substrings of the text they come from.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_KANA = re.compile(r"[\u3040-\u30ff]")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_HIRA_ONLY = re.compile(r"^[\u3040-\u309f]+$")
_HIRA_MASK = {c: "\0" for c in range(0x3040, 0x30A0)}
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u30fc]+")
_LATIN_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_TERM_CJK = re.compile(r"[\u30a0-\u30ff\u3400-\u9fff\uf900-\ufaff\u30fc]{2,}")
_LETTER_LATIN = re.compile(r"[A-Za-z]")
_SPACES = re.compile(r"\s+")

STOPWORDS = frozenset(
    """a an the and or but if then than so of in on at to for from by with without into
    onto over under about as is are was were be been being am do does did done have has
    had having it its it's this that these those there here which who whom whose what
    when where why how not no nor can could should would will shall may might must also
    such very more most much many some any each other another own same both either
    neither all only just too i you he she we they me him her us them my your his our
    their yours ours theirs one ones up down out off again further once while during
    before after above below between through because until against within via per etc
    e.g i.e""".split()
)


def normalize(text: str) -> str:
    """NFKC, collapsed whitespace, lower case: the registry's matching key."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().lower()


@lru_cache(maxsize=8192)
def detect_lang(text: str) -> str:
    """``ja`` (kana present), ``zh`` (ideographs, no kana) or ``en``."""
    sample = text[:2000]
    if _KANA.search(sample):
        return "ja"
    if _CJK.search(sample):
        return "zh"
    return "en"


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=32768)
def content_tokens(text: str) -> frozenset[str]:
    """The set of content tokens of ``text`` (see the module docstring)."""
    low = unicodedata.normalize("NFKC", text).lower()
    out: set[str] = set()
    for word in _LATIN_WORD.findall(low):
        if word not in STOPWORDS and len(word) > 1:
            out.add(_stem(word))
    for run in _CJK_RUN.findall(low):
        if len(run) == 1:
            if not _HIRA_ONLY.match(run):
                out.add(run)
            continue
        mask = run.translate(_HIRA_MASK)  # every hiragana -> "\0"
        out.update(
            run[i : i + 2] for i in range(len(run) - 1) if mask[i] != "\0" or mask[i + 1] != "\0"
        )
    return frozenset(out)


@lru_cache(maxsize=16384)
def key_terms(text: str) -> tuple[str, ...]:
    """Salient terms of a short text (rubric item, criterion, keyword line), in order."""
    low = unicodedata.normalize("NFKC", text).lower()
    seen: dict[str, None] = {}
    for term in _TERM_CJK.findall(low):
        seen.setdefault(term, None)
    for word in _LATIN_WORD.findall(low):
        if word not in STOPWORDS and (len(word) > 2 or any(c.isdigit() for c in word)):
            seen.setdefault(_stem(word), None)
    return tuple(seen)


def term_present(term: str, text_low: str, tokens: frozenset[str]) -> float:
    """How far ``term`` is found in a text: 1.0 verbatim, else its token overlap share."""
    if term in text_low:
        return 1.0
    toks = content_tokens(term)
    if not toks:
        return 0.0
    return len(toks & tokens) / len(toks)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |b| (0 when ``b`` is empty): the share of ``b`` covered by ``a``."""
    if not b:
        return 0.0
    return len(a & b) / len(b)


def latin_share(text: str) -> float:
    """Share of latin letters among letters (non-target-language text in ja items)."""
    letters = sum(map(str.isalpha, text))
    if not letters:
        return 0.0
    return len(_LETTER_LATIN.findall(text)) / letters


def approx_tokens(text: str) -> int:
    """Approximate token count: CJK characters / 1.5 plus other characters / 4.

    CJK characters are counted from the UTF-8 length (3 bytes each; other text is
    mostly 1 byte), which is fast on long prompts.
    """
    if not text:
        return 0
    cjk = max(0, (len(text.encode("utf-8")) - len(text)) // 2)
    return max(1, round(cjk / 1.5 + (len(text) - cjk) / 4))


# --- sentences and clauses, as (start, end) spans of the original text ---------------

_BOUNDARY = re.compile(r"[。．！？!?；;]+[」』）)\]]*|\n+|\.(?=\s|$)[」』）)\]\"']*")
_ABBREV = re.compile(r"(?:\b(?:dr|mr|mrs|ms|st|vs|etc|fig|no|approx|e\.g|i\.e)|\b[A-Z])$", re.I)
_LEAD = re.compile(r"^[\s・•\-–*#>]+|^\(?\d{1,2}[.)）]\s+")
_CLAUSE_JA = re.compile(r"(?:が|ため|ので|から|おり|であり|一方|なお|また|および)、")
_COMMA = re.compile("[、，]")
_CLAUSE_EN = re.compile(r",\s+(?=(?:and|but|which|while|whereas|so|although|because)\b)|;\s+")


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
    """Sentence spans of ``text``: split at 。．.!?！？；; and line breaks."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in _BOUNDARY.finditer(text):
        if text[match.start()] == "." and _ABBREV.search(
            text, max(0, match.start() - 10), match.start()
        ):
            continue
        end = match.end() if text[match.start()] != "\n" else match.start()
        s, e = _trim(text, pos, end)
        if e - s > 0 and any(ch.isalnum() for ch in text[s:e]):
            spans.append((s, e))
        pos = match.end()
    s, e = _trim(text, pos, len(text))
    if e - s > 0 and any(ch.isalnum() for ch in text[s:e]):
        spans.append((s, e))
    return tuple(spans)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (verbatim substrings)."""
    return [text[s:e] for s, e in sentence_spans(text)]


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
    """Meaning-unit spans: sentences, with long ones split at clause boundaries.

    Japanese/Chinese sentences split after a conjunctive 、 (が、 ため、 ので、 おり、 …)
    and at any 、 once a sentence is longer than 100 characters; English sentences
    before ", and / but / which / while / so …" and at semicolons. A part shorter
    than 15 characters (CJK) or 25 characters (English) is not split off.
    """
    cjk = detect_lang(text) != "en"
    out: list[tuple[int, int]] = []
    for s, e in sentence_spans(text):
        out.extend(_split_clause(text, s, e, cjk))
    return tuple(out)


def clauses(text: str) -> list[str]:
    """Meaning units of ``text`` (verbatim substrings), see :func:`clause_spans`."""
    return [text[s:e] for s, e in clause_spans(text)]
