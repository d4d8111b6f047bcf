"""``complete_many(..., mode="ray")``: the uncached requests as one Ray Data job.

Ray Data's LLM processors (``ray.data.llm``, https://docs.ray.io/en/latest/data/working-with-llms.html)
take rows in and give rows out; the engine is configuration (:func:`processor_config`):

* ``http`` (default): :class:`ray.data.llm.HttpRequestProcessorConfig`, one processor per
  OpenAI-compatible endpoint: the request's own ``api_base``, or the replicas named in
  ``WORKBENCH_RAY_ENDPOINTS`` (comma-separated base URLs), which share the rows in turn.
  The body is the one the direct path sends (:func:`workbench.llm._http.body_of`).
* ``vllm`` / ``sglang``: :class:`ray.data.llm.vLLMEngineProcessorConfig` /
  :class:`ray.data.llm.SGLangEngineProcessorConfig` for a model the cluster runs itself
  (``model_source``: the model name after its provider prefix). vLLM and SGLang are
  imported on the cluster's GPU workers only, never here.

Each row is ``(key, request)``; each reply row is checked and stored by the pipeline's
record stage (``record``) as it streams back, before the next is read, under the same key
as an online reply: a killed run loses at most the replies in flight, and its rerun sends
only what is not stored. A reply that is an error, or not JSON, is the same failure row as
online; a request whose block of rows failed in Ray (after the HTTP stage's own retries)
is a failure row naming the job, not cached. ``ray.init()`` starts a local cluster unless
``RAY_ADDRESS`` names one (or Ray is already initialised).
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import os
from collections.abc import Callable
from typing import Any

from workbench.errors import CacheError, ProviderError
from workbench.llm import _http, _providers
from workbench.llm._transports import Reply, reply_of
from workbench.llm._types import CallFailure, Completion, Request, Result

ENGINES = ("http", "vllm", "sglang")
#: Rows per batch sent to an engine actor (``WORKBENCH_RAY_BATCH_SIZE``).
BATCH_SIZE = 16
#: Engine actors per processor (``WORKBENCH_RAY_CONCURRENCY``).
CONCURRENCY = 2
#: CPUs an HTTP actor reserves: it waits on the network, it does not compute.
HTTP_CPUS = 0.25
#: How long a starting local node waits for its agent and its raylet (Ray's settings,
#: as environment variables; the defaults, 30 s, are short on a busy machine).
STARTUP_WAIT = {"RAY_agent_register_timeout_ms": 180_000, "RAY_raylet_start_wait_time_s": 45}
#: Tries to start a local cluster (see :func:`start`).
STARTS = 4


def engine() -> str:
    """``WORKBENCH_RAY_ENGINE``: ``http`` (default), ``vllm`` or ``sglang``."""
    value = (os.environ.get("WORKBENCH_RAY_ENGINE") or "http").strip().lower()
    if value not in ENGINES:
        raise ValueError(f"WORKBENCH_RAY_ENGINE={value!r}: expected one of {', '.join(ENGINES)}")
    return value


def endpoints() -> list[str]:
    """``WORKBENCH_RAY_ENDPOINTS``: base URLs of replicas that share the HTTP rows."""
    return [u.strip() for u in os.environ.get("WORKBENCH_RAY_ENDPOINTS", "").split(",")
            if u.strip()]


def _number(variable: str, default: int) -> int:
    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{variable}={value!r}: expected a whole number >= 1")
    return int(value)


def start(**options: Any) -> Any:
    """The ``ray`` module, initialised: the cluster this process already joined, the one
    ``RAY_ADDRESS`` names, else a local one (no dashboard; ``options`` go to ``ray.init``,
    e.g. ``num_cpus``). A local node whose agent starts too slowly (a busy machine: the
    raylet waits 15 s for it, ray-project/ray#65983) is started again, :data:`STARTS`
    tries in all."""
    try:
        import ray
        import ray.data.llm  # noqa: F401  (the processors; needs pydantic and aiohttp)
    except ImportError as exc:
        raise ProviderError(f"mode='ray' needs Ray Data ({exc}): pip install "
                            "'workbench[ray]' (ray[data])") from None
    if ray.is_initialized():
        return ray
    if os.environ.get("RAY_ADDRESS"):
        ray.init(log_to_driver=False)
        return ray
    for name, value in STARTUP_WAIT.items():
        os.environ.setdefault(name, str(value))
    for attempt in range(1, STARTS + 1):
        try:
            ray.init(include_dashboard=False, log_to_driver=False, **options)
            return ray
        except Exception as exc:  # noqa: BLE001 (Ray raises a bare Exception for this)
            ray.shutdown()
            if attempt == STARTS:
                why = " ".join(str(exc).split())[:200]
                raise ProviderError(f"could not start a local Ray cluster in {STARTS} tries "
                                    f"({why}); start one with `ray start --head` and set "
                                    "RAY_ADDRESS") from None
    return ray


# --- rows -------------------------------------------------------------------------------

def http_target(request: Request, route: _providers.Route, *, timeout: float
                ) -> tuple[str, dict[str, str], dict[str, Any]]:
    """``(base URL, headers, body)`` of ``request`` for the HTTP engine: what the direct
    path would POST (the headers carry credentials: they go in the processor's
    configuration, never in a row)."""
    kwargs = _providers.call_kwargs(request, route, timeout=timeout)
    base = kwargs.get("api_base") or _providers.base_url(request.params, route.provider)
    if not base and route.provider == "openai":
        base = "https://api.openai.com/v1"
    if not base:
        raise ProviderError(f"{request.model}: mode='ray' with the http engine needs an "
                            "OpenAI-compatible endpoint (api_base=..., or "
                            "WORKBENCH_RAY_ENDPOINTS)")
    kwargs["api_base"] = base
    return base, _http._headers(kwargs), _http.body_of(kwargs, route.provider)


def sampling_params(request: Request, engine_: str) -> dict[str, Any]:
    """The sampling parameters of ``request`` in the engine's own names, every field
    present (a block's rows share one schema; ``None`` means unset)."""
    tokens = "max_new_tokens" if engine_ == "sglang" else "max_tokens"
    params = {"temperature": float(request.temperature), tokens: request.max_tokens,
              "top_p": 1.0 if request.top_p is None else float(request.top_p),
              "stop": [request.stop] if isinstance(request.stop, str) else request.stop}
    if engine_ == "vllm":
        params.update(seed=request.seed,
                      logprobs=(request.top_logprobs or 1) if request.logprobs else None)
    else:
        params["sampling_seed"] = request.seed
    return params


def model_source(request: Request) -> str:
    """The model an engine loads: the request's model after its provider prefix
    (``hosted_vllm/Qwen/Qwen2.5-0.5B-Instruct`` -> ``Qwen/Qwen2.5-0.5B-Instruct``)."""
    provider, _, rest = request.model.partition("/")
    return rest if provider in ("openai", "hosted_vllm", "vllm", "sglang") and rest else \
        request.model


def processor_config(engine_: str, *, url: str | None = None,
                     headers: dict[str, str] | None = None, model: str | None = None,
                     timeout: float, max_retries: int, backoff: float) -> Any:
    """The ``ray.data.llm`` configuration of one processor (``url``/``headers`` for
    ``http``, ``model`` for ``vllm``/``sglang``)."""
    from ray.data import llm

    size = _number("WORKBENCH_RAY_BATCH_SIZE", BATCH_SIZE)
    actors = _number("WORKBENCH_RAY_CONCURRENCY", CONCURRENCY)
    if engine_ == "http":
        return llm.HttpRequestProcessorConfig(
            url=url.rstrip("/") + "/chat/completions", headers=headers, batch_size=size,
            concurrency=actors, max_retries=max_retries, base_retry_wait_time_in_s=backoff,
            session_factory=session_factory(timeout),
            http_request_stage={"num_cpus": HTTP_CPUS})
    common = dict(model_source=model, batch_size=size, concurrency=actors,
                  should_continue_on_error=True)
    if engine_ == "vllm":
        return llm.vLLMEngineProcessorConfig(**common)
    return llm.SGLangEngineProcessorConfig(**common)


def session_factory(timeout: float) -> Callable[[], Any]:
    """The HTTP actors' aiohttp session: each POST bounded by ``timeout``, and every
    reply read as ``{"status", "text"}`` (aiohttp's public ``response_class``) so that an
    error status or a body that is not JSON reaches the record stage as a row, checked
    there as the direct path checks it, instead of failing the rows of its block. The
    class is made here so that it travels by value to a cluster without the workbench."""
    import aiohttp

    class Raw(aiohttp.ClientResponse):
        async def json(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return {"status": self.status, "text": await self.text(errors="replace")}

    return functools.partial(aiohttp.ClientSession, response_class=Raw,
                             timeout=aiohttp.ClientTimeout(total=timeout))


def shape(value: Any) -> Any:
    """The structure of a JSON value without its values: the keys of each object and the
    type of each leaf (``int`` and ``float`` apart), so that rows of one shape make an
    Arrow table with no nulls and no widened types.

    Examples
    --------
    >>> shape({"max_tokens": 64, "stop": ["x"]}) == shape({"max_tokens": 8, "stop": ["y"]})
    True
    >>> shape({"max_tokens": 64}) == shape({"max_tokens": 64.0}), shape({}) == shape({"seed": 1})
    (False, False)
    """
    if isinstance(value, dict):
        return tuple(sorted((name, shape(item)) for name, item in value.items()))
    if isinstance(value, list):
        return ("list", tuple(sorted({shape(item) for item in value}, key=repr)))
    return type(value).__name__


def udfs() -> tuple[Callable, Callable, Callable]:
    """``(preprocess, http postprocess, engine postprocess)``: made here, they travel by
    value (a cluster's workers need not have the workbench installed)."""

    def unpack(row: dict[str, Any]) -> dict[str, Any]:
        return json.loads(row["row"])

    def http_reply(row: dict[str, Any]) -> dict[str, Any]:
        reply = row["http_response"]
        return {"key": row["key"], "status": int(reply["status"]), "text": reply["text"]}

    def engine_reply(row: dict[str, Any]) -> dict[str, Any]:
        return {"key": row["key"], "status": 200, "text": row.get("generated_text"),
                "prompt_tokens": int(row.get("num_input_tokens") or 0),
                "completion_tokens": int(row.get("num_generated_tokens") or 0)}

    return unpack, http_reply, engine_reply


# --- the run ----------------------------------------------------------------------------

class RayRun:
    """The Ray Data job of one ``complete_many``: rows out, each reply row recorded by
    ``record`` (the pipeline's record stage) as it comes back, each result handed to
    ``done(key, result)``; ``tick()`` is called between rows (claims kept alive)."""

    def __init__(self, jobs: dict[str, Request], routes: dict[str, _providers.Route], *,
                 record: Callable[..., Completion], done: Callable[[str, Result], None],
                 timeout: float, max_retries: int, backoff: float,
                 tick: Callable[[], None] = lambda: None):
        self.jobs, self.routes, self.record, self.done, self.tick = jobs, routes, record, done, tick
        self.timeout, self.max_retries, self.backoff = timeout, max_retries, backoff
        self.engine = engine()
        self.results: dict[str, Result] = {}

    def datasets(self, ray: Any) -> list[Any]:
        """One dataset per processor: per endpoint (or model) and per row shape, so that a
        block's rows share one schema exactly (Ray Data's blocks are Arrow tables: rows of
        different fields would be padded with nulls, and an integer column with nulls
        becomes floats, ``max_tokens: 64.0``, which providers refuse); the processor
        applied."""
        from ray.data.llm import build_processor

        groups: dict[tuple, list[str]] = {}
        for key, request in self.jobs.items():
            if self.engine == "http":
                base, headers, body = http_target(request, self.routes[key], timeout=self.timeout)
                row = {"key": key, "payload": body}
                group = (base, tuple(sorted(headers.items())), shape(body))
            else:
                row = {"key": key, "messages": list(request.messages),
                       "sampling_params": sampling_params(request, self.engine)}
                group = (model_source(request), shape(row))
            groups.setdefault(group, []).append(json.dumps(row, ensure_ascii=False))
        replicas = endpoints() if self.engine == "http" else []
        if replicas:  # the replicas share every row in turn, with each group's headers
            spread: dict[tuple, list[str]] = {}
            turn = itertools.cycle(replicas)
            for (_, headers, form), rows in groups.items():
                for row in rows:
                    spread.setdefault((next(turn), headers, form), []).append(row)
            groups = spread
        out = []
        unpack, http_reply, engine_reply = udfs()
        for group, rows in groups.items():
            if self.engine == "http":
                config = processor_config("http", url=group[0], headers=dict(group[1]),
                                          timeout=self.timeout, max_retries=self.max_retries,
                                          backoff=self.backoff)
                post = http_reply
            else:
                config = processor_config(self.engine, model=group[0], timeout=self.timeout,
                                          max_retries=self.max_retries, backoff=self.backoff)
                post = engine_reply
            processor = build_processor(config, preprocess=unpack, postprocess=post,
                                        preprocess_map_kwargs={"num_cpus": HTTP_CPUS},
                                        postprocess_map_kwargs={"num_cpus": HTTP_CPUS})
            out.append(processor(ray.data.from_items([{"row": r} for r in rows])))
        return out

    def _dataset(self, ray: Any) -> Any:
        parts = self.datasets(ray)
        return parts[0].union(*parts[1:]) if len(parts) > 1 else parts[0]

    def run(self) -> dict[str, Result]:
        for key, request in self.jobs.items():  # a request without an endpoint: before any call
            if self.engine == "http":
                http_target(request, self.routes[key], timeout=self.timeout)
        ray = start()
        context = ray.data.DataContext.get_current()
        errored, context.max_errored_blocks = context.max_errored_blocks, -1
        bars, context.enable_progress_bars = context.enable_progress_bars, False
        chatter = logging.getLogger("ray.data")  # its per-dataset progress lines: ours show
        level = chatter.level
        chatter.setLevel(max(level, logging.WARNING))
        why = "no reply row for it came back from the Ray job (its block of rows failed " \
              "in Ray: see the Ray log)"
        try:
            for row in self._dataset(ray).iter_rows():
                key = row.get("key")
                if key in self.jobs and key not in self.results:
                    self._finish(key, self._result(key, row))
                self.tick()
        except CacheError:
            raise
        except Exception as exc:  # the job itself failed: what came back is kept
            why = f"the Ray job failed: {' '.join(f'{type(exc).__name__}: {exc}'.split())[:300]}"
        finally:
            context.max_errored_blocks, context.enable_progress_bars = errored, bars
            chatter.setLevel(level)
        for key, request in self.jobs.items():
            if key not in self.results:
                self._finish(key, CallFailure(key, "other", f"ray: {why}; not cached, a rerun "
                                              "sends it again", 1, request.model))
        return self.results

    def _finish(self, key: str, result: Result) -> None:
        self.results[key] = result
        self.done(key, result)

    def _result(self, key: str, row: dict[str, Any]) -> Result:
        """One reply row, checked and recorded as the direct path does (``latency_s`` 0, as
        a batch reply: Ray does not time each call), or its failure row."""
        request = self.jobs[key]
        try:
            error = row.get("__inference_error__")
            if error:
                raise RuntimeError(str(error))
            status, text = int(row.get("status") or 0), row.get("text")
            if status >= 300 or status < 200:
                raise _http.HTTPStatusError(status, _http._error_message(str(text or "")))
            if "prompt_tokens" in row:  # an engine's row
                reply = Reply(text, {"prompt_tokens": row["prompt_tokens"],
                                     "completion_tokens": row["completion_tokens"]},
                              finish_reason=None, model=request.model)
            else:
                try:
                    payload = json.loads(text)
                except (TypeError, ValueError):
                    raise ValueError(f"malformed reply: not JSON ({str(text)[:80]!r})") from None
                if not isinstance(payload, dict):
                    raise ValueError("malformed reply: not a JSON object")
                reply = reply_of(payload)
            return self.record(key, request, reply, latency=0.0, attempts=1)
        except CacheError:
            raise
        except Exception as exc:
            return _providers.failure(key, request, exc, 1, prefix="ray: ",
                                      timeout=self.timeout)
