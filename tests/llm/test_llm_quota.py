"""The adaptive gate of each (provider, model, endpoint): it finds a provider's quota
from its headers and 429s and holds it, without failed rows or a storm of 429s."""

from __future__ import annotations

import asyncio

import pytest

from workbench.llm import Completion, Request, complete_many, peek, temporary_settings
from workbench.llm._throttle import QUOTA_MARGIN, Gate, parse_reset, prompt_estimate, retry_after
from workbench.sim._quota import Quota
from workbench.sim.server import fetch_stats, running_server

MODEL = "openai/sim-judge-a"


def requests(url: str, n: int, tag: str, **kwargs) -> list[Request]:
    return [Request(MODEL, [{"role": "user", "content": f"{tag} question {i}: " + "word " * 30}],
                    params={"api_base": url}, **kwargs) for i in range(n)]


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def test_a_429_halves_the_window_and_holds_until_retry_after():
    async def go():
        gate = Gate(16, probe=False)
        tickets = [await gate.acquire(1.0) for _ in range(16)]
        wait = gate.release(tickets[0], ok=False, rate_limited=True,
                            headers={"retry-after-ms": "300"})
        assert wait == pytest.approx(0.3) and gate.window == 8.0
        gate.release(tickets[1], ok=False, rate_limited=True, headers={"retry-after": "1"})
        assert gate.window == 8.0  # once per round trip: both were sent before the first 429
        assert gate.hold_until - asyncio.get_running_loop().time() > 0.9
        for ticket in tickets[2:]:
            gate.release(ticket, ok=True)
        assert 8.0 < gate.window < 16.0  # additive increase: about one per window of successes
        # once the headers told the quota, pacing holds it: a 429 no longer halves
        ticket = await gate.acquire(1.0)
        gate.release(ticket, ok=True, headers={"x-ratelimit-limit-requests": "600",
                                               "x-ratelimit-remaining-requests": "5"})
        window = gate.window
        ticket = await gate.acquire(1.0)
        gate.release(ticket, ok=False, rate_limited=True, headers={"retry-after-ms": "1"})
        assert gate.window == window
        return gate

    assert run(go()).rate_limited == 3


def test_headers_teach_the_gate_the_quota_and_its_burst():
    async def go():
        gate = Gate(64, probe=False)
        first = await gate.acquire(1.0)
        for _ in range(3):
            await gate.acquire(1.0)  # three sends after the first
        gate.release(first, ok=True, headers={"x-ratelimit-limit-requests": "600",
                                              "x-ratelimit-remaining-requests": "9",
                                              "x-ratelimit-reset-requests": "100ms"})
        return gate

    gate = run(go())
    assert gate.held() == pytest.approx(600 * QUOTA_MARGIN)
    assert gate.requests.capacity == pytest.approx(10.0)  # 9 left + 0.1 s at 10/s
    assert gate.requests.level == pytest.approx(9 - 3, abs=0.1)


def test_refill_is_credited_from_the_send():
    """The provider measured ``remaining`` when the request reached it; refill is credited
    from the send (taking it at the reply loses a round trip per re-sync: 0.82 of a
    60 RPM quota at 200 ms latency in ``workbench bench quota``)."""
    async def go():
        gate = Gate(8, probe=False)
        first = await gate.acquire(1.0)
        await asyncio.sleep(0.3)
        gate.release(first, ok=True)  # the fastest round trip: 0.3 s (its way out unknown)
        ticket = await gate.acquire(150.0)
        await asyncio.sleep(0.3)  # as long as the fastest: 59 tokens of refill at 197/s
        gate.release(ticket, ok=True, headers={"x-ratelimit-limit-tokens": "12000",
                                               "x-ratelimit-remaining-tokens": "50",
                                               "x-ratelimit-reset-tokens": "750ms"})
        return gate

    gate = run(go())
    assert gate.tokens.rate == pytest.approx(200 * QUOTA_MARGIN)
    assert 50 + 0.3 * gate.tokens.rate <= gate.tokens.level + 1e-9
    assert gate.tokens.level <= gate.tokens.capacity


def test_the_first_reply_is_credited_refill_only_from_its_arrival():
    """No round trip timed yet (a probe's reply): how long its way out took is not known,
    so none of its round trip is credited as refill (a fresh bucket's ``remaining`` is
    exact: refill credited for the probe's way out let the first sends paced after the
    first burst reach the server before their token, 3 429s in the in-process test)."""
    async def go():
        gate = Gate(8, probe=False)
        ticket = await gate.acquire(1.0)
        await asyncio.sleep(0.2)  # 2 requests of refill at 10/s, were it all on the way back
        gate.release(ticket, ok=True, headers={"x-ratelimit-limit-requests": "600",
                                               "x-ratelimit-remaining-requests": "5"})
        return gate

    assert run(go()).requests.level == pytest.approx(5.0)  # (from the send: 6.97)


