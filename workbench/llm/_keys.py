"""The cache key: sha256 of canonical JSON of everything that can change the reply."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any, Protocol

from workbench.llm._secrets import key_params

KEY_VERSION = 1
_dumps = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode


class Keyed(Protocol):
    """The fields of a request the key reads: :class:`~workbench.llm.Request` has them.

    Typed structurally so that this module needs nothing from ``_types`` (whose
    ``Request.__hash__`` uses :func:`cache_key`).
    """

    model: str
    messages: list[dict]
    temperature: float
    sample: int
    max_tokens: int | None
    response_format: Mapping[str, Any] | None
    logprobs: bool
    top_logprobs: int | None
    top_p: float | None
    stop: str | list[str] | None
    seed: int | None
    params: Mapping[str, Any]


def canonical(value: Any) -> Any:
    """``value`` with numbers normalised (``1.0`` -> ``1``), tuples as lists, nested.

    Examples
    --------
    >>> canonical({"b": [1.0, 2.5, (True, None)], "a": {"t": 0.0}})
    {'b': [1, 2.5, [True, None]], 'a': {'t': 0}}
    """
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot hash a non-finite number: {value!r}")
        return int(value) if value.is_integer() else value
    if isinstance(value, int):
        return value
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    raise ValueError(f"cannot hash a value of type {type(value).__name__}: {value!r}")


def _messages(messages: list[dict]) -> list:
    # Fast path: plain string contents with string-valued extras need no walk.
    for m in messages:
        for v in m.values():
            if not isinstance(v, str):
                return canonical(messages)
    return messages


def key_fields(request: Keyed) -> dict[str, Any]:
    """The fields the cache key hashes, as canonical JSON-able data.

    Everything that can change the reply: the model, messages, sampling settings,
    the repeat index ``sample``, and provider params such as ``api_base`` (a
    different server is a different model). Not: secrets, headers, timeouts,
    retries, pricing hints, concurrency, nor a ``user:password@`` in ``api_base``
    (removed only when present, so every other key is as before).
    """
    fields = {
        "v": KEY_VERSION,
        "model": request.model,
        "messages": _messages(request.messages),
        "temperature": canonical(request.temperature),
        "sample": request.sample,
        "max_tokens": request.max_tokens,
        "response_format": None if request.response_format is None
        else canonical(request.response_format),
        "logprobs": request.logprobs,
        "top_logprobs": request.top_logprobs,
        "top_p": canonical(request.top_p),
        "stop": canonical(request.stop),
        "seed": request.seed,
    }
    if request.params:
        params = key_params(request.params)
        base = params.get("api_base")
        if isinstance(base, str):
            params["api_base"] = base.rstrip("/")
        if params:
            fields["params"] = canonical(params)
    return fields


def cache_key(request: Keyed) -> str:
    """The cache key of ``request``: a 64-character sha256 hex digest.

    It hashes canonical JSON (sorted keys, ``1`` and ``1.0`` alike, nested values
    too) of every field that can change the reply -- model, messages, temperature,
    top_p, max_tokens, response_format, logprobs/top_logprobs, stop, seed, the repeat
    index ``sample`` and non-secret provider params such as ``api_base`` -- and
    nothing that cannot (API keys, headers, URL credentials, timeouts, retries,
    concurrency).

    Examples
    --------
    >>> from workbench.llm import Request
    >>> msgs = [{"role": "user", "content": "Rate this."}]
    >>> k = cache_key(Request("sim/judge-a", msgs, temperature=1))
    >>> k == cache_key(Request("sim/judge-a", msgs, temperature=1.0))
    True
    >>> k == cache_key(Request("sim/judge-a", msgs, temperature=1, sample=1))
    False
    >>> k == cache_key(Request("sim/judge-a", msgs, temperature=1, params={"api_key": "sk-x"}))
    True
    """
    return hash_fields(key_fields(request))


def hash_fields(fields: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``fields`` (:func:`key_fields` output)."""
    return hashlib.sha256(_dumps(fields).encode("utf-8")).hexdigest()
