"""A provider's rate limits for the sim-server: token buckets per model and API key.

OpenAI-style quotas: a requests-per-minute (RPM) and a tokens-per-minute (TPM) limit,
each a token bucket that refills continuously at ``limit / 60`` per second up to its
capacity. A request is admitted when both buckets hold what it costs: one request, and
its prompt tokens (estimated from its characters, as the provider does before running
it) plus its ``max_tokens`` (``max_completion_tokens``) -- the completion is charged in
advance at its ceiling, never refunded. A request without ``max_tokens`` is charged its
prompt tokens on arrival and its completion tokens when answered (the bucket may go
below zero: the next requests wait). A request that does not fit is answered 429 with
``Retry-After`` (whole seconds, rounded up) and ``retry-after-ms``, and is not charged.
Every reply, 200 or 429, carries ``x-ratelimit-limit-requests``,
``x-ratelimit-remaining-requests``, ``x-ratelimit-reset-requests`` (time until the
bucket is full again, e.g. ``1.5s``, ``6m0s``), and the same three for ``tokens``.

``burst_s`` scales the capacity: ``limit * burst_s / 60``. The provider default is a
full minute (``burst_s=60``: a fresh key may send a whole minute's quota at once); a
benchmark that wants to see the steady rate in a few seconds uses a short burst (e.g.
1 s), so a 6,000 RPM quota holds at most 100 requests at once.

References
----------
OpenAI, "Rate limits" guide (RPM/TPM, the ``x-ratelimit-*`` headers, ``max_tokens``
counted against TPM), https://platform.openai.com/docs/guides/rate-limits ;
token bucket: Tanenbaum & Wetherall, *Computer Networks*, 5th ed., section 5.4.2.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any

from workbench.sim._text import approx_tokens


@dataclass(frozen=True)
class Quota:
    """Rate limits of every (model, API key): ``rpm`` and ``tpm`` (``None``: no limit)."""

    rpm: float | None = None
    tpm: float | None = None
    burst_s: float = 60.0

    def __post_init__(self) -> None:
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"--quota-{name}={value!r}: expected a number > 0")
        if not self.burst_s > 0:
            raise ValueError(f"--quota-burst-s={self.burst_s!r}: expected a number > 0")

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None


class Bucket:
    """One token bucket: ``rate`` per second up to ``capacity``, full at the start."""

    def __init__(self, per_minute: float, burst_s: float, now: float):
        self.limit = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, per_minute * burst_s / 60.0)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` fits (0: now); an amount over the capacity fits in a
        full bucket (which it leaves below zero)."""
        need = min(amount, self.capacity) - self.level
        return 0.0 if need <= 0 else need / self.rate

    def reset_s(self) -> float:
        """Seconds until the bucket is full again."""
        return max(0.0, self.capacity - self.level) / self.rate


def duration(seconds: float) -> str:
    """OpenAI's form of a reset time: ``"6m0s"``, ``"1.5s"``, ``"20ms"``.

    Examples
    --------
    >>> duration(360), duration(1.5), duration(0.02), duration(0)
    ('6m0s', '1.5s', '20ms', '0s')
    """
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        return f"{max(1, math.ceil(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60)
    rest_text = f"{rest:.3f}".rstrip("0").rstrip(".")
    return f"{int(minutes)}m{rest_text}s" if minutes else f"{rest_text}s"


def prompt_tokens(body: dict[str, Any]) -> int:
    """The prompt tokens a request is charged on arrival (the engine's own count)."""
    total = 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        total += approx_tokens(content if isinstance(content, str) else str(content or "")) + 4
    return total


class Limiter:
    """The buckets of every (model, API key), and what they refused."""

    def __init__(self, quota: Quota, clock: Any = time.monotonic):
        self.quota = quota
        self.clock = clock
        self.buckets: dict[tuple[str, str], dict[str, Bucket]] = {}
        self.rejected = 0
        self.admitted = 0

    def _buckets(self, model: str, key: str) -> dict[str, Bucket]:
        ident = (model, hashlib.sha256(key.encode()).hexdigest()[:16])
        found = self.buckets.get(ident)
        if found is None:
            now = self.clock()
            found = {}
            if self.quota.rpm is not None:
                found["requests"] = Bucket(self.quota.rpm, self.quota.burst_s, now)
            if self.quota.tpm is not None:
                found["tokens"] = Bucket(self.quota.tpm, self.quota.burst_s, now)
            self.buckets[ident] = found
        return found

    def admit(self, model: str, key: str, body: dict[str, Any]
              ) -> tuple[bool, dict[str, str], dict[str, Bucket]]:
        """``(admitted, headers, buckets)``: charge one request of ``body`` to
        (``model``, ``key``) if it fits, and the rate-limit headers to send either way."""
        buckets = self._buckets(model, key)
        now = self.clock()
        ceiling = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        cost = {"requests": 1.0, "tokens": float(prompt_tokens(body) + int(ceiling))}
        wait = 0.0
        for name, bucket in buckets.items():
            bucket.refill(now)
            wait = max(wait, bucket.wait_for(cost[name]))
        if wait <= 0:
            for name, bucket in buckets.items():
                bucket.level -= cost[name]
            self.admitted += 1
        else:
            self.rejected += 1
        headers = self.headers(buckets)
        if wait > 0:
            headers["retry-after"] = str(max(1, math.ceil(wait)))
            headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
        return wait <= 0, headers, buckets

    def charge_completion(self, buckets: dict[str, Bucket], tokens: int) -> None:
        """Charge the completion of a request sent without ``max_tokens``."""
        bucket = buckets.get("tokens")
        if bucket is not None:
            bucket.refill(self.clock())
            bucket.level -= tokens

    @staticmethod
    def headers(buckets: dict[str, Bucket]) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, bucket in buckets.items():
            out[f"x-ratelimit-limit-{name}"] = f"{bucket.limit:g}"
            out[f"x-ratelimit-remaining-{name}"] = str(max(0, math.floor(bucket.level)))
            out[f"x-ratelimit-reset-{name}"] = duration(bucket.reset_s())
        return out

    def stats(self) -> dict[str, Any]:
        return {"rpm": self.quota.rpm, "tpm": self.quota.tpm, "burst_s": self.quota.burst_s,
                "admitted": self.admitted, "rejected": self.rejected}
