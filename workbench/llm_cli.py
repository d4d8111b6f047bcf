"""``workbench cache ...``, ``workbench sim-server`` and ``workbench bench llm``.

Thin typer commands; the logic lives in :mod:`workbench.llm`, :mod:`workbench.sim.server`
and :mod:`workbench.bench`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

_DIR = typer.Option("--dir", help="Cache folder (default: WORKBENCH_CACHE_DIR or data/cache/llm).")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def cache_stats(directory: Annotated[Path | None, _DIR] = None,
                as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Entries, size, counts per model and backend, total cost."""
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
    """Write every entry as one JSON line (with its key), sorted by key."""
    from workbench.llm import export_cache

    count = export_cache(file, path=directory)
    typer.echo(f"exported {count} entries to {file}")


def cache_import(file: Annotated[Path, typer.Argument(help="A .jsonl file from `cache export`.")],
                 directory: Annotated[Path | None, _DIR] = None,
                 overwrite: Annotated[bool, typer.Option("--overwrite",
                                                         help="Replace existing entries.")] = False) -> None:
    """Import entries (all validated first; a bad line fails naming its number)."""
    from workbench.llm import import_cache

    if not file.exists():
        raise _fail(f"{file}: no such file")
    try:
        counts = import_cache(file, path=directory, overwrite=overwrite)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"imported {counts['imported']} of {counts['read']} entries "
               f"({counts['skipped']} already present)")


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
            raise _fail(f"{request}: cannot read a JSON request: {exc}") from None
    else:
        data = last_miss()
        if data is None:
            raise _fail("no recorded cache miss; pass --request FILE")
    if isinstance(data, dict) and "request" in data:
        data = data["request"]
    try:
        report = explain(data, path=directory)
    except ValueError as exc:
        raise _fail(f"not a valid request: {exc}") from None
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


def cache_clear(directory: Annotated[Path | None, _DIR] = None,
                yes: Annotated[bool, typer.Option("--yes", help="Really delete every entry.")] = False) -> None:
    """Delete every cache entry (needs --yes)."""
    from workbench.llm import clear_cache

    if not yes:
        raise _fail("this deletes every cached reply; run again with --yes")
    typer.echo(f"deleted {clear_cache(directory)} entries")


def sim_server(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: a free port).")] = 8765,
    latency_ms: Annotated[float, typer.Option(help="Delay of every response.")] = 0.0,
    rate_limit_rate: Annotated[float, typer.Option(help="Share of 429 replies.")] = 0.0,
    server_error_rate: Annotated[float, typer.Option(help="Share of 500 replies.")] = 0.0,
    timeout_rate: Annotated[float, typer.Option(help="Share of hung requests.")] = 0.0,
    malformed_rate: Annotated[float, typer.Option(help="Share of truncated JSON bodies.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 0,
) -> None:
    """Serve the simulated profiles as an OpenAI-compatible API (model sim-<profile>)."""
    from workbench.sim.server import FaultRates, serve

    try:
        faults = FaultRates(rate_limit_rate, server_error_rate, timeout_rate, malformed_rate)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    if latency_ms < 0:
        raise _fail("--latency-ms must be >= 0")
    serve(port=port, latency_ms=latency_ms, faults=faults, seed=seed)


def bench_llm(
    n_replay: Annotated[int, typer.Option(help="Cached requests replayed.")] = 10_000,
    n_server: Annotated[int, typer.Option(help="Requests sent to the sim-server.")] = 512,
    concurrency: Annotated[int, typer.Option(help="Calls in flight.")] = 64,
    latency_ms: Annotated[float, typer.Option(help="sim-server latency.")] = 500.0,
    n_sequential: Annotated[int, typer.Option(help="Requests of the sequential baseline.")] = 32,
    batch: Annotated[bool, typer.Option("--batch/--no-batch",
                                        help="Compare with litellm.batch_completion.")] = True,
) -> None:
    """Throughput of the LLM layer: cached replay and calls against a sim-server."""
    from workbench.bench import run_llm_bench

    run_llm_bench(n_replay=n_replay, n_server=n_server, concurrency=concurrency,
                  latency_ms=latency_ms, n_sequential=n_sequential, batch=batch,
                  echo=typer.echo)


def register(app: typer.Typer) -> None:
    """Add ``cache``, ``sim-server`` and ``bench`` to the ``workbench`` command."""
    cache = typer.Typer(no_args_is_help=True, help="The LLM reply cache.")
    cache.command("stats")(cache_stats)
    cache.command("export")(cache_export)
    cache.command("import")(cache_import)
    cache.command("explain")(cache_explain)
    cache.command("clear")(cache_clear)
    app.add_typer(cache, name="cache")
    app.command("sim-server")(sim_server)
    bench = typer.Typer(no_args_is_help=True, help="Timing benchmarks (ratios from one run).")
    bench.command("llm")(bench_llm)
    app.add_typer(bench, name="bench")
