"""What a reply may be (issue 20): a reply cut inside a character, a redirect, a body or a
text too large, an empty text. Each is stored as a valid reply or recorded as a failure
of its own request, never one that takes the other requests of the run down.

The faults come from in-process sim-servers (:func:`workbench.sim.server.running_server`)
whose answers the subclasses below change: a prompt holding ``cut``, ``empty``,
``blank`` or ``long`` gets a reply ending in half a surrogate pair, ``""``, white space
or 1.5 million characters."""

from __future__ import annotations

import gzip
import json
import tracemalloc

import pytest
from aiohttp import web

from workbench.llm import Request, _batch, complete_many, peek
from workbench.llm._providers import get_litellm
from workbench.sim._batches import BatchService
from workbench.sim.server import SimServer, running_server

MODEL = "openai/sim-judge-a"
PATHS = ["direct", "litellm", "batch"]


def _pending() -> dict:
    """The batch ledger's jobs (none once every job's replies are stored)."""
    with _batch._ledger() as jobs:
        return dict(jobs)


def msgs(text: str) -> list[dict]:
    return [{"role": "user", "content": f"Rate this answer from 1 to 10: {text}"}]


def _rewrite(body: dict, status: int, payload: dict) -> dict:
    """The reply to ``body`` as the faulty server sends it."""
    prompt = body["messages"][-1]["content"]
    if status != 200:
        return payload
    message = payload["choices"][0]["message"]
    if "cut" in prompt:  # a token that ends inside an emoji: half a surrogate pair
        message["content"] += "\ud83d"
    elif "empty" in prompt:
        message["content"] = ""
    elif "blank" in prompt:
        message["content"] = " \n\t"
    elif "long" in prompt:
        message["content"] = "7 " * 750_000
    return payload


class FaultyServer(SimServer):
    """A sim-server whose chat replies :func:`_rewrite` changes."""

    async def _answer(self, request: web.Request, fault: str | None) -> web.Response:
        response = await super()._answer(request, fault)
        payload = _rewrite(await request.json(), response.status, json.loads(response.text))
        return web.json_response(payload, status=response.status)


class FaultyBatches(BatchService):
    """The same faults in the answers of batch jobs."""

    def routes(self, app: web.Application, answer) -> None:
        def faulty(body: dict) -> tuple[int, dict]:
            status, payload = answer(body)
            return status, _rewrite(body, status, payload)

        super().routes(app, faulty)


def _run(path: str, requests: list[Request], monkeypatch) -> list:
    monkeypatch.setenv("WORKBENCH_HTTP_PATH", "litellm" if path == "litellm" else "direct")
    return complete_many(requests, progress=False, max_retries=0, poll_interval=0.05,
                         mode="batch" if path == "batch" else "online")


def _faulty():
    return running_server(server=FaultyServer(batches=FaultyBatches(latency_ms=100.0)))


@pytest.mark.parametrize("path", PATHS)
def test_a_reply_cut_inside_a_character_is_stored_and_takes_nothing_down(path, monkeypatch):
    with _faulty() as (url, _):
        requests = [Request(MODEL, msgs(f"{'cut ' if i % 3 == 0 else ''}answer {i}"),
                            params={"api_base": url}) for i in range(9)]
        got = _run(path, requests, monkeypatch)
        assert all(r.ok for r in got), got
        assert [r.text.endswith("\ufffd") for r in got] == [i % 3 == 0 for i in range(9)]
        again = _run(path, requests, monkeypatch)
    assert all(r.cached for r in again)  # stored: a rerun sends nothing
    assert [r.text for r in again] == [r.text for r in got]
    assert _pending() == {}


