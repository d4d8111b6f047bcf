"""Admission control of provider calls: the budget guard and the adaptive :class:`Gate`
of one (provider, model, endpoint), which paces to a user's caps and the provider's quota."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from typing import Any


class Budget:
    """Admission control for ``budget_usd`` (see :func:`complete_many`)."""

    def __init__(self, limit: float):
        self.limit = float(limit)
        self.spent = 0.0
        self.reserved = 0.0
        self.highest: dict[str, float] = {}
        self.probing: set[str] = set()
        self.stopped = False
        self.refused = 0
        self.cond = asyncio.Condition()

    async def admit(self, model: str) -> tuple[float, bool] | None:
        """Reserve an estimate for one call: ``(estimate, is_probe)``, or ``None`` (stop)."""
        async with self.cond:
            while model not in self.highest and model in self.probing and not self.stopped:
                await self.cond.wait()  # the model's price probe is in flight
            estimate = self.highest.get(model, 0.0)
            if self.stopped or self.spent + self.reserved + estimate > self.limit:
                self.stopped = True
                self.refused += 1
                return None
            if model in self.highest:
                self.reserved += estimate
                return estimate, False
            self.probing.add(model)
            return 0.0, True

    async def settle(self, model: str, reservation: tuple[float, bool], cost: float | None) -> None:
        async with self.cond:
            estimate, probe = reservation
            self.reserved -= estimate
            if cost is not None:
                self.spent += cost
                self.highest[model] = max(self.highest.get(model, 0.0), cost)
            if probe:
                self.probing.discard(model)
            self.cond.notify_all()


# --- the adaptive limiter of one (provider, model, endpoint) ----------------------------

#: Share of a learned quota the client aims at: the server's bucket is read from headers
#: that are a round trip old, so aiming just below it keeps 429s rare.
QUOTA_MARGIN = 0.985
#: At most this many 429s that carry ``Retry-After`` are retried per request (the
#: provider said when: they do not use up ``max_retries``).
RATE_LIMIT_RETRIES = 50
#: The first floor (seconds) under the wait a 429's ``Retry-After`` names; it doubles
#: with each such retry of a request (full jitter), so a server that says "retry in 1 ms"
#: on every reply is not sent a request 50 times in a second.
RETRY_FLOOR_S = 0.05


#: Seconds a burst from a full bucket may take to reach the provider (new connections,
#: the client loop's turns): its refill is credited only from then.
SEND_SPREAD_S = 0.05


class Stalled(Exception):
    """A call not sent: the wait it was held for is longer than the ``max_wait`` setting."""


def parse_reset(text: str | None) -> float | None:
    """Seconds of an ``x-ratelimit-reset-*`` value (``"6m0s"``, ``"1.5s"``, ``"20ms"``,
    ``"2"``), or ``None`` (also for a negative or infinite one).

    Examples
    --------
    >>> parse_reset("6m0s"), parse_reset("1.5s"), parse_reset("20ms"), parse_reset("2")
    (360.0, 1.5, 0.02, 2.0)
    """
    import re

    if not text:
        return None
    text = text.strip()
    seconds = number(text)
    if seconds is None:
        parts = re.findall(r"([0-9.]+)(ms|h|m|s)", text)
        scale = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
        with contextlib.suppress(ValueError):
            seconds = sum(float(n) * scale[unit] for n, unit in parts) if parts else None
    return seconds if seconds is not None and 0 <= seconds < math.inf else None


def number(text: str | None) -> float | None:
    """A header's value as a finite number, or ``None`` (absent, not a number, ``nan``,
    ``inf``)."""
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def retry_after(headers: Any) -> float | None:
    """Seconds a 429 asks to wait: ``retry-after-ms``, else ``retry-after`` (seconds);
    ``None`` when neither says a possible wait (absent, negative, not finite, an HTTP date).

    Examples
    --------
    >>> retry_after({"retry-after-ms": "-5", "retry-after": "2"}), retry_after({"retry-after": "nan"})
    (2.0, None)
    """
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = number(_header(headers, name))
        if value is not None and value >= 0:
            return value * scale
    return None


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
        if value is None:
            value = headers.get(name.title())
    except AttributeError:
        return None
    return None if value is None else str(value)


class _Bucket:
    """The client's copy of one provider bucket (requests or tokens): ``rate`` per second
    and ``capacity``, known from a user cap or learned from ``x-ratelimit-*`` headers."""

    def __init__(self, per_minute: float | None, burst: float | None = None):
        self.cap = per_minute  # the user's cap (per minute), never exceeded
        self.rate = per_minute / 60.0 if per_minute else None
        # a user cap: ``burst`` (one request: calls evenly spaced), else one second's worth
        self.capacity = (burst or self.rate) if self.rate else None
        self.cap_capacity = self.capacity
        self.level = self.capacity
        self.stamp = 0.0
        self.synced = -1  # sequence number of the send the last header was about
        self.limit: float | None = None  # per minute, as the provider last reported it

    def forget(self) -> None:
        """Back to the user's cap alone: the provider no longer reports this bucket."""
        self.rate = self.cap / 60.0 if self.cap else None
        self.capacity = self.level = self.cap_capacity
        self.synced = -1

    def wait(self, amount: float, now: float) -> float:
        if self.rate is None:
            return 0.0
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now
        need = min(amount, self.capacity) - self.level
        return 0.0 if need <= 0 else max(0.0, self.stamp - now) + need / self.rate

    def take(self, amount: float, now: float) -> None:
        if self.rate is not None:
            if self.capacity > 1 and self.level >= self.capacity:
                # a burst from a full bucket: the provider's refill starts when its first
                # request arrives; it is credited from :data:`SEND_SPREAD_S` later (the
                # first send after a burst of 10 at 600 RPM was a 429, issue 34)
                self.stamp = now + SEND_SPREAD_S
            self.level -= amount

    def learn(self, limit: float, remaining: float, reset_s: float | None, since: float,
              sent_after: float, seq: int, now: float) -> None:
        """Sync with the provider's bucket as a reply reported it for the send ``seq``
        that reached it at time ``since`` (as the gate reckons it); ``sent_after``: what
        later sends took from it since."""
        if seq < self.synced or not limit > 0:
            return
        self.synced, self.limit = seq, limit
        if self.cap and self.cap <= limit * QUOTA_MARGIN:
            self.rate = self.cap / 60.0  # the user's cap binds
        else:
            self.rate = limit / 60.0 * QUOTA_MARGIN
        capacity = remaining + (reset_s or 0.0) * limit / 60.0
        self.capacity = max(1.0, min(capacity, limit)) if reset_s is not None else max(
            1.0, self.capacity or remaining)
        if self.cap_capacity is not None:
            self.capacity = min(self.capacity, self.cap_capacity)
        # ``remaining`` is the provider's level when the request reached it, some time
        # between the send and ``now``: refill is credited from ``since``, the gate's
        # reckoning of that arrival (:meth:`Gate._learn`). Taken at ``now`` instead,
        # each re-sync loses a round trip of refill (0.82 of a 60 RPM quota at 200 ms
        # latency, measured); a 429 after a larger slip re-syncs from its headers and is
        # retried when it says.
        self.level = min(self.capacity, remaining + (now - since) * self.rate) - sent_after
        self.stamp = now


