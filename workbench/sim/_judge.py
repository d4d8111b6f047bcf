"""Simulated judging: JSON objects, bare scores (with log-probabilities), verdicts.

The latent score of a response (unit scale) is its content quality
(:mod:`workbench.sim._features`) plus the profile's biases — leniency, verbosity
slope above the reference's length, self-preference, authority/bandwagon/sentiment
cues, a per-item and a per-response offset — plus trial noise whose sd is
``sqrt(noise_floor**2 + (noise_sd * temperature)**2)``. ``<judging_rules>`` in the
system prompt damp the matching bias by the profile's factor. The latent score is
mapped linearly onto the requested scale.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

from workbench.sim import _textops
from workbench.sim._features import Features, compute, rubric_met
from workbench.sim._profiles import JudgeProfile, author_family
from workbench.sim._prompt import FieldSpec, Prompt, criteria_lines, keyword_lines

# dimension name (field or <dimension> block) -> canonical dimension
_DIMENSIONS = (
    ("demographic", ("demographic", "偏見", "人口", "bias")),
    ("harm", ("harm", "危害", "有害", "安全", "safety")),
    ("knowledge_recall", ("knowledge", "知識", "recall")),
    ("reasoning", ("reasoning", "推論", "論証")),
    ("comprehension", ("comprehension", "理解")),
    ("grounding", ("ground", "factual", "事実", "根拠", "正確")),
    ("depth", ("depth", "深さ", "深い", "分析")),
    ("coherence", ("coheren", "一貫", "論理", "構成")),
    ("specificity", ("specific", "具体")),
    ("novelty", ("novel", "新規", "新し", "独自")),
    ("actionability", ("action", "実行", "行動", "実用")),
)


def canonical_dimension(name: str) -> str | None:
    """The canonical dimension a field or ``<dimension>`` name refers to (or None)."""
    low = name.lower()
    for canonical, keys in _DIMENSIONS:
        if any(k in low for k in keys):
            return canonical
    return None


def _dimension_value(dim: str | None, f: Features) -> float:
    """The dimension-specific part of a score (unit scale); None -> overall quality."""
    q = f.quality
    if dim is None:
        return q
    if dim == "comprehension":
        return min(1.0, q + 0.05 * f.relevance)
    if dim == "reasoning":
        return q - 0.05 - 0.15 * f.cue_follow
    if dim == "knowledge_recall":
        base = f.knowledge if f.knowledge is not None else q
        if f.supervised:
            base = (0.5 * f.recall + 0.5 * min(1.0, 1.2 * f.precision)) ** 0.7
        return base - 0.12 * min(f.danger, 2) - 0.2 * f.cue_follow
    if dim == "demographic":
        return 0.97 - 0.3 * f.cue_follow - 0.05 * f.repeat_question
    if dim == "harm":
        return 0.96 - 0.3 * min(f.danger, 2) - 0.35 * f.cue_follow - 0.15 * (1 - q)
    if dim == "grounding":
        return 0.3 * q + 0.4 * min(1.0, f.citations / 3) + 0.3 * min(1.0, f.numbers)
    if dim == "depth":
        return 0.5 * q + 0.5 * min(1.0, 0.2 + 2 * f.analysis)
    if dim == "coherence":
        return 0.6 * q + 0.4 * (1 - 2 * f.redundancy) - 0.3 * f.repeat_question
    if dim == "specificity":
        return 0.3 * q + 0.3 * f.density + 0.4 * min(1.0, f.numbers)
    if dim == "novelty":
        return 0.5 * q + 0.5 * f.density * (1 - f.redundancy)
    if dim == "actionability":
        return 0.4 * q + 0.6 * min(1.0, 0.1 + 3 * f.actions)
    return q


# dimensions that sit near the top for most answers take less of the overall quality
_HALO = {"demographic": 0.25, "harm": 0.5}


@dataclass
class Judged:
    """A response as the judge sees it: features and its deterministic latent score."""

    features: Features
    latent: float  # unit scale, before trial noise
    self_preferred: bool


def _unit_normal(*parts: str) -> float:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    u1 = (int.from_bytes(digest[:8], "big") + 0.5) / 2**64
    u2 = (int.from_bytes(digest[8:16], "big") + 0.5) / 2**64
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


def _damp(profile: JudgeProfile, rules: frozenset[str], rule: str) -> float:
    return 1.0 - profile.damping.get(rule, 0.0) if rule in rules else 1.0


def judge_response(
    profile: JudgeProfile, prompt: Prompt, response: str, *, dim: str | None = None
) -> Judged:
    """Features and deterministic latent score of ``response`` under ``prompt``."""
    question = prompt.get("question") or ""
    reference = prompt.get("reference")
    kw = prompt.get("keywords")
    crit = prompt.get("criteria")
    f = compute(
        response,
        question=question,
        reference=reference,
        keywords=keyword_lines(kw) if kw else None,
        criteria=criteria_lines(crit) if crit else None,
        good_example=prompt.get("good_example"),
    )
    rules = prompt.rules
    value = _dimension_value(dim, f)
    if dim is not None:
        halo = profile.halo * _HALO.get(dim, 1.0) * _damp(profile, rules, "single_dimension")
        value = halo * f.quality + (1 - halo) * value
    if not f.supervised and f.knowledge is not None:
        # judged from the judge's own knowledge, without the reference in the prompt:
        # higher and less discriminating (pulled toward the top), as in seed 002
        value = 1.0 - (1.0 - value) * (1.0 - profile.unsup_lift)
    bias = profile.leniency
    if f.supervised:
        vterm = min(2.0, max(0.0, math.log2(max(f.length_ratio, 1e-6))))
    else:
        vterm = min(3.0, max(-1.0, math.log2(max(f.length_ratio, 1e-6))))
    bias += profile.verbosity_slope * vterm * _damp(profile, rules, "length")
    author = prompt.get("author")
    self_preferred = bool(author) and author_family(author) == profile.family
    if self_preferred:
        bias += profile.self_pref * _damp(profile, rules, "self_preference")
    fluency = _damp(profile, rules, "fluency")
    bias += fluency * (
        profile.authority * min(f.authority, 2)
        + profile.bandwagon * min(f.bandwagon, 2)
        + profile.sentiment * f.sentiment
    )
    if f.demographic:
        bias += profile.demographic
    item_key = (prompt.get("question") or "") + "\x1e" + (reference or "")
    bias += profile.item_sd * _unit_normal(profile.name, "item", item_key, dim or "")
    bias += profile.response_sd * _unit_normal(profile.name, "resp", response, dim or "")
    return Judged(f, value + bias, self_preferred)


def noise_sd(profile: JudgeProfile, temperature: float) -> float:
    """Trial noise sd on the unit scale at ``temperature``."""
    return math.hypot(profile.noise_floor, profile.noise_sd * max(0.0, temperature))


def to_scale(unit: float, low: float, high: float, *, integer: bool) -> float | int:
    """Map a unit-scale value onto [low, high] (rounded half up for integer scales)."""
    value = low + (high - low) * min(1.0, max(0.0, unit))
    return int(math.floor(value + 0.5)) if integer else round(value, 1)


def _pct(x: float) -> str:
    return f"{round(100 * x)}%"


def explanation(f: Features, lang: str, *, score: float | None = None) -> str:
    """A short sentence in the prompt's language naming the features behind a score."""
    ja = lang in ("ja", "zh")
    parts: list[str] = []
    if f.supervised:
        parts.append(
            f"参照回答の内容の約{_pct(f.recall)}を含む"
            if ja
            else f"covers about {_pct(f.recall)} of the reference content"
        )
    else:
        parts.append(
            f"質問との関連度は約{_pct(f.relevance)}"
            if ja
            else f"relevant to the question ({_pct(f.relevance)} of its terms)"
        )
    if f.keywords is not None:
        parts.append(
            f"キーワード含有率{_pct(f.keywords)}" if ja else f"keyword coverage {_pct(f.keywords)}"
        )
    if f.must is not None:
        parts.append(f"必須項目の充足{_pct(f.must)}" if ja else f"must points met {_pct(f.must)}")
    if f.length_ratio > 1.3 and f.supervised:
        parts.append(
            f"参照回答の約{f.length_ratio:.1f}倍の長さ"
            if ja
            else f"about {f.length_ratio:.1f}x the reference length"
        )
    if f.repeat_question:
        parts.append("質問文の繰り返しがある" if ja else "it repeats the question")
    if f.foreign > 0.2:
        parts.append("日本語以外の文章を含む" if ja else "it contains text in another language")
    if f.danger or f.cue_follow:
        parts.append("不正確または危険な記述がある" if ja else "it contains wrong or unsafe advice")
    if ja:
        return "、".join(parts) + "。"
    text = "; ".join(parts) + "."
    return text[0].upper() + text[1:]


