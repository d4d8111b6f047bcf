"""``workbench bench llm``: throughput of the LLM layer, as ratios measured in one run.

(a) **Cached replay.** ``complete_many`` over ``n`` cached requests against a bare loop
of ``diskcache.Cache.get`` over the same keys, for each ``n`` of ``n_replay`` (default
10,000 and 100,000): target :data:`REPLAY_TARGET` = 0.6 of the bare loop's throughput
at every size, so a flat cost per call.

(b) **Calls to a sim-server** with ``latency_ms`` of latency, ``n_server`` requests at
each ``concurrency`` (default 2,048 at 64 and at 256): measured time against the ideal
``n * latency / concurrency`` (targets :data:`EFFICIENCY_TARGETS`: 0.92 at 64, 0.85 at
256); at the first concurrency also the same run with every call through litellm (the
path before :mod:`workbench.llm._http`), the speed-up over a sequential loop of
``complete`` (``n_sequential`` requests, scaled to ``n_server``) and the time of
``litellm.batch_completion`` with the same ``max_workers`` (target: ours
:data:`BATCH_TARGET` = 1.1x faster), and a **short run**: ``n_short`` requests (default
512) of a model not called before at that endpoint, so its gate starts cold (target
:data:`SHORT_TARGET` of the ideal: no probe round trip at an endpoint that reports no
quota, issue 34); and the same ``n_short`` requests as the **first run of a fresh
process** (a child, timed around its ``complete_many`` call from before the HTTP
client's import, :func:`bench_fresh`), same target.

Everything runs in a temporary cache folder; (b) uses cache mode ``off`` so every
request is a real HTTP call. No test asserts these times.

``workbench bench run-all``: :func:`bench_run_all`.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from unittest import mock


def _messages(i: int, tag: str) -> list[dict]:
    return [{"role": "system", "content": "You are a strict grader. Return JSON only."},
            {"role": "user", "content": f"<question>\n{tag} question {i}: what is {i} + {i}?\n"
                                        f"</question>\n<response>\n{2 * i}\n</response>"}]


#: Target of (a): ``complete_many``'s warm replay at least this share of the throughput
#: of a bare ``diskcache.Cache.get`` loop over the same keys, at every size (issue 14).
REPLAY_TARGET = 0.6


def bench_replay(n: int = 10_000, *, repeats: int = 5) -> dict[str, Any]:
    """Warm-cache replay of ``complete_many`` vs a bare ``diskcache.Cache.get`` loop.

    The cache is seeded with ``n`` entries from a replay file (the replay path is
    what is measured); the baseline reads the same entry texts from a diskcache store
    with its default settings but no eviction, through ``get``. Each timing is the best of ``repeats``, taken in turns; the
    first replay is reported too (it checks every entry's seal, later ones in the
    same process recognise entries already checked: see
    :func:`workbench.llm._cache.check_entry`), with the seconds this process waited
    for a CPU during the replays and the line the replay printed for its progress.
    """
    import contextlib
    import io

    import diskcache

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
            keys = [cache_key(r) for r in requests]
            # the baseline: the same entries in a bare diskcache store, read by its get
            bare_store = diskcache.Cache(str(Path(folder) / "bare"), eviction_policy="none")
            with bare_store.transact():
                for key, raw, _ in open_cache().rows(keys):
                    bare_store.set(key, raw)
            shown = io.StringIO()

            def bare() -> None:
                get = bare_store.get
                for key in keys:
                    get(key)

            def replay() -> None:
                with contextlib.redirect_stdout(shown):  # its progress output, kept
                    out = complete_many(requests, progress=True)
                assert all(r.cached for r in out)

            bare_times, replay_times, waited = [], [], 0.0
            for _ in range(repeats):  # interleaved, so both see the same machine load
                bare_times.append(_timed(bare))
                wait = _runqueue_wait_s()
                replay_times.append(_timed(replay))
                waited += _wait_since(wait)
            t_bare, t_replay = min(bare_times), min(replay_times)
            bare_store.close()
            close_caches()
    lines = shown.getvalue().strip().splitlines()
    return {"n": n, "bare_s": t_bare, "replay_s": t_replay,
            "bare_per_s": n / t_bare, "replay_per_s": n / t_replay,
            "bare_us": t_bare * 1e6 / n, "replay_us": t_replay * 1e6 / n,
            "first_replay_us": replay_times[0] * 1e6 / n, "ratio": t_bare / t_replay,
            "replay_cpu_wait_s": waited, "progress": lines[-1] if lines else ""}


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


def bench_server(n: int = 2048, *, concurrency: int = 64, latency_ms: float = 500.0,
                 n_sequential: int = 32, batch: bool = True,
                 litellm_path: bool = False, base_from_env: bool = True,
                 n_short: int = 0) -> dict[str, float]:
    """``complete_many`` against a sim-server process, with its baselines: a sequential
    loop of ``complete`` (``n_sequential`` calls, 0 skips it), ``litellm.batch_completion``
    (``batch``), ``complete_many`` with every call through litellm (``litellm_path``),
    with the server's URL in ``OPENAI_BASE_URL`` instead of ``api_base``
    (``base_from_env``), and ``n_short`` requests of a model not called before (0: not)."""
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
        out["ideal_s"] = n * latency_ms / 1000.0 / concurrency

        def measure(name: str, batch: list) -> None:
            """``complete_many`` over ``batch``: seconds, client CPU, failures, efficiency."""
            started, cpu = time.perf_counter(), time.process_time()
            results = complete_many(batch, concurrency=concurrency, progress=False)
            out[f"{name}_s"] = time.perf_counter() - started
            out[f"{name}_cpu_ms_per_call"] = (time.process_time() - cpu) * 1000 / n
            out[f"{name}_failed"] = sum(not r.ok for r in results)
            out[f"{name}_efficiency"] = out["ideal_s"] / out[f"{name}_s"]

        if n_short:  # a cold gate: the first run of another model at this endpoint
            short = [Request("openai/sim-judge-c", _messages(i, "short"),
                             params={"api_base": url}) for i in range(n_short)]
            started = time.perf_counter()
            results = complete_many(short, concurrency=concurrency, progress=False)
            out["short_s"] = time.perf_counter() - started
            out["short_ideal_s"] = n_short * latency_ms / 1000.0 / concurrency
            out["short_failed"] = sum(not r.ok for r in results)
            out["short_efficiency"] = out["short_ideal_s"] / out["short_s"]
            out.update(bench_fresh(url, n_short, concurrency=concurrency, latency_ms=latency_ms))
        wait = _runqueue_wait_s()
        measure("ours", requests)
        out["ours_cpu_wait_s"] = _wait_since(wait)
        out["efficiency"] = out.pop("ours_efficiency")
        if base_from_env:  # the URL from OPENAI_BASE_URL, not api_base: the same path
            with mock.patch.dict(os.environ, {"OPENAI_BASE_URL": url}):
                complete_many([Request(model, r.messages) for r in requests[:concurrency]],
                              concurrency=concurrency, progress=False)
                measure("env", [Request(model, _messages(i, "env")) for i in range(n)])
        if litellm_path:
            with mock.patch.dict(os.environ, {"WORKBENCH_HTTP_PATH": "litellm"}):
                measure("litellm_path", requests)

        if n_sequential:
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


#: The fresh process of :func:`bench_fresh`: ``workbench.llm`` imported, the timer
#: started, then ``complete_many`` (whose first direct call brings the HTTP client in).
_FRESH_CHILD = """
import json, sys, tempfile, time
from workbench.llm import Request, complete_many, temporary_settings
url, n, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with tempfile.TemporaryDirectory(prefix="workbench-bench-") as folder, \\
        temporary_settings(cache_dir=folder, cache_mode="off"):
    requests = [Request("openai/sim-judge-d", [{"role": "user", "content": f"fresh {i}: "
                        f"what is {i} + {i}?"}], params={"api_base": url}) for i in range(n)]
    fresh = "aiohttp" not in sys.modules
    started = time.perf_counter()
    results = complete_many(requests, concurrency=concurrency, progress=False)
    elapsed = time.perf_counter() - started