class Ticket:
    """One admitted send: its sequence number, time, the tokens it was charged and the
    tokens charged to all sends before it."""

    __slots__ = ("seq", "sent", "tokens", "before")

    def __init__(self, seq: int, sent: float, tokens: float, before: float):
        self.seq, self.sent, self.tokens, self.before = seq, sent, tokens, before


class Gate:
    """Admission of the calls to one (provider, model, endpoint): a concurrency window
    that adapts (AIMD), the provider's rate limits as learned, and ``Retry-After``.

    * **Concurrency**: at most ``window`` calls in flight, starting at ``concurrency``
      (the user's ceiling); a 429 from an endpoint that sends no rate-limit headers
      halves it (at most once per round trip), each success adds ``1 / window`` (one
      per round trip) back up to the ceiling.
    * **Rate**: a client copy of the provider's request and token buckets, set by the
      user's caps (``rpm``, ``tpm``) and by the ``x-ratelimit-limit/remaining/reset-*``
      headers of every reply (aiming at :data:`QUOTA_MARGIN` of the learned limit); a
      call waits until its request and its tokens (prompt estimate plus ``max_tokens``,
      charged in advance as the provider does) fit.
    * **Retry-After**: a 429 holds every call of the gate until the time it names.
    * **Bounds**: header values that are impossible (negative, not finite) are ignored;
      a call the gate would hold longer than ``max_wait`` seconds is not sent
      (:class:`Stalled`), nor does a longer ``Retry-After`` hold the gate.
    * **Probe** (``probe``): the first call goes alone, so that its reply's headers say
      what the quota is before a burst of calls can overrun it (one round trip at the
      start of a run). Only at an endpoint known to report a quota (the pipeline's
      :func:`~workbench.llm._pipeline.quota_reported`); elsewhere the first wave goes at
      once and its replies teach the quota.
    * **Send delays**: a reply's ``remaining`` is the provider's level when the request
      reached it; a round trip longer than the fastest one seen is taken as a late
      arrival (a busy client loop, new connections), whose refill the level already has;
      the first reply, whose way out nothing measures yet, is credited none.

    References
    ----------
    Jacobson, "Congestion avoidance and control", SIGCOMM 1988 (AIMD window);
    OpenAI, "Rate limits" guide (headers; ``max_tokens`` counted against TPM).
    """

    def __init__(self, concurrency: int, rpm: float | None = None, tpm: float | None = None,
                 *, probe: bool = True, max_wait: float = math.inf):
        self.max_wait = max_wait  # the longest wait of one call (else it fails: Stalled)
        self.probing = probe  # one call until the first reply says what the quota is
        self.answered = self.reported = False  # a reply came; one reported a quota
        self.ceiling = int(concurrency)
        self.window = float(concurrency)
        self.in_flight = 0
        self.requests = _Bucket(rpm, burst=1.0)
        self.tokens = _Bucket(tpm)
        self.hold_until = 0.0
        self.decreased_at = -1.0
        self.seq = 0
        self.sent = 0.0  # tokens charged by all sends so far
        self.rate_limited = 0
        self.changed = asyncio.Event()
        self.queue: deque[asyncio.Future] = deque()
        self.completion_tokens: float | None = None  # learned mean, for requests without max_tokens
        self.latency = 0.0  # seconds per call, a moving mean (the runner keeps it)
        self.fastest = math.inf  # the shortest round trip of a success (seconds)

    def reuse(self, concurrency: int, rpm: float | None, tpm: float | None,
              max_wait: float = math.inf) -> bool:
        """Take a new run's settings, keeping what was learned of the quota (unless it
        held calls longer than ``max_wait``: then it is learned again); ``False`` when the
        user's caps changed (then a new gate is wanted)."""
        if (rpm or None, tpm or None) != (self.requests.cap, self.tokens.cap):
            return False
        self.max_wait = max_wait
        for bucket in (self.requests, self.tokens):
            if bucket.synced >= 0 and bucket.rate and 1.0 / bucket.rate > max_wait:
                bucket.forget()
        self.ceiling = int(concurrency)
        if self.in_flight == 0:
            self.window = float(concurrency)
        else:
            self.window = min(self.window, float(concurrency))
        return True

    def estimate(self, prompt_tokens: int, max_tokens: int | None) -> float:
        """Tokens to charge a call in advance."""
        if max_tokens:
            return float(prompt_tokens + max_tokens)
        return float(prompt_tokens) + (self.completion_tokens or 0.0)

    async def acquire(self, tokens: float) -> Ticket:
        """Wait for a turn (first come, first served: only the head of the queue watches
        the limits, so a thousand waiting calls cost no more than one)."""
        loop = asyncio.get_running_loop()
        me = loop.create_future()
        self.queue.append(me)
        try:
            if self.queue[0] is not me:
                await me  # set when it becomes the head
            while True:
                now = loop.time()
                waits = {"hold": self.hold_until - now, "requests": self.requests.wait(1.0, now),
                         "tokens": self.tokens.wait(tokens, now)}
                wait = max(waits.values())
                if wait > self.max_wait:
                    raise Stalled(self._stalled(max(waits, key=waits.__getitem__), wait))
                if wait <= 0 and self.in_flight < (1 if self.probing else max(1, int(self.window))):
                    break
                self.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), wait if wait > 0 else None)
        finally:
            head = self.queue[0] is me
            self.queue.remove(me)
            if head and self.queue and not self.queue[0].done():
                self.queue[0].set_result(None)
        self.in_flight += 1
        self.requests.take(1.0, now)
        self.tokens.take(tokens, now)
        ticket = Ticket(self.seq, now, tokens, self.sent)
        self.seq += 1
        self.sent += tokens
        return ticket

    def _stalled(self, why: str, wait: float) -> str:
        """The message of a call held ``wait`` seconds (more than ``max_wait``) by ``why``."""
        bucket = {"requests": self.requests, "tokens": self.tokens}.get(why)
        if bucket is None:
            cause = "a Retry-After"
        else:
            cause = (f"the {why} quota the server reports (x-ratelimit-limit-{why}: "
                     f"{bucket.limit:g} per minute)" if bucket.synced >= 0 else
                     f"the {why} cap of {bucket.cap:g} per minute (rpm/tpm setting)")
        return (f"not sent: {cause} would hold it {wait:.3g} s, more than the max_wait "
                f"setting ({self.max_wait:g} s, WORKBENCH_MAX_WAIT)")

    def release(self, ticket: Ticket, *, ok: bool, rate_limited: bool = False,
                headers: Any = None, completion_tokens: int | None = None) -> float | None:
        """A call ended: adapt; returns the ``Retry-After`` seconds of a 429 (or ``None``);
        a wait over ``max_wait`` does not hold the gate (the call that got it fails)."""
        now = asyncio.get_running_loop().time()
        self.in_flight -= 1
        self.probing = False
        timed = self.fastest < math.inf  # a round trip before this one was timed
        if ok:
            self.fastest = min(self.fastest, now - ticket.sent)
        if headers is not None:
            self._learn(headers, ticket, now, answered=ok, timed=timed)
        wait = None
        if rate_limited:
            self.rate_limited += 1
            wait = retry_after(headers)
            if wait is not None and wait <= self.max_wait:
                self.hold_until = max(self.hold_until, now + wait)
            learned = self.requests.synced >= 0 or self.tokens.synced >= 0
            if not learned and ticket.sent > self.decreased_at:  # once per round trip
                # (a quota known from headers is held by pacing: a 429 then is a slip of
                # timing, and the headers it carries re-sync the buckets)
                self.window = max(1.0, min(self.window, self.in_flight + 1) / 2)
                self.decreased_at = now
        elif ok:
            self.answered = True
            self.window = min(float(self.ceiling), self.window + 1.0 / max(1.0, self.window))
            if completion_tokens is not None:
                old = self.completion_tokens
                self.completion_tokens = (float(completion_tokens) if old is None
                                          else 0.9 * old + 0.1 * completion_tokens)
        self.changed.set()
        return wait

    def _learn(self, headers: Any, ticket: Ticket, now: float, *, answered: bool,
               timed: bool = True) -> None:
        """Sync the buckets with a reply's ``x-ratelimit-*`` headers. A success whose
        headers report no longer a bucket learned before makes it forgotten: providers
        that have a quota report it on every reply, so the endpoint has none now (e.g.
        another server answers at its URL, as a local server restarted on a port)."""
        for bucket, name, after in (  # after: what the sends since this one took
                (self.requests, "requests", self.seq - ticket.seq - 1),
                (self.tokens, "tokens", self.sent - ticket.before - ticket.tokens)):
            limit_text, remaining_text = _header(headers, f"x-ratelimit-limit-{name}"), \
                _header(headers, f"x-ratelimit-remaining-{name}")
            if limit_text is None or remaining_text is None:
                if answered and bucket.synced >= 0 and ticket.seq > bucket.synced:
                    bucket.forget()
                continue
            limit, remaining = number(limit_text), number(remaining_text)
            if limit is None or remaining is None or not limit > 0 or remaining < 0:
                continue  # impossible values (not a number, infinite, negative): ignored
            self.reported = True
            # refill is credited from the arrival: the send, plus what this round trip
            # took longer than the fastest (one late arrival credited from its send was
            # a 429 in each 30-s run at 600 and 3,000 RPM, issue 34). Before a round trip
            # was timed (``timed``: the probe's reply, a first wave's first), the way out
            # is not known: from the reply. (Credited from the send, a probe's way out of
            # 6 ms was 0.1 request at 20/s, while the first sends paced after the burst
            # reached the server with 0.04 to spare: a fresh bucket's ``remaining`` is
            # exact, no rounding down leaves slack.)
            late = max(0.0, now - ticket.sent - self.fastest) if timed else now - ticket.sent
            bucket.learn(limit, remaining,
                         parse_reset(_header(headers, f"x-ratelimit-reset-{name}")),
                         ticket.sent + late, after, ticket.seq, now)

    def held(self) -> float | None:
        """The requests per minute the gate aims at (``None``: no limit known)."""
        return None if self.requests.rate is None else self.requests.rate * 60.0


def prompt_estimate(messages: Any) -> int:
    """A request's prompt tokens as providers estimate them before running it: about
    four characters a token, plus a few per message -- rounded up, so that the client's
    copy of a token bucket never runs ahead of the provider's between two replies."""
    total = 0
    for message in messages or ():
        content = message.get("content") if isinstance(message, dict) else None
        text = content if isinstance(content, str) else str(content or "")
        total += -(-len(text) // 4) + 5
    return total
