"""The one pipeline every request goes through, whichever transport answers it.

:func:`run` reads top to bottom as its stages:

1. **replay** -- the cache read in the calling thread, before any async machinery; a
   corrupt entry is a miss, reported once; in ``readonly`` mode a miss is a ``cache_miss``
   row. A store that cannot take the replies (read-only, full disk) stops the run here.
2. **dedupe** -- identical requests (same key) are sent once and fill every slot; a
   request another run of this process is sending is awaited (:data:`_inflight`).
3. **claim** -- across processes sharing a store (``readwrite``), a short-lived claim
   per key: a request claimed elsewhere is waited for in the store.
4. **budget** -- :class:`~workbench.llm._throttle.Budget` admits each call, or stops the run.
5. **pace** -- the :class:`~workbench.llm._throttle.Gate` of the (provider, model,
   endpoint) admits each attempt (``mode="auto"``: what could no longer finish by the
   deadline goes to a batch job instead).
6. **retry** -- failures classified (:func:`~workbench.llm._providers.classify`), the
   retryable ones sent again after a backoff (or a 429's ``Retry-After``); a circuit
   breaker per model.
7. **send** -- a transport (:mod:`workbench.llm._transports`) makes one attempt.
8. **record** -- ``_Sender._record`` checks the reply, prices it and stores it, committed
   before the call counts as done. The in-process ``sim/`` calls sent in one event-loop
   turn (at most ``concurrency``) are a *round*: answered, recorded and committed in one
   transaction by one callback (``_Sender._answer``), before any other call starts. So
   every finished call is in the cache before the next starts; a killed run loses at
   most its current round, and a rerun sends only what is missing.

``mode="batch"`` sends what is left after stage 3 in provider batch jobs
(:mod:`workbench.llm._batch`); ``mode="ray"`` sends it in a Ray Data job
(:mod:`workbench.llm._ray`). Their replies go through the same record stage.
:func:`stream` runs the pipeline a bounded window of requests at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from typing import Any

from workbench import config
from workbench.errors import BudgetExceeded, CacheError
from workbench.llm import _batch, _cache, _http, _maintenance, _providers, _ray, _transports
from workbench.llm._keys import cache_key
from workbench.llm._loop import run_sync
from workbench.llm._settings import rpm_for
from workbench.llm._throttle import (
    RATE_LIMIT_RETRIES,
    RETRY_FLOOR_S,
    Budget,
    Gate,
    Stalled,
    prompt_estimate,
)
from workbench.llm._types import RETRYABLE, CallFailure, Completion, Request, Result, Usage

_MAX_BACKOFF_S = 60.0
#: Seconds a claim taken for a batch job lives unless renewed (every third of it).
_BATCH_CLAIM_S = 600.0
#: The request keys being sent by a run of this process, each with the future of its
#: result: a concurrent run (another thread's ``complete``) waits for it instead.
_inflight: dict[str, asyncio.Future] = {}
#: The gates of this process, by (event loop, provider, model, endpoint): what one run
#: learned of a quota serves the next (and runs in flight together share it).
_gates: dict[tuple, Gate] = {}


def run(requests: Iterable[Request], *, concurrency: int | None = None, progress: bool = True,
        budget_usd: float | None = None, rpm: int | Mapping[str, int] | None = None,
        timeout: float | None = None, max_retries: int | None = None,
        warn_misses: bool = True, batch_poll: float | None = None,
        deadline: float | None = None, ray: bool = False, keys: list[str] | None = None,
        ahead: tuple[Any, list] | None = None) -> list[Result]:
    """The results of ``requests`` in order (see :func:`~workbench.llm.complete_many`;
    ``batch_poll`` set: batch mode; ``deadline``: ``time.monotonic()`` of ``mode="auto"``;
    ``ray``: ray mode; ``keys``: the requests' keys; ``ahead``: ``(store, rows)`` looked
    up before, by :func:`stream`)."""
    requests = list(requests)
    if budget_usd is not None and not budget_usd >= 0:
        raise ValueError(f"budget_usd={budget_usd!r}: expected a number >= 0")
    if concurrency is not None and (not isinstance(concurrency, int) or concurrency < 1):
        raise ValueError(f"concurrency={concurrency!r}: expected an integer >= 1")
    mode = config.cache_mode()
    cache = (None if mode == "off" else
             _cache.open_cache(readonly=mode == "readonly"))
    for i, request in enumerate(requests):
        if not isinstance(request, Request):
            raise ValueError(f"requests[{i}]: expected a workbench.llm.Request, "
                             f"got {type(request).__name__}")
    if keys is None:
        keys = [cache_key(request) for request in requests]
    distinct = list(dict.fromkeys(keys))

    # 1. replay, 2. dedupe: the distinct keys left to send, each with its slots
    hits: dict[str, Completion] = {}
    corrupt: dict[str, str] = {}
    if mode in ("readwrite", "readonly"):
        if ahead is not None and ahead[0] is cache:  # its hits stand; a miss or a corrupt
            hits = _cache.replay_many(ahead[1])[0]  # entry may have been stored since
        rest = [key for key in distinct if key not in hits] if hits else distinct
        if rest:
            more, corrupt = _cache.replay_many(cache.rows(rest))
            hits.update(more)
        if corrupt:
            _cache.log.warning(
                "cache %s: %d entr%s failed the replay check (e.g. %s): %s; `workbench cache "
                "check` lists them", cache.directory, len(corrupt),
                "y" if len(corrupt) == 1 else "ies", next(iter(corrupt.values())),
                "treated as misses" if mode == "readonly" else "sent again and overwritten")
    results: list[Result | None] = [hits.get(key) for key in keys]
    todo: dict[str, list[int]] = {}  # key -> its slots
    if len(hits) < len(distinct):
        for i, key in enumerate(keys):
            if results[i] is None:
                todo.setdefault(key, []).append(i)
    replayed = len(requests) - sum(len(s) for s in todo.values())
    if progress and requests and (not todo or mode == "readonly"):  # nothing to wait for
        _progress_line(replayed, len(requests) - replayed)
    if todo and mode == "readonly":
        for key, slots in todo.items():
            request = requests[slots[0]]
            _maintenance.record_miss(request, key)
            why = f"corrupt entry: {corrupt[key]}" if key in corrupt else "not cached"
            failure = CallFailure(key, "cache_miss", f"{why} (readonly mode): "
                                  f"model={request.model!r} key={key}", 0, request.model)
            for i in slots:
                results[i] = failure
        if warn_misses:
            _cache.log.warning("%d request(s) not in the cache (readonly mode); run "
                               "`workbench cache explain --last` to see why", len(todo))
    if not todo or mode == "readonly":
        return results  # type: ignore[return-value]

    jobs = {key: requests[slots[0]] for key, slots in todo.items()}
    one = {_providers.route_id(request): request for request in jobs.values()}  # per route
    # unknown models and missing keys: before any call
    routes = {ident: _providers.route(request) for ident, request in one.items()}
    if any(route.provider == "openai" for route in routes.values()) and _http.enabled():
        _http.preload()  # (the direct path's client) beside the set-up below
    bar = _progress_bar(len(requests), progress, replayed)
    try:
        with (_maintenance.writing(cache.directory) if cache is not None else nullcontext()):
            if cache is not None:  # the live store: a repair may have replaced it
                cache = _cache.open_cache(cache.directory)
                _cache.require_writable(cache)
            sender = _Sender(routes, slots={k: len(v) for k, v in todo.items()},
                             cache=cache, claims=mode == "readwrite", bar=bar,
                             concurrency=concurrency, budget_usd=budget_usd, rpm=rpm,
                             timeout=timeout, max_retries=max_retries,
                             deadline=deadline if cache is not None else None)
            try:
                outcome = (sender.ray(jobs) if ray else sender.batches(jobs, batch_poll)
                           if batch_poll and not deadline else {})
                rest = {key: request for key, request in jobs.items() if key not in outcome}
                outcome.update(run_sync(sender.online(rest)) if rest else {})
                deferred = {k: jobs[k] for k, result in outcome.items() if result is DEFERRED}
                if deferred:  # mode="auto": what could not be answered online in time
                    outcome.update(sender.batches(deferred, batch_poll))
                    sender.deadline = None  # left out of the jobs (claimed elsewhere): wait
                    late = {k: r for k, r in deferred.items() if outcome[k] is DEFERRED}
                    outcome.update(run_sync(sender.online(late)) if late else {})
            finally:
                if sender.written:
                    _cache.checkpoint(cache)
        for key, slots in todo.items():
            for i in slots:
                results[i] = outcome[key]
        for model, why in sender.down.items():
            if sender.skipped[model]:
                _cache.log.warning("%s: %s; %d request(s) of this model were not run",
                                   model, why, sender.skipped[model])
        if sender.budget is not None and sender.budget.stopped:
            raise BudgetExceeded(
                f"budget of ${budget_usd:.4f} reached after spending "
                f"${sender.budget.spent:.4f}: {sender.budget.refused} request(s) not run",
                partial=list(results), spent_usd=sender.budget.spent)
    finally:
        bar.close()
    return results  # type: ignore[return-value]


#: Requests :func:`stream` plans, sends and records at a time (``complete_iter``'s window).
WINDOW = 2048


def stream(requests: Iterable[Request], *, window: int = WINDOW, progress: bool = True,
           budget_usd: float | None = None, **options: Any) -> Iterator[tuple[int, Result]]:
    """``(index, result)`` of each of ``requests``, read lazily ``window`` at a time: each
    window goes through :func:`run` (replay, dedupe, claim, send, record) and its results
    are yielded as it completes, in order. The next window is read before this one runs,
    and looked up in the cache by another thread (:class:`_LookAhead`) meanwhile: memory
    holds two windows. A request repeated in a later window is replayed from the cache
    (sent again with the cache ``off``). ``options``: those of :func:`run`."""
    if not isinstance(window, int) or window < 1:
        raise ValueError(f"window={window!r}: expected an integer >= 1")
    total = len(requests) if hasattr(requests, "__len__") else None  # type: ignore[arg-type]
    bar = _progress_bar(total, progress) if total != 0 else None
    iterator = iter(requests)
    start = spent = 0
    missing = 0
    ahead = _LookAhead()
    try:
        chunk = _plan(iterator, window)
        looking = ahead.submit(chunk)
        failed: Exception | None = None  # the caller's iterator's, after this window
        while chunk:
            try:
                following = _plan(iterator, window)
            except Exception as exc:
                following, failed = [], exc
            later = ahead.submit(following)
            keys, found = ahead.result(looking)
            left = None if budget_usd is None else max(0.0, budget_usd - spent)
            try:
                results = run(chunk, progress=False, budget_usd=left, warn_misses=False,
                              keys=keys, ahead=found, **options)
            except BudgetExceeded as stop:  # this window's results, then the stop
                yield from enumerate(stop.partial, start)
                raise BudgetExceeded(
                    f"budget of ${budget_usd:.4f} reached after spending "
                    f"${spent + stop.spent_usd:.4f}: stopped at request {start + len(chunk)}",
                    partial=[], spent_usd=spent + stop.spent_usd) from None
            for result in results:
                if isinstance(result, Completion) and not result.cached:
                    spent += result.cost_usd or 0.0
                elif isinstance(result, CallFailure) and result.error_type == "cache_miss":
                    missing += 1
            if bar is not None:
                bar.update(len(chunk))
            yield from enumerate(results, start)
            start += len(chunk)
            chunk, looking = following, later
        if failed is not None:
            raise failed
    finally:
        ahead.close()
        if bar is not None:
            bar.close()
    if missing:
        _cache.log.warning("%d request(s) not in the cache (readonly mode); run "
                           "`workbench cache explain --last` to see why", missing)


def _plan(iterator: Iterator[Request], window: int) -> list[Request]:
    """The next window of the caller's requests (planning: no cycle, many objects)."""
    with _cache.paused_collector():
        return list(itertools.islice(iterator, window))


