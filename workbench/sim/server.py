"""``workbench sim-server``: the simulated profiles behind an OpenAI-compatible HTTP API.

``POST /v1/chat/completions`` on 127.0.0.1 answers model ``sim-<profile>`` (e.g.
``sim-judge-a``) with :func:`workbench.sim.engine.respond`; from litellm it is
``openai/sim-judge-a`` with ``api_base="http://127.0.0.1:<port>/v1"``. The repeat
index arrives as the body field ``workbench_sample`` (litellm's ``extra_body``).

Faults are injected at the given rates, drawn from a ``random.Random(seed)`` in
arrival order: 429 rate limits, 500 server errors, hung requests (no answer within
any sane timeout), malformed (truncated) JSON bodies and empty replies (a 200 whose
``content`` is ``null``); every response waits
``latency_ms`` first. ``GET /stats`` returns ``{"requests": N, "by_status": {"200": n,
"429": n, ...}}`` counted since start, plus ``faults`` (injected, by kind),
``connections`` (distinct client connections: keep-alive reuse), ``in_flight`` and
``peak_in_flight``, ``by_endpoint`` (requests per ``METHOD /route``, e.g.
``GET /v1/batches/{batch_id}``) and ``batches`` (files uploaded, jobs created and
retrieved, downloads per file);
``GET /v1/models`` lists the models. The OpenAI Files and Batch endpoints (upload a
JSONL, create and retrieve a job, download its output and error files), with
injected job failures, are in :mod:`workbench.sim._batches`.

A provider's quota (``--quota-rpm``, ``--quota-tpm``, ``--quota-burst-s``): token
buckets per model and API key that answer 429 with ``Retry-After`` and the
``x-ratelimit-*`` headers, charging a request its prompt tokens plus its ``max_tokens``
(:mod:`workbench.sim._quota`); ``/stats`` then has ``quota`` (admitted, rejected).
The 429s of ``--rate-limit-rate`` are random faults, not a quota.

Built on aiohttp (a litellm dependency): asyncio, HTTP/1.1 keep-alive, hundreds of
concurrent requests in one process.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from workbench.sim import _checks
from workbench.sim._batches import FINALS, BatchService, error_body
from workbench.sim._quota import Limiter, Quota

MODEL_PREFIX = "sim-"
HANG_S = 3600.0
_FAULTS = ("rate_limit", "server_error", "timeout", "malformed", "empty")


@dataclass(frozen=True)
class FaultRates:
    """Shares of requests answered with a fault (each in [0, 1], summing to <= 1)."""

    rate_limit: float = 0.0
    server_error: float = 0.0
    timeout: float = 0.0
    malformed: float = 0.0
    empty: float = 0.0

    def __post_init__(self) -> None:
        for name in _FAULTS:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"--{name.replace('_', '-')}-rate={value!r}: expected a rate in [0, 1]")
        if sum(getattr(self, name) for name in _FAULTS) > 1.0 + 1e-9:
            raise ValueError("the fault rates sum to more than 1")

    def draw(self, u: float) -> str | None:
        """The fault for a uniform draw ``u`` (or ``None``)."""
        edge = 0.0
        for name in _FAULTS:
            edge += getattr(self, name)
            if u < edge:
                return name
        return None


def _error(status: int, message: str, kind: str, code: str | None = None,
           param: str | None = None) -> web.Response:
    return web.json_response(error_body(message, kind, code, param), status=status)


#: Servers the sim-server can behave like: ``openai`` (the API as documented) or
#: ``llamacpp`` (llama.cpp's server: ``/models`` says ``owned_by: llamacpp``, and a
#: ``json_schema`` response format is an HTTP 500; it takes ``json_object`` with a schema).
MIMICS = ("openai", "llamacpp")


class SimServer:
    """The request handlers and counters of one server."""

    def __init__(self, *, latency_ms: float = 0.0, faults: FaultRates | None = None,
                 seed: int = 0, batches: BatchService | None = None, mimic: str = "openai",
                 quota: Quota | None = None):
        if latency_ms < 0:
            raise ValueError(f"--latency-ms={latency_ms!r}: expected >= 0")
        if mimic not in MIMICS:
            raise ValueError(f"--mimic={mimic!r}: expected one of {', '.join(MIMICS)}")
        self.mimic = mimic
        self.latency_s = latency_ms / 1000.0
        self.faults = faults or FaultRates()
        self.rng = random.Random(seed)
        self.requests = 0
        self.by_status: Counter[str] = Counter()
        self.fault_counts: Counter[str] = Counter()
        self.in_flight = 0
        self.peak_in_flight = 0
        self.peers: set = set()
        self.batches = batches or BatchService(seed=seed)
        self.quota = Limiter(quota) if quota is not None and quota.active else None
        self.by_endpoint: Counter[str] = Counter()

    @web.middleware
    async def _count_endpoint(self, request: web.Request, handler: Any) -> web.StreamResponse:
        resource = request.match_info.route.resource
        path = resource.canonical if resource is not None else "(no route)"
        self.by_endpoint[f"{request.method} {path}"] += 1
        return await handler(request)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024,
                              middlewares=[self._count_endpoint])
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/stats", self.stats)
        self.batches.routes(app, answer_body)
        return app

    async def stats(self, request: web.Request) -> web.Response:
        return web.json_response({"requests": self.requests,
                                  "by_status": dict(sorted(self.by_status.items())),
                                  "faults": dict(sorted(self.fault_counts.items())),
                                  "connections": len(self.peers),
                                  "in_flight": self.in_flight,
                                  "peak_in_flight": self.peak_in_flight,
                                  "by_endpoint": dict(sorted(self.by_endpoint.items())),
                                  "batches": self.batches.stats(),
                                  "quota": self.quota.stats() if self.quota else None})

    async def models(self, request: web.Request) -> web.Response:
        from workbench.sim import engine

        owner = "llamacpp" if self.mimic == "llamacpp" else "workbench-sim"
        data = [{"id": MODEL_PREFIX + p, "object": "model", "created": 0,
                 "owned_by": owner} for p in engine.profiles()]
        return web.json_response({"object": "list", "data": data})

    def _count(self, response: web.StreamResponse) -> web.StreamResponse:
        self.by_status[str(response.status)] += 1
        return response

    async def chat(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        if request.transport is not None:
            self.peers.add(request.transport.get_extra_info("peername"))
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            started = time.perf_counter()
            fault = self.faults.draw(self.rng.random())
            response = await self._answer(request, fault)
            if response.headers.get("retry-after-ms") is not None:
                return self._count(response)  # the quota's 429: at once, like a provider
            if fault == "timeout" and response.status == 200:
                self.fault_counts["timeout"] += 1
                await asyncio.sleep(HANG_S)  # hung: the client gives up first
            wait = self.latency_s - (time.perf_counter() - started)
            if wait > 0:
                await asyncio.sleep(wait)
            return self._count(response)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: web.Request, fault: str | None) -> web.Response:
        try:
            body = _checks.parse(await request.read())
            _checks.check(body)
        except _checks.BadRequest as exc:
            return _error(400, str(exc), "invalid_request_error", exc.code, exc.param)
        form = body.get("response_format")
        if self.mimic == "llamacpp" and isinstance(form, dict) and form.get("type") == "json_schema":
            # what llama.cpp's server answers to the standard form (it wants json_object + schema)
            return _error(500, "response_format type json_schema is not supported: use "
                          "{\"type\": \"json_object\", \"schema\": ...}", "server_error")
        limits: dict[str, str] = {}
        buckets = None
        if self.quota is not None:
            admitted, limits, buckets = self.quota.admit(
                body["model"], request.headers.get("Authorization", ""), body)
            if not admitted:
                response = _error(429, f"Rate limit reached for {body['model']}: please "
                                  f"try again in {limits['retry-after-ms']}ms",
                                  "requests", "rate_limit_exceeded")
                response.headers.update(limits)
                return response
        response, completion = self._reply(body, fault)
        if buckets is not None and not (body.get("max_tokens")
                                        or body.get("max_completion_tokens")):
            self.quota.charge_completion(buckets, completion)
        response.headers.update(limits)
        return response

    def _reply(self, body: dict[str, Any], fault: str | None) -> tuple[web.Response, int]:
        """The answer to a valid body, with its completion tokens (0 for an error)."""
        if fault == "rate_limit":
            self.fault_counts[fault] += 1
            return _error(429, "simulated rate limit: slow down", "rate_limit_error",
                          "rate_limit_exceeded"), 0
        if fault == "server_error":
            self.fault_counts[fault] += 1
            return _error(500, "simulated internal server error", "server_error"), 0
        status, payload = chat_payload(body)
        if status != 200:
            return web.json_response(payload, status=status), 0
        completion = int(payload["usage"]["completion_tokens"])
        if fault == "malformed":
            self.fault_counts[fault] += 1
            text = json.dumps({"id": "chatcmpl-sim", "object": "chat.completion",
                               "choices": [{"index": 0, "message": {
                                   "content": payload["choices"][0]["message"]["content"]}}]})
            return web.Response(text=text[: max(12, len(text) // 2)],
                                content_type="application/json"), completion
        if fault == "empty":
            self.fault_counts[fault] += 1
            payload["choices"][0]["message"]["content"] = None
        return web.json_response(payload), completion


def answer_body(body: Any) -> tuple[int, dict[str, Any]]:
    """``(status, JSON body)`` answering one chat request body: validation, then
    :func:`chat_payload` (the batch jobs' answers)."""
    try:
        _checks.check(body)
    except _checks.BadRequest as exc:
        return 400, error_body(str(exc), "invalid_request_error", exc.code, exc.param)
    return chat_payload(body)


def chat_payload(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """``(status, JSON body)`` of the answer to a chat request that passed
    :func:`workbench.sim._checks.check` (no fault injected): shared by the chat and batch endpoints."""
    from workbench.sim import engine

    model = body["model"]
    profile = model[len(MODEL_PREFIX):] if model.startswith(MODEL_PREFIX) else model
    logprobs = bool(body.get("logprobs") or False)
    try:
        reply = engine.respond(
            profile, body["messages"],
            temperature=float(body.get("temperature") if body.get("temperature") is not None else 1.0),
            sample=int(body.get("workbench_sample") or 0),
            logprobs=logprobs, top_logprobs=body.get("top_logprobs"),
            max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"))
    except ValueError as exc:
        if profile not in engine.profiles():
            return 404, error_body(f"The model '{model}' does not exist",
                                    "invalid_request_error", "model_not_found")
        return 400, error_body(str(exc), "invalid_request_error")
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:24]
    payload = {
        "id": f"chatcmpl-sim-{digest}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "workbench-sim",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": reply.text},
            "logprobs": {"content": reply.logprobs} if logprobs and reply.logprobs else None,
            "finish_reason": "stop",
        }],
        "usage": {"prompt_tokens": reply.prompt_tokens,
                  "completion_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens},
    }
    return 200, payload