def test_a_late_arrival_is_not_credited_refill_it_already_had():
    """A round trip longer than the fastest seen: the request reached the server that much
    later, and the ``remaining`` its reply reports had that refill already."""
    async def go():
        gate = Gate(8, probe=False)
        quota = {"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "5"}
        first = await gate.acquire(1.0)
        gate.release(first, ok=True, headers=quota)  # the fastest round trip: ~0
        late = await gate.acquire(1.0)
        await asyncio.sleep(0.2)  # 2 requests of refill at 10/s, spent on the way
        gate.release(late, ok=True, headers=quota)
        return gate

    gate = run(go())
    assert gate.requests.level < 5 + 0.2 * gate.requests.rate - 1  # (credited: 6.97)


def test_a_burst_from_a_full_bucket_is_credited_refill_only_once_it_arrived():
    async def go():
        gate = Gate(64, probe=False)
        first = await gate.acquire(1.0)
        gate.release(first, ok=True, headers={"x-ratelimit-limit-requests": "600",
                                              "x-ratelimit-remaining-requests": "10",
                                              "x-ratelimit-reset-requests": "0s"})
        assert gate.requests.level == pytest.approx(10.0)  # full
        for _ in range(10):
            await gate.acquire(1.0)
        now = asyncio.get_running_loop().time()
        return gate.requests.wait(1.0, now)

    from workbench.llm._throttle import SEND_SPREAD_S
    assert run(go()) >= SEND_SPREAD_S + 0.9 / (10 * QUOTA_MARGIN)


def test_a_quota_the_replies_no_longer_report_is_forgotten():
    async def go():
        gate = Gate(8, probe=False)
        ticket = await gate.acquire(150.0)
        gate.release(ticket, ok=True, headers={"x-ratelimit-limit-tokens": "12000",
                                               "x-ratelimit-remaining-tokens": "50"})
        assert gate.tokens.rate == pytest.approx(200 * QUOTA_MARGIN)
        late = await gate.acquire(150.0)
        failed = await gate.acquire(150.0)
        gate.release(failed, ok=False, headers={})  # a failure says nothing of the quota
        assert gate.tokens.rate is not None
        gate.release(late, ok=True, headers={"content-type": "application/json"})
        return gate

    gate = run(go())
    assert gate.tokens.rate is None and gate.tokens.wait(1e6, 0.0) == 0.0
    assert gate.held() is None


def test_a_server_without_a_quota_on_the_port_of_one_with_a_quota_is_not_paced(monkeypatch):
    """A local server restarted on the port (the endpoint) of another: the gate it
    inherits forgets the quota the first server reported when its replies do not."""
    import socket

    from workbench.llm import _pipeline
    from workbench.sim import server as sim_server

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = sim_server.start
    monkeypatch.setattr(sim_server, "start", lambda server, **kw: start(server, port=port))
    with running_server(latency_ms=5, quota=Quota(tpm=12_000, burst_s=1.0)) as (url, _):
        complete_many(requests(url, 2, "quota", max_tokens=100), progress=False)
    (gate,) = [g for key, g in _pipeline._gates.items() if key[-1] == url]
    assert gate.tokens.rate == pytest.approx(200 * QUOTA_MARGIN)
    with running_server() as (again, _):
        assert again == url
        free = requests(url, 6, "free", max_tokens=100)
        out = complete_many(free, progress=False)
    assert all(isinstance(r, Completion) for r in out)
    assert all(peek(request) is not None for request in free)  # every reply stored
    assert [g for key, g in _pipeline._gates.items() if key[-1] == url] == [gate]
    assert gate.tokens.rate is None and gate.held() is None


def test_probe_sends_one_call_until_the_first_reply():
    async def go():
        gate = Gate(8)
        first = await gate.acquire(1.0)
        second = asyncio.ensure_future(gate.acquire(1.0))
        await asyncio.sleep(0.01)
        assert not second.done()
        gate.release(first, ok=True)
        await asyncio.wait_for(second, 1.0)
        assert gate.in_flight == 1

    run(go())


def test_header_parsing():
    assert parse_reset("1m30s") == 90.0 and parse_reset("250ms") == 0.25
    assert parse_reset(None) is None and parse_reset("soon") is None
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "20", "retry-after": "1"}) == 0.02
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after(None) is None
    assert prompt_estimate([{"role": "user", "content": "x" * 41}]) == 16


