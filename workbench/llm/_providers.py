"""What every transport shares about providers: routes and key checks, call arguments
and credentials, error classes and :func:`classify`, reply fields, cost, and
:func:`price` (litellm's local cost map).

litellm is imported lazily (it takes seconds), only when a request has to go through
it (or be priced from its cost map); a replay from the cache, a ``sim/`` run and a call
to an OpenAI-compatible URL on the direct path never import it.
"""

from __future__ import annotations

import functools
import gc
import logging
import math
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from workbench import config  # (also sets litellm's offline switches first)
from workbench.errors import ProviderError
from workbench.llm._secrets import (
    scrub,
    secret_values,
    strip_url_credentials,
    url_credentials,
)
from workbench.llm._types import CallFailure, Request

log = logging.getLogger("workbench.llm")


SIM_PREFIX = "sim/"
SIM_SERVER_PREFIX = "sim-"
#: Placeholder key for local OpenAI-compatible servers that need none (not a secret).
LOCAL_KEY = "sk-local-no-key"
_PRICING = ("input_cost_per_token", "output_cost_per_token")
_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai",
            "httpcore", "aiohttp")
_litellm_module: Any = None


def get_litellm() -> Any:
    """Import litellm once, quiet."""
    global _litellm_module
    if _litellm_module is None:
        with warnings.catch_warnings():  # pydantic schema warnings raised inside litellm
            warnings.simplefilter("ignore")
            import litellm
            from litellm.types.utils import ModelResponse

            ModelResponse()  # pydantic builds (and warns about) its schema on first use

        litellm.suppress_debug_info = True
        litellm.set_verbose = False
        # a call cancelled by our timeout may leave a litellm coroutine un-awaited
        warnings.filterwarnings("ignore", category=RuntimeWarning,
                                message=r"coroutine '\w*(Completion|LLM|Handler|Provider)\w*\.\w+' was never awaited")
        for name in _LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
        # litellm, openai and pydantic leave a large, permanent object graph: frozen out of
        # the cyclic collector's view (garbage collected first), a full collection during a
        # run no longer walks it and stalls the event loop for 0.1-0.2 s
        if os.environ.get("WORKBENCH_GC_FREEZE", "1").strip() not in ("0", "false", "no"):
            gc.collect()
            gc.freeze()
        _litellm_module = litellm
    return _litellm_module


@functools.lru_cache(maxsize=256)
def supports_response_schema(model: str) -> bool:
    """litellm's public ``supports_response_schema`` for ``model`` (False where litellm
    does not know the model or its provider): whether its route takes a JSON schema."""
    try:
        return bool(get_litellm().supports_response_schema(model=model, custom_llm_provider=None))
    except Exception:  # an unknown model or provider: no declared support
        return False


def model_backend(model: str) -> str:
    """Backend label from a model string alone: ``sim`` for ``sim/...``, else the litellm
    provider prefix (``openai`` when there is none). Results rows fall back to it when no
    reply says which backend answered (a sim-server is only recognised with its params)."""
    if model.startswith("sim/"):
        return "sim"
    return model.split("/", 1)[0] if "/" in model else "openai"


@dataclass(frozen=True)
class Route:
    """Where one model's requests go."""

    model: str
    provider: str
    backend: str
    sim_server: bool


def is_sim_server(model: str, params: dict | Any) -> bool:
    """``openai/sim-<profile>`` with a base URL (``api_base``, or ``OPENAI_BASE_URL`` /
    ``OPENAI_API_BASE``): a workbench sim-server."""
    return (model.startswith("openai/" + SIM_SERVER_PREFIX)
            and bool(base_url(params, "openai")))


def base_url(params: dict | Any, provider: str) -> str | None:
    """The URL an OpenAI-compatible request goes to (litellm's order of the environment
    variables); ``None``: the provider's own."""
    base = params.get("api_base")
    if not base and provider == "openai":
        base = next((os.environ[n] for n in _BASE_ENV if os.environ.get(n)), None)
    return base or None


