"""Entity extraction: rule-based content words and phrases, or an LLM (private)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workbench.errors import ProviderError
from workbench.metrics._common import check_lang, string_list
from workbench.metrics._prompts import (
    entities_prompt,
    parse_entities,
    parse_synonyms,
    synonyms_prompt,
    unique_items,
)
from workbench.metrics._stopwords import ENGLISH_STOP_WORDS
from workbench.metrics._tokenize import EN_TOKEN_RE, is_punct, ja_tagger, normalise, zh_tokenizer

DEFAULT_EXTRACTOR = "sim/extractor"
SYNONYM_BATCH = 10  # seed 002 app. 5: terms were sent 10 at a time (quality fell with more)

# ---------------------------------------------------------------------------------------
# entity extraction

_JA_BREAKERS = {"数詞", "助動詞語幹"}
_ZH_EXTRA = {"vn", "eng"}
_NUMBER_RE = re.compile(r"[\d.,]+")


@functools.lru_cache(maxsize=65536)
def _en_content(token: str) -> bool:
    """Whether an English token counts as a content word (memoised: tokens repeat)."""
    return (
        not is_punct(token)
        and token not in ENGLISH_STOP_WORDS
        and not _NUMBER_RE.fullmatch(token)
        and len(token) > 1
    )


def _en_units(text: str, *, phrases: bool) -> list[str]:
    tokens = EN_TOKEN_RE.findall(normalise(text))
    out: list[str] = []
    run: list[str] = []

    def close() -> None:
        if run:
            out.append(" ".join(run))
            run.clear()

    for token in tokens:
        if not _en_content(token):
            close()
        elif phrases:
            run.append(token)
        else:
            out.append(token)
    close()
    return out


def _ja_units(text: str, *, phrases: bool) -> list[str]:
    out: list[str] = []
    run: list[tuple[str, str]] = []  # (surface, kind) with kind noun|num|prefix|suffix

    def close() -> None:
        while run and run[-1][1] == "prefix":
            run.pop()
        if any(kind == "noun" for _, kind in run):
            out.append("".join(s for s, _ in run))
        run.clear()

    for node in ja_tagger()(normalise(text)):
        feature = node.feature
        pos1, pos2 = feature.pos1, feature.pos2
        surface = node.surface
        if pos1 == "名詞" and pos2 not in _JA_BREAKERS and not is_punct(surface):
            kind = "noun"
        elif pos1 == "名詞" and pos2 == "数詞":
            kind = "num"
        elif pos1 == "接頭辞":
            kind = "prefix"
        elif pos1 == "接尾辞" and pos2 == "名詞的":
            kind = "suffix"
        else:
            kind = ""
        if not phrases:
            if kind == "noun":
                out.append(surface)
            continue
        if kind == "suffix" and not run:
            kind = ""
        if kind:
            run.append((surface, kind))
        else:
            close()
    close()
    return out


def _zh_units(text: str, *, phrases: bool) -> list[str]:
    import jieba.posseg

    zh_tokenizer()  # sets jieba's cache folder before posseg initialises the dictionary
    out: list[str] = []
    run: list[str] = []
    for pair in jieba.posseg.dt.cut(normalise(text)):
        word, flag = pair.word.strip(), pair.flag
        noun = bool(word) and not is_punct(word) and (flag.startswith("n") or flag in _ZH_EXTRA)
        if not phrases:
            if noun:
                out.append(word)
            continue
        if noun or (flag == "b" and word):
            run.append(word)
        else:
            if run:
                out.append("".join(run))
            run = []
    if run:
        out.append("".join(run))
    return out


def _run_requests(
    messages: list[list[dict[str, str]]],
    *,
    model: str,
    temperature: float,
    params: Mapping[str, Any] | None,
    progress: bool,
) -> list[Any]:
    from workbench import llm

    requests = [
        llm.Request(model=model, messages=m, temperature=temperature, params=dict(params or {}))
        for m in messages
    ]
    return llm.complete_many(requests, progress=progress)


def _failed(result: Any) -> bool:
    from workbench import llm

    return isinstance(result, llm.CallFailure)


def extract_entities(
    text: str | Sequence[str],
    *,
    lang: str,
    method: str = "content_words",
    model: str = DEFAULT_EXTRACTOR,
    temperature: float = 0.0,
    params: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> list[str] | list[list[str] | None]:
    """Entities of a text: content words, noun-phrase-like chunks, or an LLM's list.

    Parameters
    ----------
    text : str or sequence of str
        One text (returns one list) or several (returns a list of lists; LLM calls go
        out together through ``workbench.llm.complete_many``).
    lang : {"ja", "zh", "en"}
        Language of the text.
    method : {"content_words", "phrases", "llm"}, default "content_words"
        ``content_words``: single words — English regex tokens that are not stop words,
        bare numbers or one letter; Japanese nouns by fugashi/UniDic part of speech
        (名詞 except 数詞 and 助動詞語幹); Chinese jieba words tagged as nouns (``n*``),
        verbal nouns (``vn``) or Latin words (``eng``). ``phrases``: maximal runs of such
        words (English runs break at stop words and punctuation, as RAKE candidates;
        Japanese runs join nouns with 接頭辞/接尾辞 into compounds such as
        ``進行性多巣性白質脳症``; Chinese runs join nouns and 区别词). ``llm``: ask
        ``model`` with a ``Text only: entities`` prompt (:func:`entities_prompt`).
    model : str, default "sim/extractor"
        LLM for ``method="llm"`` (any ``workbench.llm`` model string).
    temperature : float, default 0.0
        Sampling temperature of the LLM call.
    params : mapping, optional
        Extra provider arguments of the request (e.g. ``api_base``).
    progress : bool, default False
        Show the LLM progress bar.

    Returns
    -------
    list of str, or list of (list of str or None)
        Unique entities in order of first appearance, normalised (NFKC, lower-case) for
        the rule-based methods, as written by the model for ``llm``. For several texts,
        a failed LLM call leaves ``None`` in its slot (never an empty list), which
        :func:`synonym_f1` turns into ``NaN``; for a single text it raises
        :class:`~workbench.errors.ProviderError`.

    Notes
    -----
    Seed 002 extracted UMLS entities with scispaCy's ``en_core_sci_lg``; that model is
    not bundled here (no download at run time), so the rule-based methods stand in, and
    ``llm`` is the seam for a model-based extractor.

    References
    ----------
    Rose, S., Engel, D., Cramer, N. & Cowley, W. (2010). Automatic keyword extraction
    from individual documents. In *Text Mining: Applications and Theory*, 1-20 (RAKE).

    Examples
    --------
    >>> extract_entities("The patient was diagnosed with Cryptosporidium parvum.", lang="en")
    ['patient', 'diagnosed', 'cryptosporidium', 'parvum']
    >>> extract_entities("最も可能性の高い診断は進行性多巣性白質脳症である", lang="ja",
    ...                  method="phrases")
    ['診断', '進行性多巣性白質脳症']
    """
    check_lang(lang)
    if method not in ("content_words", "phrases", "llm"):
        raise ValueError(f"method={method!r}: expected 'content_words', 'phrases' or 'llm'")
    texts, single = string_list(text, name="text")
    if method == "llm":
        results = _run_requests(
            [entities_prompt(t, lang=lang) for t in texts],
            model=model,
            temperature=temperature,
            params=params,
            progress=progress,
        )
        out: list[list[str] | None] = []
        for result in results:
            if _failed(result):
                if single:
                    raise ProviderError(
                        f"entity extraction with {model!r} failed: "
                        f"{result.error_type}: {result.message}"
                    )
                out.append(None)
            else:
                out.append(parse_entities(result.text))
    else:
        units = {"en": _en_units, "ja": _ja_units, "zh": _zh_units}[lang]
        out = [unique_items(units(t, phrases=method == "phrases")) for t in texts]
    return out[0] if single else out


def _key(term: str) -> str:
    return " ".join(normalise(term).split())


def llm_synonyms(
    entities: Iterable[str],
    *,
    model: str = DEFAULT_EXTRACTOR,
    batch_size: int = SYNONYM_BATCH,
    temperature: float = 0.0,
    params: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, list[str]]:
    """An LLM-built synonym dictionary for :func:`synonym_f1` (seed 002's GPT-Dict).

    Parameters
    ----------
    entities : iterable of str
        Terms to look up (duplicates are asked once).
    model : str, default "sim/extractor"
        LLM asked with a ``Text only: synonyms`` prompt (:func:`synonyms_prompt`).
    batch_size : int, default 10
        Terms per call; seed 002 sent 10 at a time because synonym quality fell with
        more terms per query.
    temperature, params, progress
        As in :func:`extract_entities`.

    Returns
    -------
    dict of str to list of str
        Every requested term as a key (an empty list when the model gave no line for
        it). Reply lines are matched to terms after :func:`normalize_entity`; lines for
        terms that were not asked are ignored.

    Raises
    ------
    ProviderError
        When a call finally failed (naming the terms of that batch); the dictionary is
        never silently partial.

    References
    ----------
    Seed 002 (HIVMedQA), supplementary §5 (dictionary prompt) and §2.3.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size}: expected a positive integer")
    terms = unique_items(e.strip() for e in entities if isinstance(e, str))
    if not terms:
        return {}
    batches = [terms[i : i + batch_size] for i in range(0, len(terms), batch_size)]
    results = _run_requests(
        [synonyms_prompt(batch) for batch in batches],
        model=model,
        temperature=temperature,
        params=params,
        progress=progress,
    )
    out: dict[str, list[str]] = {term: [] for term in terms}
    for batch, result in zip(batches, results, strict=True):
        if _failed(result):
            raise ProviderError(
                f"synonym lookup with {model!r} failed for {batch!r}: "
                f"{result.error_type}: {result.message}"
            )
        by_norm = {_key(t): t for t in batch}
        for key, values in parse_synonyms(result.text).items():
            term = by_norm.get(_key(key))
            if term is not None:
                out[term].extend(v for v in values if v not in out[term])
    return out
