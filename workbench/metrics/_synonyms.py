"""Lemmatisation and the synonym-set F1 of seed 002 (private)."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from workbench.metrics._common import check_lang
from workbench.metrics._tokenize import EN_WORD_RE, normalise
from workbench.text import is_missing

# ---------------------------------------------------------------------------------------
# lemmatisation

_UPOS_ORDER = ("NOUN", "VERB", "ADJ", "ADV", "PROPN", "AUX")


def _is_acronym(word: str) -> bool:
    letters = [ch for ch in word if ch.isalpha()]
    return (len(letters) >= 2 and all(ch.isupper() for ch in letters)) or (
        any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)
    )


@functools.lru_cache(maxsize=65536)
def lemmatize(word: str, *, upos: str | None = None) -> str:
    """Lower-cased dictionary form of an English word, with lemminflect.

    Parameters
    ----------
    word : str
        One word.
    upos : str, optional
        Universal part of speech (``"NOUN"``, ``"VERB"``, ``"ADJ"`` …) when known.
        Without it the first part of speech lemminflect's dictionary lists for the word,
        in the order NOUN, VERB, ADJ, ADV, PROPN, AUX, gives the lemma (entities are
        mostly nouns: ``infections`` → ``infection``, ``diagnosed`` → ``diagnose``);
        a word outside the dictionary goes through lemminflect's out-of-vocabulary noun
        rules (``antiretrovirals`` → ``antiretroviral``).

    Returns
    -------
    str
        The lemma, lower-cased. Acronyms and codes (two or more letters all upper-case,
        or letters mixed with digits: ``AIDS``, ``HIV``, ``CD4``) are only lower-cased,
        so ``AIDS`` does not become ``aid``.

    References
    ----------
    lemminflect (Jascob, B., 2019-), https://github.com/bjascob/LemmInflect: dictionary
    and rule-based English lemmatiser that ships its data.

    Examples
    --------
    >>> [lemmatize(w) for w in ["patients", "diagnosed", "viruses", "criteria", "AIDS"]]
    ['patient', 'diagnose', 'virus', 'criterion', 'aids']
    """
    import lemminflect

    if not isinstance(word, str):
        raise TypeError(f"word must be a string, got {type(word).__name__}")
    word = unicodedata.normalize("NFKC", word).strip()
    if not word or _is_acronym(word):
        return word.lower()
    lower = word.lower()
    if upos is not None:
        lemmas = lemminflect.getLemma(lower, upos=upos, lemmatize_oov=True)
        return lemmas[0].lower() if lemmas else lower
    found = lemminflect.getAllLemmas(lower)
    for tag in _UPOS_ORDER:
        if found.get(tag):
            return found[tag][0].lower()
    oov = lemminflect.getAllLemmasOOV(lower, upos="NOUN").get("NOUN")
    return oov[0].lower() if oov else lower


# ---------------------------------------------------------------------------------------
# synonym-set F1


def normalize_entity(entity: str, *, lang: str = "en", lemmatise: bool = True) -> str:
    """The form entities and synonyms are compared in.

    NFKC, lower-case, whitespace collapsed; for English each word (regex tokens, so
    hyphens become spaces) is lemmatised with :func:`lemmatize` when ``lemmatise``.

    Examples
    --------
    >>> normalize_entity("Opportunistic  Infections")
    'opportunistic infection'
    >>> normalize_entity("ＣＤ４ 数", lang="ja")
    'cd4 数'
    """
    check_lang(lang)
    if not isinstance(entity, str):
        raise TypeError(f"entity must be a string, got {type(entity).__name__}")
    return _normalize_entity(entity, lang, bool(lemmatise))


@functools.lru_cache(maxsize=65536)
def _normalize_entity(entity: str, lang: str, lemmatise: bool) -> str:
    # pure function of its (checked) arguments; memoised because synonym_f1 normalises
    # the same entities and synonym entries again for every answer
    if lang == "en":
        words = EN_WORD_RE.findall(unicodedata.normalize("NFKC", entity))
        if lemmatise:
            return " ".join(lemmatize(w) for w in words)
        return " ".join(w.lower() for w in words)
    return " ".join(normalise(entity).split())


def _entity_set(entities: Iterable[str], *, lang: str, lemmatise: bool, name: str) -> list[str]:
    if isinstance(entities, str):
        raise TypeError(f"{name} must be a list of entities, not one string")
    out: dict[str, None] = {}
    for position, entity in enumerate(entities):
        if not isinstance(entity, str):
            raise TypeError(f"{name}[{position}] is {type(entity).__name__}; expected a string")
        key = normalize_entity(entity, lang=lang, lemmatise=lemmatise)
        if key:
            out[key] = None
    return list(out)


def _synonym_table(
    synonyms: Mapping[str, Any] | None, *, lang: str, lemmatise: bool
) -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for key, values in (synonyms or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"synonyms key {key!r} is not a string")
        values = [values] if isinstance(values, str) else [] if values is None else values
        norm_key = normalize_entity(key, lang=lang, lemmatise=lemmatise)
        bucket = table.setdefault(norm_key, set())
        for value in values:
            if not isinstance(value, str):
                raise TypeError(f"synonyms[{key!r}] holds {type(value).__name__}; expected str")
            norm = normalize_entity(value, lang=lang, lemmatise=lemmatise)
            if norm:
                bucket.add(norm)
    return table


def _greedy_matches(adjacency: np.ndarray) -> int:
    used = np.zeros(adjacency.shape[1], dtype=bool)
    matches = 0
    for row in adjacency:
        free = np.flatnonzero(row & ~used)
        if free.size:
            used[free[0]] = True
            matches += 1
    return matches


def _maximum_matches(adjacency: np.ndarray) -> int:
    """Size of a maximum-cardinality matching: scipy's ``maximum_bipartite_matching``
    (Hopcroft-Karp; the size is unique, whichever matching it finds)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    if not adjacency.any():
        return 0
    match = maximum_bipartite_matching(csr_matrix(adjacency.astype(np.int8)), perm_type="column")
    return int((match >= 0).sum())