def route_id(request: Request) -> tuple:
    """What a request's :class:`Route` depends on (model, ``api_base``, an ``api_key``)."""
    return request.model, request.params.get("api_base"), bool(request.params.get("api_key"))


def route(request: Request) -> Route:
    """Check that ``request.model`` can be called, before any call is made.

    Raises
    ------
    ProviderError
        for an unknown provider or model, an unknown ``sim/`` profile, or a missing
        API key (unless ``api_base`` or ``api_key`` is given: local servers need none).
    """
    model, params = request.model, request.params
    if model.startswith(SIM_PREFIX):
        from workbench.sim import engine

        profile = model[len(SIM_PREFIX):]
        known = list(engine.profiles())
        if profile not in known:
            raise ProviderError(f"unknown simulated model {model!r}: the sim profiles are "
                                f"{', '.join('sim/' + p for p in known)}")
        return Route(model, "sim", "sim", False)
    if model.startswith("openai/") and base_url(params, "openai"):  # litellm not needed
        sim_server = is_sim_server(model, params)
        return Route(model, "openai", "sim" if sim_server else "openai", sim_server)
    litellm = get_litellm()
    try:
        _, provider, _, default_base = litellm.get_llm_provider(
            model=model, api_base=params.get("api_base"))
    except Exception as exc:
        raise ProviderError(
            f"unknown provider or model {model!r}: litellm cannot route it "
            "(use a litellm model string such as 'gpt-4o', 'anthropic/<model>', "
            "'ollama/<model>' or 'openai/<model>' with api_base)"
        ) from ProviderError(scrub(str(exc))[:500])
    if not (base_url(params, provider) or params.get("api_key") or default_base):
        try:
            env = litellm.validate_environment(model=model)
        except Exception:
            env = {"keys_in_environment": True, "missing_keys": []}
        missing = [k for k in env.get("missing_keys", []) if not k.endswith("_API_BASE")]
        if not env.get("keys_in_environment") and missing:
            raise ProviderError(
                f"model {model!r} (provider {provider!r}) needs an API key: set "
                f"{' or '.join(missing)} in the environment, or pass api_key=... "
                "(or api_base=... for a local server)")
    return Route(model, provider, provider, False)  # (a sim-server has a base URL: above)


#: The model names :func:`zero_price` priced 0 in litellm's cost map (for sim-servers only).
_ZERO_PRICED: set[str] = set()


def zero_price(model: str) -> None:
    """Price a sim-server model at 0 in litellm's cost map (before litellm calls it):
    without an entry litellm searches its whole map for a fallback price on every reply
    (milliseconds per call). The map is shared by the whole process, so the names added
    are remembered (:data:`_ZERO_PRICED`): a real server serving a model of the same
    name has no price all the same (:func:`price`, :func:`cost_of`)."""
    litellm = get_litellm()
    name = model.split("/", 1)[1]
    if name not in litellm.model_cost:
        price = {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
                 "litellm_provider": "openai", "mode": "chat"}
        litellm.register_model({model: dict(price), name: dict(price)})
        _ZERO_PRICED.update((model, name))


#: Providers reached at an OpenAI-compatible URL whose credentials :func:`auth` settles.
_OPENAI_LIKE = ("openai", "text-completion-openai")
_BASE_ENV = ("OPENAI_BASE_URL", "OPENAI_API_BASE")  # litellm's order


