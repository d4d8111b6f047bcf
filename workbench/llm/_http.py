"""The direct transport's sender: one ``POST {api_base}/chat/completions`` to an
OpenAI-compatible endpoint with the JSON body litellm's OpenAI provider would send, over
one pooled aiohttp session; the reply comes back as a plain dict.

Why: against a local server (a sim-server, llama.cpp, vLLM) on a 2-core machine the
client's CPU is the limit, and ``litellm.acompletion`` spends about 3 ms of it per call.
Used only where it is equivalent (:func:`eligible`); ``WORKBENCH_HTTP_PATH=litellm``
sends everything through litellm. Cache key, entry and reply are the same either way
(a test compares them field by field against a sim-server).

Structured output: a llama.cpp server takes a JSON schema only as ``{"type":
"json_object", "schema": ...}`` (it answers the ``json_schema`` form with HTTP 500):
:func:`schema_form` tells such a server.

References
----------
OpenAI chat completions API, https://platform.openai.com/docs/api-reference/chat/create ;
llama.cpp server README, "POST /v1/chat/completions" (``response_format`` with a schema).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import sys
import threading
from typing import Any

from workbench import config
from workbench.llm._providers import Redirected, TooLarge, base_url
from workbench.llm._secrets import strip_url_credentials

#: Request params the direct path understands; a request with any other goes via litellm.
DIRECT_PARAMS = frozenset({"api_base", "api_key", "extra_body", "extra_headers", "timeout",
                           "num_retries", "input_cost_per_token", "output_cost_per_token"})
#: Call arguments that steer the client, not the provider: never in a request body.
_PLUMBING = DIRECT_PARAMS | {"model", "max_retries", "base_url", "api_version", "organization"}
_CHUNK = 2**16
_sessions: dict[int, Any] = {}  # id(event loop) -> aiohttp.ClientSession
_forms: dict[str, str] = {}  # api_base -> "json_schema" | "json_object"
#: ``owned_by`` of the models listed by llama.cpp's server (``llamacpp``) and by
#: llama-cpp-python's (``me``, its placeholder owner; checked against version 0.3).
_LLAMA_OWNERS = frozenset({"llamacpp", "me"})


class HTTPStatusError(Exception):
    """A non-2xx reply; ``status_code`` is what :func:`~workbench.llm._providers.classify`
    reads, the message is the server's error message (never the request)."""

    def __init__(self, status_code: int, message: str, headers: Any = None):
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code
        self.headers = headers  # the reply's (``Retry-After``, ``x-ratelimit-*``)


def enabled() -> bool:
    """``WORKBENCH_HTTP_PATH`` is ``direct`` (the default) rather than ``litellm``."""
    value = os.environ.get("WORKBENCH_HTTP_PATH", "direct").strip().lower()
    if value not in ("direct", "litellm"):
        raise ValueError(f"WORKBENCH_HTTP_PATH={value!r}: expected 'direct' or 'litellm'")
    return value == "direct"


def eligible(model: str, params: dict, provider: str) -> bool:
    """Whether a request can take the direct path: an ``openai/<model>`` request with a
    base URL (its ``api_base``, or ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE`` as litellm
    reads them), only params of :data:`DIRECT_PARAMS`, and the path enabled."""
    return (provider == "openai" and model.startswith("openai/")
            and isinstance(base_url(params, provider), str)
            and all(name in DIRECT_PARAMS for name in params) and enabled())


def _url(api_base: str, path: str) -> str:
    return strip_url_credentials(api_base).rstrip("/") + path


def _headers(kwargs: dict) -> dict[str, str]:
    """The headers litellm's OpenAI client sends for these kwargs (whose credentials
    :func:`~workbench.llm._providers.auth` settled)."""
    headers = {"Content-Type": "application/json"}
    if kwargs.get("api_key"):
        headers["Authorization"] = f"Bearer {kwargs['api_key']}"
    for name, value in (kwargs.get("extra_headers") or {}).items():
        if str(name).lower() == "authorization":
            headers.pop("Authorization", None)
        headers[str(name)] = str(value)
    return headers


def body_of(kwargs: dict, provider: str = "openai") -> dict[str, Any]:
    """The JSON body litellm's OpenAI provider sends for these ``acompletion`` kwargs
    (:func:`~workbench.llm._providers.call_kwargs`); also a batch line's body."""
    body = {"model": kwargs["model"].removeprefix(provider + "/")}
    body.update((name, value) for name, value in kwargs.items() if name not in _PLUMBING)
    body.update(kwargs.get("extra_body") or {})
    return body


_loaded: concurrent.futures.Future | None = None  # aiohttp's import in a thread


def preload() -> None:
    """Start importing aiohttp in a thread, once per process, so that the import (0.1 to
    0.35 s on a loaded 2-core machine, half of it the TLS contexts ``aiohttp.connector``
    makes) runs beside a run's set-up, not on its event loop (aiohttp: "imports should
    be done before the event loop starts or in a thread")."""
    global _loaded
    if _loaded is not None or "aiohttp.client" in sys.modules:
        return
    _loaded = future = concurrent.futures.Future()

    def load() -> None:
        try:
            import aiohttp  # noqa: F401

            future.set_result(None)
        except BaseException as exc:  # (raised again where the session is made)
            future.set_exception(exc)

    # not a daemon: an exit meanwhile (a run stopped in its set-up) waits for the import
    # to end, instead of freezing the thread in it while it holds the import locks
    threading.Thread(target=load, name="workbench-import-aiohttp").start()