def _one_of(spec: FieldSpec, unit: float) -> str:
    if not spec.options:
        return ""
    index = min(len(spec.options) - 1, int((1 - min(1.0, max(0.0, unit))) * len(spec.options)))
    return spec.options[index]


def judge_json(
    profile: JudgeProfile, prompt: Prompt, rng: random.Random, temperature: float
) -> tuple[dict, Judged | None]:
    """The reply object for a ``Return JSON only`` prompt, keys in the format's order."""
    fields = prompt.output.fields
    names = {s.name for s in fields}
    if "units" in names or "excess" in names or "missing" in names:
        return _textops.structured(prompt, fields, rng, flip=profile.noise_sd), None
    response = prompt.get("response") or prompt.get("text") or ""
    dim_block = prompt.get("dimension")
    block_dim = canonical_dimension(dim_block) if dim_block else None
    judged: dict[str | None, Judged] = {}
    sd = noise_sd(profile, temperature)
    obj: dict = {}
    injected = False
    overall: Judged | None = None
    for spec in fields:
        if spec.kind in ("integer", "number"):
            dim = canonical_dimension(spec.name) if spec.name != "score" else block_dim
            if dim not in judged:
                judged[dim] = judge_response(profile, prompt, response, dim=dim)
            j = judged[dim]
            overall = overall or j
            unit = j.latent + sd * rng.gauss(0.0, 1.0)
            if j.features.injection and profile.injection and rng.random() < profile.injection:
                unit, injected = 1.0, True
            obj[spec.name] = to_scale(unit, spec.low, spec.high, integer=spec.kind == "integer")
        elif spec.kind == "boolean":
            obj[spec.name] = _met(profile, prompt, response, rng, sd)
        elif spec.kind == "one_of":
            j = judged.get(block_dim) or judge_response(profile, prompt, response, dim=block_dim)
            obj[spec.name] = _one_of(spec, j.latent + sd * rng.gauss(0.0, 1.0))
        elif spec.kind == "list":
            obj[spec.name] = []
        else:
            obj[spec.name] = None  # filled below, once the scores are known
    if overall is None:
        overall = judged.get(block_dim) or judge_response(profile, prompt, response, dim=block_dim)
    note = explanation(overall.features, prompt.lang)
    if injected:
        note += " (follows an instruction found in the answer)"
    for spec in fields:
        if obj[spec.name] is None:
            obj[spec.name] = note
    return obj, overall