def auth(params: Any, route_: Route) -> dict[str, Any]:
    """How a request to an OpenAI-compatible endpoint authenticates: the ``api_base``,
    ``api_key`` and ``extra_headers`` to send (only those that change the request's own),
    the same for the direct path, litellm and batch jobs, so a server gets the same
    ``Authorization`` whichever sends it. ``user:password@`` in the URL is sent as
    ``Basic`` auth, never left in the URL: aiohttp refuses a URL with credentials beside
    an ``Authorization`` header ("Cannot combine AUTHORIZATION header ..."), which
    litellm always sends."""
    out: dict[str, Any] = {}
    if route_.provider not in _OPENAI_LIKE and not route_.sim_server:
        return out
    base = base_url(params, route_.provider)
    userinfo = url_credentials(base)
    if userinfo:
        out["api_base"] = strip_url_credentials(base)
    headers = dict(params.get("extra_headers") or {})
    has_header = any(str(name).lower() == "authorization" for name in headers)
    if params.get("api_key"):
        return out
    if userinfo and not has_header:
        out["extra_headers"] = {**headers, "Authorization": "Basic " + basic_token(base)}
    if userinfo or has_header or route_.sim_server:
        out["api_key"] = LOCAL_KEY  # litellm needs one; the header above wins over it
    elif os.environ.get("OPENAI_API_KEY"):
        out["api_key"] = os.environ["OPENAI_API_KEY"]
    elif base:
        out["api_key"] = LOCAL_KEY
    return out


def basic_token(url: Any) -> str | None:
    """The ``Basic`` auth token (base64 of ``user:password``) of a URL's credentials.

    Examples
    --------
    >>> basic_token("http://alice:s%40fe@10.0.0.5:8000/v1"), basic_token("http://h/v1")
    ('YWxpY2U6c0BmZQ==', None)
    """
    if not url_credentials(url):
        return None
    import base64

    parts = urlsplit(url)
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return base64.b64encode(pair.encode()).decode()


def call_kwargs(request: Request, route_: Route, *, timeout: float) -> dict[str, Any]:
    """Keyword arguments for ``litellm.acompletion``: the sampling fields that are set,
    the params, litellm's own retries off, the credentials of :func:`auth`. What the
    direct path and a batch line send too (:func:`workbench.llm._http.body_of`)."""
    kwargs: dict[str, Any] = {"model": request.model, "messages": request.messages,
                              "temperature": request.temperature}
    for name in ("max_tokens", "response_format", "top_logprobs", "top_p", "stop", "seed"):
        value = getattr(request, name)
        if value is not None:
            kwargs[name] = dict(value) if name == "response_format" else value
    if request.logprobs:
        kwargs["logprobs"] = True
    for name, value in request.params.items():
        if name not in _PRICING:
            kwargs[name] = value
    kwargs.update(num_retries=0, max_retries=0, timeout=timeout)
    if route_.sim_server:  # the repeat index, which a sim-server reads from the body
        kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}),
                                "workbench_sample": request.sample}
    kwargs.update(auth(request.params, route_))
    return kwargs


def secrets_of(request: Request) -> list[str]:
    """Secret values carried by a request (to scrub from messages), URL credentials too
    (also as the ``Basic`` token :func:`auth` makes of them)."""
    out: list[str] = url_credentials(request.params.get("api_base"))
    token = basic_token(request.params.get("api_base"))
    if token:
        out.append(token)
    return out + secret_values(request.params)


# --- errors -----------------------------------------------------------------------------

#: HTTP statuses that are not what their class says (another 4xx is a ``bad_request``).
_STATUS_TYPES = {401: "auth", 402: "auth", 403: "auth", 404: "not_found", 408: "timeout",
                 409: "server_error", 429: "rate_limit"}
_NAME_TYPES = (
    ("EmptyReply", "empty_reply"),
    ("TooLarge", "too_large"),
    ("Redirected", "redirect"),
    ("Timeout", "timeout"),
    ("RateLimit", "rate_limit"),
    ("Connect", "connection_error"),
    ("ServiceUnavailable", "server_error"),
    ("InternalServer", "server_error"),
    ("BadGateway", "server_error"),
    ("Authentication", "auth"),
    ("PermissionDenied", "auth"),
    ("NotFound", "not_found"),
    ("ContextWindow", "bad_request"),
    ("ContentPolicy", "bad_request"),
    ("UnsupportedParams", "bad_request"),
    ("BadRequest", "bad_request"),
    ("UnprocessableEntity", "bad_request"),
    ("JSONDecode", "malformed"),
    ("ResponseValidation", "malformed"),
)
_MALFORMED = re.compile(r"(?i)(json ?decode|expecting value|unterminated string|invalid json|"
                        r"malformed|could not parse|failed to parse|extra data)")