async def start(server: SimServer, *, host: str = "127.0.0.1",
                port: int = 0) -> tuple[web.AppRunner, int]:
    """Start serving; returns the runner and the bound port (``port=0``: a free one)."""
    runner = web.AppRunner(server.app(), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024, shutdown_timeout=0.1)
    await site.start()
    return runner, int(runner.addresses[0][1])


def serve(*, port: int = 8765, host: str = "127.0.0.1", **options: Any) -> None:
    """Serve until SIGINT/SIGTERM; prints ``sim-server listening on <base url>`` once bound.

    ``options``: those of :class:`SimServer` (latency, faults, seed, batches, mimic, quota).
    """
    server = SimServer(**options)

    async def main() -> None:
        runner, bound = await start(server, host=host, port=port)
        print(f"sim-server listening on http://{host}:{bound}/v1", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, stop.set)
            except (NotImplementedError, RuntimeError):
                pass
        await stop.wait()
        try:
            await asyncio.wait_for(runner.cleanup(), 2.0)
        except (TimeoutError, asyncio.CancelledError):
            pass

    asyncio.run(main())


@contextmanager
def running_server(*, server: SimServer | None = None,
                   **options: Any) -> Iterator[tuple[str, SimServer]]:
    """A sim-server in a background thread of this process: ``(base_url, server)``.

    For tests that need the server in-process (e.g. to watch what reaches the
    engine); benchmarks should run ``workbench sim-server`` as its own process.
    ``options`` are those of :class:`SimServer`. ``server``: serve this one instead (the
    options are then ignored), e.g. a test's subclass of :class:`SimServer` or
    :class:`~workbench.sim._batches.BatchService` that injects a fault of its own.
    """
    if server is None:
        server = SimServer(**options)
    loop = asyncio.new_event_loop()
    ready: dict[str, Any] = {}
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            ready["runner"], ready["port"] = loop.run_until_complete(start(server))
        except BaseException as exc:  # reported to the caller below
            ready["error"] = exc
        started.set()
        if "error" not in ready:
            loop.run_forever()

    thread = threading.Thread(target=run, name="sim-server", daemon=True)
    thread.start()
    started.wait()
    if "error" in ready:
        raise ready["error"]
    try:
        yield f"http://127.0.0.1:{ready['port']}/v1", server
    finally:
        async def stop() -> None:
            await ready["runner"].cleanup()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        try:
            asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            loop.close()


