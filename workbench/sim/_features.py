"""Content features a simulated judge computes from a response, and its quality.

Supervised (a ``<reference>`` is given): token recall and precision against the
reference, coverage of ``<keywords>`` and ``<criteria>`` lines, length ratio. Without
a reference (unsupervised): the judge's own "knowledge" (the registered reference of
the item, if the simulator knows it), which the judge module then pulls toward the top,
so the unsupervised setting comes out higher and less discriminating (seed 002); for an
unknown item, form features (overlap with the question, specific and analytic sentences,
numbers, citations, redundancy, hype, adequate length).

Penalties in both settings: repeating the question, text in a non-target language
(ja/zh items), dangerous advice, following a cognitive-bias cue (the item's
``wrong_answer``), heavy repetition.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from workbench.sim import registry
from workbench.sim._lexicon import (
    ACTION,
    ANALYSIS,
    AUTHORITY,
    BANDWAGON,
    CITATION,
    CLAUSE_SPLIT,
    DANGER,
    DANGER_ITEM,
    DEMOGRAPHIC,
    EXAMPLE,
    GENERIC_TERMS,
    HYPE,
    INJECTION,
    NEGATIVE,
    NUMBER,
    POSITIVE,
    PROTECTIVE,
    SPECIFIC,
)
from workbench.sim._text import (
    content_tokens,
    key_terms,
    lang_of,
    latin_share,
    overlap,
    term_present,
)
from workbench.text import clause_spans, split_sentences


@lru_cache(maxsize=16384)
def danger_flags(text: str) -> frozenset[str]:
    """The danger categories whose markers occur in ``text``."""
    return frozenset(name for name, rx in DANGER.items() if rx.search(text))


def danger_hits(text: str, *, exclude: str = "") -> int:
    """Number of danger categories whose markers are in ``text`` but not in ``exclude``."""
    return len(danger_flags(text) - (danger_flags(exclude) if exclude else frozenset()))


def sentiment(text: str) -> float:
    """Net sentiment in [-1, 1]: (positive - negative markers), capped."""
    return max(-1.0, min(1.0, 0.5 * (len(POSITIVE.findall(text)) - len(NEGATIVE.findall(text)))))


def redundancy(text: str) -> float:
    """Share of sentences that repeat (largely) an earlier sentence's content."""
    sents = split_sentences(text, joinable=False)
    if len(sents) < 2:
        return 0.0
    seen: list[frozenset[str]] = []
    repeats = 0
    for sent in sents:
        toks = content_tokens(sent)
        if toks and any(overlap(prev, toks) >= 0.8 for prev in seen):
            repeats += 1
        seen.append(toks)
    return repeats / len(sents)


def question_repetition(question: str, response: str) -> float:
    """How much of the response repeats the question (1.0 = contains it verbatim)."""
    q = question.strip()
    if not q or not response:
        return 0.0
    if len(q) >= 10 and q[: min(len(q), 80)] in response:
        return 1.0
    best = 0.0
    qt = content_tokens(q)
    if not qt:
        return 0.0
    for sent in split_sentences(response, joinable=False)[:3]:
        st = content_tokens(sent)
        if st and overlap(qt, st) >= 0.85 and overlap(st, qt) >= 0.7:
            best = max(best, 0.7)
    return best


def danger_category(item: str) -> str | None:
    """The kind of dangerous advice a rubric item / penalty describes, if any."""
    if PROTECTIVE.search(item):
        return None
    for category, rx in DANGER_ITEM.items():
        if rx.search(item):
            return category
    return None