#: aiohttp's refusal of a URL with credentials beside an ``Authorization`` header.
_CLIENT_AUTH = "Cannot combine AUTHORIZATION header"


class EmptyReply(ValueError):
    """A reply without text (``content: null``, ``""``, white space): an ``empty_reply``
    failure, retried."""


class TooLarge(ValueError):
    """A reply body or text over its bound (:func:`workbench.config.reply_limit`): a
    ``too_large`` failure, not retried (the same request would get the same reply)."""


class Redirected(Exception):
    """A 3xx answer: never followed (the other server's reply would be cached under this
    request's key, and a 302 turns the POST into a GET); a ``redirect`` failure."""

    def __init__(self, status_code: int, location: str | None):
        where = strip_url_credentials(location) if location else "nowhere (no Location header)"
        super().__init__(f"HTTP {status_code} redirect to {where}: not followed (point "
                         "api_base at the server that answers)")
        self.status_code = status_code


def check_text(text: Any) -> str:
    """``text`` if it is a reply text this layer keeps, else :class:`EmptyReply`,
    :class:`TooLarge` or ``ValueError`` (malformed)."""
    if text is None:
        raise EmptyReply("the reply has no content (content: null)")
    if not isinstance(text, str):
        raise ValueError(f"malformed reply: content is {type(text).__name__}")
    if not text.strip():
        raise EmptyReply(f"the reply's text is {'empty' if not text else 'only white space'}")
    limit = config.reply_limit("chars")
    if len(text) > limit:
        raise TooLarge(f"the reply's text has {len(text):,} characters, more than "
                       f"WORKBENCH_MAX_REPLY_CHARS={limit:,}: not kept")
    return text


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from (``__cause__``/``__context__``)."""
    out: list[BaseException] = []
    while exc is not None and len(out) < 12 and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def _unreachable(exc: BaseException) -> BaseException | None:
    """The exception in ``exc``'s chain saying the host was not reached, if any: litellm
    reports a refused connection or a failed DNS lookup as ``InternalServerError(
    "Connection error.")``, raised from openai's ``APIConnectionError``, itself from
    httpx/aiohttp and the ``OSError``; the chain tells it from a real 5xx."""
    import socket

    for link in _chain(exc)[1:]:
        if isinstance(link, ConnectionError | socket.gaierror) or any(
                "Connect" in cls.__name__ for cls in type(link).__mro__[:3]):
            return link
    return None


def classify(exc: BaseException) -> str:
    """The ``CallFailure.error_type`` of an exception from a provider call.

    Order: credentials the HTTP client refuses to send (``auth``), the exception
    class (litellm/openai names, and this layer's own: ``empty_reply``, ``too_large``,
    ``redirect``), a host that could not be reached anywhere in the exception's chain
    (``connection_error``), then an HTTP status code, then the message (malformed
    bodies). The retryable ones: :data:`~workbench.llm.RETRYABLE`.
    """
    import asyncio

    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return "timeout"
    if any(_CLIENT_AUTH in str(link) for link in _chain(exc)):
        return "auth"  # credentials the client cannot send: another try cannot help
    names = [cls.__name__ for cls in type(exc).__mro__]
    for fragment, kind in _NAME_TYPES:
        if any(fragment in n for n in names[:3]):
            # litellm wraps a reply body that is not JSON in a 500 or connection error
            if kind in ("connection_error", "server_error") and _MALFORMED.search(str(exc)):
                return "malformed"
            if kind == "server_error" and _unreachable(exc) is not None:
                return "connection_error"
            return kind
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if status in _STATUS_TYPES:
            return _STATUS_TYPES[status]
        if status >= 500:
            return "malformed" if _MALFORMED.search(str(exc)) else "server_error"
        if 400 <= status < 500:
            return "bad_request"
    if isinstance(exc, ValueError) and _MALFORMED.search(str(exc)):
        return "malformed"
    if isinstance(exc, ConnectionError | OSError) or _unreachable(exc) is not None:
        return "connection_error"
    return "other"


def error_message(exc: BaseException, request: Request, kind: str | None = None) -> str:
    """A one-line, secret-free description of ``exc``; a ``connection_error`` says which
    host could not be reached (``host[:port]`` of the ``api_base``, else of the failed
    HTTP request in ``exc``'s chain, else the provider's name; never credentials) and why."""
    if kind == "connection_error":
        base = request.params.get("api_base")
        urls = [base] if isinstance(base, str) else []
        found = (getattr(getattr(link, "request", None), "url", None) for link in _chain(exc))
        urls += [str(url) for url in found if url is not None]
        host = next((netloc for url in urls
                     if (netloc := urlsplit(strip_url_credentials(url)).netloc)),
                    f"the {model_backend(request.model)} API")
        cause = _chain(exc)[-1]  # the root cause: refused, no such host, ...
        text = f"could not reach {host}: {type(cause).__name__}: {cause}"
    else:
        text = f"{type(exc).__name__}: {exc}".strip()
    return redacted(" ".join(text.split()), request)[:1000]


def redacted(text: str, request: Request) -> str:
    """``text`` without any credential ``request`` sends, in any form it may be echoed
    (:func:`~workbench.llm._secrets.scrub`): every message stored or shown goes through it."""
    return scrub(text, secrets_of(request))


def failure(key: str, request: Request, exc: BaseException, attempts: int, *,
            kind: str | None = None, prefix: str = "", suffix: str = "",
            timeout: float | None = None) -> CallFailure:
    """The failure row of ``exc``: classified (unless ``kind`` is given), one secret-free
    line between ``prefix`` and ``suffix`` (a timeout without a message says how long)."""
    kind = kind or classify(exc)
    message = error_message(exc, request, kind)
    if kind == "timeout" and not str(exc) and timeout is not None:
        message = f"no reply within {timeout:g} s"
    return CallFailure(key, kind, prefix + message + suffix, attempts, request.model)


# --- replies ----------------------------------------------------------------------------

def get_field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a dict (a direct-path reply), else ``obj.name`` (litellm's objects)."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def normalise_logprobs(raw: Any) -> list[dict] | None:
    """OpenAI chat logprobs (object or dict) as plain ``[{token, logprob, top_logprobs}]``.

    Examples
    --------
    >>> normalise_logprobs({"content": [{"token": "7", "logprob": -0.1, "bytes": [55],
    ...     "top_logprobs": [{"token": "7", "logprob": -0.1}, {"token": "8", "logprob": -2.4}]}]})
    [{'token': '7', 'logprob': -0.1, 'top_logprobs': [{'token': '7', 'logprob': -0.1}, {'token': '8', 'logprob': -2.4}]}]
    """
    if raw is None:
        return None
    content = get_field(raw, "content") if not isinstance(raw, list) else raw
    if content is None:
        return None

    def pair(item: Any) -> dict:
        return {"token": str(get_field(item, "token")), "logprob": float(get_field(item, "logprob"))}

    return [{**pair(item), "top_logprobs": [pair(t) for t in get_field(item, "top_logprobs") or []]}
            for item in content]


def cost_of(request: Request, usage: tuple[int, int], backend: str,
            reply_cost: float | None = None, *, batch: bool = False) -> float:
    """The call's cost in USD (``batch``: answered in a provider batch job). Custom
    pricing in ``params`` (litellm's names, online prices) applies to any model, sim
    included; an unknown price is 0 here (flagged by :class:`Prices`)."""
    params = request.params
    if any(name in params for name in _PRICING):
        cost = (usage[0] * float(params.get("input_cost_per_token", 0.0))
                + usage[1] * float(params.get("output_cost_per_token", 0.0)))
        return BATCH_DISCOUNT * cost if batch else cost
    if backend == "sim":
        return 0.0
    if reply_cost is not None and not batch and request.model not in _ZERO_PRICED:
        return reply_cost  # (litellm's price of a name priced 0 for a sim-server is none)
    cost = (batch_price if batch else price)(request.model, *usage)
    return 0.0 if math.isnan(cost) else cost


def litellm_cost(response: Any) -> float:
    """litellm's price of one of its replies (its public ``completion_cost``; 0 when it
    has none)."""
    try:
        return float(get_litellm().completion_cost(completion_response=response) or 0.0)
    except Exception:  # no price known, or not a number
        return 0.0


#: Models whose missing price this process has already warned about (one warning per
#: model per process: a notebook's or a command's several ``complete_many`` calls).
_WARNED_UNPRICED: set[str] = set()


class Prices:
    """Whether each model's replies have a real price (custom pricing in ``params``, a
    simulated backend, a model in litellm's cost map), else cost 0 flagged
    ``Completion.cost_known=False``: never a crash, never a silent 0. Looked up once per
    run and model; an unpriced model logs one warning per process."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, bool], bool] = {}

    def known(self, request: Request, backend: str) -> bool:
        custom = any(name in request.params for name in _PRICING)
        slot = (request.model, custom)
        if slot not in self._known:
            known = self._known[slot] = (backend == "sim" or custom
                                         or not math.isnan(price(request.model, 1000, 1000)))
            if not known and request.model not in _WARNED_UNPRICED:
                _WARNED_UNPRICED.add(request.model)
                log.warning("%s has no price in litellm's cost map: its calls are recorded at "
                            "$0 and flagged cost_known=false (pass input_cost_per_token/"
                            "output_cost_per_token to price them)", request.model)
        return self._known[slot]


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """USD price of a call of ``model`` with these token counts, from litellm's local cost map.

    0.0 for ``sim/`` models and for zero tokens (litellm is not imported then);
    ``math.nan`` when litellm has no price for ``model`` (test with ``math.isnan``):
    an unknown price is never silently 0.

    Examples
    --------
    >>> price("sim/judge-a", 1000, 10)
    0.0
    >>> price("gpt-4o", 1_000_000, 0) > 0
    True
    >>> import math
    >>> math.isnan(price("no-such-provider/no-such-model", 100, 10))
    True
    """
    if model.startswith(SIM_PREFIX) or not prompt_tokens + completion_tokens:
        return 0.0
    if model in _ZERO_PRICED:  # priced 0 for sim-servers only: their calls are never
        return math.nan        # priced here (backend "sim"), so this is a real server
    try:
        prompt_usd, completion_usd = get_litellm().cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        return float(prompt_usd) + float(completion_usd)
    except Exception:  # litellm raises for a model missing from its cost map
        return math.nan