class _LookAhead:
    """One thread of a :func:`stream` that looks up the next window's stored rows while
    this one is replayed and consumed (``sqlite3`` releases the GIL while SQLite steps).
    What it finds is a hint: :func:`run` keeps its hits (a stored entry stays valid) and
    looks up the rest again; any failure here is left for :func:`run` to meet."""

    #: Seconds to wait for a lookup before :func:`run` does it instead.
    WAIT_S = 30.0

    def __init__(self) -> None:
        self.pool: ThreadPoolExecutor | None = None
        self.stores: dict[int, Any] = {}  # those the thread connected to
        self.futures: list[Any] = []  # the lookups not waited for

    def submit(self, chunk: list[Request]) -> tuple[list[str] | None, Any, Any]:
        """The keys of ``chunk``, its store, and the future of its rows (None: not looked
        up: no replay in this cache mode, or something :func:`run` reports)."""
        try:
            mode = config.cache_mode()
            if not chunk or not all(isinstance(r, Request) for r in chunk):
                return None, None, None
            keys = [cache_key(request) for request in chunk]
            if mode not in ("readwrite", "readonly"):
                return keys, None, None
            store = _cache.open_cache(readonly=mode == "readonly")
        except Exception:
            return None, None, None
        if self.pool is None:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="workbench-lookahead")
        self.stores[id(store)] = store
        future = self.pool.submit(store.rows_together, list(dict.fromkeys(keys)))
        self.futures = [*self.futures[-1:], future]
        return keys, store, future

    def result(self, looking: tuple[list[str] | None, Any, Any]
               ) -> tuple[list[str] | None, tuple[Any, list] | None]:
        """The keys and ``(store, rows)`` of a :meth:`submit` (rows: None if it failed)."""
        keys, store, future = looking
        if future is None:
            return keys, None
        try:
            rows = future.result(timeout=self.WAIT_S)
        except Exception:  # (a timeout: the rows are looked up again)
            future.cancel()
            return keys, None
        return keys, None if rows is None else (store, rows)

    def close(self) -> None:
        """Stop the thread (after the lookup under way, if any) and close its connections
        (at once: left to the thread's end, a reference cycle kept them open)."""
        if self.pool is not None:
            for future in self.futures:
                future.cancel()  # (not the one under way)
            for store in self.stores.values():
                self.pool.submit(store.disconnect)
            self.pool.shutdown(wait=True)
            self.pool = None


