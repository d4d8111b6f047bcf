"""``workbench bench scale``: ``complete_iter`` at 100,000 and 1,000,000 simulated calls.

For each size ``n`` (``--calls``), two child processes run ``complete_iter`` over a
generator that plans ``n`` distinct ``sim/judge-a`` requests lazily, into one temporary
cache folder: **cold** (every call answered by the in-process simulator and stored, one
committed transaction per round of calls answered together) then **warm** (every call
replayed). Each child reports its calls per second and its peak resident memory
(``VmHWM`` of ``/proc/self/status``, the high-water mark of the whole process: a process
per measurement, so nothing of an earlier run is counted); the table adds the cache
folder's size on disk after the cold run and the seconds ``os.sync()`` took after it: each
phase starts once the kernel has written what an earlier one left in its page cache, so
that no such writing shares the cores with the phase timed.

Targets (issue 34): peak RSS under :data:`RSS_TARGET_MB` at 1,000,000 calls, at least
:data:`COLD_TARGET` calls/s cold and :data:`WARM_TARGET` replayed. No test asserts them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

RSS_TARGET_MB = 600
COLD_TARGET = 5_000
WARM_TARGET = 50_000


def requests(n: int) -> Iterator[Any]:
    """``n`` distinct judge requests, planned one at a time."""
    from workbench.llm import Request

    system = {"role": "system", "content": "You are a strict grader. Return JSON only."}
    for i in range(n):
        yield Request("sim/judge-a", [system, {
            "role": "user", "content": f"<question>\nscale question {i}: what is {i} + {i}?\n"
                                       f"</question>\n<response>\n{2 * i}\n</response>"}])


def peak_rss_mb() -> float | None:
    """This process's peak resident memory in MB (Linux ``VmHWM``), else None."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def measure(n: int, *, window: int | None = None) -> dict[str, Any]:
    """One phase in this process, in the configured cache folder: ``complete_iter`` over
    ``n`` requests; calls/s, how many replayed, failed, and the peak RSS."""
    from workbench.llm import CallFailure, complete_iter

    options = {} if window is None else {"window": window}
    cached = failed = count = 0
    started = time.perf_counter()
    for _, result in complete_iter(requests(n), progress=False, **options):
        count += 1
        if isinstance(result, CallFailure):
            failed += 1
        elif result.cached:
            cached += 1
    seconds = time.perf_counter() - started
    return {"n": count, "seconds": seconds, "per_s": count / seconds, "cached": cached,
            "failed": failed, "peak_rss_mb": peak_rss_mb()}


def _folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def _child(n: int, folder: Path, window: int | None) -> dict[str, Any]:
    command = [sys.executable, "-m", "workbench.cli.bench_scale", str(n), str(folder),
               str(window or 0)]
    env = {**os.environ, "WORKBENCH_CACHE_DIR": str(folder), "WORKBENCH_CACHE_MODE": "readwrite"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False,
                          timeout=6 * 3600)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no message)"]
        raise RuntimeError(f"bench scale child for {n:,} calls failed: {tail[0]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def settle() -> float:
    """Seconds ``os.sync()`` took: the disk writes an earlier phase left to the kernel are
    done before the next phase is timed, not beside it on the same cores."""
    started = time.perf_counter()
    if hasattr(os, "sync"):
        os.sync()
    return time.perf_counter() - started


def run_scale_bench(calls: Sequence[int] = (100_000, 1_000_000), *, window: int | None = None,
                    echo: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """The table: per size, cold and warm calls/s, each one's peak RSS, the cache size."""
    rows = []
    echo(f"complete_iter, sim/judge-a, distinct requests; targets: cold >= {COLD_TARGET:,}/s, "
         f"warm >= {WARM_TARGET:,}/s, peak RSS < {RSS_TARGET_MB} MB at 1,000,000")
    echo(f"{'calls':>10} {'cold/s':>9} {'warm/s':>9} {'cold RSS MB':>12} {'warm RSS MB':>12} "
         f"{'cache MB':>9} {'failed':>7} {'sync s':>7}")
    for n in calls:
        with tempfile.TemporaryDirectory(prefix="workbench-scale-") as folder:
            settle()
            cold = _child(n, Path(folder), window)
            size = _folder_mb(Path(folder))
            synced = settle()
            warm = _child(n, Path(folder), window)
        row = {"n": n, "cold": cold, "warm": warm, "cache_mb": size, "sync_s": synced}
        rows.append(row)
        echo(f"{n:>10,} {cold['per_s']:>9,.0f} {warm['per_s']:>9,.0f} "
             f"{cold['peak_rss_mb']:>12,.0f} {warm['peak_rss_mb']:>12,.0f} {size:>9,.0f} "
             f"{cold['failed'] + warm['failed']:>7} {synced:>7.1f}")
        if warm["cached"] != n:
            echo(f"  (warm run replayed {warm['cached']:,} of {n:,})")
    return rows


if __name__ == "__main__":  # one phase: n, cache folder, window (0: the default)
    size, _, win = sys.argv[1:4]
    print(json.dumps(measure(int(size), window=int(win) or None)))