print(json.dumps({"s": elapsed, "failed": sum(not r.ok for r in results), "fresh": fresh}))
"""


def bench_fresh(url: str, n: int, *, concurrency: int, latency_ms: float) -> dict[str, float]:
    """The first run of a fresh process against an endpoint it has not seen: ``n``
    requests in a child process, timed around its ``complete_many`` call (the HTTP
    client's import, the gate's start from nothing and the first connections inside)."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FRESH_CHILD, url, str(n), str(concurrency)],
                          capture_output=True, text=True, check=True, timeout=600)
    child = json.loads(done.stdout.strip().splitlines()[-1])
    if not child["fresh"]:
        raise RuntimeError("the fresh child had the HTTP client imported before its timer")
    ideal = n * latency_ms / 1000.0 / concurrency
    return {"fresh_s": child["s"], "fresh_failed": child["failed"], "fresh_ideal_s": ideal,
            "fresh_efficiency": ideal / child["s"]}


def _wait_since(before: float | None) -> float:
    after = _runqueue_wait_s()
    return float("nan") if before is None or after is None else after - before


#: Targets of issue 14: cold efficiency per concurrency, and ours against litellm's batch.
EFFICIENCY_TARGETS = {64: 0.92, 256: 0.85}
BATCH_TARGET = 1.1
#: Target of the short run (issue 34): full speed from the first second.
SHORT_TARGET = 0.95