async def _ready() -> None:
    """Wait, without holding the loop, for :func:`preload`'s import."""
    if _loaded is not None and not _loaded.done():
        with contextlib.suppress(Exception):
            await asyncio.wrap_future(_loaded)


def _session() -> Any:
    """The pooled aiohttp session of the running event loop (one per loop)."""
    import aiohttp

    loop = asyncio.get_running_loop()
    session = _sessions.get(id(loop))
    if session is None or session.closed:
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
        session = aiohttp.ClientSession(connector=connector, json_serialize=json.dumps)
        _sessions[id(loop)] = session
    return session


async def close() -> None:
    """Close the running loop's session (at exit)."""
    session = _sessions.pop(id(asyncio.get_running_loop()), None)
    if session is not None:
        await session.close()


def _error_message(text: str) -> str:
    with contextlib.suppress(ValueError, AttributeError):
        error = json.loads(text).get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)
    return text.strip()[:300] or "(empty body)"


async def _body(reply: Any, limit: int) -> bytes:
    """The reply's body (decompressed), read ``_CHUNK`` bytes at a time; :class:`TooLarge`
    as soon as it passes ``limit`` bytes, or at once when its declared length does."""
    declared = reply.content_length  # of the bytes sent: compressed, if they are
    if declared is not None and declared > limit and not reply.headers.get("Content-Encoding"):
        raise TooLarge(f"the reply body is {declared:,} bytes, more than "
                       f"WORKBENCH_MAX_REPLY_BYTES={limit:,}: not read")
    parts, size = [], 0
    async for part in reply.content.iter_chunked(_CHUNK):
        size += len(part)
        if size > limit:
            raise TooLarge(f"the reply body passed WORKBENCH_MAX_REPLY_BYTES={limit:,} bytes "
                           "(decompressed): not read further")
        parts.append(part)
    return b"".join(parts)


async def send(kwargs: dict) -> tuple[dict[str, Any], Any]:
    """POST the chat request; the reply's JSON as a dict, and the reply's headers (for
    the rate limits they report). A 3xx is never followed (the
    other server's reply would be cached under this request's key) and a body over
    ``WORKBENCH_MAX_REPLY_BYTES`` never read whole (a gzip bomb costs at most that much
    memory); aiohttp's connection errors come as they are; the caller's
    ``asyncio.timeout`` bounds it."""
    await _ready()
    session = _session()
    async with session.post(_url(kwargs["api_base"], "/chat/completions"),
                            data=json.dumps(body_of(kwargs)), headers=_headers(kwargs),
                            allow_redirects=False) as reply:
        if 300 <= reply.status < 400:
            raise Redirected(reply.status, reply.headers.get("Location"))
        data = await _body(reply, config.reply_limit("bytes"))
        try:
            text = data.decode(reply.charset or "utf-8", "replace")
        except LookupError:  # a charset Python does not know
            text = data.decode("utf-8", "replace")
        if reply.status >= 300:
            raise HTTPStatusError(reply.status, _error_message(text), reply.headers)
    try:
        payload = json.loads(text)
    except ValueError:
        raise ValueError(f"malformed reply: not JSON ({text[:80]!r})") from None
    if not isinstance(payload, dict):
        raise ValueError("malformed reply: not a JSON object")
    return payload, reply.headers


async def schema_form(kwargs: dict) -> str:
    """``"json_object"`` when ``api_base`` is a llama.cpp or llama-cpp-python server (its
    ``/models`` names an owner of :data:`_LLAMA_OWNERS`), else ``"json_schema"``. Asked
    once per ``api_base`` (5 s at most); an endpoint that does not answer is taken to
    accept the standard form."""
    base = kwargs["api_base"]
    if base not in _forms:
        form = "json_schema"
        # (an unreachable or odd /models says nothing about the form)
        await _ready()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5):
                async with _session().get(_url(base, "/models"), headers=_headers(kwargs)) as reply:
                    payload = await reply.json(content_type=None) if reply.status == 200 else {}
            owners = {str(m.get("owned_by", "")).lower() for m in payload.get("data") or []
                      if isinstance(m, dict)}
            if owners & _LLAMA_OWNERS:
                form = "json_object"
        _forms[base] = form
    return _forms[base]


def as_json_object(response_format: dict) -> dict:
    """A ``json_schema`` response format in llama.cpp's form.

    Examples
    --------
    >>> as_json_object({"type": "json_schema", "json_schema": {"name": "v",
    ...                 "schema": {"type": "object"}}})
    {'type': 'json_object', 'schema': {'type': 'object'}}
    """
    schema = (response_format.get("json_schema") or {}).get("schema")
    return {"type": "json_object", **({"schema": schema} if schema is not None else {})}