#: The write context of a round of ``sim/`` calls when the cache is off.
_UNGROUPED = nullcontext()

#: The answer for a request ``mode="auto"`` sends in a batch job (which fills its slot).
DEFERRED: Any = object()


class _Sender:
    """Stages 2-8 for the requests of one run: one task per distinct request online, or
    batch jobs; the counters (failures, stored replies, the circuit breaker) of the run."""

    def __init__(self, routes: dict[tuple, _providers.Route], *, slots: dict[str, int],
                 cache: Any, claims: bool, bar: Any, concurrency: int | None,
                 budget_usd: float | None, rpm: Any, timeout: float | None,
                 max_retries: int | None, deadline: float | None):
        self.routes, self.slots, self.cache, self.bar = routes, slots, cache, bar
        self.claims, self.rpm, self.deadline = claims and cache is not None, rpm, deadline
        setting = config.call_setting
        self.concurrency = concurrency or setting("concurrency")
        self.timeout = timeout if timeout is not None else setting("timeout")
        self.max_retries = max_retries if max_retries is not None else setting("max_retries")
        self.backoff, self.breaker_after = setting("retry_backoff"), setting("circuit_breaker")
        self.max_wait = setting("max_wait")
        if not 0 < self.max_wait < float("inf"):  # (nan fails too)
            raise ValueError(f"WORKBENCH_MAX_WAIT={self.max_wait!r}: expected seconds > 0")
        self.budget = Budget(budget_usd) if budget_usd is not None else None
        self.rng = random.Random()  # jitter only: it never changes a result
        self.streak: Counter[str] = Counter()  # consecutive connection failures per model
        self.down: dict[str, str] = {}  # models whose breaker opened, and why
        self.skipped: Counter[str] = Counter()  # requests not run per model
        self.failed = self.written = 0
        self.prices = _providers.Prices()
        self.semaphores: dict[str, asyncio.Semaphore] = {}
        self.gates: dict[tuple, Gate] = {}
        self.wake: dict[str, asyncio.Event] = {}  # per model: set when its breaker opens
        self.shown: str | None = None  # the quota on the progress bar
        self.round: list[tuple] | None = None  # the sim calls of this loop turn (_answer)

    def _done(self, key: str, result: Result) -> None:
        if isinstance(result, CallFailure):
            self.failed += self.slots[key]
            self._postfix()
        self.bar.update(self.slots[key])

    def _record(self, key: str, request: Request, reply: _transports.Reply, *,
                latency: float, attempts: int, batch_id: str | None = None) -> Completion:
        """8. Check a raw reply (:func:`~workbench.llm._providers.check_text` raises for
        one not kept), price it (at batch prices for a ``batch_id``), store it."""
        route = self.routes[_providers.route_id(request)]
        text = _providers.check_text(reply.text)
        logprobs = _providers.normalise_logprobs(reply.logprobs)
        get = _providers.get_field
        usage = Usage(int(get(reply.usage, "prompt_tokens", 0) or 0),
                      int(get(reply.usage, "completion_tokens", 0) or 0))
        entry = _cache.make_entry(
            key, request, text=text, logprobs=logprobs, usage=usage,
            cost_usd=_providers.cost_of(request, (usage.prompt_tokens, usage.completion_tokens),
                                        route.backend, reply.cost_usd, batch=batch_id is not None),
            latency_s=round(latency, 6), backend=route.backend,
            finish_reason=reply.finish_reason, provider_model=reply.model, attempts=attempts,
            cost_known=self.prices.known(request, route.backend))
        if batch_id:
            entry["batch_id"] = batch_id
        if self.cache is not None:
            _cache.store(self.cache, entry)
            self.written += 1
        return _cache.completion_from_entry(entry, cached=False)

    # --- batch jobs ---------------------------------------------------------------------

    def batches(self, jobs: dict[str, Request], poll_interval: float) -> dict[str, Result]:
        """The replies to the ``jobs`` that go in provider batch jobs (all but in-process
        ``sim/`` models). Claimed first, as online (3.): a request another process is
        sending is left out (then awaited online), the others stay claimed until stored."""
        routes = {key: self.routes[_providers.route_id(request)] for key, request in jobs.items()}
        mine = {key: request for key, request in jobs.items() if routes[key].provider != "sim"}
        for route in dict.fromkeys(routes[key] for key in mine):
            _batch.check(route)
        claimed, stored, mine = self._claim_jobs(mine)

        try:
            if not mine:
                return dict(stored)
            run = _batch.BatchRun(mine, {key: routes[key] for key in mine}, record=self._record,
                                  poll_interval=poll_interval, done=self._done)
            return {**stored, **run_sync(self._keeping(run.run(), claimed, _BATCH_CLAIM_S))}
        finally:
            for key in claimed:
                _cache.release(self.cache, key)

    def _claim_jobs(self, mine: dict[str, Request]
                    ) -> tuple[list[str], dict[str, Completion], dict[str, Request]]:
        """Claim a job's requests for the length of a job: ``(claimed, stored, left)``,
        ``stored`` the replies another process recorded meanwhile (handed on as done),
        ``left`` the claimed requests still to send."""
        if not (self.claims and mine):
            return [], {}, mine
        claimed = [key for key in mine if self._claim(key, _BATCH_CLAIM_S)]
        stored, _ = _cache.replay_many(self.cache.rows(claimed))
        for key, hit in stored.items():  # sent elsewhere since the first read
            self._done(key, hit)
        return claimed, stored, {key: mine[key] for key in claimed if key not in stored}

    # --- a Ray Data job ------------------------------------------------------------------

    def ray(self, jobs: dict[str, Request]) -> dict[str, Result]:
        """The replies to the ``jobs`` that go in a Ray Data job (all but in-process
        ``sim/`` models, answered online), claimed first as batch jobs are."""
        mine = {key: request for key, request in jobs.items()
                if self.routes[_providers.route_id(request)].provider != "sim"}
        claimed, stored, mine = self._claim_jobs(mine)
        renewed = [time.monotonic()]

        def tick() -> None:  # between reply rows: keep the claims alive
            if claimed and time.monotonic() - renewed[0] > _BATCH_CLAIM_S / 3:
                renewed[0] = time.monotonic()
                for key in claimed:
                    _cache.extend(self.cache, key, _BATCH_CLAIM_S)

        try:
            if not mine:
                return dict(stored)
            run = _ray.RayRun(mine, {key: self.routes[_providers.route_id(request)]
                                     for key, request in mine.items()},
                              record=self._record, done=self._done, timeout=self.timeout,
                              max_retries=self.max_retries, backoff=self.backoff, tick=tick)
            return {**stored, **run.run()}
        finally:
            for key in claimed:
                _cache.release(self.cache, key)

    # --- online: one task per distinct request ------------------------------------------

    async def online(self, jobs: dict[str, Request]) -> dict[str, Result]:
        task = asyncio.get_running_loop().create_task  # (ensure_future: a tenth slower)
        tasks = {key: task(self._job(key, request)) for key, request in jobs.items()}
        try:
            await asyncio.gather(*tasks.values())
        except BaseException:
            for task in tasks.values():
                task.cancel()
            raise
        return {key: task.result() for key, task in tasks.items()}

    async def _job(self, key: str, request: Request) -> Result:
        result = await self._deduped(key, request)
        if result is not DEFERRED:  # a deferred one is counted when its batch job answers
            self._done(key, result)
        return result

    async def _deduped(self, key: str, request: Request) -> Result:
        """2. Send ``request`` unless a run of this process is sending it: then share its
        reply (a failure is not shared: this run tries on its own)."""
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
        """3. Send ``request`` unless another process sharing the store is sending it: then
        wait for that reply in the store (and send it only if none comes). In-process
        ``sim/`` calls are cheap and take no claim."""
        model = request.model
        semaphore = self.semaphores.setdefault(model, asyncio.Semaphore(self.concurrency))
        claims = self.claims and self.routes[_providers.route_id(request)].provider != "sim"
        ttl = self._timeout_of(request) + _MAX_BACKOFF_S + 10.0
        while True:
            async with semaphore:
                if model in self.down:
                    self.skipped[model] += 1
                    return CallFailure(key, "not_run", f"not run: {self.down[model]}", 0, model)
                if not claims:
                    return await self._budgeted(key, request, ttl=None)
                if self._claim(key, ttl):
                    try:
                        found = self._stored(key)  # sent elsewhere since the first read?
                        return found if found is not None else await self._budgeted(
                            key, request, ttl=ttl)
                    finally:
                        _cache.release(self.cache, key)
            delay = 0.05
            while _cache.claimed_elsewhere(self.cache, key):
                await asyncio.sleep(delay)
                delay = min(1.0, delay * 1.5)
            found = self._stored(key)
            if found is not None:
                return found

    def _claim(self, key: str, ttl: float) -> bool:
        """Claim ``key``, also when the claim left on it is a dead process's."""
        return _cache.claim(self.cache, key, ttl) or (
            not _cache.claimed_elsewhere(self.cache, key) and _cache.claim(self.cache, key, ttl))

    def _stored(self, key: str) -> Completion | None:
        try:
            return _cache.replay(self.cache, key)
        except _cache.CorruptEntry:
            return None

    def _timeout_of(self, request: Request) -> float:
        return float(request.params.get("timeout") or self.timeout)

    async def _budgeted(self, key: str, request: Request, *, ttl: float | None) -> Result:
        """4. The budget's admission, then the attempts (``ttl``: keep the claim alive)."""
        if self.budget is None:
            return await self._attempts(key, request, ttl)
        model = request.model
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
            await self.budget.settle(model, reservation, cost)
        return result

    async def _attempts(self, key: str, request: Request, ttl: float | None) -> Result:
        """5.-8. Pace each attempt at the gate, send it, retry what is worth it, record."""
        route = self.routes[_providers.route_id(request)]
        model = request.model
        timeout = self._timeout_of(request)
        retries = request.params.get("num_retries")
        retries = self.max_retries if retries is None else int(retries)
        transport = _transports.transport_for(request, route)
        # the in-process simulator answers in rounds (_answer) and never yields to the
        # loop meanwhile: no timeout (its timer handle per call cost a tenth of a call)
        sim = type(transport) is _transports.Sim
        prepared = {} if sim else await transport.prepare(request, route, timeout)
        gate = self._gate(request, route, prepared.get("api_base"))
        charge = gate.estimate(prompt_estimate(request.messages), request.max_tokens)
        attempts = waited = 0  # waited: 429s retried at the time the provider named
        by_deadline = self.deadline is not None and route.provider in _batch.PROVIDERS
        while True:
            if by_deadline and attempts == 0:  # mode="auto": in time, or in a batch job
                left = self.deadline - time.monotonic() - gate.latency
                try:
                    if left <= 0:
                        raise TimeoutError
                    ticket = await asyncio.wait_for(self._admit(gate, charge, key, ttl), left)
                except (TimeoutError, Stalled):  # (a batch job has no quota to wait for)
                    return DEFERRED
            else:
                try:
                    ticket = await self._admit(gate, charge, key, ttl)
                except Stalled as exc:  # held longer than max_wait: a failure row, not a stall
                    return CallFailure(key, "rate_limit", str(exc), attempts, model)
            if ttl is not None:
                _cache.extend(self.cache, key, ttl)
            attempts += 1
            try:
                if sim:  # 7.-8. in this turn's round
                    completion = await self._round(key, request, attempts)
                    latency, headers = completion.latency_s, None
                else:
                    started = time.perf_counter()
                    async with asyncio.timeout(timeout):  # wait_for without its task
                        reply = await transport.send(prepared)
                    latency, headers = time.perf_counter() - started, reply.headers
                    completion = self._record(key, request, reply, latency=latency,
                                              attempts=attempts)
            except asyncio.CancelledError:
                gate.release(ticket, ok=False)
                raise
            except CacheError:
                gate.release(ticket, ok=True)
                raise
            except Exception as exc:  # classified; never lost
                kind = _providers.classify(exc)
                # the reply's headers (Retry-After, x-ratelimit-*): the direct path's
                # HTTPStatusError, or the public httpx ``response`` of an openai/litellm error
                headers = getattr(exc, "headers", None)
                if headers is None:
                    headers = getattr(getattr(exc, "response", None), "headers", None)
                wait = gate.release(ticket, ok=False, rate_limited=kind == "rate_limit",
                                    headers=headers)
                failed = _providers.failure(key, request, exc, attempts, kind=kind,
                                             timeout=timeout)
                self._count(model, kind, failed.message)
                if wait is not None and wait > self.max_wait:
                    if by_deadline:  # (a first wave past a small quota): the batch job's
                        return DEFERRED
                    return CallFailure(key, "rate_limit", (
                        f"{failed.message} (the server asked to wait {wait:.3g} s, more than "
                        f"the max_wait setting: {self.max_wait:g} s, WORKBENCH_MAX_WAIT)")[:1000],
                        attempts, model)
                if wait and retries > 0 and waited < RATE_LIMIT_RETRIES and model not in self.down:
                    # the gate holds every call until then; this one waits at least a floor
                    # that doubles per such retry (a "Retry-After: 0" names no wait at all:
                    # it is retried below, as a 429 without one)
                    waited += 1
                    await self._pause(model, self._backoff(waited, RETRY_FLOOR_S))
                    continue
                if kind in RETRYABLE and attempts - waited <= retries and model not in self.down:
                    await self._pause(model, self._backoff(attempts - waited))
                    if model not in self.down:
                        continue
                return failed
            gate.release(ticket, ok=True, headers=headers,
                         completion_tokens=completion.usage.completion_tokens)
            self._count(model, None, "")
            self._show(gate)
            gate.latency = 0.8 * gate.latency + 0.2 * latency if gate.latency else latency
            return completion

    def _round(self, key: str, request: Request, attempts: int) -> asyncio.Future:
        """7. (``sim/``) The future of the call's completion: it joins the round of this
        event-loop turn, answered by :meth:`_answer` in the next."""
        loop = asyncio.get_running_loop()
        if self.round is None:
            self.round = []
            loop.call_soon(self._answer)
        future = loop.create_future()
        self.round.append((future, key, request, attempts))
        return future

    def _answer(self) -> None:
        """7.-8. A round of ``sim/`` calls in one callback: each answered (its latency its
        own compute time), then all recorded in one transaction, committed before any
        other call can start; only then are their futures set. The write lock is held
        while recording only. A store that fails (full disk) fails the calls from there
        on (those before it are committed, as one commit each would have kept them); a
        failed commit fails the round."""
        calls = [call for call in self.round if not call[0].done()]  # (cancelled ones)
        self.round = None
        if not calls:
            return
        replies: list[Any] = []
        for _, _, request, _ in calls:
            started = time.perf_counter()
            try:
                replies.append((_transports.SIM.answer(request), time.perf_counter() - started))
            except Exception as exc:  # this call's failure: its task classifies it
                replies.append(exc)
        outcomes: list[Any] = []
        stop: CacheError | None = None  # the store failed: the calls after it fail with it
        try:
            with _cache.grouped(self.cache) if self.cache is not None else _UNGROUPED:
                for (_, key, request, attempts), reply in zip(calls, replies, strict=True):
                    if stop is not None or isinstance(reply, Exception):
                        outcomes.append(stop or reply)
                        continue
                    try:
                        outcomes.append(self._record(key, request, reply[0], latency=reply[1],
                                                     attempts=attempts))
                    except CacheError as exc:
                        stop = exc
                        outcomes.append(exc)
                    except Exception as exc:  # a reply not kept (check_text)
                        outcomes.append(exc)
        except Exception as exc:  # the commit failed (a CacheError): nothing is stored
            outcomes = [exc] * len(calls)
        for (future, *_), outcome in zip(calls, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    async def _admit(self, gate: Gate, charge: float, key: str, ttl: float | None) -> Any:
        """The gate's ticket; while waiting for it (a queue at a low quota may take longer
        than a claim lives), the request's claim is kept alive."""
        if ttl is None:
            return await gate.acquire(charge)
        task = asyncio.ensure_future(gate.acquire(charge))
        try:
            return await self._keeping(task, [key], ttl)
        except BaseException:
            if task.done() and not task.cancelled() and task.exception() is None:
                gate.release(task.result(), ok=False)  # admitted as this run was stopped
            raise

    async def _keeping(self, awaitable: Any, keys: list[str], ttl: float) -> Any:
        """``awaitable``'s result; while it runs, the claims on ``keys`` are kept alive."""
        task = asyncio.ensure_future(awaitable)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=ttl / 3)
                if done:
                    return task.result()
                for key in keys:
                    _cache.extend(self.cache, key, ttl)
        except BaseException:
            if not task.done():
                task.cancel()
            raise

    def _gate(self, request: Request, route: _providers.Route, api_base: str | None) -> Gate:
        """The :class:`Gate` of the request's (provider, model, endpoint)."""
        ident = (route.provider, request.model, api_base or "")
        gate = self.gates.get(ident)
        if gate is None:
            rpm = rpm_for(request.model, self.rpm) or config.rate_cap("rpm")
            tpm = config.rate_cap("tpm")
            shared = (id(asyncio.get_running_loop()), *ident)
            gate = _gates.get(shared)
            if gate is None or not gate.reuse(self.concurrency, rpm, tpm, self.max_wait):
                probe = route.provider != "sim" and quota_reported(route.provider, api_base)
                gate = _gates[shared] = Gate(self.concurrency, rpm, tpm, probe=probe,
                                             max_wait=self.max_wait)
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
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.wake.setdefault(model, asyncio.Event()).wait(), seconds)

    def _backoff(self, attempt: int, first: float | None = None) -> float:
        """Full-jitter exponential backoff from ``first`` (default: ``retry_backoff``)."""
        ceiling = min(_MAX_BACKOFF_S, (self.backoff if first is None else first)
                      * 2 ** (attempt - 1))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)


