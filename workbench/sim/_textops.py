"""Text operations of the simulated provider (deterministic, content-keeping).

- decomposition of ``<text>`` into meaning units ``{"id", "role", "text"}`` (seed 004):
  clauses, not just sentences; role ``gist`` for the unit(s) that most directly answer
  the ``<question>`` (else the first unit), ``detail`` otherwise; texts are verbatim;
- excess/missing detection of ``<response>`` against ``<units>``/``<reference>``;
- ``summary`` (keeps the sentences with the most content shared with the rest, drops
  padding, repetition, question repetition and non-target-language sentences),
  ``paraphrase``, ``rewrite positive|negative``, ``entities``, ``synonyms``.
"""

from __future__ import annotations

import json
import math
import random
import re

from workbench.sim._text import content_tokens, key_terms, lang_of, latin_share, overlap
from workbench.text import clause_spans, sentence_spans

# --- decomposition and excess/missing -----------------------------------------------

_NEGATION = re.compile(r"ない|ません|不要|ず[、。]|\bnot\b|\bno need\b|\bnever\b|\bcannot\b", re.I)


def decompose(
    text: str, question: str | None, rng: random.Random, *, flip: float = 0.0
) -> list[dict]:
    """Meaning units of ``text`` with gist/detail roles (``flip``: role-noise rate)."""
    spans = clause_spans(text)
    if not spans:
        return []
    units = [text[s:e] for s, e in spans]
    if question:
        qt = content_tokens(question)
        scores = [overlap(content_tokens(u), qt) for u in units]
        best = max(scores)
        gist = {i for i, s in enumerate(scores) if best > 0 and s >= 0.8 * best} or {0}
    else:
        gist = {0}
    out = []
    for i, unit in enumerate(units):
        role = "gist" if i in gist else "detail"
        if flip and len(units) > 1 and rng.random() < flip:
            role = "detail" if role == "gist" and len(gist) > 1 else "gist"
        out.append({"id": f"u{i + 1}", "role": role, "text": unit})
    return out


def _units_from_block(body: str) -> list[dict] | None:
    try:
        value = json.loads(body)
    except (json.JSONDecodeError, TypeError):
        start = body.find("[")
        try:
            value, _ = json.JSONDecoder().raw_decode(body[start:]) if start >= 0 else (None, 0)
        except json.JSONDecodeError:
            return None
    if isinstance(value, dict):
        value = value.get("units")
    if not isinstance(value, list):
        return None
    units = []
    for i, unit in enumerate(value):
        if isinstance(unit, dict) and isinstance(unit.get("text"), str):
            role = unit.get("role") if unit.get("role") in ("gist", "detail") else "detail"
            units.append(
                {"id": str(unit.get("id", f"u{i + 1}")), "role": role, "text": unit["text"]}
            )
    return units


def excess_missing(
    response: str,
    units: list[dict],
    reference: str,
    question: str | None,
    rng: random.Random,
    *,
    noise: float = 0.0,
) -> dict:
    """``{"excess": [...], "missing": [...]}``: response clauses the reference does not
    support (support < 0.45) and reference units the response does not cover
    (coverage < 0.5); thresholds jittered by ``noise``."""
    rtoks = content_tokens(response)
    unit_toks = [content_tokens(u["text"]) for u in units]
    missing = []
    for i, unit in enumerate(units):
        toks = unit_toks[i]
        # judge coverage on what is distinctive of this unit (not shared by the others)
        others = frozenset().union(*(t for j, t in enumerate(unit_toks) if j != i))
        distinctive = toks - others
        cover = overlap(rtoks, toks)
        if len(distinctive) >= 3:
            cover = 0.5 * cover + 0.5 * overlap(rtoks, distinctive)
        if toks and cover < 0.45 + noise * rng.gauss(0.0, 1.0):
            missing.append({"text": unit["text"], "role": unit["role"], "unit_id": unit["id"]})
    ref_toks = content_tokens(reference) | frozenset().union(
        *(content_tokens(u["text"]) for u in units)
    )
    clauses = [response[s:e] for s, e in clause_spans(response)]
    qt = content_tokens(question) if question else frozenset()
    scores = [overlap(content_tokens(c), qt) for c in clauses] if qt else [0.0] * len(clauses)
    top = max(range(len(clauses)), key=lambda i: scores[i]) if clauses else -1
    excess = []
    for i, clause in enumerate(clauses):
        toks = content_tokens(clause)
        if len(toks) < 2:
            continue
        support = overlap(ref_toks, toks)
        if _NEGATION.search(clause) and unit_toks:
            # a negated statement whose closest reference unit is not negated contradicts it
            best = max(range(len(units)), key=lambda j: overlap(unit_toks[j], toks))
            if not _NEGATION.search(units[best]["text"]):
                support -= 0.5
        if support < 0.45 + noise * rng.gauss(0.0, 1.0):
            excess.append({"text": clause, "role": "gist" if i == top else "detail"})
    return {"excess": excess, "missing": missing}