@pytest.mark.parametrize("path", PATHS)
def test_empty_and_oversized_texts_are_failures_of_their_own_requests(path, monkeypatch):
    """A judge reply is a text with something in it besides white space, of at most
    ``WORKBENCH_MAX_REPLY_CHARS`` (default 1,000,000) characters; the rest fail, uncached."""
    with _faulty() as (url, _):
        kinds = ["fine", "empty", "blank", "long", "fine again"]
        requests = [Request(MODEL, msgs(f"{kind} answer"), params={"api_base": url})
                    for kind in kinds]
        got = _run(path, requests, monkeypatch)
    assert [r.ok for r in got] == [True, False, False, False, True]
    assert [getattr(r, "error_type", None) for r in got] == [
        None, "empty_reply", "empty_reply", "too_large", None]
    assert "empty" in got[1].message and "white space" in got[2].message
    assert "WORKBENCH_MAX_REPLY_CHARS=1,000,000" in got[3].message
    assert [peek(r) is not None for r in requests] == [True, False, False, False, True]
    assert _pending() == {}


# --- the direct path: redirects and bodies too large --------------------------------------

class Redirecting(SimServer):
    """Answers every chat request with a redirect to ``target``."""

    def __init__(self, status: int, target: str):
        super().__init__()
        self.status, self.target = status, target

    async def chat(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        return web.Response(status=self.status, headers={"Location": self.target})


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_a_failure_saying_where_it_pointed(status, monkeypatch):
    with running_server() as (other, elsewhere):
        target = other.removesuffix("/v1") + "/v1/chat/completions"
        with running_server(server=Redirecting(status, target)) as (url, redirecting):
            request = Request(MODEL, msgs("redirected"), params={"api_base": url})
            (failed,) = _run("direct", [request], monkeypatch)
    assert redirecting.requests == 1 and elsewhere.requests == 0  # never followed
    assert not failed.ok and failed.error_type == "redirect", failed
    assert f"HTTP {status} redirect to {target}" in failed.message
    assert peek(request) is None


class Oversized(SimServer):
    """Answers with ``body``, streamed 64 KiB at a time (so that the server never holds a
    second copy), with its length declared or not, and compressed or not."""

    def __init__(self, body: bytes, *, encoding: str | None = None, declared: bool = False):
        super().__init__()
        self.body, self.encoding, self.declared = body, encoding, declared

    async def chat(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        if self.encoding:
            response.headers["Content-Encoding"] = self.encoding
        if self.declared:
            response.content_length = len(self.body)
        await response.prepare(request)
        view = memoryview(self.body)
        try:
            for start in range(0, len(view), 2**16):
                await response.write(view[start:start + 2**16])
            await response.write_eof()
        except (ConnectionError, RuntimeError):  # the client stopped reading: as it should
            pass
        return response


BOMB = gzip.compress(b'{"choices": "' + b"0" * (96 * 2**20), 9)  # 96 MiB from ~100 KB
BROKEN = b'{"choices": [{"message": {"content": "' + b"7" * (24 * 2**20)  # never closed


@pytest.mark.parametrize(("body", "options"), [
    (BOMB, {"encoding": "gzip"}), (BOMB, {"encoding": "gzip", "declared": True}),
    (BROKEN, {}), (BROKEN, {"declared": True})], ids=["bomb", "bomb-declared", "broken-json",
                                                     "broken-json-declared"])
def test_a_body_over_the_limit_fails_its_request_without_being_read(body, options,
                                                                     monkeypatch):
    monkeypatch.setenv("WORKBENCH_MAX_REPLY_BYTES", str(2**20))
    get_litellm()  # imported before memory is traced (its import allocates far more)
    with running_server(server=Oversized(body, **options)) as (url, _):
        request = Request(MODEL, msgs("huge"), params={"api_base": url})
        tracemalloc.start()
        try:
            (failed,) = _run("direct", [request], monkeypatch)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert not failed.ok and failed.error_type == "too_large", failed
    assert "WORKBENCH_MAX_REPLY_BYTES=1,048,576" in failed.message
    assert peak < 8 * 2**20, peak  # never read whole: 24 or 96 MiB otherwise


def test_the_reply_limits_are_checked(monkeypatch):
    from workbench import config

    assert config.reply_limit("bytes") == 16 * 2**20
    monkeypatch.setenv("WORKBENCH_MAX_REPLY_CHARS", "0")
    with pytest.raises(ValueError, match="WORKBENCH_MAX_REPLY_CHARS='0'"):
        config.reply_limit("chars")