def stop_process(process: subprocess.Popen, *, timeout: float) -> None:
    """End a child process: terminate it, and kill it if it has not exited within
    ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def spawned_server(*, latency_ms: float = 0.0, rate_limit_rate: float = 0.0,
                   server_error_rate: float = 0.0, timeout_rate: float = 0.0,
                   malformed_rate: float = 0.0, seed: int = 0,
                   startup_timeout: float = 60.0, empty_rate: float = 0.0,
                   batch_latency_ms: float = 1000.0, batch_error_rate: float = 0.0,
                   batch_final: str = "completed",
                   quota: Quota | None = None) -> Iterator[str]:
    """A sim-server in its own process on a free port; yields its base URL.

    The process runs ``python -m workbench.sim.server`` (the options of
    ``workbench sim-server``) and is terminated on exit.
    """
    import tempfile

    options = {
        "latency-ms": latency_ms,
        "rate-limit-rate": rate_limit_rate,
        "server-error-rate": server_error_rate,
        "timeout-rate": timeout_rate,
        "malformed-rate": malformed_rate,
        "empty-rate": empty_rate,
        "seed": seed,
        "batch-latency-ms": batch_latency_ms,
        "batch-error-rate": batch_error_rate,
        "batch-final": batch_final,
    }
    command = [sys.executable, "-m", "workbench.sim.server", "--port", "0",
               *(f"--{name}={value}" for name, value in options.items())]
    if quota is not None:
        command += [f"--quota-burst-s={quota.burst_s}"]
        command += [f"--quota-{name}={getattr(quota, name)}" for name in ("rpm", "tpm")
                    if getattr(quota, name) is not None]
    errors = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
    try:
        url = _await_url(process, startup_timeout, errors)
        yield url
    finally:
        stop_process(process, timeout=10)
        process.stdout.close()
        errors.close()


def _await_url(process: Any, timeout: float, errors: Any) -> str:
    found: dict[str, str] = {}

    def read() -> None:
        found["line"] = process.stdout.readline()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    line = found.get("line", "")
    if " on " not in line:
        process.kill()
        process.wait(timeout=10)
        errors.seek(0)
        raise RuntimeError(f"sim-server did not start (exit {process.returncode}): "
                           f"{errors.read().strip()[-2000:]}")
    return line.rsplit(" on ", 1)[1].strip()


def fetch_stats(base_url: str, *, timeout: float = 5.0) -> dict[str, Any]:
    """``GET /stats`` of a sim-server given its base URL (``http://127.0.0.1:P/v1``)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/stats", timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


def main(argv: list[str] | None = None) -> None:
    """``python -m workbench.sim.server`` (same options as ``workbench sim-server``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m workbench.sim.server", description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    for fault in _FAULTS:
        parser.add_argument(f"--{fault.replace('_', '-')}-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-latency-ms", type=float, default=1000.0,
                        help="time from creating a batch job to its final status")
    parser.add_argument("--batch-error-rate", type=float, default=0.0,
                        help="share of batch requests answered with a 500 (error file)")
    parser.add_argument("--batch-final", choices=FINALS, default="completed",
                        help="final status of every batch job (failed/expired: injected)")
    parser.add_argument("--mimic", choices=MIMICS, default="openai",
                        help="behave like this server (llamacpp: json_object+schema only)")
    parser.add_argument("--quota-rpm", type=float, default=None,
                        help="requests per minute per model and API key (429 past it)")
    parser.add_argument("--quota-tpm", type=float, default=None,
                        help="tokens per minute per model and API key (prompt + max_tokens)")
    parser.add_argument("--quota-burst-s", type=float, default=60.0,
                        help="bucket capacity in seconds of quota (default: a minute)")
    args = parser.parse_args(argv)
    try:
        quota = Quota(args.quota_rpm, args.quota_tpm, args.quota_burst_s)
        faults = FaultRates(**{fault: getattr(args, f"{fault}_rate") for fault in _FAULTS})
        batches = BatchService(latency_ms=args.batch_latency_ms,
                               error_rate=args.batch_error_rate, final=args.batch_final,
                               seed=args.seed)
    except ValueError as exc:
        parser.error(str(exc))
    serve(port=args.port, latency_ms=args.latency_ms, faults=faults, seed=args.seed,
          batches=batches, mimic=args.mimic, quota=quota)


if __name__ == "__main__":
    main(sys.argv[1:])
