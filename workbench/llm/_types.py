"""The value types of the LLM layer: ``Request``, ``Completion``, ``Usage``, ``CallFailure``."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from workbench.llm._keys import cache_key
from workbench.llm._secrets import is_secret_param, public_params, redact

ROLES = ("system", "user", "assistant")

#: The vocabulary of ``CallFailure.error_type``.
ERROR_TYPES = (
    "auth",
    "bad_request",
    "budget",
    "cache_miss",
    "connection_error",
    "empty_reply",
    "malformed",
    "not_found",
    "not_run",
    "other",
    "rate_limit",
    "redirect",
    "server_error",
    "timeout",
    "too_large",
)

#: Error types worth another attempt (with backoff).
RETRYABLE = frozenset({"connection_error", "empty_reply", "malformed", "rate_limit",
                       "server_error", "timeout"})

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


#: What each Request field but ``messages`` and ``params`` may hold: (test, expected).
_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "model": (lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string"),
    "temperature": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
    "sample": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "max_tokens": (lambda v: v is None or _is_int(v) and v >= 1, "an integer >= 1 or None"),
    "response_format": (lambda v: v is None or isinstance(v, Mapping),
                        "a dict such as {'type': 'json_object'} or None"),
    "logprobs": (lambda v: isinstance(v, bool), "True or False"),
    "top_logprobs": (lambda v: v is None or _is_int(v) and 0 <= v <= 20,
                     "an integer 0-20 or None"),
    "top_p": (lambda v: v is None or _is_number(v) and 0 < v <= 1, "a number in (0, 1] or None"),
    "stop": (lambda v: v is None or isinstance(v, str) or isinstance(v, list | tuple)
             and all(isinstance(s, str) for s in v), "a string, a list of strings or None"),
    "seed": (lambda v: v is None or _is_int(v), "an integer or None"),
}


def _check_messages(messages: Any) -> list[dict]:
    if not isinstance(messages, list | tuple) or not messages:
        raise ValueError("Request field 'messages': expected a non-empty list of "
                         f"{{'role', 'content'}} dicts, got {type(messages).__name__}")
    out = []
    for i, message in enumerate(messages):
        where = f"Request field 'messages[{i}]"
        if not isinstance(message, Mapping):
            raise ValueError(f"{where}': expected a dict with 'role' and 'content', "
                             f"got {type(message).__name__}")
        role = message.get("role")
        if role not in ROLES:
            raise ValueError(f"{where}.role': expected one of {', '.join(ROLES)}, got {role!r}")
        content = message.get("content")
        if not isinstance(content, str) and not (
            isinstance(content, list) and all(isinstance(part, Mapping) for part in content)
        ):
            raise ValueError(f"{where}.content': expected a string (or a list of content "
                             f"parts), got {type(content).__name__}")
        out.append(dict(message))
    return out


#: ``Request``'s default ``params``: a new empty dict for each request.
_NEW_DICT: Any = object()


@dataclass(frozen=True, repr=False, init=False)
class Request:
    """One chat-completion request: everything that can change the reply (a malformed
    field raises ``ValueError`` naming it).

    Parameters
    ----------
    model
        A litellm model string: ``sim/judge-a``, ``gpt-4o``, ``anthropic/...``,
        ``openai/<name>`` with ``params={"api_base": ...}`` for local servers.
    messages
        Non-empty list of ``{"role": "system"|"user"|"assistant", "content": str}``.
    temperature, top_p, max_tokens, response_format, logprobs, top_logprobs, stop, seed
        Sampling settings, passed to the provider as in the OpenAI API.
    sample
        The repeat index (0, 1, ...): five trials at temperature 1 are five requests
        with ``sample`` 0-4, five cache entries, five different replies.
    params
        Extra provider keyword arguments (``api_base``, ``api_key``, ...). Secrets
        (``api_key``, headers, tokens) never enter the cache key, the cache or a repr.

    Examples
    --------
    >>> r = Request("sim/judge-a", [{"role": "user", "content": "Hi"}], sample=2)
    >>> r.sample, r.temperature
    (2, 0.0)
    >>> Request("sim/judge-a", [])
    Traceback (most recent call last):
    ...
    ValueError: Request field 'messages': expected a non-empty list of {'role', 'content'} dicts, got list
    """

    model: str
    messages: list[dict]
    temperature: float = 0.0
    sample: int = 0
    max_tokens: int | None = None
    response_format: dict | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    top_p: float | None = None
    stop: str | list[str] | None = None
    seed: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, model: str, messages: list[dict], temperature: float = 0.0,
                 sample: int = 0, max_tokens: int | None = None,
                 response_format: dict | None = None, logprobs: bool = False,
                 top_logprobs: int | None = None, top_p: float | None = None,
                 stop: str | list[str] | None = None, seed: int | None = None,
                 params: Mapping[str, Any] = _NEW_DICT) -> None:
        # The dataclass's own __init__, with every field set at once (a frozen one sets
        # them one ``object.__setattr__`` at a time: a fifth of a warm replay's planning).
        object.__setattr__(self, "__dict__", {
            "model": model, "messages": messages, "temperature": temperature,
            "sample": sample, "max_tokens": max_tokens, "response_format": response_format,
            "logprobs": logprobs, "top_logprobs": top_logprobs, "top_p": top_p, "stop": stop,
            "seed": seed, "params": {} if params is _NEW_DICT else params})
        self.__post_init__()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if _plain(self):  # the usual request: nothing to name, the same values set
            return
        for name in _FIELDS:  # in order: the first malformed field is the one named
            value = getattr(self, name)
            if name == "messages":
                set_(self, name, _check_messages(value))
                continue
            allowed, expected = _RULES[name]
            if not allowed(value):
                got = type(value).__name__ if name == "response_format" else repr(value)
                raise ValueError(f"Request field {name!r}: expected {expected}, got {got}")
            if name == "top_logprobs" and value is not None and not self.logprobs:
                raise ValueError("Request field 'top_logprobs': needs logprobs=True")
        if isinstance(self.stop, tuple):
            set_(self, "stop", list(self.stop))
        if not isinstance(self.params, Mapping):
            raise ValueError(f"Request field 'params': expected a mapping, got {type(self.params).__name__}")
        for name in self.params:
            if not isinstance(name, str):
                raise ValueError(f"Request field 'params': keys must be strings, got {name!r}")
            if name in _RESERVED_PARAMS:
                raise ValueError(f"Request field 'params': {name!r} is not allowed here"
                                 + (" (it is a Request field)" if name in _FIELDS else ""))
        api_base = self.params.get("api_base")
        if api_base is not None and not isinstance(api_base, str):
            raise ValueError(f"Request field 'params': 'api_base' must be a string, got {api_base!r}")
        set_(self, "params", MappingProxyType(dict(self.params)))

    def __hash__(self) -> int:
        return hash(cache_key(self))

    def __repr__(self) -> str:
        shown = {k: "***" if is_secret_param(k) else redact(v) for k, v in self.params.items()}
        parts = [f"model={self.model!r}", f"messages=<{len(self.messages)} messages>",
                 f"temperature={self.temperature!r}", f"sample={self.sample!r}"]
        for name in _FIELDS[4:]:
            value = getattr(self, name)
            if value not in (None, False):
                parts.append(f"{name}={value!r}")
        if shown:
            parts.append(f"params={shown!r}")
        return f"Request({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """The request as plain JSON-able data, without secret params.

        Examples
        --------
        >>> r = Request("gpt-4o", [{"role": "user", "content": "Hi"}],
        ...             params={"api_key": "sk-secret", "timeout": 30})
        >>> r.to_dict()["params"]
        {'timeout': 30}
        """
        out: dict[str, Any] = {name: getattr(self, name) for name in _FIELDS}
        out["messages"] = [dict(m) for m in self.messages]
        if out["response_format"] is not None:
            out["response_format"] = dict(out["response_format"])
        out["params"] = public_params(self.params)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Request:
        """Rebuild a request from :meth:`to_dict` output (unknown keys raise ``ValueError``)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a request must be a JSON object, got {type(data).__name__}")
        unknown = set(data) - set(_FIELDS) - {"params"}
        if unknown:
            raise ValueError(f"unknown request field(s): {', '.join(sorted(unknown))}")
        if "model" not in data or "messages" not in data:
            raise ValueError("a request needs the fields 'model' and 'messages'")
        return cls(**{k: v for k, v in data.items() if v is not None or k in ("model", "messages")})


