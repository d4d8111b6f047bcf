"""Keeping API keys, headers and URL passwords out of cache keys, entries and messages.

Two lists decide what happens to a provider keyword argument (``Request.params``):

* *secret* parameters (API keys, tokens, passwords, headers, any name with a word
  for a credential in it: :func:`is_secret_param`) are never stored, never hashed,
  never shown in a ``repr`` and are scrubbed from error messages;
* *transport* parameters (timeouts, retries, pricing hints) are stored with the
  entry but do not enter the cache key, because they cannot change the reply.

Both rules hold at any depth (``extra_body={"api_key": ...}`` is a secret too), and
credentials written into a URL (``api_base``, ``base_url``, a proxy:
``"http://user:pass@host/v1"``) are sent, but never stored, hashed or shown
(:func:`redact`). Entries written now and entries that come from elsewhere (``cache
import``, :func:`strip_entry_secrets`) are cleaned by the same function.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

#: Secret names the patterns below miss.
_SECRET_NAMES = frozenset({"aws_access_key_id"})
_SECRET_PATTERN = re.compile(
    r"(^|_)(api_?key|key|secret|token|password|passwd|headers?)$"
    # words that name a credential wherever they stand (``auth``, ``x_auth_token``,
    # ``session_id``, ``request_signature``, ``set_cookie``, ``bearer``)
    r"|(^|_)(auth|authorization|bearer|cookies?|credentials?|session|signature)(_|$)"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

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
    re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic|token|digest)\s+)?"
               r"[^\s\"',}]+"),
    re.compile(r"(?i)((?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"(?i)((?:api[_-]?key|x-api-key|access[_-]?token)[\"']?\s*[:=]\s*[\"']?)[^\s\"'&,}]+"),
    re.compile(r"()\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"),
    re.compile(r"()\bAIza[0-9A-Za-z_-]{20,}"),
    re.compile(r"(://)[^\s/@:]*:[^\s/@]*(?=@)"),  # user:password@ in a URL
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#]*@")
_MASK = "***"


def is_secret_param(name: str) -> bool:
    """True for a provider keyword argument that holds a credential or headers.

    Examples
    --------
    >>> [is_secret_param(n) for n in ("api_key", "x-api-key", "accessToken", "max_tokens")]
    [True, True, True, False]
    >>> [is_secret_param(n) for n in ("auth", "sessionId", "X-Signature", "oauth_scope", "author")]
    [True, True, True, False, False]
    """
    if name in _SECRET_NAMES:
        return True
    return bool(_SECRET_PATTERN.search(_CAMEL.sub("_", name).lower().replace("-", "_")))


def url_credentials(url: Any) -> list[str]:
    """The ``user:password`` of a URL and its parts, as written and unquoted (to scrub)."""
    if not isinstance(url, str) or "@" not in url:
        return []
    userinfo = urlsplit(url).netloc.rpartition("@")[0]
    parts = [userinfo, *userinfo.split(":", 1)]
    return [p for p in dict.fromkeys(parts + [unquote(p) for p in parts]) if p]


def strip_url_credentials(url: str) -> str:
    """``url`` without its ``user:password@`` part; unchanged (same string) when it has none.

    Examples
    --------
    >>> strip_url_credentials("http://me:hunter2@10.0.0.5:8000/v1")
    'http://10.0.0.5:8000/v1'
    >>> strip_url_credentials("http://10.0.0.5:8000/v1/")
    'http://10.0.0.5:8000/v1/'
    """
    if "@" not in url:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _redact(value: Any) -> tuple[Any, int]:
    """:func:`redact`, and how many secret fields and credentialed URLs it removed."""
    if isinstance(value, str):
        if "@" not in value:
            return value, 0
        try:
            clean = strip_url_credentials(value)
        except ValueError:  # not a URL urllib can parse (e.g. "http://a@[b"): the pattern only
            clean = value
        clean = _URL_USERINFO.sub(r"\1", clean)
        return (value, 0) if clean == value else (clean, 1)
    if isinstance(value, Mapping):
        out, removed = {}, 0
        for name, item in value.items():
            if isinstance(name, str) and is_secret_param(name):
                removed += 1
                continue
            out[name], n = _redact(item)
            removed += n
        return (out, removed) if removed else (value, 0)
    if isinstance(value, list | tuple):
        pairs = [_redact(item) for item in value]
        removed = sum(n for _, n in pairs)
        return ([item for item, _ in pairs], removed) if removed else (value, 0)
    return value, 0


def redact(value: Any) -> Any:
    """``value`` without secret-named fields at any depth nor ``user:password@`` in any URL.

    A value that holds neither is returned as it is (the same object), so the cache key
    of a request without secrets never changes.

    Examples
    --------
    >>> redact({"base_url": "http://u:hunter2@h/v1", "extra_body": {"api_key": "sk-x", "top_k": 5},
    ...         "proxies": ["socks5://me:pw@proxy:1080"]})
    {'base_url': 'http://h/v1', 'extra_body': {'top_k': 5}, 'proxies': ['socks5://proxy:1080']}
    >>> params = {"extra_body": {"top_k": 5}}
    >>> redact(params) is params
    True
    """
    return _redact(value)[0]


def public_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` without secrets nor URL credentials, at any depth (what an entry stores)."""
    return dict(redact(params))


