"""``workbench bench quota``: runs held at a provider's quota, as ratios from one run.

Each scenario is a ``workbench sim-server`` process with a quota (``--quota-rpm`` /
``--quota-tpm``, :mod:`workbench.sim._quota`) and ``latency_ms`` of latency; each client
sends the same ``n`` distinct requests to a fresh server (full buckets), and the table
shows, per client:

* **throughput / quota** = ``ideal_s / elapsed_s`` times the share of rows that
  succeeded (a failed row is not throughput), where ``ideal_s`` is the time the
  best possible client needs: the bucket's capacity at once, the rest at the quota's
  rate, plus one latency, ``max(0, n * c - capacity) / rate + latency`` (``c``: what a
  request costs, 1 for a request quota; prompt tokens plus ``max_tokens`` for a token
  quota, as the server counts them). Target :data:`QUOTA_TARGET`.
* **failed** rows (target 0) and the **429 share**: 429 replies per row (target at most
  :data:`SHARE_429_TARGET`).

Speed of the measurement: a provider's bucket holds a minute of quota, so a short run
would be all burst. Here the capacity is ``burst_s`` (default 1 s) of quota, at least
one request, so the steady rate shows within ``seconds`` (default 15; the 60 RPM
quota runs ``seconds_slow``, default 20 s: ``n`` = 21 with a bucket of one). The whole
bench takes about 5 minutes.

Clients: ``workbench`` (``complete_many``, cache mode ``off``, ``concurrency`` 256 as
its ceiling: the gate of :mod:`workbench.llm._throttle` finds the quota); ``fixed N``
(N = 16, 64, 256): a fixed-concurrency client with the workbench's former retry policy
(4 retries, backoff from 1 s doubling with full jitter, ``Retry-After`` not read), on
aiohttp as the direct path; and ``litellm Router`` with the deployment's ``rpm`` (and
``tpm``) set, ``num_retries=4``, 256 calls in flight.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from typing import Any

#: Targets (issue 23): throughput at least this share of the quota, with no failed row
#: and at most this many 429 replies per row.
QUOTA_TARGET = 0.95
SHARE_429_TARGET = 0.02
MODEL = "openai/sim-judge-a"
WARM_MODEL = "openai/sim-judge-b"
FIXED = (16, 64, 256)


def _messages(i: int, tag: str) -> list[dict]:
    return [{"role": "user", "content": f"{tag} {i}: grade this answer to the question "
                                        f"about item {i}. " + "detail " * 20}]


#: The request quotas measured by default (requests per minute).
RPMS = (60, 600, 6000)


def scenarios(seconds: float = 15.0, seconds_slow: float = 20.0,
              burst_s: float = 1.0, rpms: tuple[float, ...] = RPMS) -> list[dict[str, Any]]:
    """The quotas measured: ``rpms`` (60, 600 and 6,000 RPM; 60 runs ``seconds_slow``),
    and a token-bound one (60,000 TPM with ``max_tokens=200``, a request quota far above
    it)."""
    from workbench.sim._quota import prompt_tokens

    out = []
    for rpm, span in ((rpm, seconds_slow if rpm <= 60 else seconds) for rpm in rpms):
        capacity = max(1.0, rpm * burst_s / 60)
        out.append({"name": f"{rpm:,g} RPM", "rpm": rpm, "tpm": None, "max_tokens": None,
                    "n": int(capacity + rpm / 60 * span), "cost": 1.0, "rate": rpm / 60,
                    "capacity": capacity})
    tpm, max_tokens = 60_000, 200
    cost = prompt_tokens({"messages": _messages(0, "tpm")}) + max_tokens
    capacity = max(1.0, tpm * burst_s / 60)
    out.append({"name": f"{tpm:,} TPM", "rpm": 10_000, "tpm": tpm, "max_tokens": max_tokens,
                "n": int((capacity + tpm / 60 * seconds) / cost), "cost": float(cost),
                "rate": tpm / 60, "capacity": capacity})
    return out


def _ideal(s: dict[str, Any], latency_s: float) -> float:
    return max(0.0, s["n"] * s["cost"] - s["capacity"]) / s["rate"] + latency_s


def _body(i: int, tag: str, max_tokens: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL.split("/", 1)[1], "messages": _messages(i, tag),
                            "temperature": 0.0}
    if max_tokens:
        body["max_tokens"] = max_tokens
    return body


async def _fixed_client(url: str, bodies: list[dict], concurrency: int, retries: int = 4,
                        backoff: float = 1.0) -> int:
    """A fixed-concurrency client with exponential backoff (``Retry-After`` not read);
    returns the failed rows."""
    import aiohttp

    from workbench.llm._providers import LOCAL_KEY

    rng = random.Random(0)
    semaphore = asyncio.Semaphore(concurrency)
    headers = {"Authorization": f"Bearer {LOCAL_KEY}", "Content-Type": "application/json"}

    async def one(session: Any, body: dict) -> bool:
        async with semaphore:
            for attempt in range(retries + 1):
                async with session.post(f"{url}/chat/completions", data=json.dumps(body),
                                        headers=headers) as reply:
                    await reply.read()
                    if reply.status == 200:
                        return True
                    if reply.status != 429 and reply.status < 500:
                        return False
                if attempt < retries:
                    ceiling = min(60.0, backoff * 2 ** attempt)
                    await asyncio.sleep(ceiling / 2 + rng.uniform(0, ceiling / 2))
            return False

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        done = await asyncio.gather(*(one(session, body) for body in bodies))
    return sum(not ok for ok in done)


async def _router_client(url: str, s: dict[str, Any], tag: str, concurrency: int = 256) -> int:
    from workbench.llm._providers import LOCAL_KEY, get_litellm

    litellm = get_litellm()
    params = {"model": MODEL, "api_base": url, "api_key": LOCAL_KEY, "rpm": s["rpm"]}
    if s["tpm"]:
        params["tpm"] = s["tpm"]
    router = litellm.Router(model_list=[{"model_name": "quota", "litellm_params": params}],
                            routing_strategy="usage-based-routing-v2", num_retries=4)
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> bool:
        async with semaphore:
            try:
                await router.acompletion(model="quota", messages=_messages(i, tag),
                                         temperature=0.0, max_tokens=s["max_tokens"])
                return True
            except Exception:  # noqa: BLE001 (a failed row, counted)
                return False

    done = await asyncio.gather(*(one(i) for i in range(s["n"])))
    return sum(not ok for ok in done)


def _ours(url: str, s: dict[str, Any], tag: str, concurrency: int) -> int:
    from workbench.llm import Request, complete_many

    requests = [Request(MODEL, _messages(i, tag), max_tokens=s["max_tokens"],
                        params={"api_base": url}) for i in range(s["n"])]
    return sum(not r.ok for r in complete_many(requests, concurrency=concurrency,
                                               progress=False))


def bench_quota_scenario(s: dict[str, Any], client: str, *, latency_ms: float = 200.0,
                         burst_s: float = 1.0, concurrency: int = 256) -> dict[str, Any]:
    """One client against a fresh sim-server with the scenario's quota."""
    from workbench.llm import Request, complete_many, temporary_settings
    from workbench.sim._quota import Quota
    from workbench.sim.server import fetch_stats, spawned_server

    quota = Quota(s["rpm"], s["tpm"], burst_s)
    tag = f"{client} {s['name']}"
    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as folder, \
            spawned_server(latency_ms=latency_ms, quota=quota) as url, \
            temporary_settings(cache_dir=folder, cache_mode="off"):
        # warm up (imports, connections) with another model: the measured model's
        # buckets stay full, and the workbench's gate for it has learned nothing
        complete_many([Request(WARM_MODEL, _messages(0, "warm"), params={"api_base": url})],
                      progress=False)
        started = time.perf_counter()
        if client == "workbench":
            failed = _ours(url, s, tag, concurrency)
        elif client.startswith("fixed"):
            bodies = [_body(i, tag, s["max_tokens"]) for i in range(s["n"])]
            failed = asyncio.run(_fixed_client(url, bodies, int(client.split()[1])))
        elif client == "litellm Router":
            failed = asyncio.run(_router_client(url, s, tag))
        else:
            raise ValueError(f"unknown client {client!r}")
        elapsed = time.perf_counter() - started
        stats = fetch_stats(url)
    rejected = stats["by_status"].get("429", 0)  # the warm-up's own bucket never refuses
    ideal = _ideal(s, latency_ms / 1000.0)
    return {"scenario": s["name"], "client": client, "n": s["n"], "elapsed_s": elapsed,
            "ideal_s": ideal, "ratio": ideal / elapsed * (s["n"] - failed) / s["n"],
            "failed": failed,
            "429": rejected, "share_429": rejected / s["n"]}


