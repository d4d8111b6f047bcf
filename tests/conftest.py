"""Shared test fixtures.

* every test gets its own empty LLM cache folder in ``readwrite`` mode, and starts with
  no rate-limit gates learned by earlier tests (autouse);
* ``sim_server`` is the base URL (``http://127.0.0.1:P/v1``) of a fault-free
  ``workbench sim-server`` started once per session in its own process;
* ``sim_server_factory(**options)`` starts (once per option set) a server with the
  options of ``workbench sim-server`` (``latency_ms``, ``rate_limit_rate``, ...);
* ``sim_stats(url)`` reads a server's ``/stats``;
* ``stub_server(handler)`` starts a stub HTTP server on 127.0.0.1 answered by the test's
  own handler (lying headers, echoed credentials); ``chat_reply`` builds its replies;
* ``own_cache_run(tag, run, config)`` runs a study for a module-scoped fixture in an LLM
  cache folder of its own.

Live tests (``@pytest.mark.live``) are skipped unless an API key is set.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import workbench.config  # noqa: F401  (offline switches before anything imports litellm)

#: Fixture folders hold data and the scripts that made it (run by hand with the code of
#: their time), never tests: not collected, not imported by --doctest-modules.
collect_ignore_glob = ["fixtures/*"]

_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def pytest_collection_modifyitems(config, items):
    if any(os.environ.get(name) for name in _KEY_VARS):
        return
    skip = pytest.mark.skip(reason="live test: no provider API key in the environment")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _llm_cache(tmp_path_factory, monkeypatch):
    """A fresh, empty LLM cache folder per test, mode readwrite."""
    folder = tmp_path_factory.mktemp("llm-cache")
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(folder))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readwrite")
    yield folder
    cache_module = sys.modules.get("workbench.llm._cache")
    if cache_module is not None:  # release the per-folder handles (file descriptors)
        cache_module.close_caches()
    pipeline = sys.modules.get("workbench.llm._pipeline")
    if pipeline is not None:  # what a test's servers taught of their quotas: the next
        pipeline._gates.clear()  # test's server may get the same port (the same endpoint)


@pytest.fixture(scope="session")
def own_cache_run(tmp_path_factory):
    """``own_cache_run(tag, run, config) -> run(config)`` in a fresh readwrite LLM cache
    folder of its own: module-scoped fixtures are set up before the per-test cache above."""

    def call(tag: str, run, config):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("WORKBENCH_CACHE_DIR", str(tmp_path_factory.mktemp(f"{tag}-cache")))
            mp.setenv("WORKBENCH_CACHE_MODE", "readwrite")
            try:
                return run(config)
            finally:
                from workbench.llm._cache import close_caches

                close_caches()

    return call


@pytest.fixture(scope="session")
def sim_server_factory():
    """Start sim-servers on demand (one per distinct option set) for the session."""
    from workbench.sim.server import spawned_server

    servers: dict[tuple, str] = {}
    with ExitStack() as stack:

        def start(**options) -> str:
            key = tuple(sorted(options.items()))
            if key not in servers:
                servers[key] = stack.enter_context(spawned_server(**options))
            return servers[key]

        yield start


@pytest.fixture(scope="session")
def sim_server(sim_server_factory) -> str:
    """Base URL of a fault-free sim-server with no latency."""
    return sim_server_factory()


@pytest.fixture(scope="session")
def sim_stats():
    """``sim_stats(url) -> dict``: a sim-server's ``/stats``."""
    from workbench.sim.server import fetch_stats

    return fetch_stats


@pytest.fixture
def app():
    """A ``typer`` app with the ``workbench cache``, ``sim-server`` and ``bench`` commands."""
    import typer

    from workbench.cli import cache as llm_cli

    app = typer.Typer()
    llm_cli.register(app)
    return app


# --- the opt-in browser tests (make test-browser) -----------------------------------------

