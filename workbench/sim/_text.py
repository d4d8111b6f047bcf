"""Light, fast text utilities of the simulated provider.

No fugashi, no jieba, no pandas: the simulator makes tens of thousands of calls, so it
uses its own tokenisation, cached per text.

- Language: :func:`workbench.text.detect_lang` on the first :data:`LANG_HEAD`
  characters (prompts can be long).
- Content tokens: for ``en`` lower-cased word tokens minus a short stop-word list, with
  a crude plural strip; for ``ja``/``zh`` character bigrams inside CJK runs (all-hiragana
  bigrams dropped: they are mostly particles and endings) plus latin/digit words.
- Key terms (rubric items, criteria, keywords): kanji/katakana runs of two or more
  characters for CJK text, content words for English.
- Sentences and clauses (:func:`workbench.text.sentence_spans`,
  :func:`workbench.text.clause_spans`) keep their character offsets, so meaning units are
  verbatim substrings of the text they come from.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from workbench.text import detect_lang

_HIRA_ONLY = re.compile(r"^[\u3040-\u309f]+$")
_HIRA_MASK = {c: "\0" for c in range(0x3040, 0x30A0)}
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u30fc]+")
_LATIN_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_TERM_CJK = re.compile(r"[\u30a0-\u30ff\u3400-\u9fff\uf900-\ufaff\u30fc]{2,}")
_LETTER_LATIN = re.compile(r"[A-Za-z]")

#: How many leading characters the simulator reads to tell the language of a text.
LANG_HEAD = 2000

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


def lang_of(text: str) -> str:
    """:func:`workbench.text.detect_lang` of the first :data:`LANG_HEAD` characters
    (``en`` at once for ASCII text)."""
    return "en" if text.isascii() else detect_lang(text, head=LANG_HEAD)


def normalize(text: str) -> str:
    """NFKC, collapsed whitespace, lower case: the registry's matching key."""
    # str.split() splits at exactly the characters regex \s matches
    return " ".join(unicodedata.normalize("NFKC", text).split()).lower()


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=32768)
def content_tokens(text: str) -> frozenset[str]:
    """The set of content tokens of ``text`` (see the module docstring)."""
    low = unicodedata.normalize("NFKC", text).lower()
    words = [w for w in _LATIN_WORD.findall(low) if len(w) > 1 and w not in STOPWORDS]
    out = {_stem(w) if w[-1] == "s" else w for w in words}  # _stem changes only a final s
    if low.isascii():  # no CJK runs
        return frozenset(out)
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
    seen = {} if low.isascii() else dict.fromkeys(_TERM_CJK.findall(low))
    for word in _LATIN_WORD.findall(low):
        # a word of <= 2 characters is [a-z0-9]{1,2}: it holds a digit unless all letters
        if word not in STOPWORDS and (len(word) > 2 or not word.isalpha()):
            seen.setdefault(_stem(word) if word[-1] == "s" else word, None)
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
    if text.isascii():
        return max(1, round(len(text) / 4))
    cjk = max(0, (len(text.encode("utf-8")) - len(text)) // 2)
    return max(1, round(cjk / 1.5 + (len(text) - cjk) / 4))