def run_quota_bench(*, clients: tuple[str, ...] | None = None, latency_ms: float = 200.0,
                    seconds: float = 15.0, seconds_slow: float = 20.0, burst_s: float = 1.0,
                    concurrency: int = 256, only: tuple[str, ...] | None = None,
                    rpms: tuple[float, ...] = RPMS,
                    echo: Callable[[str], Any] = print) -> list[dict[str, Any]]:
    """Every client at every quota; prints one line per run and returns the rows."""
    clients = clients or ("workbench", *(f"fixed {c}" for c in FIXED), "litellm Router")
    echo(f"quota bench: sim-server latency {latency_ms:g} ms, bucket capacity {burst_s:g} s "
         f"of quota; throughput/quota = ideal time / elapsed (target >= {QUOTA_TARGET:g}, "
         f"0 failed, 429s <= {SHARE_429_TARGET:.0%} of rows)")
    echo(f"    {'quota':<12} {'client':<16} {'rows':>5} {'elapsed':>8} {'ideal':>7} "
         f"{'thr/quota':>9} {'failed':>6} {'429s':>6} {'429/row':>8}")
    rows = []
    for s in scenarios(seconds, seconds_slow, burst_s, rpms):
        if only and s["name"] not in only:
            continue
        for client in clients:
            r = bench_quota_scenario(s, client, latency_ms=latency_ms, burst_s=burst_s,
                                     concurrency=concurrency)
            rows.append(r)
            echo(f"    {r['scenario']:<12} {client:<16} {r['n']:>5} {r['elapsed_s']:7.2f}s "
                 f"{r['ideal_s']:6.2f}s {r['ratio']:9.3f} {r['failed']:>6} {r['429']:>6} "
                 f"{r['share_429']:8.1%}")
    echo(f"    cpu count {os.cpu_count()}, load average "
         f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return rows


__all__ = ["QUOTA_TARGET", "RPMS", "SHARE_429_TARGET", "bench_quota_scenario", "run_quota_bench",
           "scenarios"]
