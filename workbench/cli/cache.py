"""``workbench cache ...``, ``workbench sim-server`` and ``workbench bench`` (llm, run-all, labels).

Thin typer commands; the logic lives in :mod:`workbench.llm`, :mod:`workbench.sim.server`
and :mod:`workbench.cli.bench`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.cli import fail

_DIR = typer.Option("--dir", help="Cache folder (default: WORKBENCH_CACHE_DIR or data/cache/llm).")


def _reported(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with a :class:`~workbench.errors.CacheError` (a damaged, read-only or
    full store) or a ``--dir`` that is a file printed as one ``error:`` line naming the
    folder, exit code 1."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        from workbench.errors import CacheError

        folder = kwargs.get("directory")
        if folder is not None and folder.exists() and not folder.is_dir():
            raise fail(f"--dir {folder}: a file, not a folder (the cache folder holds "
                       "replies.db; default data/cache/llm)", 1)
        try:
            command(*args, **kwargs)
        except CacheError as exc:
            raise fail(str(exc), 1) from None

    return run


def cache_stats(directory: Annotated[Path | None, _DIR] = None,
                as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Entries, size, counts per model and backend, total cost.

    Read-only; corrupt entries are counted, never decoded.
    """
    from workbench.llm import cache_stats as stats

    data = stats(directory)
    if as_json:
        typer.echo(json.dumps(data, indent=1, ensure_ascii=False))
        return
    typer.echo(f"folder      {data['folder']}")
    typer.echo(f"entries     {data['entries']}" + (f" ({data['corrupt']} corrupt)" if data["corrupt"] else ""))
    typer.echo(f"size        {data['size_bytes'] / 1e6:.2f} MB")
    typer.echo(f"total cost  ${data['total_cost_usd']:.4f}")
    if data["first"]:
        typer.echo(f"written     {data['first']} .. {data['last']}")
    for title, table in (("backend", data["by_backend"]), ("model", data["by_model"])):
        for name, count in table.items():
            typer.echo(f"  {title:<8} {name:<40} {count:>8}")


def cache_export(file: Annotated[Path, typer.Argument(help="Output .jsonl file.")],
                 directory: Annotated[Path | None, _DIR] = None) -> None:
    """Write every sound entry as one JSON line (with its key), sorted by key.

    The WAL is checkpointed first (replies.db alone then holds every entry); corrupt
    entries are left out and secret fields stripped, with a warning counting both.
    """
    from workbench.llm import export_cache

    count = export_cache(file, path=directory)
    typer.echo(f"exported {count} entries to {file}")


def cache_import(file: Annotated[Path, typer.Argument(help="A .jsonl file from `cache export`.")],
                 directory: Annotated[Path | None, _DIR] = None,
                 overwrite: Annotated[bool, typer.Option("--overwrite",
                                                         help="Replace existing entries.")] = False) -> None:
    """Import entries (all validated first; a bad line fails naming its number).

    Secret-bearing fields (API keys, headers, tokens, passwords, user:password@ in
    api_base) are stripped and counted; entries are stored sealed.
    """
    from workbench.llm import import_cache

    if not file.exists():
        raise fail(f"{file}: no such file", 1)
    try:
        counts = import_cache(file, path=directory, overwrite=overwrite)
    except ValueError as exc:  # a bad line (named), or a file that is not text
        raise fail(str(exc) if str(file) in str(exc) else f"{file}: {exc}", 1) from None
    typer.echo(f"imported {counts['imported']} of {counts['read']} entries "
               f"({counts['skipped']} already present, {counts['secrets_removed']} secret "
               "field(s) removed)")