def key_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` that can change the reply (what the cache key hashes; no secrets)."""
    return {k: v for k, v in public_params(params).items() if k not in TRANSPORT_PARAMS}


def strip_entry_secrets(entry: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """A cache entry from elsewhere without secrets: ``(clean entry, fields removed)``.

    Removed: top-level fields named like a secret (``api_key``, ``headers``,
    ``access_token``, ...; not the entry's own ``key``), the same inside ``request``,
    and in ``request.params`` what :func:`redact` removes (a ``user:password@`` counts
    as one). The reply fields are kept as they are.

    Examples
    --------
    >>> clean, n = strip_entry_secrets({"key": "k", "api_key": "sk-x", "request": {
    ...     "model": "m", "params": {"api_key": "sk-y", "api_base": "http://u:p@h/v1"}}})
    >>> clean, n
    ({'key': 'k', 'request': {'model': 'm', 'params': {'api_base': 'http://h/v1'}}}, 3)
    """
    out = {name: value for name, value in entry.items()
           if name == "key" or not is_secret_param(name)}
    removed = len(entry) - len(out)
    request = out.get("request")
    if isinstance(request, Mapping):
        request = {name: value for name, value in request.items() if not is_secret_param(name)}
        removed += len(out["request"]) - len(request)
        params = request.get("params")
        if isinstance(params, Mapping):
            params, n = _redact(params)
            removed += n
            request["params"] = dict(params)
        out["request"] = request
    return out, removed


def secret_values(params: Any) -> list[str]:
    """The values of secret-named fields in ``params``, at any depth (what to scrub)."""
    out: list[str] = []
    if isinstance(params, Mapping):
        for name, value in params.items():
            if isinstance(name, str) and is_secret_param(name):
                if isinstance(value, Mapping | list | tuple):
                    out.extend(str(v) for v in _leaves(value))
                elif value:
                    out.append(str(value))
            else:
                out.extend(secret_values(value))
    elif isinstance(params, list | tuple):
        for item in params:
            out.extend(secret_values(item))
    return out


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif value:
        yield value


_SCHEME = re.compile(r"(?i)^\s*(?:bearer|basic|token|digest|apikey)\s+(\S+)\s*$")


def forms(value: str) -> list[str]:
    """Each form a credential the client sent as ``value`` can come back in: as sent, the
    token after its scheme (``Bearer <t>``, ``Basic <t>``), a ``Basic`` token's
    ``user:password`` and the password alone, a ``user:password``'s ``Basic`` token, and
    each with ``/`` escaped as JSON may write it (RFC 7617 for ``Basic``).

    Examples
    --------
    >>> forms("Basic Ym9iOmh1bnRlcjI=")
    ['Basic Ym9iOmh1bnRlcjI=', 'Ym9iOmh1bnRlcjI=', 'bob:hunter2', 'hunter2']
    >>> forms("bob:hunter2")
    ['bob:hunter2', 'hunter2', 'Ym9iOmh1bnRlcjI=']
    """
    import base64
    import binascii

    found = _SCHEME.match(value)
    token = found.group(1) if found else value
    out = [value, token]
    try:
        pair = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        pair = ""
    if ":" in pair and pair.isprintable():
        out += [pair, pair.split(":", 1)[1]]
    elif ":" in token:  # user:password, as a URL carries them
        out += [token.split(":", 1)[1], base64.b64encode(token.encode()).decode()]
    out += [v.replace("/", "\\/") for v in out if "/" in v]
    return [v for v in dict.fromkeys(out) if len(v) >= 4]


def _environment_secrets() -> list[str]:
    """Credentials in the environment: secret-named variables and URL passwords (a base
    URL or proxy written ``http://user:password@host``)."""
    out = []
    for name, value in os.environ.items():
        if not value:
            continue
        if len(value) >= 6 and is_secret_param(name.lower()):
            out.append(value)
        elif "://" in value and "@" in value:
            out.extend(url_credentials(value))
    return out


def scrub(text: str, secrets: Iterable[Any] = ()) -> str:
    """Mask credentials in ``text`` (e.g. a provider's error text that echoes what it
    received): each of the known ``secrets`` (e.g. the request's ``api_key``, headers, URL
    password) and of the credentials in the environment, in every form it can come back
    in (:func:`forms`), and key-shaped strings and ``Authorization`` values.

    Examples
    --------
    >>> scrub("401: Incorrect API key provided: sk-abcdefghijklmnop1234")
    '401: Incorrect API key provided: ***'
    >>> scrub("headers={'Authorization': 'Bearer abc.def.ghi'}")
    "headers={'Authorization': '***'}"
    >>> scrub("got Ym9iOmh1bnRlcjI=, i.e. bob:hunter2", ["Basic Ym9iOmh1bnRlcjI="])
    'got ***, i.e. ***'
    """
    out = str(text)
    values = [form for value in [*(str(s) for s in secrets if s), *_environment_secrets()]
              for form in forms(value)]
    for value in sorted(set(values), key=len, reverse=True):
        out = out.replace(value, _MASK)
    for pattern in _VALUE_PATTERNS:
        out = pattern.sub(lambda m: m.group(1) + _MASK, out)
    return out