def structured(prompt, fields, rng: random.Random, *, flip: float = 0.0) -> dict:
    """The reply object of a decomposition or excess/missing prompt."""
    names = [f.name for f in fields]
    question = prompt.get("question")
    if "excess" in names or "missing" in names:
        response = prompt.get("response") or prompt.get("text") or ""
        reference = prompt.get("reference") or ""
        units_body = prompt.get("units")
        units = _units_from_block(units_body) if units_body else None
        if units is None:
            units = decompose(reference, question, rng)
        found = excess_missing(response, units, reference, question, rng, noise=flip)
    else:
        found = {
            "units": decompose(
                prompt.get("text") or prompt.get("reference") or "", question, rng, flip=flip
            )
        }
    return {spec.name: found.get(spec.name, [] if spec.kind == "list" else "") for spec in fields}


# --- summary, paraphrase, sentiment --------------------------------------------------

# stock phrases of padding and generic statements (no content of their own)
_FILLER = re.compile(
    r"重要です|大切です|ことが(?:大切|重要)|総合的に判断|以上の点|まとめると|要するに|言い換えると"
    r"|お勧めします|望ましい|につながります|異なる対応|注目されて|議論が行われ|変わってきました"
    r"|異なる場合があります"
    r"|in summary|to summari[sz]e|in other words|it is important to|keep in mind|overall,"
    r"|as mentioned|all things considered|advisable to consult|a different approach"
    r"|a good idea to|more reliable decision|growing attention|vary between regions"
    r"|similar discussions|gradually changed",
    re.I,
)


def summarize(text: str, question: str | None = None) -> str:
    """A shorter text: its content sentences, in their order.

    Drops repeated sentences, the question repeated, sentences not in the text's
    language and stock padding/generic phrases; of the rest it keeps at most 60 % of the
    sentences (at least two), preferring those that share most content with the others.
    """
    spans = sentence_spans(text)
    if len(spans) <= 1:
        return text.strip()
    sents = [text[s:e] for s, e in spans]
    target = lang_of(text)
    toks = [content_tokens(s) for s in sents]
    qt = content_tokens(question) if question else frozenset()
    central: list[float] = []
    junk: list[bool] = []
    seen: list[frozenset[str]] = []
    for i, sent in enumerate(sents):
        others = frozenset().union(*(toks[:i] + toks[i + 1 :]))
        central.append(overlap(others, toks[i]) if toks[i] else 0.0)
        junk.append(
            not toks[i]
            or any(overlap(prev, toks[i]) >= 0.8 for prev in seen)  # repetition
            or bool(qt and overlap(qt, toks[i]) >= 0.85)  # the question repeated
            or (target != "en" and latin_share(sent) > 0.5)  # not the text's language
            or bool(_FILLER.search(sent))  # padding
        )
        seen.append(toks[i])
    candidates = [i for i in range(len(sents)) if not junk[i]] or [
        max(range(len(sents)), key=lambda i: central[i])
    ]
    budget = max(2, math.ceil(0.6 * len(sents)))
    keep = sorted(candidates, key=lambda i: (-central[i], i))[:budget]
    joiner = "" if target != "en" else " "
    return joiner.join(sents[i] for i in sorted(keep))


_PARA_EN = (
    ("in addition", "also"),
    ("important", "key"),
    ("however", "but"),
    ("therefore", "so"),
    ("usually", "typically"),
    ("may", "can"),
    ("approximately", "about"),
    ("such as", "for example"),
    ("because", "since"),
    ("recommended", "advised"),
)
_PARA_JA = (
    ("また、", "さらに、"),
    ("しかし", "ただし"),
    ("ため、", "ので、"),
    ("重要", "大切"),
    ("必要があります", "必要です"),
    ("などの", "といった"),
    ("場合", "とき"),
    ("できます", "可能です"),
    ("行う", "実施する"),
    ("について", "に関して"),
)


def paraphrase(text: str, rng: random.Random | None = None, *, rate: float = 1.0) -> str:
    """Content-keeping rewording: connectives and function phrases swapped."""
    pairs = _PARA_EN if lang_of(text) == "en" else _PARA_JA
    out = text
    for a, b in pairs:
        if rng is not None and rate < 1.0 and rng.random() >= rate:
            continue
        if a in out:
            out = out.replace(a, b)
        elif a[:1].upper() + a[1:] in out:
            out = out.replace(a[:1].upper() + a[1:], b[:1].upper() + b[1:])
    return out


