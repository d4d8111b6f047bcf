"""Admission control of provider calls: the budget guard and the requests-per-minute pacer."""

from __future__ import annotations

import asyncio


class Budget:
    """Admission control for ``budget_usd`` (see :func:`complete_many`)."""

    def __init__(self, limit: float):
        if limit < 0:
            raise ValueError(f"budget_usd={limit!r} must be >= 0")
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
            while True:
                if self.stopped:
                    self.refused += 1
                    return None
                if model in self.highest:
                    estimate = self.highest[model]
                    if self.spent + self.reserved + estimate > self.limit:
                        self.stopped = True
                        continue
                    self.reserved += estimate
                    return estimate, False
                if model not in self.probing:
                    if self.spent + self.reserved > self.limit:
                        self.stopped = True
                        continue
                    self.probing.add(model)
                    return 0.0, True
                await self.cond.wait()

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


class Pacer:
    """Requests-per-minute limit: starts spaced at least ``60 / rpm`` seconds apart."""

    def __init__(self, rpm: int):
        self.interval = 60.0 / rpm
        self.next_start = 0.0

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        start = max(now, self.next_start)
        self.next_start = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)