def warm(url: str) -> None:
    """One call of another model (its own bucket): the endpoint is then known to report
    a quota, so the measured model's gate probes first (as in ``workbench bench quota``)."""
    complete_many([Request("openai/sim-judge-b", [{"role": "user", "content": "warm"}],
                           params={"api_base": url})], progress=False)


@pytest.mark.slow
def test_a_run_settles_at_a_request_quota_without_failed_rows_or_a_429_storm(tmp_path):
    """In-process server (it shares the GIL with the client: arrivals jitter by tens of
    ms); the quota bench's run against a server process gets none (next test)."""
    quota = Quota(rpm=1200, burst_s=1.0)  # 20/s, 20 at once
    with running_server(latency_ms=30, quota=quota) as (url, _), \
            temporary_settings(cache_dir=tmp_path, cache_mode="readwrite"):
        warm(url)
        out = complete_many(requests(url, 80, "rpm"), concurrency=32, progress=False)
        stats = fetch_stats(url)
    assert all(isinstance(r, Completion) for r in out)  # 0 failed rows
    assert stats["by_status"]["200"] == 81
    assert stats["by_status"].get("429", 0) <= 2  # 2.5% of 80: no storm


@pytest.mark.slow
def test_the_quota_bench_run_gets_no_429(monkeypatch):
    """``workbench bench quota``'s run of the workbench at 600 RPM (a server process, 200
    ms latency, a bucket of 10): 0 failed rows and not one 429 (one a run, issue 34:
    refill credited before a late request reached the server)."""
    from workbench.cli.bench_quota import bench_quota_scenario, scenarios

    (s,) = scenarios(seconds=3.0, rpms=(600,))[:1]
    row = bench_quota_scenario(s, "workbench", latency_ms=200.0)
    assert row["n"] == 40 and row["failed"] == 0 and row["429"] == 0


def test_the_first_wave_at_a_new_endpoint_goes_at_once_and_its_429s_teach_the_gate(tmp_path):
    """No probe at an endpoint not seen yet: 16 calls at once against a bucket of 10.
    The excess is answered 429 (with its wait and the quota's headers), retried when the
    server said, never a failed row; the gate paces to the quota from then on."""
    from workbench.llm import _pipeline

    quota = Quota(rpm=600, burst_s=1.0)  # 10/s, 10 at once
    with running_server(latency_ms=20, quota=quota) as (url, server), \
            temporary_settings(cache_dir=tmp_path, cache_mode="off", max_retries=1):
        out = complete_many(requests(url, 30, "wave"), concurrency=16, progress=False)
        stats = fetch_stats(url)
    (gate,) = [g for key, g in _pipeline._gates.items() if key[-1] == url]
    assert all(isinstance(r, Completion) for r in out)  # 429s retried: none failed
    rejected = stats["by_status"].get("429", 0)
    assert 1 <= rejected <= 16 - 10  # the first wave overran the bucket, only it
    assert server.peak_in_flight >= 11  # more than the bucket went out before a reply
    assert gate.held() == pytest.approx(600 * QUOTA_MARGIN) and gate.rate_limited == rejected


@pytest.mark.slow
def test_a_run_settles_at_a_token_quota_charging_max_tokens(tmp_path):
    """Each call is ~75% of the bucket, so the client spaces them ~0.75 s apart, 1.5%
    slower than the server refills (:data:`QUOTA_MARGIN`). Sends delayed unevenly by more
    than that slack (~11 ms here; a starved CPU can do it) reach the server closer
    together than they were spaced: such a 429 re-syncs the bucket from its headers and
    is retried when it says, never a failed row."""
    quota = Quota(tpm=12_000, burst_s=1.0)  # 200 tokens/s: about one request of ~150
    with running_server(latency_ms=20, quota=quota) as (url, _), \
            temporary_settings(cache_dir=tmp_path, cache_mode="readwrite"):
        warm(url)
        out = complete_many(requests(url, 12, "tpm", max_tokens=100), concurrency=16,
                            progress=False)
        stats = fetch_stats(url)
    assert all(isinstance(r, Completion) for r in out)
    assert stats["by_status"]["200"] == 13 and stats["by_status"].get("429", 0) <= 1


