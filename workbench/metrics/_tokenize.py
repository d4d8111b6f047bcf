"""Language-aware tokenisation (private; public name: ``workbench.metrics.tokenize``)."""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import unicodedata
from typing import Any

from workbench.metrics._common import check_lang

# A word is a run of letters and digits; a digit group may carry internal "." or ","
# between digits ("3.5", "1,000", "v1.2") so that numbers stay whole.
EN_WORD_PATTERN = r"(?:\d+(?:[.,]\d+)+|[^\W_])+"
EN_WORD_RE = re.compile(EN_WORD_PATTERN)
EN_TOKEN_RE = re.compile(EN_WORD_PATTERN + r"|[^\w\s]|_")

_LOCK = threading.Lock()
_TAGGERS: dict[str, Any] = {}  # created on first use, never at import time


def is_punct(token: str) -> bool:
    """True when every character is punctuation, a symbol, a separator or a control.

    The rule: Unicode general categories ``P*`` (punctuation), ``S*`` (symbols),
    ``Z*`` (separators) and ``C*`` (controls, formats). ``ー`` (Lm) and ``々`` (Lm)
    are letters, so they are kept.
    """
    return all(unicodedata.category(ch)[0] in "PSZC" for ch in token)


def ja_tagger() -> Any:
    """The process-wide fugashi tagger on **unidic-lite** (created once, lazily).

    The dictionary folder is passed explicitly (``-d``), so the ``unidic`` package is
    never used even if it is installed (it downloads its dictionary at run time).
    """
    with _LOCK:
        tagger = _TAGGERS.get("ja")
        if tagger is None:
            import fugashi
            import unidic_lite

            dicdir = unidic_lite.DICDIR
            rc = os.path.join(dicdir, "mecabrc")
            tagger = fugashi.Tagger(f'-d "{dicdir}" -r "{rc}"')
            _TAGGERS["ja"] = tagger
        return tagger


def zh_tokenizer() -> Any:
    """jieba's default tokenizer, its cache file in the project temp folder.

    ``jieba.dt.tmp_dir`` is set to :func:`workbench.config.tmp_dir` and
    ``jieba.dt.cache_file`` to ``jieba.cache`` before the dictionary is first loaded,
    so the prefix-dictionary cache is written there rather than to the system ``/tmp``;
    jieba's "Building prefix dict" log lines are silenced. (If other code in the process
    initialised ``jieba.dt`` first, its dictionary and cache location are kept.)
    """
    with _LOCK:
        tokenizer = _TAGGERS.get("zh")
        if tokenizer is None:
            import jieba

            from workbench.config import tmp_dir

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.dt
            if not tokenizer.initialized:
                tokenizer.tmp_dir = str(tmp_dir())
                tokenizer.cache_file = "jieba.cache"
                tokenizer.initialize()
            _TAGGERS["zh"] = tokenizer
        return tokenizer


def normalise(text: str) -> str:
    """NFKC (full-width ASCII to ASCII, half-width kana to full-width) and lower-case."""
    return unicodedata.normalize("NFKC", text).lower()


@functools.lru_cache(maxsize=16384)
def _tokens(text: str, lang: str, keep_punct: bool, normalize: bool) -> tuple[str, ...]:
    if normalize:
        text = normalise(text)
    if lang == "en":
        pattern = EN_TOKEN_RE if keep_punct else EN_WORD_RE
        return tuple(pattern.findall(text))
    if lang == "ja":
        raw = [node.surface for node in ja_tagger()(text)]
    else:  # zh
        raw = list(zh_tokenizer().cut(text))
    stripped = (token.strip() for token in raw)
    return tuple(t for t in stripped if t and (keep_punct or not is_punct(t)))


def tokenize(
    text: str, *, lang: str, keep_punct: bool = False, normalize: bool = True
) -> list[str]:
    """Split a text into word tokens, language-aware.

    Parameters
    ----------
    text : str
        The text.
    lang : {"ja", "zh", "en"}
        ``ja``: MeCab through fugashi with the bundled **unidic-lite** dictionary (short
        unit words, UniDic); ``zh``: jieba, precise mode with HMM for unknown words, its
        cache file in the project temp folder; ``en``: a regular expression — a word is
        a run of Unicode letters and digits, a number keeps internal ``.``/``,`` between
        digits (``3.5``, ``1,000``); hyphens and apostrophes split words.
    keep_punct : bool, default False
        Punctuation rule: by default a token made only of punctuation, symbols,
        separators or control characters (Unicode categories ``P*``, ``S*``, ``Z*``,
        ``C*``; e.g. ``、`` ``。`` ``（`` ``%`` ``→``) is dropped, as rouge-score's own
        tokenizer drops non-alphanumerics. With ``True`` such tokens are kept (for
        ``en`` each punctuation character becomes one token), as BLEU conventionally
        counts punctuation. Whitespace is never a token.
    normalize : bool, default True
        Apply Unicode NFKC and lower-case before tokenising (full-width ``ＲＣ`` and
        ``RC`` become ``rc``; half-width ``ｶﾅ`` becomes ``カナ``).

    Returns
    -------
    list of str
        The tokens in text order (a new list; results are cached per text).

    Notes
    -----
    Taggers are created once per process on first use, never at import time.

    Examples
    --------
    >>> tokenize("鋼橋の種類を教えてください。", lang="ja")
    ['鋼橋', 'の', '種類', 'を', '教え', 'て', 'ください']
    >>> tokenize("The CD4 count was 350.5 cells/uL!", lang="en")
    ['the', 'cd4', 'count', 'was', '350.5', 'cells', 'ul']
    >>> tokenize("Hello, world!", lang="en", keep_punct=True)
    ['hello', ',', 'world', '!']
    """
    check_lang(lang)
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return list(_tokens(text, lang, bool(keep_punct), bool(normalize)))


class RougeTokenizer:
    """The object rouge-score's ``RougeScorer(tokenizer=...)`` expects: ``tokenize(text)``.

    rouge-score's default tokenizer lower-cases and replaces every character outside
    ``[a-z0-9]`` with a space, so Japanese or Chinese text has no tokens and scores 0;
    this one delegates to :func:`tokenize`.
    """

    def __init__(self, lang: str, *, keep_punct: bool = False) -> None:
        self.lang = check_lang(lang)
        self.keep_punct = keep_punct

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, lang=self.lang, keep_punct=self.keep_punct)
