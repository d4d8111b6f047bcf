"""``workbench bench llm``: throughput of the LLM layer, as ratios measured in one run.

(a) **Cached replay.** ``complete_many`` over ``n_replay`` cached requests against a
bare loop of ``diskcache.Cache.get`` over the same keys (target: replay throughput
>= 0.25 of the bare loop).

(b) **Calls to a sim-server** with ``latency_ms`` of latency, ``n_server`` requests at
``concurrency``: measured time against the ideal ``n * latency / concurrency``
(target efficiency >= 0.85); the speed-up over a sequential loop of ``complete``
(``n_sequential`` requests, scaled to ``n_server``); and the time of
``litellm.batch_completion`` with the same ``max_workers`` (target: no slower).

Everything runs in a temporary cache folder; (b) uses cache mode ``off`` so every
request is a real HTTP call. No test asserts these times.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _messages(i: int, tag: str) -> list[dict]:
    return [{"role": "system", "content": "You are a strict grader. Return JSON only."},
            {"role": "user", "content": f"<question>\n{tag} question {i}: what is {i} + {i}?\n"
                                        f"</question>\n<response>\n{2 * i}\n</response>"}]


def bench_replay(n: int = 10_000, *, repeats: int = 5) -> dict[str, float]:
    """Warm-cache replay of ``complete_many`` vs a bare ``diskcache.Cache.get`` loop.

    The cache is seeded with ``n`` entries from a replay file (the replay path is
    what is measured). Each timing is the best of ``repeats``, taken in turns.
    """
    from workbench.llm import (
        Request,
        cache_key,
        complete_many,
        import_cache,
        open_cache,
        temporary_settings,
        write_replay_file,
    )
    from workbench.llm._cache import close_caches

    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as folder:
        with temporary_settings(cache_dir=folder, cache_mode="readwrite"):
            requests = [Request("sim/judge-a", _messages(i, "replay"), temperature=1.0,
                                sample=i % 3) for i in range(n)]
            seed = Path(folder) / "seed.jsonl"
            write_replay_file(({"model": r.model, "messages": r.messages,
                                "temperature": r.temperature, "sample": r.sample,
                                "text": '{"score": 7, "explanation": "ok"}', "source": "bench"}
                               for r in requests), seed, backend="sim")
            import_cache(seed)
            cache = open_cache()
            keys = [cache_key(r) for r in requests]

            def bare() -> None:
                get = cache.get
                for key in keys:
                    get(key)

            def replay() -> None:
                out = complete_many(requests, progress=True)
                assert all(r.cached for r in out)

            bare_times, replay_times = [], []
            for _ in range(repeats):  # interleaved, so both see the same machine load
                bare_times.append(_timed(bare))
                replay_times.append(_timed(replay))
            t_bare, t_replay = min(bare_times), min(replay_times)
            close_caches()
    return {"n": n, "bare_s": t_bare, "replay_s": t_replay,
            "bare_per_s": n / t_bare, "replay_per_s": n / t_replay,
            "ratio": t_bare / t_replay}


def _runqueue_wait_s() -> float | None:
    """Seconds this process's threads spent runnable but waiting for a CPU (Linux only).

    A large value during a timing means the machine was busy with other work: the
    timing then measures CPU contention, not this code.
    """
    try:
        total = 0
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[1])
            except OSError:  # the thread ended meanwhile
                continue
        return total / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def bench_server(n: int = 512, *, concurrency: int = 64, latency_ms: float = 500.0,
                 n_sequential: int = 32, batch: bool = True) -> dict[str, float]:
    """``complete_many`` against a sim-server process, with its two baselines."""
    from workbench.llm import Request, complete, complete_many, temporary_settings
    from workbench.llm._providers import LOCAL_KEY, get_litellm
    from workbench.sim.server import fetch_stats, spawned_server

    model = "openai/sim-judge-a"
    out: dict[str, float] = {"n": n, "concurrency": concurrency, "latency_ms": latency_ms}
    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as folder, \
            spawned_server(latency_ms=latency_ms) as url, \
            temporary_settings(cache_dir=folder, cache_mode="off"):
        litellm = get_litellm()
        # warm up: imports, litellm's client pool, the server's first request
        complete_many([Request(model, _messages(i, "warm"), params={"api_base": url})
                       for i in range(concurrency)], concurrency=concurrency, progress=False)
        requests = [Request(model, _messages(i, "bench"), params={"api_base": url})
                    for i in range(n)]
        started, cpu, wait = time.perf_counter(), time.process_time(), _runqueue_wait_s()
        results = complete_many(requests, concurrency=concurrency, progress=False)
        out["ours_s"] = time.perf_counter() - started
        out["ours_cpu_ms_per_call"] = (time.process_time() - cpu) * 1000 / n
        out["ours_cpu_wait_s"] = _wait_since(wait)
        out["ours_failed"] = sum(not r.ok for r in results)
        out["ideal_s"] = n * latency_ms / 1000.0 / concurrency
        out["efficiency"] = out["ideal_s"] / out["ours_s"]

        started = time.perf_counter()
        for request in requests[:n_sequential]:  # cache mode "off": real calls again
            complete(model, request.messages, api_base=url)
        sequential = time.perf_counter() - started
        out["sequential_scaled_s"] = sequential * n / n_sequential
        out["speedup_vs_sequential"] = out["sequential_scaled_s"] / out["ours_s"]

        if batch:
            batch_messages = [_messages(20_000 + i, "batch") for i in range(n)]
            litellm.batch_completion(model=model, messages=batch_messages[:concurrency],
                                     api_base=url, api_key=LOCAL_KEY, max_workers=concurrency)
            started, cpu = time.perf_counter(), time.process_time()
            replies = litellm.batch_completion(model=model, messages=batch_messages, api_base=url,
                                               api_key=LOCAL_KEY, max_workers=concurrency,
                                               temperature=0.0)
            out["batch_s"] = time.perf_counter() - started
            out["batch_cpu_ms_per_call"] = (time.process_time() - cpu) * 1000 / n
            out["batch_failed"] = sum(isinstance(r, Exception) for r in replies)
            out["batch_over_ours"] = out["batch_s"] / out["ours_s"]
        out["server_requests"] = fetch_stats(url)["requests"]
    return out


def _wait_since(before: float | None) -> float:
    after = _runqueue_wait_s()
    return float("nan") if before is None or after is None else after - before


def run_llm_bench(*, n_replay: int = 10_000, n_server: int = 512, concurrency: int = 64,
                  latency_ms: float = 500.0, n_sequential: int = 32, batch: bool = True,
                  echo: Callable[[str], Any] = print) -> dict[str, dict[str, float]]:
    """Run (a) and (b) and print the ratios; returns the raw numbers."""
    echo(f"(a) cached replay: {n_replay} requests (best of 5)")
    a = bench_replay(n_replay)
    echo(f"    bare diskcache.get loop   {a['bare_s']:8.3f} s  {a['bare_per_s']:10.0f} /s")
    echo(f"    complete_many replay      {a['replay_s']:8.3f} s  {a['replay_per_s']:10.0f} /s")
    echo(f"    ratio replay / bare       {a['ratio']:8.3f}    (target >= 0.25)")
    echo(f"(b) sim-server, {latency_ms:g} ms latency: {n_server} requests at concurrency "
         f"{concurrency}")
    b = bench_server(n_server, concurrency=concurrency, latency_ms=latency_ms,
                     n_sequential=n_sequential, batch=batch)
    echo(f"    complete_many             {b['ours_s']:8.3f} s  ({b['ours_failed']:.0f} failed, "
         f"client CPU {b['ours_cpu_ms_per_call']:.2f} ms/call, "
         f"waited {b['ours_cpu_wait_s']:.2f} s for a CPU)")
    echo(f"    ideal n*latency/conc      {b['ideal_s']:8.3f} s")
    echo(f"    efficiency                {b['efficiency']:8.3f}    (target >= 0.85)")
    echo(f"    sequential complete x{n_server / n_sequential:g}    "
         f"{b['sequential_scaled_s']:8.3f} s  (from {n_sequential} calls)")
    echo(f"    speed-up vs sequential    {b['speedup_vs_sequential']:8.1f} x")
    if batch:
        echo(f"    litellm.batch_completion  {b['batch_s']:8.3f} s  ({b['batch_failed']:.0f} failed, "
             f"client CPU {b['batch_cpu_ms_per_call']:.2f} ms/call)")
        echo(f"    batch_completion / ours   {b['batch_over_ours']:8.3f}    (target >= 1: no slower)")
    echo(f"    cpu count {os.cpu_count()}, load average "
         f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return {"replay": a, "server": b}


__all__ = ["bench_replay", "bench_server", "run_llm_bench"]