def cache_explain(request: Annotated[Path | None, typer.Option(
                      "--request", help="JSON file holding a request (Request.to_dict()), "
                      "or a cache entry with a 'request' field.")] = None,
                  directory: Annotated[Path | None, _DIR] = None,
                  as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
                  last: Annotated[bool, typer.Option("--last", help="Explain the last readonly "
                                                     "cache miss (the default).")] = False) -> None:
    """Why a request misses: the nearest cached request and which fields differ."""
    from workbench.llm import explain, last_miss

    if request is not None:
        try:
            data = json.loads(request.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise fail(f"{request}: cannot read a JSON request: {exc}", 1) from None
    else:
        data = last_miss()
        if data is None:
            raise fail("no recorded cache miss; pass --request FILE", 1)
    if isinstance(data, dict) and "request" in data:
        data = data["request"]
    try:
        report = explain(data, path=directory)
    except ValueError as exc:
        raise fail(f"not a valid request: {exc}", 1) from None
    if as_json:
        typer.echo(json.dumps(report, indent=1, ensure_ascii=False))
        return
    typer.echo(f"request key  {report['key']}")
    if report["cached"]:
        typer.echo("cached: this request is a hit")
        return
    typer.echo(f"nearest      {report['nearest_key']}")
    for line in report["notes"]:
        typer.echo(f"  {line}")


def cache_check(directory: Annotated[Path | None, _DIR] = None,
                as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Check the store (read-only); exit code 1 when anything is wrong.

    Reports SQLite's integrity check, every entry's check (text, seal, stored key,
    request hashing to the key), rows on damaged pages, and the WAL's size.
    """
    from workbench.llm import check_cache

    report = check_cache(directory)
    if as_json:
        typer.echo(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        typer.echo(f"folder      {report['folder']}")
        sizes = f"replies.db {report['db_bytes']} bytes, WAL {report['wal_bytes'] or 0} bytes"
        typer.echo(f"files       {sizes}" if report["db_bytes"] is not None else "files       none")
        typer.echo(f"integrity   {report['integrity'][0] if report['integrity'] else '?'}")
        for line in report["integrity"][1:5]:
            typer.echo(f"            {line}")
        typer.echo(f"entries     {report['entries']} sound ({report['sealed']} sealed, "
                   f"{report['unsealed']} checked by their request's hash)")
        typer.echo(f"corrupt     {report['corrupt']}")
        for why, count in report["problems"].items():
            typer.echo(f"  {count:>8}  {why}")
        typer.echo(f"unreadable  {report['unreadable']} row(s) on damaged pages"
                   + (f", {report['missing']} more the store counts but cannot find"
                      if report["missing"] else ""))
        if report["wal_bytes"]:
            typer.echo("note        pages in the WAL may not be in replies.db yet: copy the "
                       "folder whole (or run `workbench cache export`, which checkpoints)")
        if not report["ok"]:
            typer.echo(f"run `workbench cache repair --dir {report['folder']}` to salvage "
                       "every sound entry into a fresh store")
    if not report["ok"]:
        raise typer.Exit(1)


def cache_repair(directory: Annotated[Path | None, _DIR] = None) -> None:
    """Salvage every sound entry into a fresh store in the folder's place.

    The old folder is kept as <folder>.before-repair-<time>; the report says what was
    salvaged and what was lost, and why. Refused while a run may write to the store.
    """
    from workbench.llm import repair_cache

    try:
        report = repair_cache(directory)
    except (FileNotFoundError, OSError) as exc:
        raise fail(str(exc), 1) from None
    typer.echo(f"salvaged    {report['salvaged']} entries into a fresh store at {report['folder']}")
    typer.echo(f"left out    {report['corrupt']} corrupt entries")
    for why, count in report["problems"].items():
        typer.echo(f"  {count:>8}  {why}")
    typer.echo(f"unreadable  {report['unreadable']} row(s) on damaged pages")
    if not report["db_bytes"]:
        typer.echo("lost        everything the old store held (it was empty, missing or unreadable)")
    elif report["lost"] is None:
        typer.echo("lost        unknown (the old store's own count is unreadable)")
    else:
        typer.echo(f"lost        {report['lost']} of {report['expected']} entries")
    typer.echo(f"old store   kept at {report['backup']} (delete it when satisfied)")


def cache_clear(directory: Annotated[Path | None, _DIR] = None,
                yes: Annotated[bool, typer.Option("--yes", help="Really delete every entry.")] = False) -> None:
    """Delete every cache entry (needs --yes)."""
    from workbench.llm import clear_cache

    if not yes:
        raise fail("this deletes every cached reply; run again with --yes", 1)
    typer.echo(f"deleted {clear_cache(directory)} entries")


def sim_server(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: a free port).")] = 8765,
    latency_ms: Annotated[float, typer.Option(help="Delay of every response.")] = 0.0,
    rate_limit_rate: Annotated[float, typer.Option(help="Share of 429 replies.")] = 0.0,
    server_error_rate: Annotated[float, typer.Option(help="Share of 500 replies.")] = 0.0,
    timeout_rate: Annotated[float, typer.Option(help="Share of hung requests.")] = 0.0,
    malformed_rate: Annotated[float, typer.Option(help="Share of truncated JSON bodies.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 0,
    empty_rate: Annotated[float, typer.Option(help="Share of replies with content: null.")] = 0.0,
    batch_latency_ms: Annotated[float, typer.Option(
        help="Time a batch job takes from submission to its final status.")] = 1000.0,
    batch_error_rate: Annotated[float, typer.Option(
        help="Share of a batch's requests that fail (in its error file).")] = 0.0,
    batch_final: Annotated[str, typer.Option(
        help="Final status of every batch job: completed | failed | expired.")] = "completed",
    mimic: Annotated[str, typer.Option(
        help="Behave like: openai | llamacpp (json_object+schema only, 500 on json_schema).")
    ] = "openai",
    quota_rpm: Annotated[float | None, typer.Option(
        help="Quota: requests per minute per model and API key (429 + Retry-After past it).")
    ] = None,
    quota_tpm: Annotated[float | None, typer.Option(
        help="Quota: tokens per minute per model and API key (prompt + max_tokens charged).")
    ] = None,
    quota_burst_s: Annotated[float, typer.Option(
        help="Quota bucket capacity, in seconds of quota (60: a full minute).")] = 60.0,
) -> None:
    """Serve the simulated profiles as an OpenAI-compatible API (model sim-<profile>),
    with the Files and Batch endpoints for ``complete_many(mode="batch")``."""
    from workbench.sim._batches import BatchService
    from workbench.sim._quota import Quota
    from workbench.sim.server import MIMICS, FaultRates, serve

    if mimic not in MIMICS:
        raise fail(f"--mimic {mimic!r}: expected one of {', '.join(MIMICS)}", 1)
    try:
        faults = FaultRates(rate_limit_rate, server_error_rate, timeout_rate, malformed_rate,
                            empty_rate)
        batches = BatchService(latency_ms=batch_latency_ms, error_rate=batch_error_rate,
                               final=batch_final, seed=seed)
        quota = Quota(quota_rpm, quota_tpm, quota_burst_s)
    except ValueError as exc:
        raise fail(str(exc), 1) from None
    if latency_ms < 0:
        raise fail("--latency-ms must be >= 0", 1)
    if not 0 <= port <= 65535:
        raise fail(f"--port {port}: expected 0 (a free port) to 65535", 1)
    serve(port=port, latency_ms=latency_ms, faults=faults, seed=seed, batches=batches,
          mimic=mimic, quota=quota)


def _at_least(low: float, **values: float) -> None:
    """Fail naming the first option whose value is below ``low``."""
    for option, value in values.items():
        if value < low:
            raise fail(f"{option} {value:g}: must be >= {low:g}", 1)


def _one_of(option: str, given: list[str] | None, known) -> None:
    """Fail naming a value of a repeatable ``option`` that is not in ``known``."""
    for value in given or []:
        if value not in known:
            raise fail(f"{option} {value!r}: expected one of " + ", ".join(map(repr, known)), 1)


def bench_llm(
    n_replay: Annotated[list[int], typer.Option(
        help="Cached requests replayed (repeat the option for several sizes).")
    ] = [10_000, 100_000],  # noqa: B006
    n_server: Annotated[int, typer.Option(help="Requests sent to the sim-server.")] = 2048,
    concurrency: Annotated[list[int], typer.Option(
        help="Calls in flight (repeat the option for several runs).")] = [64, 256],  # noqa: B006
    latency_ms: Annotated[float, typer.Option(help="sim-server latency.")] = 500.0,
    n_sequential: Annotated[int, typer.Option(help="Requests of the sequential baseline.")] = 32,
    batch: Annotated[bool, typer.Option("--batch/--no-batch",
                                        help="Compare with litellm.batch_completion.")] = True,
    n_short: Annotated[int, typer.Option(
        help="Requests of the short run of a model not called before (0: none).")] = 512,
) -> None:
    """Throughput of the LLM layer: cached replay and calls against a sim-server."""
    from workbench.cli.bench import run_llm_bench

    _at_least(1, **{"--n-replay": min(n_replay, default=1), "--n-server": n_server,
                    "--concurrency": min(concurrency, default=1), "--n-sequential": n_sequential})
    _at_least(0, **{"--latency-ms": latency_ms, "--n-short": n_short})

    run_llm_bench(n_replay=n_replay, n_server=n_server, concurrency=concurrency,
                  latency_ms=latency_ms, n_sequential=n_sequential, batch=batch,
                  n_short=n_short, echo=typer.echo)


def bench_quota(
    latency_ms: Annotated[float, typer.Option(help="sim-server latency.")] = 200.0,
    seconds: Annotated[float, typer.Option(
        help="Length of a run at the quota (600 and 6,000 RPM, the token quota).")] = 15.0,
    seconds_slow: Annotated[float, typer.Option(
        help="Length of a run at 60 RPM.")] = 20.0,
    burst_s: Annotated[float, typer.Option(
        help="Bucket capacity in seconds of quota (a provider's is 60).")] = 1.0,
    client: Annotated[list[str] | None, typer.Option(
        "--client", help="Only these clients (workbench, 'fixed 16', 'fixed 64', "
        "'fixed 256', 'litellm Router'; repeatable).")] = None,
    quota: Annotated[list[str] | None, typer.Option(
        "--quota", help="Only these quotas ('60 RPM', '600 RPM', '6,000 RPM', "
        "'60,000 TPM'; repeatable).")] = None,
    rpm: Annotated[list[float] | None, typer.Option(
        "--rpm", help="Request quotas to measure (default 60, 600, 6000; repeatable).")] = None,
) -> None:
    """Runs at a provider's quota: throughput / quota, failed rows and 429s per row,
    for the workbench beside fixed concurrencies and litellm's Router."""
    from workbench.cli.bench_quota import FIXED, RPMS, run_quota_bench, scenarios

    _at_least(0, **{"--latency-ms": latency_ms})
    if min(seconds, seconds_slow, burst_s) <= 0:
        raise fail("--seconds, --seconds-slow and --burst-s must be > 0", 1)
    _one_of("--client", client, ("workbench", *(f"fixed {c}" for c in FIXED), "litellm Router"))
    rpms = tuple(rpm) if rpm else RPMS
    if min(rpms) <= 0:
        raise fail("--rpm must be > 0", 1)
    _one_of("--quota", quota, [s["name"] for s in scenarios(seconds, seconds_slow, burst_s, rpms)])
    run_quota_bench(latency_ms=latency_ms, seconds=seconds, seconds_slow=seconds_slow,
                    burst_s=burst_s, clients=tuple(client) if client else None,
                    only=tuple(quota) if quota else None,
                    rpms=rpms, echo=typer.echo)


def bench_scale(
    calls: Annotated[list[int], typer.Option(
        help="Simulated calls (repeat the option for several sizes).")
    ] = [100_000, 1_000_000],  # noqa: B006
    window: Annotated[int | None, typer.Option(
        help="complete_iter's window (default: its own).")] = None,
) -> None:
    """complete_iter at scale: calls/s cold and warm, peak RSS and cache size, each
    phase in a process of its own."""
    from workbench.cli.bench_scale import run_scale_bench

    if any(n < 1 for n in calls) or (window is not None and window < 1):
        raise fail("--calls and --window must be >= 1", 1)
    run_scale_bench(calls, window=window, echo=typer.echo)


def bench_run_all(
    only: Annotated[list[str] | None, typer.Option(
        "--only", help="Run only these notebooks (repeatable; default all).")] = None,
    kernel: Annotated[str, typer.Option("--kernel", help="Jupyter kernel name.")] = "python3",
    keep: Annotated[Path | None, typer.Option(
        "--keep", help="Keep the cache, executed copies and outputs in this new folder.")] = None,
    shared_kernel: Annotated[bool, typer.Option(
        "--shared-kernel/--kernel-per-notebook",
        help="As for run-all: one kernel for all notebooks (default) or a new one each.")] = True,
) -> None:
    """`workbench run-all` cold, then warm from the reply cache (target: warm >= 5x faster).

    Default designs, temporary cache and output folders: figures/ and data/results/ are
    not written. Prints per-notebook seconds and where the warm time goes.
    """
    from workbench.cli.bench import bench_run_all as run_bench

    try:
        result = run_bench(only=only, kernel=kernel, keep=keep, echo=typer.echo,
                           shared_kernel=shared_kernel)
    except ValueError as exc:
        raise fail(str(exc), 1) from None
    if (result["table"]["status"] != "ok").any():
        raise typer.Exit(1)


def bench_labels(
    n_studies: Annotated[int, typer.Option(help="Simulated studies per scenario.")] = 500,
    budget: Annotated[int, typer.Option(help="Labels per study.")] = 100,
    seed: Annotated[int, typer.Option(help="Seeds the simulation.")] = 0,
) -> None:
    """Coverage and width of active vs uniform labelling (study X4's simulation table)."""
    from workbench.cli.bench import bench_labels as run_bench

    if n_studies < 2 or budget < 2:
        raise fail("--n-studies and --budget must be >= 2", 1)
    run_bench(n_studies=n_studies, budget=budget, seed=seed, echo=typer.echo)


def register(app: typer.Typer) -> None:
    """Add ``cache``, ``sim-server`` and ``bench`` (``llm``, ``run-all``, ``labels``) to the ``workbench``
    command."""
    cache = typer.Typer(no_args_is_help=True, help=(
        "The LLM reply cache: JSON entries in one SQLite table (replies.db), each "
        "checked against its key on replay. `check` and `repair` diagnose and salvage a "
        "damaged store."))
    for name, command in (("stats", cache_stats), ("export", cache_export),
                          ("import", cache_import), ("explain", cache_explain),
                          ("check", cache_check), ("repair", cache_repair),
                          ("clear", cache_clear)):
        cache.command(name)(_reported(command))
    app.add_typer(cache, name="cache")
    app.command("sim-server")(sim_server)
    bench = typer.Typer(no_args_is_help=True, help="Timing benchmarks (ratios from one run).")
    bench.command("llm")(bench_llm)
    bench.command("quota")(bench_quota)
    bench.command("scale")(bench_scale)
    bench.command("run-all")(bench_run_all)
    bench.command("labels")(bench_labels)
    app.add_typer(bench, name="bench")
