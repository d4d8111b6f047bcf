"""The simulated provider's engine: ``respond(profile, messages, ...) -> SimReply``.

``respond`` reads the task from the prompt's ``<output_format>`` block and the content
from its tagged blocks (``prompts/templates/CONVENTION.md``), then answers as the named
profile: a judge (JSON object, bare score with optional log-probabilities, pairwise
verdict, decomposition, excess/missing), an answerer, or a text tool (summary,
paraphrase, sentiment rewrite, entities, synonyms).

It is pure and deterministic given the item registry (:mod:`workbench.sim.registry`):
all randomness comes from a ``random.Random`` seeded by the sha256 of (profile,
messages, temperature, sample) — answerers at temperature 0 ignore ``sample`` (greedy
decoding). Token counts are approximate: CJK characters /
1.5 plus other characters / 4 (:func:`workbench.sim._text.approx_tokens`).

Sim numbers show that the pipeline works; they are never evidence about real LLMs.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from dataclasses import dataclass, field
from types import MappingProxyType

from workbench.sim import _judge, _textops
from workbench.sim._answer import answer, unknown_answer
from workbench.sim._profiles import (
    ANSWERERS,
    JUDGE_ANSWERS_AS,
    JUDGES,
    TOOLS,
    JudgeProfile,
    profile_names,
)
from workbench.sim._prompt import Prompt, parse_prompt
from workbench.sim._text import approx_tokens

__all__ = ["PROFILES", "SimReply", "profiles", "respond"]

PROFILES = MappingProxyType(
    {**JUDGES, **ANSWERERS, **{t: JudgeProfile(t, "sim-tools") for t in TOOLS}}
)
_NAMES = tuple(profile_names())
_TOKEN = re.compile(r"\w+|[^\w\s]|\s+")


@dataclass
class SimReply:
    """A simulated completion.

    ``logprobs`` is ``None`` or the OpenAI chat format: one dict per output token,
    ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}, ...]}``.
    """

    text: str
    logprobs: list[dict] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    extra: dict = field(default_factory=dict)


def profiles() -> list[str]:
    """Names of every simulated profile (``sim/<name>`` models)."""
    return list(_NAMES)


_SEED_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)


def _seed(profile: str, messages: list[dict], temperature: float, sample: int) -> int:
    payload = _SEED_JSON.encode([profile, messages, repr(float(temperature)), int(sample)])
    return int.from_bytes(hashlib.sha256(payload.encode("utf-8")).digest()[:16], "big")


def _plain(messages: list[dict]) -> bool:
    """True when :func:`_seed` cannot raise on ``messages``: ASCII text keys and values only
    (else it seeds at once, raising what it always raised)."""
    for message in messages:
        for key, value in message.items():
            if not (type(key) is str and type(value) is str and key.isascii() and value.isascii()):
                return False
    return True


def _check(profile: str, messages: object, temperature: float, sample: int) -> None:
    if profile not in PROFILES:
        raise ValueError(f"unknown sim profile {profile!r}; known profiles: {', '.join(_NAMES)}")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {role, content} dicts")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "content" not in message:
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content'")
    if not isinstance(temperature, (int, float)) or math.isnan(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
    if not isinstance(sample, int) or sample < 0:
        raise ValueError(f"sample must be an int >= 0, got {sample!r}")


def _malformed_json(obj: dict, prompt: Prompt, rng: random.Random) -> tuple[str, str]:
    numeric = [f for f in prompt.output.fields if f.kind in ("integer", "number")]
    kinds = ["no_json", "truncated"] + (["range_string", "out_of_range"] if numeric else [])
    kind = rng.choice(kinds)
    if kind == "no_json":
        value = obj.get(numeric[0].name) if numeric else "yes"
        return kind, f"The answer looks reasonable overall. Score: {value}"
    if kind == "truncated":
        text = json.dumps(obj, ensure_ascii=False)
        return kind, text[: max(1, int(len(text) * 0.6))]
    spec = numeric[0]
    bad = dict(obj)
    value = int(obj[spec.name])
    if kind == "range_string":
        low = max(int(spec.low), value - 1)
        bad[spec.name] = f"{low}-{low + 1}"
    else:
        bad[spec.name] = int(spec.high) + 1 + rng.randrange(3)
    return kind, json.dumps(bad, ensure_ascii=False)


def _malformed_score(prompt: Prompt, rng: random.Random) -> tuple[str, str]:
    low, high = int(prompt.output.low), int(prompt.output.high)
    kind = rng.choice(["no_number", "range_string", "out_of_range"])
    if kind == "no_number":
        return kind, "The answer is mostly relevant."
    if kind == "range_string":
        return kind, f"{max(low, high - 2)}-{max(low, high - 1)}"
    return kind, str(high + 2)


def _generic_logprobs(text: str, top: int | None) -> list[dict]:
    out = []
    for token in _TOKEN.findall(text)[:2048]:
        entry = {"token": token, "logprob": -0.01}
        entry["top_logprobs"] = [{"token": token, "logprob": -0.01}] if top else []
        out.append(entry)
    return out


def _score_logprobs(text: str, dist: list[tuple[int, float]], top: int | None) -> list[dict]:
    ranked = sorted(dist, key=lambda sp: (-sp[1], sp[0]))
    k = len(ranked) if top is None else max(0, min(int(top), 20, len(ranked)))
    tops = [{"token": str(s), "logprob": math.log(max(p, 1e-300))} for s, p in ranked[:k]]
    chosen = dict(dist).get(int(text), 1e-300) if text.lstrip("-").isdigit() else 1e-300
    return [{"token": text, "logprob": math.log(max(chosen, 1e-300)), "top_logprobs": tops}]


def respond(
    profile: str,
    messages: list[dict],
    *,
    temperature: float = 0.0,
    sample: int = 0,
    logprobs: bool = False,
    top_logprobs: int | None = None,
    max_tokens: int | None = None,
) -> SimReply:
    """Answer ``messages`` as the simulated model ``sim/<profile>``.

    Parameters
    ----------
    profile : str
        A name from :func:`profiles` (the part after ``sim/``).
    messages : list of dict
        Chat messages ``{"role", "content"}`` following the template convention.
    temperature : float
        Scales the judges' trial noise (0 keeps a small noise floor).
    sample : int
        Repeat index; with ``temperature`` and the prompt it seeds the randomness.
    logprobs, top_logprobs : bool, int or None
        Return log-probabilities. For a ``Score only`` prompt the one output token's
        ``top_logprobs`` cover the score tokens ``L``..``H`` (all of them when
        ``top_logprobs`` is None, else the ``top_logprobs`` most likely, at most 20).
    max_tokens : int or None
        Truncate a longer reply (``extra["finish_reason"] == "length"``).

    Returns
    -------
    SimReply

    Raises
    ------
    ValueError
        Unknown profile (the message lists the known ones) or malformed arguments.

    Examples
    --------
    >>> msgs = [{"role": "user", "content": "<question>\\nWhat is 2+2?\\n</question>\\n"
    ...          "<output_format>\\nScore only: integer 1-5\\n</output_format>"}]
    >>> respond("judge-a", msgs).text in {"1", "2", "3", "4", "5"}
    True
    """
    _check(profile, messages, temperature, sample)
    prompt = parse_prompt(messages)
    form = prompt.output.form
    operation = prompt.output.operation
    is_answer = form == "text" and operation == "answer"
    seed_sample = sample if (temperature > 0 or not is_answer) else 0
    judge: JudgeProfile = PROFILES[profile]  # type: ignore[assignment]
    if profile in ANSWERERS:
        judge = JudgeProfile(profile, ANSWERERS[profile].family)
    extra: dict = {"profile": profile, "task": form if form != "text" else operation}
    rng = None  # text replies of plain messages seed it only if they use it (below)
    if form != "text" or not _plain(messages):
        rng = random.Random(_seed(profile, messages, temperature, seed_sample))
    malformed = form != "text" and judge.malformed_rate > 0 and rng.random() < judge.malformed_rate
    reply_logprobs: list[dict] | None = None
    if form == "json":
        obj, judged = _judge.judge_json(judge, prompt, rng, temperature)
        if malformed:
            kind, text = _malformed_json(obj, prompt, rng)
            extra["malformed"] = kind
        else:
            text = json.dumps(obj, ensure_ascii=False)
            if judge.fence:
                text = f"```json\n{text}\n```"
        if judged is not None:
            extra["quality"] = round(judged.features.quality, 4)
    elif form == "score":
        text, dist, judged = _judge.judge_score(judge, prompt, rng, temperature)
        extra["quality"] = round(judged.features.quality, 4)
        if malformed:
            kind, text = _malformed_score(prompt, rng)
            extra["malformed"] = kind
        if logprobs:
            reply_logprobs = _score_logprobs(text, dist, top_logprobs)
    elif form == "verdict":
        text = _judge.judge_verdict(judge, prompt, rng, temperature)
        if malformed:
            kind = rng.choice(["no_verdict", "bad_label"])
            text = "Both answers have merits." if kind == "no_verdict" else "Verdict: [[D]]"
            extra["malformed"] = kind
    elif is_answer:
        question = prompt.get("question") or prompt.plain.strip()
        text = unknown_answer(question)  # None for a registered item
        if text is None:
            answerer = ANSWERERS.get(profile, ANSWERERS[JUDGE_ANSWERS_AS])
            if rng is None:
                rng = random.Random(_seed(profile, messages, temperature, seed_sample))
            text = answer(answerer, question, rng)
    else:
        text = _textops.text_operation(operation, prompt)
    completion = approx_tokens(text)
    extra["finish_reason"] = "stop"
    if max_tokens is not None and max_tokens >= 0 and completion > max_tokens:
        text = text[: int(len(text) * max_tokens / completion)]
        completion = approx_tokens(text) if text else 0
        extra["finish_reason"] = "length"
        extra["truncated"] = True
    if logprobs and reply_logprobs is None:
        reply_logprobs = _generic_logprobs(text, top_logprobs)
    prompt_tokens = sum(approx_tokens(str(m.get("content") or "")) + 4 for m in messages)
    return SimReply(
        text=text,
        logprobs=reply_logprobs if logprobs else None,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion,
        extra=extra,
    )
