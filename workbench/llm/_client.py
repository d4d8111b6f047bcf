"""``complete`` and ``complete_many``: cache first, then async provider calls.

The replay path is lean on purpose: keys are computed and the cache is read in the
calling thread before any async or litellm machinery starts, so a fully cached run
never imports litellm. Only misses go to :class:`_Runner`, which runs on the private
event loop of :mod:`workbench.llm._loop`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable, Mapping
from typing import Any

from workbench import config
from workbench.errors import BudgetExceeded, CacheMiss, ProviderError
from workbench.llm import _cache, _providers
from workbench.llm._keys import cache_key
from workbench.llm._loop import run_sync
from workbench.llm._throttle import Budget, Pacer
from workbench.llm._types import RETRYABLE, CallFailure, Completion, Request, Usage

Result = Completion | CallFailure
_MAX_BACKOFF_S = 60.0


def complete(
    model: str,
    messages: list[dict],
    *,
    temperature: float = 0.0,
    sample: int = 0,
    max_tokens: int | None = None,
    response_format: dict | None = None,
    logprobs: bool = False,
    top_logprobs: int | None = None,
    top_p: float | None = None,
    stop: str | list[str] | None = None,
    seed: int | None = None,
    **params: Any,
) -> Completion:
    """One chat completion, through the cache.

    Parameters
    ----------
    model
        A litellm model string (``sim/judge-a``, ``gpt-4o``, ``openai/<name>`` with
        ``api_base=...``, ...).
    messages
        ``[{"role": "system"|"user"|"assistant", "content": str}, ...]``.
    temperature, sample, max_tokens, response_format, logprobs, top_logprobs, top_p, stop, seed
        See :class:`Request`; ``sample`` is the repeat index.
    **params
        Provider keyword arguments (``api_base``, ``api_key``, ``timeout``, ...).

    Returns
    -------
    Completion

    Raises
    ------
    CacheMiss
        in ``readonly`` mode when the request is not cached.
    ProviderError
        for an unknown model, a missing API key (both before any call) or a call that
        finally failed; its ``failure`` attribute holds the :class:`CallFailure`.
    ValueError
        naming the field, for a malformed request.

    Examples
    --------
    >>> import tempfile
    >>> from workbench.llm import temporary_settings
    >>> with temporary_settings(cache_dir=tempfile.mkdtemp()):
    ...     reply = complete("sim/judge-a", [{"role": "user", "content": "Say hi."}])
    ...     again = complete("sim/judge-a", [{"role": "user", "content": "Say hi."}])
    >>> reply.backend, reply.cached, again.cached, again.text == reply.text
    ('sim', False, True, True)
    """
    request = Request(model, messages, temperature=temperature, sample=sample,
                      max_tokens=max_tokens, response_format=response_format,
                      logprobs=logprobs, top_logprobs=top_logprobs, top_p=top_p, stop=stop,
                      seed=seed, params=params)
    (result,) = _run([request], progress=False, warn_misses=False)
    if isinstance(result, CallFailure):
        if result.error_type == "cache_miss":
            raise CacheMiss(model, result.key)
        error = ProviderError(f"{model}: {result.error_type} after {result.attempts} "
                              f"attempt(s): {result.message}")
        error.failure = result  # type: ignore[attr-defined]
        raise error
    return result


def complete_many(
    requests: Iterable[Request],
    *,
    concurrency: int | None = None,
    progress: bool = True,
    budget_usd: float | None = None,
    rpm: int | Mapping[str, int] | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> list[Result]:
    """Many requests, concurrently, through the cache; results in request order.

    Parameters
    ----------
    requests
        :class:`Request` objects. Identical requests (same cache key) are sent once
        and fill every slot.
    concurrency
        Calls in flight per model (default ``WORKBENCH_CONCURRENCY``, 16).
    progress
        Show a tqdm bar (``tqdm.auto``: a widget in JupyterLab).
    budget_usd
        Stop before the next call would cross this spend (cached replays are free).
        The first call of each model is its price probe; after it, a call is only
        started if the spend so far, plus the calls in flight, plus the highest cost
        seen for that model stays within the budget.
    rpm
        Requests per minute, one number or ``{model: rpm}`` (default: the
        :func:`configure` setting, else unlimited).
    timeout, max_retries
        Per-call timeout in seconds and retries of retryable errors (defaults
        ``WORKBENCH_TIMEOUT``, ``WORKBENCH_MAX_RETRIES``). A request's own
        ``params["timeout"]`` / ``params["num_retries"]`` win.

    Returns
    -------
    list of Completion or CallFailure
        One per request, in order. A request that finally failed is a
        :class:`CallFailure` in its slot (``cache_miss`` in ``readonly`` mode).

    Raises
    ------
    ProviderError
        before any call, for an unknown model or a missing API key.
    BudgetExceeded
        when the budget stopped the run; ``.partial`` holds the list above, with
        ``CallFailure(error_type="budget")`` for the requests not run.
    """
    return _run(requests, concurrency=concurrency, progress=progress, budget_usd=budget_usd,
                rpm=rpm, timeout=timeout, max_retries=max_retries)


def _run(requests: Iterable[Request], *, concurrency: int | None = None, progress: bool = True,
         budget_usd: float | None = None, rpm: int | Mapping[str, int] | None = None,
         timeout: float | None = None, max_retries: int | None = None,
         warn_misses: bool = True) -> list[Result]:
    requests = list(requests)
    if budget_usd is not None and not budget_usd >= 0:
        raise ValueError(f"budget_usd={budget_usd!r}: expected a number >= 0")
    if concurrency is not None and (not isinstance(concurrency, int) or concurrency < 1):
        raise ValueError(f"concurrency={concurrency!r}: expected an integer >= 1")
    mode = config.cache_mode()
    results: list[Result | None] = [None] * len(requests)
    cache = _cache.open_cache() if mode != "off" else None
    read = mode in ("readwrite", "readonly")
    todo: dict[str, list[int]] = {}
    keys = []
    for i, request in enumerate(requests):
        if type(request) is not Request and not isinstance(request, Request):
            raise ValueError(f"requests[{i}]: expected a workbench.llm.Request, "
                             f"got {type(request).__name__}")
        keys.append(cache_key(request))
    stored = (_cache.bulk_read(cache, keys) if read and len(keys) > 1 else None) or {}
    found: dict[str, Completion | None] = {}
    lookup = _cache.lookup
    for i, key in enumerate(keys):
        hit = found.get(key, False) if read else None
        if hit is False:
            hit = found[key] = lookup(cache, key, stored.get(key, False))
        if hit is None:
            slots = todo.get(key)
            if slots is None:
                todo[key] = [i]
            else:
                slots.append(i)
        else:
            results[i] = hit

    bar = _progress_bar(len(requests), progress)
    try:
        bar.update(len(requests) - sum(len(s) for s in todo.values()))
        if todo and mode == "readonly":
            for key, slots in todo.items():
                request = requests[slots[0]]
                _cache.record_miss(request, key)
                failure = CallFailure(key, "cache_miss", f"not cached (readonly mode): "
                                      f"model={request.model!r} key={key}", 0, request.model)
                for i in slots:
                    results[i] = failure
            if warn_misses:
                _cache.log.warning("%d request(s) not in the cache (readonly mode); run "
                                   "`workbench cache explain --last` to see why", len(todo))
        elif todo:
            jobs = {key: requests[slots[0]] for key, slots in todo.items()}
            routes: dict[tuple, _providers.Route] = {}
            for request in jobs.values():
                route_id = (request.model, request.params.get("api_base"),
                            bool(request.params.get("api_key")))
                if route_id not in routes:
                    routes[route_id] = _providers.route(request)
            runner = _Runner(
                jobs, routes, slots={k: len(v) for k, v in todo.items()},
                cache=cache if mode in ("readwrite", "refresh") else None, bar=bar,
                concurrency=concurrency, budget_usd=budget_usd, rpm=rpm, timeout=timeout,
                max_retries=max_retries,
            )
            outcome = run_sync(runner.run())
            for key, slots in todo.items():
                for i in slots:
                    results[i] = outcome[key]
            if runner.budget is not None and runner.budget.stopped:
                raise BudgetExceeded(
                    f"budget of ${budget_usd:.4f} reached after spending "
                    f"${runner.budget.spent:.4f}: {runner.budget.refused} request(s) not run",
                    partial=list(results), spent_usd=runner.budget.spent)
    finally:
        bar.close()
    return results  # type: ignore[return-value]


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, progress: bool) -> Any:
    if not progress or total == 0:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="LLM calls", unit="call", mininterval=0.2,
                dynamic_ncols=True)


class _Runner:
    """The provider calls of one ``complete_many``: one task per distinct request."""

    def __init__(self, jobs: dict[str, Request], routes: dict[tuple, _providers.Route], *,
                 slots: dict[str, int], cache: Any, bar: Any, concurrency: int | None,
                 budget_usd: float | None, rpm: Any, timeout: float | None,
                 max_retries: int | None):
        self.jobs = jobs
        self.routes = routes
        self.slots = slots
        self.cache = cache
        self.bar = bar
        self.concurrency = concurrency or config.env_int("WORKBENCH_CONCURRENCY", 16)
        if self.concurrency < 1:
            raise ValueError(f"concurrency={self.concurrency!r} must be >= 1")
        self.timeout = timeout if timeout is not None else config.env_float("WORKBENCH_TIMEOUT", 120.0)
        self.max_retries = (max_retries if max_retries is not None
                            else config.env_int("WORKBENCH_MAX_RETRIES", 4))
        self.backoff = config.env_float("WORKBENCH_RETRY_BACKOFF", 1.0)
        self.rpm = rpm
        self.budget_usd = budget_usd
        self.budget: Budget | None = None
        self.rng = random.Random()  # jitter only: it never changes a result
        self.litellm = _providers.get_litellm()

    def _route(self, request: Request) -> _providers.Route:
        return self.routes[(request.model, request.params.get("api_base"),
                            bool(request.params.get("api_key")))]

    async def run(self) -> dict[str, Result]:
        self.budget = Budget(self.budget_usd) if self.budget_usd is not None else None
        self.semaphores: dict[str, asyncio.Semaphore] = {}
        self.pacers: dict[str, Pacer | None] = {}
        tasks = {key: asyncio.ensure_future(self._job(key, request))
                 for key, request in self.jobs.items()}
        try:
            await asyncio.gather(*tasks.values())
        except BaseException:
            for task in tasks.values():
                task.cancel()
            raise
        return {key: task.result() for key, task in tasks.items()}

    async def _job(self, key: str, request: Request) -> Result:
        model = request.model
        semaphore = self.semaphores.get(model)
        if semaphore is None:
            semaphore = self.semaphores[model] = asyncio.Semaphore(self.concurrency)
            limit = _cache.rpm_for(model, self.rpm)
            self.pacers[model] = Pacer(limit) if limit else None
        async with semaphore:
            reservation = None
            if self.budget is not None:
                reservation = await self.budget.admit(model)
                if reservation is None:
                    result: Result = CallFailure(key, "budget", "not run: the budget would be "
                                                 f"crossed (limit ${self.budget.limit:.4f})", 0, model)
                    self.bar.update(self.slots[key])
                    return result
            cost = None
            try:
                result = await self._attempts(key, request)
                if isinstance(result, Completion):
                    cost = result.cost_usd
            finally:
                if self.budget is not None and reservation is not None:
                    await self.budget.settle(model, reservation, cost)
            self.bar.update(self.slots[key])
            return result

    async def _attempts(self, key: str, request: Request) -> Result:
        route = self._route(request)
        timeout = float(request.params.get("timeout") or self.timeout)
        retries = request.params.get("num_retries")
        retries = self.max_retries if retries is None else int(retries)
        kwargs = _providers.call_kwargs(request, route, timeout=timeout)
        pacer = self.pacers[request.model]
        attempts = 0
        while True:
            if pacer is not None:
                await pacer.wait()
            attempts += 1
            started = time.perf_counter()
            try:
                async with asyncio.timeout(timeout):  # wait_for without its extra task
                    response = await self.litellm.acompletion(**kwargs)
                latency = time.perf_counter() - started
                completion, entry = self._reply(key, request, route, response, latency, attempts)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # classified; never lost
                kind = _providers.classify(exc)
                if kind in RETRYABLE and attempts <= retries:
                    await asyncio.sleep(self._backoff(attempts))
                    continue
                message = _providers.error_message(exc, request)
                if kind == "timeout" and not str(exc):
                    message = f"no reply within {timeout:g} s"
                return CallFailure(key, kind, message, attempts, request.model)
            if self.cache is not None:
                _cache.store(self.cache, entry)
            return completion

    def _backoff(self, attempt: int) -> float:
        ceiling = min(_MAX_BACKOFF_S, self.backoff * 2 ** (attempt - 1))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def _reply(self, key: str, request: Request, route: _providers.Route, response: Any,
               latency: float, attempts: int) -> tuple[Completion, dict]:
        choices = getattr(response, "choices", None)
        if not choices:
            raise ValueError("malformed reply: no choices")
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None)
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise ValueError(f"malformed reply: content is {type(text).__name__}")
        logprobs = _providers.normalise_logprobs(getattr(choice, "logprobs", None))
        raw_usage = getattr(response, "usage", None)
        usage = Usage(int(getattr(raw_usage, "prompt_tokens", 0) or 0),
                      int(getattr(raw_usage, "completion_tokens", 0) or 0))
        cost = _providers.cost_of(request, response, (usage.prompt_tokens,
                                                       usage.completion_tokens), route.backend)
        entry = _cache.make_entry(
            key, request, text=text, logprobs=logprobs, usage=usage, cost_usd=cost,
            latency_s=round(latency, 6), backend=route.backend,
            finish_reason=getattr(choice, "finish_reason", None),
            provider_model=getattr(response, "model", None), attempts=attempts)
        completion = Completion(text=text, model=request.model, usage=usage, cost_usd=cost,
                                latency_s=round(latency, 6), cached=False, key=key,
                                logprobs=logprobs, backend=route.backend)
        return completion, entry
