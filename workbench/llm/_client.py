"""``complete`` and ``complete_many``: cache first, then async provider calls.

The replay path is lean on purpose: keys are computed and the cache is read in the
calling thread before any async or litellm machinery starts, so a fully cached run
never imports litellm. Every replayed entry is checked first (a corrupt one is a
miss, reported once per run). Only misses go to :class:`_Runner`, which runs on the
private event loop of :mod:`workbench.llm._loop`; before it starts, a store that
cannot take the replies (read-only, or a disk with less than
:data:`~workbench.llm._cache.MIN_FREE_BYTES` free) stops the run with one
:class:`~workbench.errors.CacheError`, and after it the WAL is checkpointed so that
``cache.db`` alone holds every entry.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from typing import Any

from workbench import config
from workbench.errors import BudgetExceeded, CacheError, CacheMiss, ProviderError
from workbench.llm import _cache, _http, _providers
from workbench.llm._keys import cache_key
from workbench.llm._loop import run_sync
from workbench.llm._settings import rpm_for
from workbench.llm._throttle import RATE_LIMIT_RETRIES, Budget, Gate, prompt_estimate
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
    CacheError
        when the cache store is damaged, or must take the reply but is read-only or
        on a full disk (the message names the folder).
    ProviderError
        for an unknown model, a missing API key (both before any call) or a call that
        finally failed; its ``failure`` attribute holds the :class:`CallFailure`.
    ValueError
        naming the field, for a malformed request.

    Notes
    -----
    Threads calling ``complete`` with the same request at the same time send it once.

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
    mode: str | None = None,
    poll_interval: float | None = None,
    deadline: float | None = None,
) -> list[Result]:
    """Many requests, concurrently, through the cache; results in request order.

    Parameters
    ----------
    requests
        :class:`Request` objects. Identical requests (same cache key) are sent once
        and fill every slot; so are requests another run is sending at the same time
        (another thread of this process, or, through short-lived claims in a shared
        store in ``readwrite`` mode, another process: its reply is then replayed).
    concurrency
        Calls in flight per model at most (default: the ``concurrency`` setting): the
        ceiling of the gate of each (provider, model, endpoint)
        (:class:`~workbench.llm._throttle.Gate`), which holds the provider's quota as
        its ``x-ratelimit-*`` headers and 429s teach it (``Retry-After`` honoured;
        such 429s do not use up ``max_retries``).
    progress
        Show a tqdm bar (``tqdm.auto``: a widget in JupyterLab) of the calls made, from
        the count replayed from the cache; a run that sends nothing prints one line
        instead (``LLM calls: N replayed from cache``).
    budget_usd
        Stop before the next call would cross this spend (cached replays are free).
        The first call of each model is its price probe; after it, a call is only
        started if the spend so far, plus the calls in flight, plus the highest cost
        seen for that model stays within the budget.
    rpm
        Requests per minute, one number or ``{model: rpm}`` (default: the
        :func:`configure` setting, else ``WORKBENCH_RPM``, else the provider's quota as
        learned); ``WORKBENCH_TPM`` caps the tokens per minute (prompt estimate plus
        ``max_tokens``, charged before each call).
    timeout, max_retries
        Per-call timeout in seconds and retries of retryable errors (defaults: the
        ``timeout`` and ``max_retries`` settings). A request's own
        ``params["timeout"]`` / ``params["num_retries"]`` win.
    mode
        ``"online"`` (one call per request) or ``"batch"`` (default: the ``call_mode``
        setting, ``WORKBENCH_CALL_MODE``, else online): the uncached requests go to
        the provider as batch jobs (:mod:`workbench.llm._batch`: half the price, hours
        not seconds), polled every ``poll_interval`` seconds at first (default: the
        ``batch_poll`` setting, 30; doubling, at most 300), their replies cached under
        the same keys as online ones; a killed run resumes the jobs it submitted. In-process ``sim/`` models are answered
        online; ``budget_usd`` is refused (price a design with
        :func:`workbench.judges.estimate` first). ``"auto"``: online what can be
        answered within ``deadline`` seconds at the quota the gate observes (a call
        still waiting for its turn when it could no longer finish in time is not sent),
        the rest in batch jobs as above (providers with batch jobs, and a cache to
        hold their replies; otherwise everything goes online).
    deadline
        Seconds from now, for ``mode="auto"`` (required there).

    Returns
    -------
    list of Completion or CallFailure
        One per request, in order. A request that finally failed is a
        :class:`CallFailure` in its slot (``cache_miss`` in ``readonly`` mode). After
        ``circuit_breaker`` (a setting) consecutive ``connection_error`` failures of a
        model, its requests still waiting are ``not_run`` at once, and one warning
        says so; the progress bar counts failures as they come (``failed=N``).

    Raises
    ------
    ProviderError
        before any call, for an unknown model or a missing API key.
    CacheError
        before any call, when the cache store cannot take the replies (read-only, or
        less than 32 MB free on its disk); during the run, when a write finds the
        disk full (replies already written are kept); or for a damaged store.
    BudgetExceeded
        when the budget stopped the run; ``.partial`` holds the list above, with
        ``CallFailure(error_type="budget")`` for the requests not run.
    """
    mode = config.call_mode() if mode is None else mode
    if mode not in (*config.CALL_MODES, "auto"):
        raise ValueError(f"mode={mode!r}: expected 'online', 'batch' or 'auto'")
    if (mode == "auto") != (deadline is not None):
        raise ValueError("deadline=... goes with mode='auto' (and mode='auto' needs one)")
    if deadline is not None and not deadline > 0:
        raise ValueError(f"deadline={deadline!r}: expected a number of seconds > 0")
    if mode in ("batch", "auto") and budget_usd is not None:
        raise ValueError("budget_usd cannot stop a batch job once submitted: estimate the "
                         "cost first (workbench.judges.estimate), or use mode='online'")
    if poll_interval is None:
        poll_interval = float(config.call_setting("batch_poll"))
    if not poll_interval > 0:
        raise ValueError(f"poll_interval={poll_interval!r}: expected a number > 0")
    return _run(requests, concurrency=concurrency, progress=progress, budget_usd=budget_usd,
                rpm=rpm, timeout=timeout, max_retries=max_retries,
                batch_poll=poll_interval if mode in ("batch", "auto") else None,
                deadline=None if deadline is None else time.monotonic() + deadline)


def _run(requests: Iterable[Request], *, concurrency: int | None = None, progress: bool = True,
         budget_usd: float | None = None, rpm: int | Mapping[str, int] | None = None,
         timeout: float | None = None, max_retries: int | None = None,
         warn_misses: bool = True, batch_poll: float | None = None,
         deadline: float | None = None) -> list[Result]:
    requests = list(requests)
    if budget_usd is not None and not budget_usd >= 0:
        raise ValueError(f"budget_usd={budget_usd!r}: expected a number >= 0")
    if concurrency is not None and (not isinstance(concurrency, int) or concurrency < 1):
        raise ValueError(f"concurrency={concurrency!r}: expected an integer >= 1")
    mode = config.cache_mode()
    cache = (None if mode == "off" else
             _cache.open_reader() if mode == "readonly" else _cache.open_cache())
    for i, request in enumerate(requests):
        if type(request) is not Request and not isinstance(request, Request):
            raise ValueError(f"requests[{i}]: expected a workbench.llm.Request, "
                             f"got {type(request).__name__}")
    keys = [cache_key(request) for request in requests]
    distinct = list(dict.fromkeys(keys))
    return _run_keyed(requests, keys, distinct, mode, cache, concurrency=concurrency,
                      progress=progress, budget_usd=budget_usd, rpm=rpm, timeout=timeout,
                      max_retries=max_retries, warn_misses=warn_misses, batch_poll=batch_poll,
                      deadline=deadline)


def _run_keyed(requests: list[Request], keys: list[str], distinct: list[str], mode: str,
               cache: Any, *, concurrency: int | None, progress: bool,
               budget_usd: float | None, rpm: int | Mapping[str, int] | None,
               timeout: float | None, max_retries: int | None, warn_misses: bool,
               batch_poll: float | None, deadline: float | None = None) -> list[Result]:
    hits: dict[str, Completion] = {}
    corrupt: dict[str, str] = {}
    if mode in ("readwrite", "readonly"):
        hits, corrupt = _replay(cache, distinct)
        if corrupt:
            _cache.log.warning(
                "cache %s: %d entr%s failed the replay check (e.g. %s): %s; `workbench cache "
                "check` lists them", cache.directory, len(corrupt),
                "y" if len(corrupt) == 1 else "ies", next(iter(corrupt.values())),
                "treated as misses" if mode == "readonly" else "sent again and overwritten")
    todo: dict[str, list[int]] = {}
    if len(hits) == len(distinct):  # all cached: every slot is a hit
        results: list[Result | None] = [hits[key] for key in keys]
    else:
        results = [None] * len(requests)
        for i, key in enumerate(keys):
            hit = hits.get(key)
            if hit is None:
                todo.setdefault(key, []).append(i)
            else:
                results[i] = hit

    replayed = len(requests) - sum(len(s) for s in todo.values())
    if progress and requests and (not todo or mode == "readonly"):  # nothing to wait for
        _progress_line(replayed, len(requests) - replayed)
    bar = _progress_bar(len(requests), progress and bool(todo) and mode != "readonly",
                        replayed)
    try:
        if todo and mode == "readonly":
            for key, slots in todo.items():
                request = requests[slots[0]]
                _cache.record_miss(request, key)
                why = f"corrupt entry: {corrupt[key]}" if key in corrupt else "not cached"
                failure = CallFailure(key, "cache_miss", f"{why} (readonly mode): "
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
                route_id = _route_id(request)
                if route_id not in routes:
                    routes[route_id] = _providers.route(request)
            with (_cache.writing(cache.directory) if cache is not None else nullcontext()):
                if cache is not None:  # the live store: a repair may have replaced it
                    cache = _cache.open_cache(cache.directory)
                    _cache.require_writable(cache)
                batched: dict[str, Result] = {}
                if batch_poll is not None and deadline is None:
                    batched = _run_batches(jobs, routes, cache, bar, batch_poll,
                                           {k: len(v) for k, v in todo.items()})
                    jobs = {key: request for key, request in jobs.items()
                            if key not in batched}
                runner = _Runner(
                    jobs, routes, slots={k: len(v) for k, v in todo.items()}, cache=cache,
                    claims=mode == "readwrite", bar=bar, concurrency=concurrency,
                    budget_usd=budget_usd, rpm=rpm, timeout=timeout, max_retries=max_retries,
                    deadline=deadline if cache is not None else None,
                )
                try:
                    outcome = {**batched, **run_sync(runner.run())}
                finally:
                    if runner.written:
                        _cache.checkpoint(cache)
                deferred = {key: jobs[key] for key, result in outcome.items()
                            if result is DEFERRED}
                if deferred:  # mode="auto": what could not be answered online in time
                    outcome.update(_run_batches(deferred, routes, cache, bar, batch_poll,
                                                {k: len(todo[k]) for k in deferred}))
            for key, slots in todo.items():
                for i in slots:
                    results[i] = outcome[key]
            for model, why in runner.down.items():
                if runner.skipped[model]:
                    _cache.log.warning("%s: %s; %d request(s) of this model were not run",
                                       model, why, runner.skipped[model])
            if runner.budget is not None and runner.budget.stopped:
                raise BudgetExceeded(
                    f"budget of ${budget_usd:.4f} reached after spending "
                    f"${runner.budget.spent:.4f}: {runner.budget.refused} request(s) not run",
                    partial=list(results), spent_usd=runner.budget.spent)
    finally:
        bar.close()
    return results  # type: ignore[return-value]


def _run_batches(jobs: dict[str, Request], routes: dict[tuple, _providers.Route], cache: Any,
                 bar: Any, poll_interval: float, slots: dict[str, int]) -> dict[str, Result]:
    """The replies to the ``jobs`` that go in provider batch jobs (all but in-process
    ``sim/`` models), via :class:`~workbench.llm._batch.BatchRun`."""
    from workbench.llm import _batch

    mine = {key: request for key, request in jobs.items()
            if routes[_route_id(request)].provider != "sim"}
    if not mine:
        return {}
    by_key = {key: routes[_route_id(request)] for key, request in mine.items()}
    for route in dict.fromkeys(by_key.values()):
        _batch.check(route)
    failed = Counter()

    def done(key: str, result: Result) -> None:
        if isinstance(result, CallFailure):
            failed["n"] += slots[key]
            bar.set_postfix(failed=failed["n"], refresh=False)
        bar.update(slots[key])

    run = _batch.BatchRun(mine, by_key, cache=cache, poll_interval=poll_interval, done=done)
    try:
        return run_sync(run.run())
    finally:
        if run.written:
            _cache.checkpoint(cache)


def _replay(cache: _cache.Store, keys: list[str]) -> tuple[dict[str, Completion], dict[str, str]]:
    """The cached completions of ``keys``, and the corrupt entries met (key -> why)."""
    return _cache.replay_many(_cache.iter_stored(cache, keys))


class _Deferred:
    """The runner's answer for a request ``mode="auto"`` sends in a batch job instead
    (never returned: the batch job's answer takes its slot)."""

    ok = False


DEFERRED: Any = _Deferred()


def _batch_providers() -> tuple[str, ...]:
    from workbench.llm import _batch

    return tuple(_batch.PROVIDERS)


def _error_headers(exc: BaseException) -> Any:
    """The headers of the reply behind a failed call (``Retry-After``, ``x-ratelimit-*``):
    the direct path's :class:`~workbench.llm._http.HTTPStatusError`, or the public
    ``response`` (an ``httpx.Response``) of an openai/litellm exception."""
    headers = getattr(exc, "headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers


def _route_id(request: Request) -> tuple:
    return request.model, request.params.get("api_base"), bool(request.params.get("api_key"))


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def set_postfix(self, **kwargs: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, progress: bool, replayed: int = 0) -> Any:
    """The tqdm bar of a run that sends requests; the ``replayed`` ones (cached) are its
    starting count, so that its rate counts only the calls made (tqdm's ``initial``)."""
    if not progress or total == 0:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=replayed, unit="call", mininterval=0.2,
                dynamic_ncols=True,
                desc=f"LLM calls ({replayed} cached)" if replayed else "LLM calls")


def _progress_line(replayed: int, missing: int) -> None:
    """The one line that stands for the progress bar of a run that sends nothing: a bar
    filled at once would show an absurd rate (millions of calls per second). On stdout:
    it is news, not an error (JupyterLab shows stderr as a pink error block)."""
    line = f"LLM calls: {replayed} replayed from cache"
    if missing:
        line += f", {missing} not in the cache (readonly mode)"
    print(line, file=sys.stdout)


#: The request keys being sent by a run of this process, each with the future of its
#: result: a concurrent run (another thread's ``complete``) waits for it instead.
_inflight: dict[str, asyncio.Future] = {}
#: The gates of this process, by (event loop, provider, model, endpoint): what one run
#: learned of a quota serves the next (and runs in flight together share it).
_gates: dict[tuple, Gate] = {}


class _Runner:
    """The provider calls of one ``complete_many``: one task per distinct request.

    Around each call: one sender per request key within the process
    (:data:`_inflight`) and, through claims in the store, across processes sharing
    it; the budget; the per-model semaphore; the adaptive
    :class:`~workbench.llm._throttle.Gate` of each (provider, model, endpoint) before
    each attempt; retries with backoff (a 429's ``Retry-After`` instead); and a
    circuit breaker per model: after ``circuit_breaker`` consecutive connection
    failures, the model's requests still waiting are ``not_run`` at once.
    """

    def __init__(self, jobs: dict[str, Request], routes: dict[tuple, _providers.Route], *,
                 slots: dict[str, int], cache: Any, claims: bool, bar: Any,
                 concurrency: int | None, budget_usd: float | None, rpm: Any,
                 timeout: float | None, max_retries: int | None,
                 deadline: float | None = None):
        self.jobs = jobs
        self.routes = routes
        self.slots = slots
        self.cache = cache
        self.claims = claims and cache is not None
        self.bar = bar
        self.concurrency = concurrency or config.call_setting("concurrency")
        if self.concurrency < 1:
            raise ValueError(f"concurrency={self.concurrency!r} must be >= 1")
        self.timeout = timeout if timeout is not None else config.call_setting("timeout")
        self.max_retries = (max_retries if max_retries is not None
                            else config.call_setting("max_retries"))
        self.backoff = config.call_setting("retry_backoff")
        self.breaker_after = config.call_setting("circuit_breaker")
        self.rpm = rpm
        self.deadline = deadline  # time.monotonic(): mode="auto" defers what cannot make it
        self.budget_usd = budget_usd
        self.budget: Budget | None = None
        self.rng = random.Random()  # jitter only: it never changes a result
        self.litellm = _providers.get_litellm()
        self.streak: Counter[str] = Counter()  # consecutive connection failures per model
        self.down: dict[str, str] = {}  # models whose breaker opened, and why
        self.skipped: Counter[str] = Counter()  # requests not run per model
        self.failed = 0
        self.written = 0
        self.prices = _providers.Prices()

    async def run(self) -> dict[str, Result]:
        self.budget = Budget(self.budget_usd) if self.budget_usd is not None else None
        self.semaphores: dict[str, asyncio.Semaphore] = {}
        self.gates: dict[tuple, Gate] = {}
        self.shown: str | None = None
        self.wake: dict[str, asyncio.Event] = {}
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
        result = await self._once(key, request)
        if result is DEFERRED:
            return result  # counted when its batch job answers
        if isinstance(result, CallFailure):
            self.failed += self.slots[key]
            self._postfix()
        self.bar.update(self.slots[key])
        return result

    async def _once(self, key: str, request: Request) -> Result:
        """Send ``request`` unless a run of this process is sending it: then share its reply
        (a failure is not shared: this run tries on its own)."""
        loop = asyncio.get_running_loop()
        other = _inflight.get(key)
        if other is not None and other.get_loop() is loop:
            shared = await asyncio.shield(other)
            if isinstance(shared, Completion):
                return shared
        mine = loop.create_future()
        _inflight[key] = mine
        result = None
        try:
            result = await self._claimed(key, request)
            return result
        finally:
            if _inflight.get(key) is mine:
                del _inflight[key]
            mine.set_result(result)

    async def _claimed(self, key: str, request: Request) -> Result:
        """Send ``request`` unless another process sharing the store is sending it: then
        wait for that reply in the store (and send it only if none comes).

        Calls of in-process ``sim/`` models are cheap and take no claim.
        """
        model = request.model
        semaphore = self.semaphores.get(model)
        if semaphore is None:
            semaphore = self.semaphores[model] = asyncio.Semaphore(self.concurrency)
        claims = self.claims and self._route(request).provider != "sim"
        ttl = self._timeout_of(request) + _MAX_BACKOFF_S + 10.0
        while True:
            async with semaphore:
                if model in self.down:
                    self.skipped[model] += 1
                    return CallFailure(key, "not_run", f"not run: {self.down[model]}", 0, model)
                if not claims:
                    return await self._send(key, request, ttl=None)
                if _cache.claim(self.cache, key, ttl):
                    try:
                        found = self._stored(key)  # sent elsewhere since the first read?
                        return found if found is not None else await self._send(key, request,
                                                                                 ttl=ttl)
                    finally:
                        _cache.release(self.cache, key)
            delay = 0.05
            while _cache.claimed_elsewhere(self.cache, key):
                await asyncio.sleep(delay)
                delay = min(1.0, delay * 1.5)
            found = self._stored(key)
            if found is not None:
                return found

    def _stored(self, key: str) -> Completion | None:
        try:
            return _cache.replay(key, _cache.read_values(self.cache, [key])[key])
        except _cache.CorruptEntry:
            return None

    def _route(self, request: Request) -> _providers.Route:
        return self.routes[_route_id(request)]

    def _timeout_of(self, request: Request) -> float:
        return float(request.params.get("timeout") or self.timeout)

    async def _send(self, key: str, request: Request, *, ttl: float | None) -> Result:
        """The budget's admission, then the attempts (``ttl``: keep the claim alive)."""
        model = request.model
        reservation = None
        if self.budget is not None:
            reservation = await self.budget.admit(model)
            if reservation is None:
                return CallFailure(key, "budget", "not run: the budget would be crossed "
                                   f"(limit ${self.budget.limit:.4f})", 0, model)
        cost = None
        try:
            result = await self._attempts(key, request, ttl)
            if isinstance(result, Completion):
                cost = result.cost_usd
        finally:
            if self.budget is not None and reservation is not None:
                await self.budget.settle(model, reservation, cost)
        return result

    async def _attempts(self, key: str, request: Request, ttl: float | None) -> Result:
        route = self._route(request)
        model = request.model
        timeout = self._timeout_of(request)
        retries = request.params.get("num_retries")
        retries = self.max_retries if retries is None else int(retries)
        kwargs = _providers.call_kwargs(request, route, timeout=timeout)
        direct = _http.eligible(model, request.params, route.provider)
        if direct and not kwargs.get("api_base"):  # from the environment, as litellm reads it
            kwargs["api_base"] = _providers.base_url(request.params, route.provider)
        if kwargs.get("api_base") and (kwargs.get("response_format") or {}).get("type") \
                == "json_schema" and await _http.schema_form(kwargs) == "json_object":
            kwargs["response_format"] = _http.as_json_object(kwargs["response_format"])
        gate = self._gate(request, route, kwargs)
        charge = gate.estimate(prompt_estimate(request.messages), request.max_tokens)
        attempts = waited = 0  # waited: 429s retried at the time the provider named
        by_deadline = (self.deadline is not None and route.provider != "sim"
                       and route.provider in _batch_providers())
        while True:
            if by_deadline and attempts == 0:
                left = self.deadline - time.monotonic() - gate.latency
                try:
                    if left <= 0:
                        raise TimeoutError
                    ticket = await asyncio.wait_for(self._admit(gate, charge, key, ttl), left)
                except TimeoutError:
                    return DEFERRED
            else:
                ticket = await self._admit(gate, charge, key, ttl)
            if ttl is not None:
                _cache.extend(self.cache, key, ttl)
            attempts += 1
            started = time.perf_counter()
            meta: dict[str, Any] = {}
            released = False
            try:
                async with asyncio.timeout(timeout):  # wait_for without its extra task
                    response = await (_http.send(kwargs, meta) if direct
                                      else self.litellm.acompletion(**kwargs))
                latency = time.perf_counter() - started
                completion, entry = self._reply(key, request, route, response, latency, attempts)
            except asyncio.CancelledError:
                gate.release(ticket, ok=False)
                released = True
                raise
            except Exception as exc:  # classified; never lost
                kind = _providers.classify(exc)
                wait = gate.release(ticket, ok=False, rate_limited=kind == "rate_limit",
                                    headers=_error_headers(exc))
                released = True
                message = _providers.error_message(exc, request, kind)
                if kind == "timeout" and not str(exc):
                    message = f"no reply within {timeout:g} s"
                self._count(model, kind, message)
                if wait is not None and retries > 0 and waited < RATE_LIMIT_RETRIES \
                        and model not in self.down:
                    waited += 1  # the gate holds every call until then: no backoff
                    continue
                if kind in RETRYABLE and attempts - waited <= retries and model not in self.down:
                    await self._pause(model, self._backoff(attempts - waited))
                    if model not in self.down:
                        continue
                return CallFailure(key, kind, message, attempts, model)
            finally:
                if not released:
                    gate.release(ticket, ok=True, headers=meta.get("headers"),
                                 completion_tokens=completion.usage.completion_tokens)
            self._count(model, None, "")
            self._show(gate)
            gate.latency = 0.8 * gate.latency + 0.2 * latency if gate.latency else latency
            try:
                if self.cache is not None and _cache.store(self.cache, entry):
                    self.written += 1
            except CacheError:
                raise
            except Exception as exc:  # this reply alone: never the other requests
                return CallFailure(key, "malformed", "the reply could not be stored: "
                                   + _providers.error_message(exc, request), attempts, model)
            return completion

    async def _admit(self, gate: Gate, charge: float, key: str, ttl: float | None) -> Any:
        """The gate's ticket; while waiting for it (a queue at a low quota may take longer
        than a claim lives), the request's claim is kept alive."""
        if ttl is None:
            return await gate.acquire(charge)
        task = asyncio.ensure_future(gate.acquire(charge))
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=ttl / 3)
                if done:
                    return task.result()
                _cache.extend(self.cache, key, ttl)
        except BaseException:
            if not task.done():
                task.cancel()
            elif not task.cancelled() and task.exception() is None:
                gate.release(task.result(), ok=False)  # admitted as this run was stopped
            raise

    def _gate(self, request: Request, route: _providers.Route, kwargs: dict) -> Gate:
        """The :class:`Gate` of the request's (provider, model, endpoint)."""
        ident = (route.provider, request.model, kwargs.get("api_base") or "")
        gate = self.gates.get(ident)
        if gate is None:
            rpm = rpm_for(request.model, self.rpm) or config.rate_cap("rpm")
            tpm = config.rate_cap("tpm")
            shared = (id(asyncio.get_running_loop()), *ident)
            gate = _gates.get(shared)
            if gate is None or not gate.reuse(self.concurrency, rpm, tpm):
                gate = _gates[shared] = Gate(self.concurrency, rpm, tpm,
                                             probe=route.provider != "sim")
            self.gates[ident] = gate
        return gate

    def _show(self, gate: Gate) -> None:
        """Put the rate the gate holds (a known or learned quota) on the progress bar."""
        held = gate.held()
        if held is not None:
            text = f"{held:,.0f}/min"
            if text != self.shown:
                self.shown = text
                self._postfix()

    def _postfix(self) -> None:
        fields = {"failed": self.failed} if self.failed else {}
        if self.shown:
            fields["quota"] = self.shown
        self.bar.set_postfix(**fields, refresh=False)

    def _count(self, model: str, kind: str | None, message: str) -> None:
        """The circuit breaker: count consecutive connection failures of ``model``."""
        if kind != "connection_error":
            self.streak[model] = 0
            return
        self.streak[model] += 1
        if self.breaker_after and self.streak[model] >= self.breaker_after \
                and model not in self.down:
            self.down[model] = (f"stopped after {self.streak[model]} consecutive connection "
                                f"failures (circuit_breaker setting); last: {message}")
            self.wake.setdefault(model, asyncio.Event()).set()

    async def _pause(self, model: str, seconds: float) -> None:
        """Sleep ``seconds`` before a retry, or less if the model's breaker opens."""
        try:
            await asyncio.wait_for(self.wake.setdefault(model, asyncio.Event()).wait(), seconds)
        except TimeoutError:
            pass

    def _backoff(self, attempt: int) -> float:
        ceiling = min(_MAX_BACKOFF_S, self.backoff * 2 ** (attempt - 1))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def _reply(self, key: str, request: Request, route: _providers.Route, response: Any,
               latency: float, attempts: int) -> tuple[Completion, dict]:
        """The completion and cache entry of a reply: a litellm ``ModelResponse`` or, from
        the direct path, the reply's JSON as a dict (the same fields either way)."""
        get = _providers.get_field
        choices = get(response, "choices")
        if not choices or not isinstance(choices, list | tuple):
            raise ValueError("malformed reply: no choices")
        choice = choices[0]
        text = _providers.check_text(get(get(choice, "message"), "content"))
        logprobs = _providers.normalise_logprobs(get(choice, "logprobs"))
        raw_usage = get(response, "usage")
        usage = Usage(int(get(raw_usage, "prompt_tokens", 0) or 0),
                      int(get(raw_usage, "completion_tokens", 0) or 0))
        cost = _providers.cost_of(request, response, (usage.prompt_tokens,
                                                       usage.completion_tokens), route.backend)
        known = self.prices.known(request, route.backend)
        entry = _cache.make_entry(
            key, request, text=text, logprobs=logprobs, usage=usage, cost_usd=cost,
            latency_s=round(latency, 6), backend=route.backend,
            finish_reason=get(choice, "finish_reason"),
            provider_model=get(response, "model"), attempts=attempts, cost_known=known)
        return _cache.completion_from_entry(entry, cached=False), entry