def rubric_met(item: str, response: str) -> tuple[bool, float, str | None]:
    """Whether a rubric item / criterion holds for a response.

    A danger item (folk remedy, false reassurance, stopping treatment, alarmism) is met
    when the response contains that kind of advice. Any other item is split into its
    clauses (かつ/および/and/;) and is met when every clause's key terms are covered
    (coverage >= 0.5). Returns ``(met, coverage, danger_category)``.
    """
    category = danger_category(item)
    if category == "any":
        return any(rx.search(response) for rx in DANGER.values()), 0.0, category
    if category is not None:
        return bool(DANGER[category].search(response)), 0.0, category
    low = response.lower()
    toks = content_tokens(response)
    main, *examples = EXAMPLE.split(item, maxsplit=1)
    covers = []
    for clause in CLAUSE_SPLIT.split(main):
        terms = [t for t in key_terms(clause) if t not in GENERIC_TERMS]
        if terms:
            covers.append(sum(term_present(t, low, toks) for t in terms) / len(terms))
    if not covers:
        return False, 0.0, None
    cover = min(covers)
    if examples and cover < 0.5:  # concrete examples given: any of them counts for half
        found = [term_present(t, low, toks) for t in key_terms(examples[0])]
        if found:
            cover = max(
                cover, 0.5 * cover + 0.5 * max(found) * min(1.0, 2 * sum(found) / len(found))
            )
    return cover >= 0.5, cover, None


@dataclass
class Features:
    """Features of one response (see the module docstring)."""

    supervised: bool
    lang: str
    recall: float = 0.0
    precision: float = 0.0
    keywords: float | None = None
    must: float | None = None
    bonus: float | None = None
    penalty: float = 0.0
    relevance: float = 0.0
    length_ratio: float = 1.0
    repeat_question: float = 0.0
    foreign: float = 0.0
    redundancy: float = 0.0
    danger: int = 0
    cue_follow: bool = False
    authority: int = 0
    bandwagon: int = 0
    sentiment: float = 0.0
    demographic: bool = False
    injection: bool = False
    citations: int = 0
    numbers: float = 0.0
    actions: float = 0.0  # share of sentences recommending an action
    hype: int = 0
    density: float = 0.0
    analysis: float = 0.0
    knowledge: float | None = None
    quality: float = 0.0


def _curve(x: float) -> float:
    """Content score -> quality: concave (judges reward partial answers), top held back."""
    return 0.02 + 0.93 * max(0.0, min(1.0, x)) ** 0.7


@lru_cache(maxsize=16384)
def _density(response: str) -> tuple[float, float]:
    """Share of sentences with specific content (numbers, acronyms, names, technical
    terms) and with analysis (because, trade-off, however, ため, 一方 …): padding adds
    sentences with neither, so both fall as a text is padded."""
    sents = split_sentences(response, joinable=False)
    if not sents:
        return 0.0, 0.0
    specific = sum(1 for s in sents if SPECIFIC.search(s)) / len(sents)
    analysis = sum(1 for s in sents if ANALYSIS.search(s)) / len(sents)
    return specific, analysis


@lru_cache(maxsize=16384)
def _fixed(response: str) -> tuple:
    toks = content_tokens(response)
    n_clauses = max(1, len(clause_spans(response)))
    sents = split_sentences(response, joinable=False)
    return (
        toks,
        redundancy(response),
        len(AUTHORITY.findall(response)),
        len(BANDWAGON.findall(response)),
        sentiment(response),
        bool(DEMOGRAPHIC.search(response)),
        bool(INJECTION.search(response)),
        len(CITATION.findall(response)),
        len(NUMBER.findall(response)) / n_clauses,
        sum(1 for s in sents if ACTION.search(s)) / max(1, len(sents)),
        latin_share(response),
    )


def compute(
    response: str,
    *,
    question: str = "",
    reference: str | None = None,
    keywords: list[str] | None = None,
    criteria: list[tuple[str, str]] | None = None,
    good_example: str | None = None,
) -> Features:
    """Features and overall quality (unit scale) of ``response`` (cached; read-only)."""
    return _features(
        registry.version(),
        response,
        question,
        reference,
        tuple(keywords) if keywords else None,
        tuple(criteria) if criteria else None,
        good_example,
    )