#: Debian's Chromium (never a browser download) and the flags it needs on a closed network.
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture
def lab_server(tmp_path, request):
    """``start(command, settings, env=, cwd=) -> (url, token)``: JupyterLab for a browser
    test, with its own user settings, workspaces and runtime folders below ``tmp_path``;
    ``command(port, token)`` gives the command line. Waits until the server answers;
    stopped with its kernels after the test. Skipped unless selected with ``-m browser``."""
    if "browser" not in (request.config.option.markexpr or ""):
        pytest.skip("opt-in: select it with -m browser (make test-browser)")
    started: list[tuple[subprocess.Popen, Any]] = []

    def start(command, settings: dict, *, env: dict, cwd=None) -> tuple[str, str]:
        user = tmp_path / "user-settings"
        for name, value in settings.items():
            (user / name).parent.mkdir(parents=True, exist_ok=True)
            (user / name).write_text(json.dumps(value), encoding="utf-8")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        token = secrets.token_hex(16)
        env = dict(env, JUPYTERLAB_SETTINGS_DIR=str(user),
                   JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
                   JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
        log = (tmp_path / "lab.log").open("w")
        proc = subprocess.Popen(command(port, token), cwd=cwd, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        started.append((proc, log))
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                return url, token
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log_text = (tmp_path / "lab.log").read_text()
                    raise RuntimeError(f"JupyterLab did not start:\n{log_text}") from None
                time.sleep(0.5)

    yield start
    for proc, log in started:
        os.killpg(proc.pid, signal.SIGTERM)  # the server (or make) and its kernels
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


# --- the docs' examples, run as pasted ------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
YOUR_DATA = ROOT / "docs" / "your-data.md"


def readme_section(title: str, page: Path = YOUR_DATA) -> str:
    """The section of ``page`` (README.md or a page under docs/) under the heading
    ``title`` (e.g. ``## Judge your own data``), up to the next ``## `` heading."""
    text = page.read_text(encoding="utf-8")
    start = text.find(f"\n{title}\n")
    assert start >= 0, f"{page.name} has no {title!r} section"
    end = text.find("\n## ", start + len(title))
    return text[start:] if end < 0 else text[start:end]


def readme_blocks(title: str, language: str, page: Path = YOUR_DATA) -> list[str]:
    """The fenced code blocks of that section in ``language`` (``""``: unlabelled)."""
    return [code for lang, code in re.findall(r"```(\w*)\n(.*?)```", readme_section(title, page), re.S)
            if lang == language]


# --- a stub HTTP server answered by the test's own handler ------------------------------

Handler = Callable[[web.Request, dict], Awaitable[web.StreamResponse]]


class Stub:
    """A running stub: ``url`` (``http://127.0.0.1:<port>/v1``), ``sent`` (requests per
    prompt text), ``in_flight`` and ``arrived`` (requests being answered, received)."""

    def __init__(self, handler: Handler):
        self.handler = handler
        self.sent: Counter[str] = Counter()
        self.in_flight = self.arrived = 0
        self.loop = asyncio.new_event_loop()
        self.url = ""

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        self.arrived += 1
        self.in_flight += 1
        try:
            body = await request.json() if request.can_read_body else {}
        except ValueError:
            body = {}
        messages = body.get("messages") if isinstance(body, dict) else None
        if messages:
            self.sent[str(messages[-1].get("content"))] += 1
        try:
            return await self.handler(request, body if isinstance(body, dict) else {})
        finally:
            self.in_flight -= 1

    def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._answer)
        runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0, shutdown_timeout=0.1)
        self.loop.run_until_complete(site.start())
        self.runner = runner
        self.url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)


def reply(text: str = "7", *, model: str = "stub", headers: dict | None = None) -> web.Response:
    """A chat-completions reply with ``text``."""
    body = {"id": f"chatcmpl-{abs(hash(text))}", "object": "chat.completion", "created": 0,
            "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}
    return web.Response(text=json.dumps(body), content_type="application/json",
                        headers=headers or {})


@pytest.fixture
def chat_reply() -> Callable[..., web.Response]:
    """:func:`reply`, for handlers."""
    return reply


@pytest.fixture
def stub_server() -> Iterator[Callable[[Handler], Stub]]:
    """``stub_server(handler)``: a started :class:`Stub` (stopped after the test)."""
    stubs: list[Stub] = []

    def make(handler: Handler) -> Stub:
        stub = Stub(handler)
        stub.start()
        stubs.append(stub)
        return stub

    yield make
    for stub in stubs:
        stub.stop()


@contextmanager
def only_sim_items(items: list[dict] | None = None) -> Iterator[None]:
    """The simulator's registry holding ``items`` alone (``None``: the bundled items) for
    the ``with`` block, then as it was."""
    from workbench.sim import clear_registry, register_bundled, register_items
    from workbench.sim import registry as sim_registry

    state = sim_registry.snapshot()
    try:
        clear_registry()
        register_bundled() if items is None else register_items(items)
        yield
    finally:
        sim_registry.restore(state)
