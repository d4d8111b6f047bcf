"""The cache key: sha256 of canonical JSON of everything that can change the reply."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from json.encoder import c_make_encoder, encode_basestring
from typing import Any

from workbench.llm._secrets import key_params

#: A :class:`~workbench.llm.Request`, not imported: ``_types`` imports this module
#: (``Request.__hash__`` is the cache key), and modules import in one direction.
Keyed = Any

KEY_VERSION = 1
_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                            allow_nan=False)
_dumps = _ENCODER.encode

# The C encoder that ``_dumps`` builds anew at every call, built once: the same settings
# give the same text (no circular check: key fields are trees).
_encode_c = c_make_encoder(None, _ENCODER.default, encode_basestring, None, ":", ",",
                           True, False, False)


def _json(value: Any) -> str:
    return "".join(_encode_c(value, 0))


def canonical(value: Any) -> Any:
    """``value`` with numbers normalised (``1.0`` -> ``1``), tuples as lists, nested.

    Examples
    --------
    >>> canonical({"b": [1.0, 2.5, (True, None)], "a": {"t": 0.0}})
    {'b': [1, 2.5, [True, None]], 'a': {'t': 0}}
    """
    if value is None or isinstance(value, str | int):  # (bools are ints)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot hash a non-finite number: {value!r}")
        return int(value) if value.is_integer() else value
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
    """The fields :func:`cache_key` hashes, as canonical JSON-able data (``api_base``
    is in: a different server is a different model; a ``user:password@`` in it is not,
    removed only when present so that every other key is as before)."""
    fields = {
        "v": KEY_VERSION,
        "model": request.model,
        "messages": _messages(request.messages),
        "temperature": canonical(request.temperature),
        "sample": request.sample,
        "max_tokens": request.max_tokens,
        "response_format": canonical(request.response_format),
        "logprobs": request.logprobs,
        "top_logprobs": request.top_logprobs,
        "top_p": canonical(request.top_p),
        "stop": canonical(request.stop),
        "seed": request.seed,
    }
    params = _params(request)
    if params is not None:
        fields["params"] = params
    return fields


def _params(request: Keyed) -> dict[str, Any] | None:
    """The ``params`` key field of ``request`` (``None``: the key has no such field)."""
    if not request.params:
        return None
    params = key_params(request.params)
    base = params.get("api_base")
    if isinstance(base, str):
        params["api_base"] = base.rstrip("/")
    return canonical(params) if params else None


def cache_key(request: Keyed) -> str:
    """The cache key of ``request``: a 64-character sha256 hex digest of canonical JSON
    (sorted keys, ``1`` and ``1.0`` alike, nested values too) of every field that can
    change the reply (:func:`key_fields`: the repeat index ``sample`` too) and nothing
    that cannot (API keys, headers, URL credentials, timeouts, retries, concurrency).

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
    try:
        text = _key_text(request)
    except Exception:  # a malformed field: the general path raises its own error
        text = None
    if text is None:
        return hash_fields(key_fields(request))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _number(value: Any) -> str:
    """``_json(canonical(value))``, quicker for the plain numbers of ``temperature``/``top_p``."""
    kind = type(value)
    if kind is float:
        if value.is_integer():  # False for inf and nan
            return int.__repr__(int(value))
        if math.isfinite(value):
            return float.__repr__(value)
    elif kind is int:
        return int.__repr__(value)
    return _json(canonical(value))


#: :func:`_key_text`'s template: the key fields' names in sorted order (``params``, when
#: present, comes with its name and comma, after ``model``).
_KEY_TEXT = ('{"logprobs":%s,"max_tokens":%s,"messages":%s,"model":%s%s,"response_format":%s,'
             '"sample":%s,"seed":%s,"stop":%s,"temperature":%s,"top_logprobs":%s,"top_p":%s,'
             '"v":' + str(KEY_VERSION) + '}')
_MESSAGE = '{"content":%s,"role":%s}'


def _key_text(request: Keyed) -> str:
    """The text :func:`hash_fields` hashes for ``key_fields(request)``, written directly:
    the same bytes as ``_dumps(key_fields(request))`` (``tests/llm/test_llm_replay.py``
    compares them) without building the fields dict and a new encoder per request, the
    largest cost of a warm replay's keys. It may raise where ``key_fields`` would not
    (e.g. for a content that is not a string): :func:`cache_key` then takes the general
    path."""
    messages = request.messages
    texts = []
    for message in messages:  # the usual messages: {"role": str, "content": str}
        if len(message) != 2:
            texts = None
            break
        texts.append(_MESSAGE % (encode_basestring(message["content"]),
                                 encode_basestring(message["role"])))
    params = _params(request)
    model, sample = request.model, request.sample
    response_format, stop, logprobs = request.response_format, request.stop, request.logprobs
    max_tokens, seed, top_logprobs = request.max_tokens, request.seed, request.top_logprobs
    top_p = request.top_p
    return _KEY_TEXT % (
        "false" if logprobs is False else _json(logprobs),
        "null" if max_tokens is None else _json(max_tokens),
        _json(_messages(messages)) if texts is None else "[" + ",".join(texts) + "]",
        encode_basestring(model) if type(model) is str else _json(model),
        "" if params is None else ',"params":' + _json(params),
        "null" if response_format is None else _json(canonical(response_format)),
        int.__repr__(sample) if type(sample) is int else _json(sample),
        "null" if seed is None else _json(seed),
        "null" if stop is None else _json(canonical(stop)),
        _number(request.temperature),
        "null" if top_logprobs is None else _json(top_logprobs),
        "null" if top_p is None else _number(top_p),
    )


def hash_fields(fields: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``fields`` (:func:`key_fields` output)."""
    return hashlib.sha256(_dumps(fields).encode("utf-8")).hexdigest()
