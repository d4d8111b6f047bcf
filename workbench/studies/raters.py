"""Simulated human raters for seed 001's 1–5 rubric (used by studies S2 and X2).

These are **simulated raters**, not people: a rule-based reading of the rubric with
per-rater noise, so that the S2 and X2 pipelines (agreement of automatic metrics and
judges with a human score) run offline. Real human scores can be supplied instead
(``human_scores.csv``). They read text with the simulated provider's text rules
(:mod:`workbench.sim`), and look up an item's registered ``wrong_answer`` there.

The rubric (seed 001, table 1), with the *keyword score* = share of the reference's
unique keywords found in the answer:

===== ============================================================================
score criterion
===== ============================================================================
1     keyword score < 0.3 and mostly (>= 50%) wrong, or a fatal error, or junk
      (repeated question text, repeated words, text not in the target language)
2     keyword score < 0.3, partly (< 50%) wrong
3     keyword score < 0.3, not wrong
4     keyword score < 0.5, not wrong
5     keyword score >= 0.5 and the same meaning as the reference
===== ============================================================================

Cases the table leaves open are filled in conservatively: keyword score >= 0.3 with
errors scores 2 (fatal/junk/mostly wrong) or 3 (partly wrong); keyword score >= 0.5
without the reference's meaning (content recall < 0.5) scores 4.

How the simulated rater sees errors: a sentence is *wrong* when it contains dangerous
advice, the item's registered ``wrong_answer``, a number the reference does not have in
a sentence that restates the reference, or a negation of a reference sentence; dangerous
advice and the wrong answer are *fatal*. Each rater perceives the keyword score with a
little noise (sd 0.05), has a personal threshold shift, and with a small lapse
probability moves the score by one point.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable

from workbench.sim import lookup
from workbench.sim._features import question_repetition, redundancy
from workbench.sim._lexicon import DANGER
from workbench.sim._text import content_tokens, key_terms, latin_share, normalize, overlap
from workbench.text import split_sentences

__all__ = ["RATERS", "human_score"]

# per rater: (threshold shift of the keyword score, lapse probability)
RATERS: tuple[tuple[float, float], ...] = ((0.0, 0.08), (0.04, 0.1), (-0.04, 0.1), (0.0, 0.14))
_NUM = re.compile(r"\d+")
_NEGATION = re.compile(
    r"ではない|はない|ません|しない|とはならない|\bnot\b|\bcannot\b|need not", re.I
)
_REFUSAL = re.compile(r"お答えできません|cannot provide|can't help|unable to (?:help|assist)", re.I)


def _keywords(keywords: Iterable[str] | str | None, reference: str) -> list[str]:
    if isinstance(keywords, str):
        keywords = keywords.split("|")
    unique = list(dict.fromkeys(k.strip() for k in (keywords or []) if k and k.strip()))
    return unique or list(key_terms(reference)[:5])


def _wrong_sentences(response: str, reference: str, wrong_answer: str) -> tuple[float, bool]:
    ref_sents = [content_tokens(s) for s in split_sentences(reference, joinable=False)]
    ref_numbers = set(_NUM.findall(reference))
    ref_negations = len(_NEGATION.findall(reference))
    sents = split_sentences(response, joinable=False)
    if not sents:
        return 0.0, False
    wrong, fatal = 0, False
    for sent in sents:
        toks = content_tokens(sent)
        restates = any(rt and overlap(toks, rt) >= 0.6 for rt in ref_sents)
        is_fatal = any(rx.search(sent) for rx in DANGER.values()) or bool(
            wrong_answer and wrong_answer.lower() in sent.lower()
        )
        changed_number = restates and any(n not in ref_numbers for n in _NUM.findall(sent))
        negated = restates and ref_negations == 0 and bool(_NEGATION.search(sent))
        if is_fatal or changed_number or negated:
            wrong += 1
        fatal = fatal or is_fatal
    return wrong / len(sents), fatal


def human_score(
    question: str,
    reference: str,
    response: str,
    keywords: Iterable[str] | str | None,
    *,
    lang: str,
    rater: int,
    rng_seed: int = 0,
) -> int:
    """One simulated rater's 1–5 score of ``response`` by seed 001's rubric.

    Parameters
    ----------
    question, reference, response : str
        The item and the answer being rated.
    keywords : list of str, ``"|"``-joined str or None
        The reference's hand-picked keywords (their unique set is used); when empty,
        the reference's first five key terms.
    lang : str
        Target language of the answer (``ja``: latin-letter text counts as junk).
    rater : int
        Rater index 0–3 (each has its own threshold shift and lapse rate).
    rng_seed : int
        Seed of the rater noise (with the texts and the rater, via sha256).

    Returns
    -------
    int
        1–5. Simulated, not a human judgement; callers average the four raters.

    References
    ----------
    Ogata, Okubo, Fujii, Amakata (Yachiyo Engineering), "土木分野における LLM を用いた
    言語モデル評価手法の提案" (seed 001), §3.3.1 and table 1.

    Examples
    --------
    >>> ref = "鋼橋には桁橋、トラス橋、アーチ橋がある。"
    >>> [human_score("鋼橋の種類は？", ref, ref, ["桁橋", "トラス橋", "アーチ橋"], lang="ja",
    ...              rater=r, rng_seed=0) for r in range(4)]  # rater 0 lapses by one point
    [4, 5, 5, 5]
    """
    if not 0 <= rater < len(RATERS):
        raise ValueError(f"rater must be 0..{len(RATERS) - 1}, got {rater}")
    shift, lapse = RATERS[rater]
    digest = hashlib.sha256(
        "\x1f".join([str(rng_seed), str(rater), question, reference, response]).encode("utf-8")
    ).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    kws = _keywords(keywords, reference)
    text = normalize(response)
    share = sum(1 for k in kws if normalize(k) in text) / len(kws) if kws else 0.0
    perceived = share + rng.gauss(0.0, 0.05)
    item = lookup(question, reference=reference)
    wrong_share, fatal = _wrong_sentences(response, reference, item.wrong_answer if item else "")
    junk = (
        question_repetition(question, response) >= 0.7
        or redundancy(response) >= 0.34
        or (lang in ("ja", "zh") and latin_share(response) > 0.3)
    )
    refusal = bool(_REFUSAL.search(response))
    bad = junk or fatal or wrong_share >= 0.5
    partly = (wrong_share > 0) or refusal
    if perceived < 0.3 + shift:
        score = 1 if bad else 2 if partly else 3
    elif perceived < 0.5 + shift:
        score = 2 if bad else 3 if partly else 4
    else:
        same_meaning = overlap(content_tokens(response), content_tokens(reference)) >= 0.5
        score = 2 if bad else 3 if partly else 5 if same_meaning else 4
    if rng.random() < lapse:
        score += rng.choice((-1, 1))
    return max(1, min(5, score))
