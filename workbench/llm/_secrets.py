"""Keeping API keys and headers out of cache keys, cache entries and messages.

Two lists decide what happens to a provider keyword argument (``Request.params``):

* *secret* parameters (API keys, tokens, headers) are never stored, never hashed,
  never shown in a ``repr`` and are scrubbed from error messages;
* *transport* parameters (timeouts, retries, pricing hints) are stored with the
  entry but do not enter the cache key, because they cannot change the reply.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

_SECRET_NAMES = frozenset(
    {
        "api_key",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "azure_ad_token",
        "client_secret",
        "extra_headers",
        "headers",
        "vertex_credentials",
    }
)
_SECRET_PATTERN = re.compile(
    r"(^|_)(api_?key|key|secret|token|password|passwd|credentials?|authorization|headers)$",
    re.IGNORECASE,
)

#: Provider arguments that cannot change the reply: stored, but not in the cache key.
TRANSPORT_PARAMS = frozenset(
    {
        "input_cost_per_token",
        "max_retries",
        "metadata",
        "num_retries",
        "output_cost_per_token",
        "request_timeout",
        "timeout",
    }
)

_VALUE_PATTERNS = (
    re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+)?[^\s\"',}]+"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"(?i)((?:api[_-]?key|x-api-key|access[_-]?token)[\"']?\s*[:=]\s*[\"']?)[^\s\"'&,}]+"),
    re.compile(r"()\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"),
    re.compile(r"()\bAIza[0-9A-Za-z_-]{20,}"),
)
_MASK = "***"


def is_secret_param(name: str) -> bool:
    """True for a provider keyword argument that holds a credential or headers."""
    return name in _SECRET_NAMES or bool(_SECRET_PATTERN.search(name))


def public_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` without secret entries (what a cache entry may store)."""
    return {k: v for k, v in params.items() if not is_secret_param(k)}


def key_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` that can change the reply (what the cache key hashes)."""
    return {
        k: v for k, v in params.items() if not is_secret_param(k) and k not in TRANSPORT_PARAMS
    }


def _env_secrets() -> list[str]:
    return [
        value
        for name, value in os.environ.items()
        if value and len(value) >= 6 and is_secret_param(name.lower())
    ]


def scrub(text: str, secrets: Iterable[Any] = ()) -> str:
    """Mask API keys, bearer tokens and Authorization headers in ``text``.

    Parameters
    ----------
    text
        Any message, e.g. a provider's error text.
    secrets
        Known secret values (e.g. the request's ``api_key``) to mask verbatim, in
        addition to credentials found in the environment and key-shaped strings.

    Examples
    --------
    >>> scrub("401: Incorrect API key provided: sk-abcdefghijklmnop1234")
    '401: Incorrect API key provided: ***'
    >>> scrub("headers={'Authorization': 'Bearer abc.def.ghi'}")
    "headers={'Authorization': '***'}"
    """
    out = str(text)
    values = [str(s) for s in secrets if s] + _env_secrets()
    for value in sorted(set(values), key=len, reverse=True):
        if len(value) >= 4:
            out = out.replace(value, _MASK)
    for pattern in _VALUE_PATTERNS:
        out = pattern.sub(lambda m: m.group(1) + _MASK, out)
    return out