def _plain(request: Request) -> bool:
    """Set ``messages`` and ``params`` as :meth:`Request.__post_init__` does and return
    True for the usual request (string model, a finite float or int temperature >= 0, int
    sample >= 0, optional int max_tokens >= 1, string-content messages of known roles, no
    other field set, plain dict params with string keys); False (nothing set) for any
    other, which the general path checks field by field, naming the first malformed one.
    The same checks as the general path, by exact type (a bool is no int here)."""
    model, temperature, sample = request.model, request.temperature, request.sample
    max_tokens, messages, params = request.max_tokens, request.messages, request.params
    kind = type(temperature)
    if not (type(model) is str and model.strip()
            and (kind is float and math.isfinite(temperature) or kind is int)
            and temperature >= 0 and type(sample) is int and sample >= 0
            and (max_tokens is None or type(max_tokens) is int and max_tokens >= 1)
            and request.response_format is None and request.logprobs is False
            and request.top_logprobs is None and request.top_p is None
            and request.stop is None and request.seed is None
            and type(params) is dict and type(messages) is list and messages):
        return False
    out = []
    for message in messages:
        if (type(message) is not dict or type(message.get("content")) is not str
                or message.get("role") not in ROLES):
            return False
        out.append(message.copy())
    if params:
        if any(type(name) is not str or name in _RESERVED_PARAMS for name in params):
            return False
        api_base = params.get("api_base")
        if api_base is not None and not isinstance(api_base, str):
            return False
    object.__setattr__(request, "messages", out)
    object.__setattr__(request, "params", MappingProxyType(dict(params)))
    return True


