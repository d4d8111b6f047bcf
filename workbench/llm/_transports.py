"""The pipeline's three transports: what turns a prepared request into a raw reply.

:class:`Sim` answers ``sim/<profile>`` in this process (:func:`workbench.sim.engine.respond`:
no litellm, no HTTP); :class:`Direct` POSTs to an OpenAI-compatible endpoint
(:mod:`workbench.llm._http`, for what :func:`_http.eligible` takes); :class:`Litellm`
sends the rest. A transport knows nothing of pacing, retries, budgets or the cache:
``prepare`` builds a request's call arguments once, ``send`` makes one attempt and
returns a :class:`Reply` or raises; the pipeline (:mod:`workbench.llm._pipeline`)
classifies, retries, checks and stores, the same way for all three.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from workbench.llm import _http, _providers
from workbench.llm._types import Request


@dataclass(slots=True)
class Reply:
    """One raw reply, unchecked: ``usage`` an object or dict, the reply's HTTP ``headers``
    when the transport sees them (rate limits), ``cost_usd`` the transport's own price of
    the call (litellm's) when it has one."""

    text: Any
    usage: Any = None
    logprobs: Any = None
    finish_reason: str | None = None
    model: str | None = None
    headers: Any = None
    cost_usd: float | None = None


def reply_of(response: Any, headers: Any = None, cost_usd: float | None = None) -> Reply:
    """A chat-completions reply -- OpenAI's JSON as a dict (the direct path, batch output
    lines) or litellm's ``ModelResponse`` -- as a :class:`Reply` (the same fields)."""
    get = _providers.get_field
    choices = get(response, "choices")
    if not choices or not isinstance(choices, list | tuple):
        raise ValueError("malformed reply: no choices")
    choice = choices[0]
    return Reply(get(get(choice, "message"), "content"), get(response, "usage"),
                 get(choice, "logprobs"), get(choice, "finish_reason"), get(response, "model"),
                 headers, cost_usd)


class Sim:
    """``sim/<profile>``: :mod:`workbench.sim.engine` in this process. The pipeline calls
    :meth:`answer` for a round of requests at a time (those sent in one event-loop turn),
    in one callback, and records the round in one transaction."""

    async def prepare(self, request: Request, route: _providers.Route,
                      timeout: float) -> dict[str, Any]:
        return {"request": request}

    async def send(self, prepared: dict[str, Any]) -> Reply:
        return self.answer(prepared["request"])

    def answer(self, request: Request) -> Reply:
        """The reply to ``request``, computed at once."""
        from workbench.sim import engine

        profile = request.model[len(_providers.SIM_PREFIX):]
        try:
            reply = engine.respond(profile, list(request.messages),
                                   temperature=float(request.temperature), sample=request.sample,
                                   logprobs=request.logprobs, top_logprobs=request.top_logprobs,
                                   max_tokens=request.max_tokens)
        except ValueError as exc:  # what the sim-server answers: 404, else 400
            raise _http.HTTPStatusError(404 if profile not in engine.profiles() else 400,
                                        f"{request.model}: {exc}") from None
        return Reply(reply.text, {"prompt_tokens": reply.prompt_tokens,
                                  "completion_tokens": reply.completion_tokens},
                     reply.logprobs if request.logprobs else None, "stop", request.model)


async def _openai_kwargs(request: Request, route: _providers.Route, timeout: float,
                         direct: bool) -> dict[str, Any]:
    """The ``acompletion`` keyword arguments of a request (the direct path sends the same
    body), its base URL from the environment on the direct path as litellm reads it, and
    a JSON-schema ``response_format`` in the form a llama.cpp server accepts."""
    kwargs = _providers.call_kwargs(request, route, timeout=timeout)
    if direct and not kwargs.get("api_base"):
        kwargs["api_base"] = _providers.base_url(request.params, route.provider)
    if kwargs.get("api_base") and (kwargs.get("response_format") or {}).get("type") \
            == "json_schema" and await _http.schema_form(kwargs) == "json_object":
        kwargs["response_format"] = _http.as_json_object(kwargs["response_format"])
    return kwargs


class Direct:
    """One pooled HTTP POST to an OpenAI-compatible endpoint (:mod:`workbench.llm._http`)."""

    async def prepare(self, request: Request, route: _providers.Route,
                      timeout: float) -> dict[str, Any]:
        return await _openai_kwargs(request, route, timeout, direct=True)

    async def send(self, prepared: dict[str, Any]) -> Reply:
        payload, headers = await _http.send(prepared)
        return reply_of(payload, headers)


class Litellm:
    """``litellm.acompletion`` (litellm imported on first use; its own retries off).

    A reply's rate-limit headers come from litellm's public logging API: the success
    callback :func:`_keep_headers` reads them from the call's StandardLoggingPayload
    (``kwargs["standard_logging_object"]["hidden_params"]["additional_headers"]``,
    https://docs.litellm.ai/docs/proxy/logging_spec) a few event-loop turns after the
    reply; ``send`` waits at most :data:`_HEADER_TURNS` turns for them (no timer).
    """

    async def prepare(self, request: Request, route: _providers.Route,
                      timeout: float) -> dict[str, Any]:
        if route.sim_server:
            _providers.zero_price(request.model)
        return await _openai_kwargs(request, route, timeout, direct=False)

    async def send(self, prepared: dict[str, Any]) -> Reply:
        litellm = _providers.get_litellm()
        if _keep_headers not in litellm.success_callback:  # (again, if a user reset it)
            litellm.success_callback.append(_keep_headers)
        response = await litellm.acompletion(**prepared)
        ident, headers = getattr(response, "id", None), None
        for _ in range(_HEADER_TURNS if ident else 0):
            headers = _headers.pop(ident, None)
            if headers is not None:
                break
            await asyncio.sleep(0)
        return reply_of(response, headers, _providers.litellm_cost(response))


#: Event-loop turns a litellm reply waits for its headers (they came after 4 in a test).
_HEADER_TURNS = 16
_headers: dict[str, dict[str, Any]] = {}  # reply id -> its x-ratelimit-* headers


async def _keep_headers(kwargs: Any, response: Any, *_: Any) -> None:
    """litellm's success callback (also passed the call's start and end times): the
    reply's ``x-ratelimit-*`` headers, by reply id."""
    payload = kwargs.get("standard_logging_object") or {}
    found = (payload.get("hidden_params") or {}).get("additional_headers") or {}
    ident = getattr(response, "id", None)
    if ident:
        if len(_headers) > 10_000:  # replies nobody waited for (timed out)
            _headers.clear()
        _headers[ident] = {name.removeprefix("llm_provider-").replace("_", "-"): value
                           for name, value in found.items()
                           if name.startswith(("x_ratelimit_", "llm_provider-x-ratelimit-"))}


SIM, DIRECT, LITELLM = Sim(), Direct(), Litellm()


def transport_for(request: Request, route: _providers.Route) -> Sim | Direct | Litellm:
    """The transport that sends ``request``."""
    return (SIM if route.provider == "sim" else
            DIRECT if _http.eligible(request.model, request.params, route.provider) else LITELLM)
