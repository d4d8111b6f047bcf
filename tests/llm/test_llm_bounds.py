"""Every wait of the quota gate has a bound (issue 32, items 1-2), and a run starts at full
speed where no quota is reported (issue 34, item 4): a stub server on 127.0.0.1 sends
the headers, and the assertions are on rows and on what reached the server."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

import pytest
from aiohttp import web

from workbench.llm import Completion, Request, _pipeline, complete_many, temporary_settings
from workbench.llm._throttle import RETRY_FLOOR_S

MODEL = "openai/stub-judge"


def ask(url: str, n: int, tag: str, model: str = MODEL) -> list[Request]:
    return [Request(model, [{"role": "user", "content": f"{tag} {i}"}], params={"api_base": url})
            for i in range(n)]


def bounded(fn, seconds: float = 120.0):
    """``fn()`` in a thread: its result, or the test fails if it is still waiting after
    ``seconds`` (the bug: a run that never ends)."""
    out: dict = {}

    def go() -> None:
        try:
            out["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 (re-raised below)
            out["error"] = exc

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds:g} s"
    if "error" in out:
        raise out["error"]
    return out["result"]


@pytest.fixture
def always(chat_reply):
    """``always(status, headers)``: a handler that answers every request so."""
    def make(status: int, headers: dict):
        async def handler(request, body):
            if status == 200:
                return chat_reply(headers=headers)
            return web.json_response({"error": {"message": "slow down", "type": "rate_limit"}},
                                     status=status, headers=headers)
        return handler
    return make


def run(requests: list[Request], **settings):
    with temporary_settings(cache_mode="off", **settings):
        return bounded(lambda: complete_many(requests, concurrency=4, progress=False))


@pytest.mark.parametrize("headers", [{"Retry-After": "1000000000"}, {"retry-after-ms": "1e15"}],
                         ids=["retry-after-1e9", "retry-after-ms-1e15"])
def test_a_retry_after_longer_than_max_wait_is_a_failure_row_that_says_why(stub_server, always, headers):
    stub = stub_server(always(429, headers))
    out = run(ask(stub.url, 4, "long"), max_wait=2.0, max_retries=3, retry_backoff=0.01)
    assert [r.error_type for r in out] == ["rate_limit"] * 4
    assert all("asked to wait 1e+09 s" in r.message or "asked to wait 1e+12 s" in r.message
               for r in out), out[0].message
    assert all("WORKBENCH_MAX_WAIT" in r.message for r in out)
    assert set(stub.sent.values()) == {1}  # not sent again


@pytest.mark.parametrize("value", ["-5", "nan", "inf", "1e400", "soon"])
def test_an_impossible_retry_after_is_ignored_and_the_usual_retries_apply(stub_server, always, value):
    stub = stub_server(always(429, {"Retry-After": value, "retry-after-ms": value}))
    out = run(ask(stub.url, 3, f"bogus {value}"), max_wait=2.0, max_retries=2, retry_backoff=0.01)
    assert [r.error_type for r in out] == ["rate_limit"] * 3
    assert [r.attempts for r in out] == [3] * 3
    assert set(stub.sent.values()) == {3}  # 1 + max_retries each


def test_an_impossible_remaining_is_ignored(stub_server, always):
    stub = stub_server(always(200, {"x-ratelimit-limit-requests": "600",
                                    "x-ratelimit-remaining-requests": "-1000000",
                                    "x-ratelimit-limit-tokens": "nan",
                                    "x-ratelimit-remaining-tokens": "5"}))
    out = run(ask(stub.url, 6, "negative"), max_wait=2.0)
    assert all(isinstance(r, Completion) for r in out)
    assert set(stub.sent.values()) == {1}


def test_a_quota_that_would_hold_a_call_past_max_wait_fails_it_and_says_why(stub_server, always):
    stub = stub_server(always(200, {"x-ratelimit-limit-requests": "0.001",
                                    "x-ratelimit-remaining-requests": "0"}))
    run(ask(stub.url, 1, "warm", "openai/first"), max_wait=2.0)  # a quota is reported here
    out = run(ask(stub.url, 5, "tiny"), max_wait=2.0)
    kinds = Counter(r.error_type if not r.ok else "ok" for r in out)
    assert kinds == {"ok": 1, "rate_limit": 4}  # the probe, then nothing more is sent
    failed = next(r for r in out if not r.ok)
    assert failed.message.startswith("not sent: the requests quota the server reports "
                                     "(x-ratelimit-limit-requests: 0.001 per minute) would "
                                     "hold it")
    assert "max_wait setting (2 s, WORKBENCH_MAX_WAIT)" in failed.message
    assert sum(stub.sent.values()) == 2  # the warm-up's and the probe
    # the next run does not inherit the absurd quota: it asks the server again
    again = run(ask(stub.url, 1, "tiny again"), max_wait=2.0)
    assert again[0].ok


def test_max_wait_is_validated(monkeypatch, stub_server, always):
    stub = stub_server(always(200, {}))
    monkeypatch.setenv("WORKBENCH_MAX_WAIT", "nan")
    with pytest.raises(ValueError, match="WORKBENCH_MAX_WAIT"):
        run(ask(stub.url, 1, "nan"))
    with pytest.raises(ValueError, match="max_wait"):
        temporary_settings(max_wait=-1).__enter__()


def test_retry_after_zero_on_every_reply_is_not_a_storm(stub_server, always):
    """``Retry-After: 0`` names no wait: the usual backoff and ``max_retries`` apply
    (it sent each request 53 times in about a second)."""
    stub = stub_server(always(429, {"Retry-After": "0", "retry-after-ms": "0"}))
    out = run(ask(stub.url, 4, "zero"), max_retries=2, retry_backoff=0.01)
    assert [r.error_type for r in out] == ["rate_limit"] * 4
    assert set(stub.sent.values()) == {3}  # 1 + max_retries, per request


def test_a_tiny_retry_after_has_a_doubling_floor_under_it(stub_server, always, monkeypatch):
    pauses: list[float] = []
    pause = _pipeline._Sender._pause

    async def recorded(self, model, seconds):
        pauses.append(seconds)
        await pause(self, model, seconds)

    monkeypatch.setattr(_pipeline._Sender, "_pause", recorded)
    monkeypatch.setattr(_pipeline, "RATE_LIMIT_RETRIES", 4)
    stub = stub_server(always(429, {"retry-after-ms": "1"}))
    (out,) = run(ask(stub.url, 1, "tiny floor"), max_retries=1, retry_backoff=0.01)
    assert out.error_type == "rate_limit" and sum(stub.sent.values()) == 6  # 1 + 4 + 1
    floors = pauses[:4]
    assert len(floors) == 4
    for k, seconds in enumerate(floors):
        ceiling = RETRY_FLOOR_S * 2 ** k
        assert ceiling / 2 <= seconds <= ceiling  # full jitter in the upper half


def test_first_calls_of_a_new_model_at_a_quota_free_endpoint_do_not_wait_for_a_probe(
        stub_server, chat_reply, monkeypatch):
    """Counted at the server: how many requests had arrived when the first one was
    answered (the first reply waits for all of them, 30 s at most)."""
    n = 8
    seen: list[int] = []

    async def handler(request, body):
        if body.get("model") == "second" and not seen:
            seen.append(0)  # the first request of the run holds its reply
            for _ in range(300):
                if stub.arrived - 1 >= n:  # (1: the warm-up's)
                    break
                await asyncio.sleep(0.1)
            seen[0] = stub.arrived - 1
        return chat_reply()

    stub = stub_server(handler)
    monkeypatch.setattr(_pipeline, "_gates", {})  # nothing known of a port used before
    with temporary_settings(cache_mode="off"):
        first = bounded(lambda: complete_many(ask(stub.url, 1, "warm", "openai/first"),
                                              progress=False))
        out = bounded(lambda: complete_many(ask(stub.url, n, "cold", "openai/second"),
                                            concurrency=n, progress=False))
    assert first[0].ok and all(r.ok for r in out)
    assert seen == [n]  # all at once (was 1: the probe went alone)


def test_the_first_wave_at_an_endpoint_not_seen_goes_before_any_reply(stub_server, chat_reply,
                                                                      monkeypatch):
    """An endpoint this process has not called (it reports a quota, which nothing knows
    yet): every call of the first wave arrives before the first reply is released."""
    n = 8
    seen: list[int] = []
    quota = {"x-ratelimit-limit-requests": "6000", "x-ratelimit-remaining-requests": "99"}

    async def handler(request, body):
        if not seen:
            seen.append(0)
            for _ in range(300):
                if stub.arrived >= n:
                    break
                await asyncio.sleep(0.1)
            seen[0] = stub.arrived
        return chat_reply(headers=quota)

    stub = stub_server(handler)
    monkeypatch.setattr(_pipeline, "_gates", {})
    with temporary_settings(cache_mode="off"):
        out = bounded(lambda: complete_many(ask(stub.url, n, "wave", "openai/first"),
                                            concurrency=n, progress=False))
    assert all(r.ok for r in out) and seen == [n]  # (was 1: a probe went alone)
    assert _pipeline.quota_reported("openai", stub.url)


def test_a_new_model_at_an_endpoint_that_reports_a_quota_still_probes(stub_server, chat_reply,
                                                                     monkeypatch):
    n = 4
    seen: list[int] = []
    quota = {"x-ratelimit-limit-requests": "6000", "x-ratelimit-remaining-requests": "99"}

    async def handler(request, body):
        if body.get("model") == "second" and not seen:
            seen.append(0)
            await asyncio.sleep(0.5)
            seen[0] = stub.arrived - 1
        return chat_reply(headers=quota)

    stub = stub_server(handler)
    monkeypatch.setattr(_pipeline, "_gates", {})  # nothing known of a port used before
    with temporary_settings(cache_mode="off"):
        bounded(lambda: complete_many(ask(stub.url, 1, "warm", "openai/first"), progress=False))
        out = bounded(lambda: complete_many(ask(stub.url, n, "cold", "openai/second"),
                                            concurrency=n, progress=False))
    assert all(r.ok for r in out) and seen == [1]


def test_in_auto_mode_a_call_held_past_max_wait_goes_to_the_batch_job(tmp_path):
    from workbench.sim._quota import Quota
    from workbench.sim.server import fetch_stats, running_server

    quota = Quota(rpm=0.001, burst_s=1.0)  # one request, then one in 1,000 minutes
    with running_server(latency_ms=5, quota=quota) as (url, _), \
            temporary_settings(cache_dir=tmp_path, cache_mode="readwrite", max_wait=2.0):
        out = bounded(lambda: complete_many(
            ask(url, 4, "auto", "openai/sim-judge-a"), progress=False, mode="auto",
            deadline=600.0, poll_interval=0.05))
        stats = fetch_stats(url)
    assert all(isinstance(r, Completion) for r in out)  # none lost, none failed
    assert stats["by_status"]["200"] == 1 and stats["batches"]["created"] >= 1