def run_llm_bench(*, n_replay: int | Sequence[int] = (10_000, 100_000), n_server: int = 2048,
                  concurrency: tuple[int, ...] | list[int] = (64, 256),
                  latency_ms: float = 500.0, n_sequential: int = 32, batch: bool = True,
                  n_short: int = 512, echo: Callable[[str], Any] = print) -> dict[str, Any]:
    """Run (a) and (b) of the module docstring, print the ratios; return the raw numbers.

    A client at the ideal time can be at most ``batch_completion / ideal`` times faster
    than ``batch_completion``: that bound is printed beside the ratio.
    """
    sizes = [n_replay] if isinstance(n_replay, int) else list(n_replay)
    echo("(a) cached replay: complete_many vs a bare diskcache.get loop over the same keys "
         f"(best of 5; target ratio >= {REPLAY_TARGET:g} at every size)")
    replays = {}
    for n in sizes:
        a = replays[n] = bench_replay(n)
        echo(f"    {n:>7} cached  bare {a['bare_us']:6.2f} us/call  replay {a['replay_us']:6.2f} "
             f"us/call (first {a['first_replay_us']:.2f})  ratio replay / bare {a['ratio']:6.3f}"
             f"  (waited {a['replay_cpu_wait_s']:.2f} s for a CPU)")
    echo(f"    progress of a fully cached run: {replays[sizes[-1]]['progress']!r}")
    servers = {}
    for i, conc in enumerate(concurrency):
        first = i == 0
        echo(f"(b) sim-server, {latency_ms:g} ms latency: {n_server} requests at concurrency "
             f"{conc}")
        b = bench_server(n_server, concurrency=conc, latency_ms=latency_ms,
                         n_sequential=n_sequential if first else 0, batch=batch,
                         litellm_path=first, n_short=n_short if first else 0)
        servers[conc] = b
        target = EFFICIENCY_TARGETS.get(conc)
        echo(f"    complete_many             {b['ours_s']:8.3f} s  ({b['ours_failed']:.0f} failed, "
             f"client CPU {b['ours_cpu_ms_per_call']:.2f} ms/call, "
             f"waited {b['ours_cpu_wait_s']:.2f} s for a CPU)")
        echo(f"    ideal n*latency/conc      {b['ideal_s']:8.3f} s")
        echo(f"    efficiency                {b['efficiency']:8.3f}"
             + (f"    (target >= {target:g})" if target else ""))
        if "short_s" in b:
            echo(f"    short run, cold gate      {b['short_s']:8.3f} s  ({n_short} calls of a "
                 f"model not called before, {b['short_failed']:.0f} failed; ideal "
                 f"{b['short_ideal_s']:.3f} s, efficiency {b['short_efficiency']:.3f}, "
                 f"target >= {SHORT_TARGET:g})")
            echo(f"    first run, fresh process  {b['fresh_s']:8.3f} s  ({n_short} calls from a "
                 f"new process to an endpoint it has not seen, {b['fresh_failed']:.0f} failed; "
                 f"ideal {b['fresh_ideal_s']:.3f} s, efficiency {b['fresh_efficiency']:.3f}, "
                 f"target >= {SHORT_TARGET:g})")
        if "env_s" in b:
            echo(f"    via OPENAI_BASE_URL       {b['env_s']:8.3f} s  ({b['env_failed']:.0f} failed, "
                 f"client CPU {b['env_cpu_ms_per_call']:.2f} ms/call, efficiency "
                 f"{b['env_efficiency']:.3f})")
        if first:
            echo(f"    via litellm (old path)    {b['litellm_path_s']:8.3f} s  (client CPU "
                 f"{b['litellm_path_cpu_ms_per_call']:.2f} ms/call, efficiency "
                 f"{b['litellm_path_efficiency']:.3f})")
            echo(f"    sequential complete x{n_server / n_sequential:g}    "
                 f"{b['sequential_scaled_s']:8.3f} s  (from {n_sequential} calls)")
            echo(f"    speed-up vs sequential    {b['speedup_vs_sequential']:8.1f} x")
        if batch:
            echo(f"    litellm.batch_completion  {b['batch_s']:8.3f} s  ({b['batch_failed']:.0f} "
                 f"failed, client CPU {b['batch_cpu_ms_per_call']:.2f} ms/call)")
            echo(f"    batch_completion / ours   {b['batch_over_ours']:8.3f}    "
                 f"(target >= {BATCH_TARGET:g}; at most {b['batch_s'] / b['ideal_s']:.3f}, "
                 "batch_completion / ideal: no client beats the ideal)")
    echo(f"    cpu count {os.cpu_count()}, load average "
         f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return {"replay": replays, "server": servers}


# --- `workbench bench run-all` ------------------------------------------------------

#: Warm/cold target of ``bench run-all``: a warm run-all at least 5x faster, through the
#: reply cache alone: every statistic and figure is computed again (issue 20).
RUN_ALL_TARGET = 5.0


def _cell_phases(executed: Path) -> dict[str, float]:
    """Seconds of an executed copy's code cells (Papermill's ``duration``), by kind.

    The kind is read from the cell's source: ``figures`` (calls ``save_figure``),
    ``setup`` (imports and ``setup(...)``), ``study`` (calls ``.run(``), else ``other``.
    """
    import json

    phases = dict.fromkeys(("setup", "study", "figures", "other"), 0.0)
    try:
        cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return phases
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        seconds = (cell.get("metadata", {}).get("papermill") or {}).get("duration") or 0.0
        kind = ("figures" if "save_figure(" in source
                else "setup" if "setup(" in source and "import " in source
                else "study" if ".run(" in source else "other")
        phases[kind] += float(seconds)
    return phases


def _same_files(made: Path, committed: Path) -> tuple[int, list[str]]:
    """Files below ``made`` byte-identical to their twin below ``committed``; the others."""
    same, differ = 0, []
    for path in sorted(p for p in made.rglob("*") if p.is_file()):
        twin = committed / path.relative_to(made)
        if twin.is_file() and twin.read_bytes() == path.read_bytes():
            same += 1
        else:
            differ.append(str(path.relative_to(made)))
    return same, differ


#: The runs of :func:`bench_run_all`, in order: name, what it is.
RUN_ALL_RUNS = (("cold", "cold: empty LLM cache"),
                ("warm", "warm: every reply cached by the cold run, every statistic and "
                         "figure computed again"))


def bench_run_all(*, only: Sequence[str] | None = None, kernel: str = "python3",
                  keep: str | os.PathLike | None = None, echo: Callable[[str], Any] = print,
                  **run_options: Any) -> dict[str, Any]:
    """``workbench run-all`` on the default designs, twice, back to back
    (:data:`RUN_ALL_RUNS`).

    The runs share one new temporary cache folder (``WORKBENCH_CACHE_DIR``, mode
    ``readwrite``) and write figures and tables below a temporary
    ``WORKBENCH_OUTPUT_DIR``, never over ``figures/`` or ``data/results/``; the executed
    copies go to ``cold/`` and ``warm/`` beside them. ``keep`` keeps that folder (it must
    not exist yet). Prints per-notebook seconds, the warm run's time by cell kind
    (:func:`_cell_phases`; ``overhead`` is the rest: kernel, Papermill, cache count), the
    warm/cold ratios of the notebook seconds (target :data:`RUN_ALL_TARGET`) and of the wall
    times, and whether the warm run's figures and tables are byte-identical to the committed ones.
    ``run_options`` go to :func:`workbench.notebook.run_all`. No test asserts these times.
    """
    import pandas as pd

    from workbench import config
    from workbench.notebook import run_all
    from workbench.notebook._run import _environment

    if keep is not None and Path(keep).exists():
        raise ValueError(f"--keep {keep}: the folder exists already; give a new one")
    with tempfile.TemporaryDirectory(prefix="workbench-bench-run-all-") as tmp:
        base = Path(keep) if keep is not None else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        outputs = base / "outputs"
        saved = config.overrides()
        config.set_overrides({k: v for k, v in saved.items() if k not in {"cache_dir", "cache_mode"}},
                             replace=True)
        load_before = os.getloadavg()
        walls: dict[str, float] = {}
        tables: dict[str, pd.DataFrame] = {}
        try:
            with _environment(WORKBENCH_CACHE_DIR=str(base / "cache"), WORKBENCH_CACHE_MODE="readwrite",
                              **{config.OUTPUT_ENV: str(outputs)}):
                for run, what in RUN_ALL_RUNS:
                    echo(f"run-all, {what} ...")
                    started = time.perf_counter()
                    tables[run] = run_all(only=only, output_dir=base / run, kernel=kernel,
                                          **run_options)
                    walls[run] = time.perf_counter() - started
        finally:
            config.set_overrides(saved, replace=True)
        load_after = os.getloadavg()
        cold, warm = tables["cold"], tables["warm"]
        rows = []
        for c, w in zip(cold.itertuples(index=False), warm.itertuples(index=False), strict=True):
            phases = _cell_phases(Path(w.output))
            rows.append({"notebook": c.notebook, "cold_s": c.seconds, "warm_s": w.seconds,
                         "ratio": c.seconds / w.seconds if w.seconds else float("nan"),
                         **{f"warm_{k}_s": round(v, 1) for k, v in phases.items()},
                         "warm_overhead_s": round(w.seconds - sum(phases.values()), 1),
                         "status": c.status if c.status != "ok" else w.status,
                         "warm_new_entries": w.new_cache_entries})
        table = pd.DataFrame(rows)
        figures = _same_files(outputs / "figures", config.figures_dir())
        results = _same_files(outputs / "results", config.results_dir())
    ratio = walls["cold"] / walls["warm"]
    cold_nb, warm_nb = float(table["cold_s"].sum()), float(table["warm_s"].sum())
    echo(table.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    echo(f"notebook seconds: cold {cold_nb:.1f} s, warm {warm_nb:.1f} s; warm is "
         f"{cold_nb / warm_nb if warm_nb else float('nan'):.1f}x faster "
         f"(target >= {RUN_ALL_TARGET:g}x)")
    echo(f"wall time: cold {walls['cold']:.1f} s, warm {walls['warm']:.1f} s; "
         f"warm is {ratio:.1f}x faster")
    for name, (same, differ) in (("figures/", figures), ("data/results/ (not committed; "
                                                         "timings in it vary)", results)):
        echo(f"warm outputs byte-identical to {name}: {same}/{same + len(differ)}"
             + (f" (differ or new: {', '.join(differ[:5])}{' ...' if len(differ) > 5 else ''})"
                if differ else ""))
    failed = table[table["status"] != "ok"]
    if len(failed):
        echo(f"failed: {', '.join(failed['notebook'])}")
    if any(table["warm_new_entries"].fillna(0) > 0):
        echo("note: the warm run added cache entries: those notebooks did not replay "
             "every call")
    echo(f"cpu count {os.cpu_count()}, load average before "
         f"{', '.join(f'{x:.2f}' for x in load_before)}, after "
         f"{', '.join(f'{x:.2f}' for x in load_after)}"
         + (f"; kept in {base}" if keep is not None else ""))
    return {"table": table, "cold_s": walls["cold"], "warm_s": walls["warm"], "ratio": ratio,
            "notebook_ratio": cold_nb / warm_nb if warm_nb else float("nan"),
            "figures_same": figures, "results_same": results}


__all__ = ["RUN_ALL_TARGET", "bench_fresh", "bench_replay", "bench_run_all", "bench_server",
           "run_llm_bench"]


def bench_labels(*, n_studies: int = 500, budget: int = 100, seed: int = 0,
                 echo: Callable[[str], Any] = print) -> Any:
    """``workbench bench labels``: study X4's simulation table in one run.

    Coverage (at the budget and at every label from the 20th), mean width and the width
    ratio to uniform sampling, each with its Monte Carlo standard error, of the active
    and uniform intervals over ``n_studies`` simulated studies of ``budget`` labels per
    scenario (:func:`workbench.studies.x4_human_labels._study.simulation`), on the bundled
    answers with X4's default configuration, then the binary-label (a judge's accuracy as
    people mark its verdicts) and continuous-label scenarios of
    :func:`workbench.labels.label_scenarios`; the sim judges' calls go to a temporary
    cache. Returns the table.
    """
    import numpy as np
    import pandas as pd

    from workbench.labels import label_scenarios, simulate_labelling
    from workbench.llm import temporary_settings
    from workbench.studies.x4_human_labels import Config
    from workbench.studies.x4_human_labels._study import pool, simulation

    config = Config(n_studies=n_studies, budget=budget, seed=seed, progress=False)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as folder:
        with temporary_settings(cache_dir=folder, cache_mode="readwrite"):
            frame, _ = pool(config)
    rng = np.random.default_rng(seed)
    table = simulation(frame, config, rng)
    extra = []
    for sc in label_scenarios(frame["latent"].to_numpy(), rng):
        part = simulate_labelling(np.asarray(sc["pred"], float), np.asarray(sc["unc"], float),
                                  sc["lab"], sc["target"], budget=budget, n_studies=n_studies,
                                  alpha=config.alpha, floor=config.floor,
                                  burn_in=config.burn_in, rng=rng.integers(2 ** 32))
        extra.append(part.assign(quantity=sc["quantity"], scenario=sc["scenario"],
                                 informative=sc["informative"], pool=len(sc["pred"])))
    table = pd.concat([table, *extra], ignore_index=True)
    cols = ["scenario", "method", "coverage", "coverage_se", "coverage_anytime",
            "coverage_anytime_se", "width", "width_ratio", "width_ratio_se", "ceiling"]
    with pd.option_context("display.width", 200, "display.max_rows", 500,
                           "display.max_colwidth", 60):
        echo(table[cols].round(3).to_string(index=False))
    echo(f"{n_studies} studies of {budget} labels per scenario, {1 - config.alpha:.0%} "
         f"confidence sequence; {time.perf_counter() - start:.0f} s")
    return table