def rewrite(text: str, sentiment: str) -> str:
    """Same content, other sentiment (a framing sentence and softened/hardened wording)."""
    en = lang_of(text) == "en"
    if sentiment.startswith("pos"):
        return (
            "Fortunately, the situation is encouraging. "
            if en
            else "幸いなことに、前向きに考えられる状況です。"
        ) + text
    return (
        "Unfortunately, this is a worrying situation. "
        if en
        else "残念ながら、深刻に受け止めるべき状況です。"
    ) + text


# --- entities and synonyms -------------------------------------------------------------

_CAPS = re.compile(r"\b(?:[A-Z][A-Za-z0-9+\-]*)(?:\s+[A-Z][A-Za-z0-9+\-]*)*")
SYNONYMS = {
    "antiretroviral therapy": ("ART", "cART", "HAART", "antiretroviral treatment"),
    "art": ("antiretroviral therapy", "cART", "HAART"),
    "pneumocystis pneumonia": ("PCP", "PJP", "Pneumocystis jirovecii pneumonia"),
    "pcp": ("Pneumocystis pneumonia", "PJP"),
    "trimethoprim-sulfamethoxazole": ("TMP-SMX", "co-trimoxazole", "cotrimoxazole", "Bactrim"),
    "tmp-smx": ("trimethoprim-sulfamethoxazole", "co-trimoxazole", "Bactrim"),
    "pre-exposure prophylaxis": ("PrEP",),
    "prep": ("pre-exposure prophylaxis",),
    "post-exposure prophylaxis": ("PEP",),
    "viral load": ("HIV RNA", "plasma HIV-1 RNA"),
    "cd4 count": ("CD4+ T-cell count", "CD4 cell count", "CD4"),
    "cryptococcal meningitis": ("cryptococcosis of the CNS", "Cryptococcus neoformans meningitis"),
    "toxoplasmosis": ("Toxoplasma encephalitis", "cerebral toxoplasmosis"),
    "tuberculosis": ("TB",),
    "tb": ("tuberculosis",),
    "immune reconstitution inflammatory syndrome": ("IRIS",),
    "iris": ("immune reconstitution inflammatory syndrome",),
    "primary cns lymphoma": ("PCNSL", "primary central nervous system lymphoma"),
    "dolutegravir": ("DTG", "Tivicay"),
    "tenofovir": ("TDF", "TAF"),
    "emtricitabine": ("FTC",),
    "hiv": ("human immunodeficiency virus",),
}


def entities(text: str) -> list[str]:
    """Medical/technical entities of ``text``, one per item, in order of appearance."""
    seen: dict[str, None] = {}
    if lang_of(text) == "en":
        low = text.lower()
        for name in SYNONYMS:
            if len(name) > 3 and name in low:
                seen.setdefault(name, None)
        for match in _CAPS.finditer(text):
            phrase = match.group(0).strip()
            if len(phrase) > 2 and phrase.lower() not in (
                "the",
                "this",
                "a",
                "an",
                "it",
                "he",
                "she",
            ):
                seen.setdefault(phrase, None)
        for term in key_terms(text):
            if len(term) >= 6 or any(c.isdigit() for c in term):
                seen.setdefault(term, None)
    else:
        for term in key_terms(text):
            seen.setdefault(term, None)
    return list(seen)


def synonyms(entity: str) -> list[str]:
    """Synonyms of an entity: the built-in dictionary, else simple surface variants."""
    key = entity.strip().lower()
    found = list(SYNONYMS.get(key, ()))
    words = re.findall(r"[A-Za-z]+", entity)
    if len(words) >= 2:
        found.append("".join(w[0] for w in words).upper())
    if key != entity.strip():
        found.append(key)
    if key.endswith("s") and len(key) > 4:
        found.append(key[:-1])
    return list(dict.fromkeys(s for s in found if s.lower() != key or s != entity.strip()))


def text_operation(operation: str, prompt) -> str:
    """The reply of a ``Text only: <operation>`` prompt (other than ``answer``)."""
    text = prompt.get("text") or prompt.get("response") or prompt.get("reference") or ""
    question = prompt.get("question")
    if operation.startswith("summar"):
        return summarize(text, question)
    if operation.startswith("paraphras"):
        return paraphrase(text)
    if operation.startswith("rewrite"):
        return rewrite(text, "negative" if "neg" in operation else "positive")
    if operation.startswith("entit"):
        return "\n".join(entities(text))
    if operation.startswith("synonym"):
        lines = []
        for entity in (line.strip(" -・•\t") for line in text.splitlines()):
            if entity:
                lines.append(f"{entity}: " + "; ".join(synonyms(entity) or [entity]))
        return "\n".join(lines)
    return text