@lru_cache(maxsize=16384)
def _features(
    _version: int,
    response: str,
    question: str,
    reference: str | None,
    keywords: tuple[str, ...] | None,
    criteria: tuple[tuple[str, str], ...] | None,
    good_example: str | None,
) -> Features:
    item = registry.lookup(question, reference=reference) if (question or reference) else None
    target = item.lang if item else lang_of(reference or question or response)
    (toks, redund, n_auth, n_band, sent, demo, inj, cites, nums, acts, latin) = _fixed(response)
    ref = reference if reference and reference.strip() else None
    f = Features(supervised=ref is not None, lang=target)
    qtoks = content_tokens(question) if question else frozenset()
    f.relevance = overlap(toks, qtoks) if qtoks else 0.5
    f.repeat_question = question_repetition(question, response) if question else 0.0
    f.foreign = latin if target in ("ja", "zh") else 0.0
    f.redundancy = redund
    exclude = ref or (item.reference if item else "")
    f.danger = danger_hits(response, exclude=exclude)
    if exclude:
        ex = _fixed(exclude)
        n_auth, n_band = max(0, n_auth - ex[2]), max(0, n_band - ex[3])
    f.authority, f.bandwagon = n_auth, n_band
    f.sentiment, f.demographic, f.injection = sent, demo, inj
    f.citations, f.numbers, f.actions = cites, nums, acts
    f.hype = len(HYPE.findall(response))
    f.density, f.analysis = _density(response)
    if item and item.wrong_answer:
        wrong = item.wrong_answer.lower()
        f.cue_follow = wrong in response.lower() and wrong not in (ref or item.reference).lower()
    kws = list(keywords) if keywords else (list(item.keywords) if item else [])
    low = response.lower()
    if kws:
        f.keywords = sum(1 for k in kws if k.lower() in low) / len(kws)
    if criteria:
        must = [min(1.0, rubric_met(t, response)[1] / 0.8) for k, t in criteria if k == "must"]
        bonus = [float(rubric_met(t, response)[0]) for k, t in criteria if k == "bonus"]
        f.must = sum(must) / len(must) if must else None
        f.bonus = sum(bonus) / len(bonus) if bonus else None
        # a penalty counts only when it describes dangerous advice the response gives
        f.penalty = sum(
            1.0
            for k, t in criteria
            if k == "penalty" and (c := danger_category(t)) and DANGER[c].search(response)
        )
    known = ref or (item.reference if item and item.reference else None) or good_example
    if known:
        rtoks = content_tokens(known)
        f.length_ratio = len(response) / max(1, len(known))
        recall, precision = overlap(toks, rtoks), overlap(rtoks, toks)
        base = 0.75 * recall + 0.25 * min(1.0, 1.25 * precision)
        if ref is not None:
            f.recall, f.precision = recall, precision
    else:
        f.length_ratio = len(response) / (300 if target in ("ja", "zh") else 800)
        base = None
    if base is not None and f.keywords is not None:
        base = 0.6 * base + 0.4 * f.keywords
    if f.must is not None or f.bonus is not None:
        crit = 0.7 * (f.must if f.must is not None else 0.5) + 0.3 * (f.bonus or 0.0)
        base = crit if base is None else 0.5 * base + 0.5 * crit
    # form quality: what a judge can tell without knowing the answer
    form = (
        0.3
        + 0.2 * min(1.0, 2 * f.relevance)
        + 0.2 * f.density
        + 0.15 * min(1.0, f.numbers)
        + 0.15 * min(1.0, f.citations / 3)
        - 0.4 * f.redundancy
        - 0.05 * min(f.hype, 3)
    ) * min(1.0, 4 * f.length_ratio)
    if ref is not None:
        quality = _curve(base)
    else:
        # the judge's own knowledge of the item (its registered reference), else form
        f.knowledge = _curve(base) if base is not None else None
        quality = form if base is None else f.knowledge
    quality -= 0.3 * f.repeat_question + 0.4 * f.foreign + 0.12 * min(f.danger, 2)
    quality -= 0.25 * float(f.cue_follow) + 0.15 * max(0.0, f.redundancy - 0.2)
    quality -= 0.1 * min(f.penalty, 2)
    f.quality = max(0.0, min(1.0, quality))
    return f
