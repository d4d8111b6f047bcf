"""PLACEHOLDER — replaced by the sim engine (helper H2). Signature is the contract."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SimReply:
    text: str
    logprobs: list[dict] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    extra: dict = field(default_factory=dict)


def respond(profile: str, messages: list[dict], *, temperature: float = 0.0, sample: int = 0,
            logprobs: bool = False, top_logprobs: int | None = None,
            max_tokens: int | None = None) -> SimReply:
    text = "placeholder"
    return SimReply(text=text, prompt_tokens=sum(len(m.get("content", "")) for m in messages) // 4,
                    completion_tokens=1)


def profiles() -> list[str]:
    return ["judge-a"]