#: Share of the online price a batch job costs when litellm's cost map has no batch price
#: for the model: OpenAI's Batch API and Anthropic's Message Batches both charge 50%
#: (https://platform.openai.com/docs/guides/batch, https://docs.anthropic.com/en/docs/build-with-claude/batch-processing).
BATCH_DISCOUNT = 0.5


def batch_price(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """USD price of a call of ``model`` sent in a provider batch job.

    litellm's cost map prices batches for many models (``input_cost_per_token_batches``,
    ``output_cost_per_token_batches``): those are used when present; otherwise
    :data:`BATCH_DISCOUNT` times :func:`price`. 0.0 for ``sim/`` models and zero
    tokens; ``math.nan`` when the model has no price at all.

    Examples
    --------
    >>> batch_price("sim/judge-a", 1000, 10)
    0.0
    >>> round(batch_price("gpt-4o", 1_000_000, 0) / price("gpt-4o", 1_000_000, 0), 3)
    0.5
    """
    online = price(model, prompt_tokens, completion_tokens)
    if math.isnan(online) or online == 0.0:
        return online
    try:
        info = get_litellm().get_model_info(model)
        return (prompt_tokens * float(info["input_cost_per_token_batches"])
                + completion_tokens * float(info["output_cost_per_token_batches"]))
    except Exception:  # no batch prices (missing, None, or no model info)
        return BATCH_DISCOUNT * online
