"""Keyword score and vocabulary table of seed 001 (private)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pandas as pd

from workbench.metrics._common import as_texts, check_lang
from workbench.metrics._tokenize import normalise, tokenize
from workbench.text import is_missing

NAN = float("nan")
_SPACE_RE = re.compile(r"\s+")


def _keyword_list(keywords: Any) -> list[str]:
    if is_missing(keywords):
        return []
    if isinstance(keywords, str):
        keywords = keywords.split("|")
    out = []
    for position, keyword in enumerate(keywords):
        if is_missing(keyword):
            continue
        if not isinstance(keyword, str):
            raise TypeError(f"keywords[{position}] is {type(keyword).__name__}; expected a string")
        if keyword.strip():
            out.append(keyword.strip())
    return out


def keyword_score(
    answer: str | None,
    keywords: str | Iterable[str],
    *,
    lang: str,
    match: str = "auto",
) -> float:
    """Share of the reference's unique keywords that occur in the answer (seed 001).

    Parameters
    ----------
    answer : str
        The answer text. A missing answer (``None`` / ``NaN``) gives ``NaN``.
    keywords : sequence of str, or str
        The reference's keywords (hand-listed), or one ``|``-joined string as in the
        bundled ``items.csv``. Empty entries are ignored.
    lang : {"ja", "zh", "en"}
        Language of the texts.
    match : {"auto", "substring", "tokens"}, default "auto"
        How a keyword counts as present. ``substring``: the keyword occurs in the answer
        after NFKC, lower-casing and removing all whitespace (``auto`` for ja and zh,
        where a technical compound such as ``鋼コンクリート合成床版`` is split by the
        morphological analyser: the seed notes that its dictionary lacks such terms).
        ``tokens``: the keyword's token sequence occurs contiguously in the answer's
        tokens (``auto`` for en, so ``art`` is not found in ``start``).

    Returns
    -------
    float
        :math:`|\\{k \\in K : k \\text{ in answer}\\}| / |K|` with K the set of unique
        keywords after normalisation; ``NaN`` when K is empty or the answer is missing.

    Notes
    -----
    Seed 001 §3.3.1 (Ogata et al. 2024): keywords are extracted from the reference
    answer by hand, and the keyword score is the proportion of them found in the
    generated answer, counting unique keywords only. It enters the human 1-5 rubric
    with thresholds 0.3 and 0.5.

    References
    ----------
    Ogata, R., Okubo, J., Fujii, J. & Amakata, M. (2024). 土木分野における LLM を用いた
    言語モデル評価手法の提案 (seed 001).

    Examples
    --------
    >>> keyword_score("鋼橋には桁橋とアーチ橋がある", ["桁橋", "トラス橋", "アーチ橋", "桁橋"], lang="ja")
    0.6666666666666666
    >>> keyword_score("Start the therapy", "art|therapy", lang="en")
    0.5
    """
    check_lang(lang)
    if match == "auto":
        match = "tokens" if lang == "en" else "substring"
    if match not in ("substring", "tokens"):
        raise ValueError(f"match={match!r}: expected 'auto', 'substring' or 'tokens'")
    if is_missing(answer):
        return NAN
    if not isinstance(answer, str):
        raise TypeError(f"answer is {type(answer).__name__}; expected a string")
    if match == "substring":
        unique = dict.fromkeys(_SPACE_RE.sub("", normalise(k)) for k in _keyword_list(keywords))
        unique.pop("", None)
        haystack = _SPACE_RE.sub("", normalise(answer))
        found = sum(1 for keyword in unique if keyword in haystack)
    else:
        unique = dict.fromkeys(tuple(tokenize(k, lang=lang)) for k in _keyword_list(keywords))
        unique.pop((), None)
        answer_tokens = tokenize(answer, lang=lang)
        found = sum(1 for keyword in unique if _contains(answer_tokens, keyword))
    if not unique:
        return NAN
    return found / len(unique)


def _contains(tokens: list[str], sub: tuple[str, ...]) -> bool:
    n = len(sub)
    return any(tuple(tokens[i : i + n]) == sub for i in range(len(tokens) - n + 1))


_JAPANESE_RE = re.compile(
    r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\u3005\uf900-\ufaff]"
)


def vocabulary(
    texts: Iterable[Any],
    *,
    lang: str,
    japanese_only: bool = False,
) -> pd.Series:
    """Vocabulary size and mean length of a set of texts (seed 001, table 4).

    Parameters
    ----------
    texts : sequence of str
        The texts (e.g. all answers of one answering model). Missing texts are left out
        and counted in ``n_missing``.
    lang : {"ja", "zh", "en"}
        Language for :func:`tokenize` (punctuation dropped, NFKC, lower-case).
    japanese_only : bool, default False
        Count only words containing kana or kanji among the unique words, as seed 001
        did (English output there was mostly a repeated question).

    Returns
    -------
    pandas.Series
        ``n_texts``, ``n_missing``, ``n_unique_words`` (distinct surface tokens over all
        texts), ``mean_length_chars`` (mean ``len(text)``, every character counted) and
        ``mean_length_tokens`` (mean token count). Use with
        ``frame.groupby("answer_model")["response"].apply(...)`` /
        ``.agg`` for one row per model.

    References
    ----------
    Ogata, R., Okubo, J., Fujii, J. & Amakata, M. (2024), seed 001, table 4
    (語彙数 and 回答平均長さ per model).

    Examples
    --------
    >>> vocabulary(["鋼橋には桁橋がある。", "桁橋がある"], lang="ja")
    n_texts               2.0
    n_missing             0.0
    n_unique_words        6.0
    mean_length_chars     7.5
    mean_length_tokens    4.5
    dtype: float64
    """
    check_lang(lang)
    items, _ = as_texts(texts, name="texts")
    present = [t for t in items if t is not None]
    words: set[str] = set()
    token_counts = []
    for text in present:
        tokens = tokenize(text, lang=lang)
        token_counts.append(len(tokens))
        words.update(t for t in tokens if not japanese_only or _JAPANESE_RE.search(t))
    mean_chars = sum(len(t) for t in present) / len(present) if present else NAN
    mean_tokens = sum(token_counts) / len(token_counts) if token_counts else NAN
    return pd.Series(
        {
            "n_texts": float(len(present)),
            "n_missing": float(len(items) - len(present)),
            "n_unique_words": float(len(words)),
            "mean_length_chars": mean_chars,
            "mean_length_tokens": mean_tokens,
        },
        dtype=float,
    )