def synonym_f1(
    reference_entities: Sequence[str] | None,
    answer_entities: Sequence[str] | None,
    synonyms: Mapping[str, Sequence[str]] | None = None,
    *,
    lang: str = "en",
    lemmatise: bool = True,
    matching: str = "maximum",
) -> dict[str, float]:
    """Entity F1 with synonym sets and one-to-one matching (seed 002, suppl. §6).

    Parameters
    ----------
    reference_entities : sequence of str
        T, the gold answer's entities. ``None`` (e.g. a failed extraction call) gives
        ``NaN`` results, never 0.
    answer_entities : sequence of str
        E, the generated answer's entities (``None`` as above).
    synonyms : mapping of str to sequence of str, optional
        Synonym dictionary ``{entity: [synonym, …]}`` (e.g. from :func:`llm_synonyms`).
        Keys and values are normalised like the entities, so lookups ignore case and
        inflection.
    lang : {"en", "ja", "zh"}, default "en"
        Language of the entities (lemmatisation applies to English only).
    lemmatise : bool, default True
        Lemmatise English words (:func:`lemmatize`) before comparing.
    matching : {"maximum", "greedy"}, default "maximum"
        ``maximum``: a maximum-cardinality one-to-one matching of the bipartite graph
        (scipy's ``maximum_bipartite_matching``, the Hopcroft–Karp algorithm), which
        does not depend on the order of the entities. ``greedy``: the literal sequential
        reading of the seed's indicator — each reference entity in turn takes the first
        still unused answer entity whose synonym set intersects its own; this can
        under-count (a reference entity may take the only partner of a later one).

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1``, ``matches``, ``n_reference`` (|T|) and
        ``n_answer`` (|E|), counted after normalisation (duplicates count once: T and E
        are sets).

    Notes
    -----
    Each entity x has the synonym set :math:`S(x) = \\{x\\} \\cup synonyms(x)` after
    normalisation (NFKC, lower-case, lemmatised). Reference entity :math:`t_i` and
    answer entity :math:`e_j` may be paired when :math:`S(t_i) \\cap S(e_j) \\neq
    \\emptyset`; each entity is used at most once. With *Matches* the number of pairs,
    :math:`Precision = Matches/|E|`, :math:`Recall = Matches/|T|` and
    :math:`F_1 = 2PR/(P+R)`, with :math:`F_1 = 0` when :math:`P + R = 0`. An empty E
    (or T) gives precision (or recall) 0 (no division by zero: scikit-learn's
    ``zero_division=0`` convention).

    References
    ----------
    Seed 002 (HIVMedQA), supplementary §6 "F1 score computation" (MedSynF1: GPT-built
    synonym dictionary plus lemmatisation).
    Hopcroft, J. E. & Karp, R. M. (1973). An n^{5/2} algorithm for maximum matchings in
    bipartite graphs. *SIAM J. Comput.* 2(4), 225-231.

    Examples
    --------
    >>> out = synonym_f1(["HIV infection", "zidovudine"], ["AZT", "infections of HIV"],
    ...                  {"zidovudine": ["AZT", "azidothymidine"]})
    >>> out["matches"], out["precision"], out["recall"]
    (1, 0.5, 0.5)
    """
    check_lang(lang)
    if matching not in ("maximum", "greedy"):
        raise ValueError(f"matching={matching!r}: expected 'maximum' or 'greedy'")
    no_ref, no_ans = is_missing(reference_entities), is_missing(answer_entities)
    options = {"lang": lang, "lemmatise": lemmatise}
    ref = [] if no_ref else _entity_set(reference_entities, name="reference_entities", **options)
    ans = [] if no_ans else _entity_set(answer_entities, name="answer_entities", **options)
    if no_ref or no_ans:
        nan = float("nan")
        return {
            "precision": nan,
            "recall": nan,
            "f1": nan,
            "matches": nan,
            "n_reference": nan if no_ref else len(ref),
            "n_answer": nan if no_ans else len(ans),
        }
    table = _synonym_table(synonyms, lang=lang, lemmatise=lemmatise)
    ref_sets = [{t} | table.get(t, set()) for t in ref]
    ans_sets = [{e} | table.get(e, set()) for e in ans]
    adjacency = np.array(
        [[bool(s_t & s_e) for s_e in ans_sets] for s_t in ref_sets], dtype=bool
    ).reshape(len(ref), len(ans))
    matches = _maximum_matches(adjacency) if matching == "maximum" else _greedy_matches(adjacency)
    precision = matches / len(ans) if ans else 0.0
    recall = matches / len(ref) if ref else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "matches": matches,
        "n_reference": len(ref),
        "n_answer": len(ans),
    }