def quota_reported(provider: str, api_base: str | None) -> bool:
    """Whether a reply from the endpoint (provider, ``api_base``) has reported an
    ``x-ratelimit-*`` quota in this process: then the gate of a model not called there
    before sends its first call alone (a probe), as the first burst could overrun a
    bucket. At an endpoint not seen yet, or seen without a quota (a local server: vLLM,
    llama.cpp, a sim-server without ``--quota``), the first calls go at once, up to the
    concurrency, and the quota is learned from their replies (issue 34: a probe cost the
    first round trip of every run; a 429 of that first wave names its wait and teaches
    the gate, :meth:`~workbench.llm._throttle.Gate.release`)."""
    return any(gate.reported for (_, known, _, base), gate in _gates.items()
               if known == provider and base == (api_base or ""))


class _NoBar:
    """The progress bar of ``progress=False``: tqdm is not imported (its import, ~25 ms
    with the modules it brings, was the largest part of a fresh process's set-up before
    its first call)."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix(self, **fields: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int | None, progress: bool, replayed: int = 0) -> Any:
    """The tqdm bar of a run that sends requests (``progress=False``: :class:`_NoBar`);
    the ``replayed`` ones (cached) are its starting count, so that its rate counts only
    the calls made (tqdm's ``initial``)."""
    if not progress or total == 0:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=replayed, unit="call", mininterval=0.2,
                dynamic_ncols=True,
                desc=f"LLM calls ({replayed} cached)" if replayed else "LLM calls")


#: Takes ``(replayed, missing)`` in place of printing the replay line when set: a notebook
#: session sums them into one line per cell (``workbench.notebook._replays``).
replay_listener: Callable[[int, int], None] | None = None


def replay_line(replayed: int, missing: int) -> str:
    """``LLM calls: N replayed from cache`` (and the readonly misses)."""
    line = f"LLM calls: {replayed} replayed from cache"
    return line + (f", {missing} not in the cache (readonly mode)" if missing else "")


def _progress_line(replayed: int, missing: int) -> None:
    """The one line that stands for the progress bar of a run that sends nothing: a bar
    filled at once would show an absurd rate (millions of calls per second). On stdout:
    it is news, not an error (JupyterLab shows stderr as a pink error block)."""
    if replay_listener is not None:
        replay_listener(replayed, missing)
    else:
        print(replay_line(replayed, missing))