# Request fields but ``params``; params may not shadow them (nor litellm's own call plumbing).
_FIELDS = tuple(f.name for f in fields(Request) if f.name != "params")
_RESERVED_PARAMS = frozenset(_FIELDS) | {"stream", "n", "workbench_sample", "custom_llm_provider"}


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Completion:
    """A successful reply (fresh or replayed from the cache).

    ``cost_usd`` and ``latency_s`` are those of the original call, also on a cache
    replay (``cached=True``), so results tables do not change between runs.
    ``backend`` is ``"sim"`` for simulated models (``sim/...`` or a sim-server),
    otherwise litellm's provider name. ``logprobs`` is ``None`` or a list, one per
    output token, of ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}``.
    ``cost_known`` is ``False`` when the model has no price (not in litellm's cost map
    and no custom pricing in its params): ``cost_usd`` is then 0, not a real cost.
    """

    text: str
    model: str
    usage: Usage
    cost_usd: float
    latency_s: float
    cached: bool
    key: str
    logprobs: list[dict] | None = None
    backend: str = ""
    cost_known: bool = True

    ok = True


_new = object.__new__
_intern = sys.intern
# The slots' own setters (member descriptors), which a frozen class's __setattr__ refuses.
_prompt, _completion_tokens = Usage.prompt_tokens.__set__, Usage.completion_tokens.__set__
_text, _model, _usage = Completion.text.__set__, Completion.model.__set__, Completion.usage.__set__
_cost, _latency = Completion.cost_usd.__set__, Completion.latency_s.__set__
_cached, _key, _logprobs = (Completion.cached.__set__, Completion.key.__set__,
                            Completion.logprobs.__set__)
_backend, _cost_known = Completion.backend.__set__, Completion.cost_known.__set__


def build_completion(text: str, model: str, prompt_tokens: int, completion_tokens: int,
                     cost_usd: float, latency_s: float, cached: bool, key: str,
                     logprobs: list[dict] | None, backend: str, cost_known: bool) -> Completion:
    """A :class:`Completion` with its :class:`Usage`, for the many replies of a replay.

    What the constructors build, without their keyword handling and one
    ``object.__setattr__`` per field of a frozen dataclass (:mod:`dataclasses`, "Frozen
    instances"): each slot is set through its descriptor; model and backend names are
    interned (less memory, fewer objects for the collector). A field added to either
    class must be added here (``tests/llm/test_llm_replay.py`` compares field by field).
    """
    usage = _new(Usage)
    _prompt(usage, prompt_tokens)
    _completion_tokens(usage, completion_tokens)
    completion = _new(Completion)
    _text(completion, text)
    _model(completion, _intern(model) if type(model) is str else model)
    _usage(completion, usage)
    _cost(completion, cost_usd)
    _latency(completion, latency_s)
    _cached(completion, cached)
    _key(completion, key)
    _logprobs(completion, logprobs)
    _backend(completion, _intern(backend) if type(backend) is str else backend)
    _cost_known(completion, cost_known)
    return completion


@dataclass(frozen=True)
class CallFailure:
    """A request that finally failed; it keeps its slot in ``complete_many``'s result.

    ``error_type`` is one of :data:`ERROR_TYPES`; ``message`` is scrubbed of secrets;
    ``attempts`` counts the provider calls made (0 for ``cache_miss``, ``budget`` and
    ``not_run``). ``connection_error``: the host could not be reached;
    ``empty_reply``: a reply without text (``content: null``, ``""`` or only white
    space); ``too_large``: a reply body or text over ``WORKBENCH_MAX_REPLY_BYTES`` /
    ``WORKBENCH_MAX_REPLY_CHARS``; ``redirect``: the server answered with a redirect
    (never followed: the message says where it pointed); ``not_run``: not sent,
    because an earlier stage failed or the model's circuit breaker opened.
    """

    key: str
    error_type: str
    message: str
    attempts: int
    model: str = ""

    ok = False

    def __post_init__(self) -> None:
        if self.error_type not in ERROR_TYPES:
            raise ValueError(f"CallFailure.error_type {self.error_type!r} not in {ERROR_TYPES}")


#: What a request ends as.
Result = Completion | CallFailure
