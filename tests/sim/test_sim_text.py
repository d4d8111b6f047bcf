"""The simulator's fast text helpers give what their plain forms give (the forms before
the speed-ups, kept here), on random text mixing ASCII, CJK, full-width characters and
every kind of whitespace."""

from __future__ import annotations

import random
import re
import unicodedata

from workbench.sim import _text
from workbench.text import detect_lang

ALPHABET = list("abcsSu1 -'.") + ["is", "us", "ss", "the", "questions", "bridges"] + list(
    "\t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000あいカタ橋梁ｶﾀＡ１İẞ。"
)


def _texts(n: int):
    rng = random.Random(11)
    for _ in range(n):
        yield "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))


def _plain_normalize(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().lower()


def _plain_content_tokens(text: str) -> frozenset[str]:
    low = unicodedata.normalize("NFKC", text).lower()
    out = {_text._stem(w) for w in _text._LATIN_WORD.findall(low)
           if w not in _text.STOPWORDS and len(w) > 1}
    for run in _text._CJK_RUN.findall(low):
        if len(run) == 1:
            if not _text._HIRA_ONLY.match(run):
                out.add(run)
            continue
        mask = run.translate(_text._HIRA_MASK)
        out.update(run[i : i + 2] for i in range(len(run) - 1)
                   if mask[i] != "\0" or mask[i + 1] != "\0")
    return frozenset(out)


def _plain_key_terms(text: str) -> tuple[str, ...]:
    low = unicodedata.normalize("NFKC", text).lower()
    seen = dict.fromkeys(_text._TERM_CJK.findall(low))
    for word in _text._LATIN_WORD.findall(low):
        if word not in _text.STOPWORDS and (len(word) > 2 or any(c.isdigit() for c in word)):
            seen.setdefault(_text._stem(word), None)
    return tuple(seen)


def _plain_approx_tokens(text: str) -> int:
    if not text:
        return 0
    cjk = max(0, (len(text.encode("utf-8")) - len(text)) // 2)
    return max(1, round(cjk / 1.5 + (len(text) - cjk) / 4))


def test_fast_text_helpers_match_their_plain_forms():
    for text in _texts(20000):
        assert _text.normalize(text) == _plain_normalize(text), repr(text)
        assert _text.content_tokens.__wrapped__(text) == _plain_content_tokens(text), repr(text)
        assert _text.key_terms.__wrapped__(text) == _plain_key_terms(text), repr(text)
        assert _text.approx_tokens(text) == _plain_approx_tokens(text), repr(text)
        assert _text.lang_of(text) == detect_lang(text, head=_text.LANG_HEAD), repr(text)
    long = "x" * (_text.LANG_HEAD + 5) + "です"
    assert _text.lang_of(long) == detect_lang(long, head=_text.LANG_HEAD) == "en"