def test_429s_that_name_their_wait_do_not_use_up_max_retries(tmp_path):
    """30 calls at once against 10 at a time: with ``max_retries=1`` nothing fails, as
    the 429s carry ``Retry-After`` (random 429s without it still count, see
    test_llm_client's retry tests)."""
    quota = Quota(rpm=600, burst_s=1.0)  # 10/s, 10 at once
    with running_server(latency_ms=5, quota=quota) as (url, _), \
            temporary_settings(cache_dir=tmp_path, cache_mode="off", max_retries=1):
        out = complete_many(requests(url, 30, "few"), concurrency=30, progress=False)
        stats = fetch_stats(url)
    assert all(isinstance(r, Completion) for r in out)
    assert stats["by_status"]["200"] == 30


def test_user_rpm_cap_spaces_the_calls_below_a_generous_quota(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_RPM", "300")  # one call every 0.2 s
    quota = Quota(rpm=6000)  # a full minute of burst: the server would take them all at once
    with running_server(latency_ms=5, quota=quota) as (url, server), \
            temporary_settings(cache_dir=tmp_path, cache_mode="off"):
        out = complete_many(requests(url, 5, "cap"), concurrency=8, progress=False)
    assert all(isinstance(r, Completion) for r in out)
    assert server.peak_in_flight == 1


def test_rate_caps_are_validated(monkeypatch):
    from workbench import config

    monkeypatch.setenv("WORKBENCH_TPM", "lots")
    with pytest.raises(ValueError, match="WORKBENCH_TPM"):
        config.rate_cap("tpm")
    monkeypatch.setenv("WORKBENCH_TPM", "0")
    assert config.rate_cap("tpm") is None


@pytest.mark.parametrize("path", ["direct", "litellm"])
def test_what_a_run_learned_serves_the_next_run(path, tmp_path, monkeypatch):
    """The gate of (provider, model, endpoint) outlives a run: the next one starts at the
    quota it learned (no probe, no burst past the bucket). Through litellm too: there the
    headers of a success come from litellm's public logging payload."""
    from workbench.llm import _pipeline

    monkeypatch.setenv("WORKBENCH_HTTP_PATH", path)
    quota = Quota(rpm=1200, burst_s=1.0)
    with running_server(latency_ms=5, quota=quota) as (url, _), \
            temporary_settings(cache_dir=tmp_path, cache_mode="off"):
        complete_many(requests(url, 3, "first"), concurrency=8, progress=False)
        (gate,) = [g for key, g in _pipeline._gates.items() if key[-1] == url]
        assert not gate.probing and gate.held() == pytest.approx(1200 * QUOTA_MARGIN)
        complete_many(requests(url, 30, "second"), concurrency=8, progress=False)
        (again,) = [g for key, g in _pipeline._gates.items() if key[-1] == url]
        stats = fetch_stats(url)
    rejected = stats["by_status"].get("429", 0)
    assert rejected <= 1  # at most one 429 (a send at the bucket's edge), then a retry:
    assert again is gate and gate.seq == 33 + rejected  # 33 requests, each sent once more per 429


@pytest.mark.slow
def test_auto_mode_sends_online_what_fits_the_deadline_and_batches_the_rest(tmp_path):
    quota = Quota(rpm=600, burst_s=1.0)  # 10 at once, then 10/s
    with running_server(latency_ms=5, quota=quota) as (url, _), \
            temporary_settings(cache_dir=tmp_path, cache_mode="readwrite"):
        complete_many(requests(url, 2, "warm"), progress=False)  # imports; the gate learns
        out = complete_many(requests(url, 60, "auto"), concurrency=16, progress=False,
                            mode="auto", deadline=1.0, poll_interval=0.1)
        stats = fetch_stats(url)
        again = complete_many(requests(url, 60, "auto"), progress=False)
    assert all(isinstance(r, Completion) for r in out)  # 0 failed rows, none lost
    online = stats["by_status"]["200"] - 2
    assert 3 <= online < 60 and stats["batches"]["created"] >= 1  # both halves used
    assert all(r.cached for r in again)  # every reply cached under its usual key


def test_auto_mode_needs_a_deadline_and_no_budget():
    with pytest.raises(ValueError, match="deadline"):
        complete_many([], mode="auto")
    with pytest.raises(ValueError, match="deadline"):
        complete_many([], deadline=5.0)
    with pytest.raises(ValueError, match="budget_usd"):
        complete_many([], mode="auto", deadline=5.0, budget_usd=1.0)