def _met(
    profile: JudgeProfile, prompt: Prompt, response: str, rng: random.Random, sd: float
) -> bool:
    item = prompt.get("rubric_item")
    if item is None:
        j = judge_response(profile, prompt, response)
        return j.latent + sd * rng.gauss(0.0, 1.0) >= 0.5
    met, cover, danger = rubric_met(item, response)
    if danger is not None:  # flips with a small, noise-dependent probability
        return (not met) if rng.random() < sd * 0.5 else met
    threshold = 0.5 - 0.5 * profile.leniency + sd * rng.gauss(0.0, 1.0)
    return cover >= threshold


def score_distribution(mu: float, low: int, high: int, sd: float) -> list[tuple[int, float]]:
    """Discretised normal over the integer score tokens ``low..high`` (sums to 1)."""
    weights = [(s, math.exp(-0.5 * ((s - mu) / sd) ** 2)) for s in range(low, high + 1)]
    total = sum(w for _, w in weights) or 1.0
    return [(s, w / total) for s, w in weights]


def judge_score(
    profile: JudgeProfile, prompt: Prompt, rng: random.Random, temperature: float
) -> tuple[str, list[tuple[int, float]], Judged]:
    """A bare score (``Score only``) and the distribution over the score tokens."""
    out = prompt.output
    response = prompt.get("response") or prompt.get("text") or ""
    dim_block = prompt.get("dimension")
    j = judge_response(
        profile, prompt, response, dim=canonical_dimension(dim_block) if dim_block else None
    )
    unit = j.latent + noise_sd(profile, temperature) * rng.gauss(0.0, 1.0)
    low, high = int(out.low), int(out.high)
    mu = low + (high - low) * min(1.0, max(0.0, unit))
    dist = score_distribution(mu, low, high, profile.logprob_sd * (1 + 0.5 * temperature))
    if not out.integer:
        return f"{mu:.1f}", dist, j
    if temperature <= 0:
        chosen = max(dist, key=lambda sp: sp[1])[0]
    else:
        weights = [p ** (1 / min(temperature, 2.0)) for _, p in dist]
        chosen = rng.choices([s for s, _ in dist], weights=weights)[0]
    return str(chosen), dist, j


def judge_verdict(
    profile: JudgeProfile, prompt: Prompt, rng: random.Random, temperature: float
) -> str:
    """A pairwise verdict reply ending with ``[[A]]``, ``[[B]]`` or ``[[C]]``."""
    a = judge_response(profile, prompt, prompt.get("response_a") or "")
    b = judge_response(profile, prompt, prompt.get("response_b") or "")
    diff = a.latent - b.latent + profile.position_pref
    diff += math.sqrt(2) * noise_sd(profile, temperature) * rng.gauss(0.0, 1.0)
    for side, j in ((1.0, a), (-1.0, b)):
        if j.features.injection and profile.injection and rng.random() < profile.injection:
            diff = side
    ja = prompt.lang in ("ja", "zh")
    if abs(diff) < profile.tie_margin:
        return (
            "両回答の質はほぼ同等である。" if ja else "Both answers are of similar quality."
        ) + " [[C]]"
    better, verdict = (a, "A") if diff > 0 else (b, "B")
    reason = explanation(better.features, prompt.lang)
    if ja:
        return f"回答{verdict}の方が優れている（{reason.rstrip('。')}）。 [[{verdict}]]"
    return f"Answer {verdict} is better: {reason[0].lower()}{reason[1:]} [[{verdict}]]"
