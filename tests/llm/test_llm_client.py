"""complete / complete_many: caching, order, dedup, retries, timeouts, budget, providers.

Calls go to the in-process ``sim/`` provider or, through litellm's real HTTP path, to
a ``workbench sim-server`` subprocess whose ``/stats`` counts what reached it.
Assertions are on mechanics, never on what the simulated engine answers.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from workbench.errors import BudgetExceeded, CacheMiss, ProviderError
from workbench.llm import (
    CallFailure,
    Completion,
    Request,
    _cache,
    cache_key,
    complete,
    complete_many,
    configure,
    last_miss,
    price,
    temporary_settings,
)
from workbench.llm._cache import decode_entry

SIM = "sim/judge-a"
SERVER_MODEL = "openai/sim-judge-a"


def msgs(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def server_requests(url: str, n: int, *, prefix: str = "q", **kwargs) -> list[Request]:
    return [Request(SERVER_MODEL, msgs(f"{prefix} {i}"), params={"api_base": url}, **kwargs)
            for i in range(n)]


def entries_in(folder) -> int:
    """Cache entries in ``folder`` (0 while another process sets its store up)."""
    try:
        return len(_cache.open_cache(folder, readonly=True))
    except sqlite3.OperationalError:
        return 0


@pytest.fixture
def fast_retries(monkeypatch):
    monkeypatch.setenv("WORKBENCH_RETRY_BACKOFF", "0.002")


# --- cache mechanics ---------------------------------------------------------------------

def test_miss_then_hit_returns_the_same_reply(_llm_cache):
    first = complete(SIM, msgs("Is water wet?"), temperature=1, sample=0)
    again = complete(SIM, msgs("Is water wet?"), temperature=1.0, sample=0)
    assert isinstance(first, Completion) and not first.cached and again.cached
    assert (again.text, again.key, again.usage, again.backend) == \
           (first.text, first.key, first.usage, "sim")
    assert again.latency_s == first.latency_s  # the original call's, stable on replay
    assert entries_in(_llm_cache) == 1


def test_sample_and_temperature_make_separate_entries(_llm_cache):
    for sample in range(3):
        complete(SIM, msgs("Rate this."), temperature=1, sample=sample)
    complete(SIM, msgs("Rate this."), temperature=0.5, sample=0)
    assert entries_in(_llm_cache) == 4
    assert complete(SIM, msgs("Rate this."), temperature=1, sample=2).cached


def test_sample_reaches_the_sim_engine(monkeypatch):
    from workbench.sim import engine

    seen = []
    real = engine.respond

    def spy(profile, messages, **kwargs):
        seen.append((profile, kwargs["sample"], kwargs["temperature"]))
        return real(profile, messages, **kwargs)

    monkeypatch.setattr(engine, "respond", spy)
    complete(SIM, msgs("Score it."), temperature=1, sample=0)
    complete(SIM, msgs("Score it."), temperature=1, sample=1)
    assert seen == [("judge-a", 0, 1.0), ("judge-a", 1, 1.0)]


def test_sample_reaches_the_engine_behind_a_sim_server(monkeypatch):
    from workbench.sim import engine
    from workbench.sim.server import running_server

    seen = []
    real = engine.respond

    def spy(profile, messages, **kwargs):
        seen.append((profile, kwargs["sample"], kwargs["temperature"]))
        return real(profile, messages, **kwargs)

    monkeypatch.setattr(engine, "respond", spy)
    with running_server() as (url, _):
        a = complete(SERVER_MODEL, msgs("Score it."), temperature=1, sample=0, api_base=url)
        b = complete(SERVER_MODEL, msgs("Score it."), temperature=1, sample=1, api_base=url)
    assert seen == [("judge-a", 0, 1.0), ("judge-a", 1, 1.0)]
    assert a.key != b.key and a.backend == b.backend == "sim"


def test_readonly_miss_raises_cache_miss_naming_the_model(monkeypatch):
    complete(SIM, msgs("cached one"))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    assert complete(SIM, msgs("cached one")).cached
    with pytest.raises(CacheMiss, match="sim/judge-a") as info:
        complete(SIM, msgs("never sent"))
    assert info.value.model == SIM
    assert info.value.key == cache_key(Request(SIM, msgs("never sent")))
    assert last_miss()["request"]["messages"] == msgs("never sent")


def test_readonly_complete_many_records_misses_in_their_slots(monkeypatch):
    complete(SIM, msgs("a"))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    out = complete_many([Request(SIM, msgs("a")), Request(SIM, msgs("b"))], progress=False)
    assert out[0].cached
    assert isinstance(out[1], CallFailure) and out[1].error_type == "cache_miss"
    assert out[1].attempts == 0


def test_refresh_and_off_modes(monkeypatch, _llm_cache):
    first = complete(SIM, msgs("m"))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "refresh")
    refreshed = complete(SIM, msgs("m"))
    assert not refreshed.cached and refreshed.key == first.key
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "off")
    assert not complete(SIM, msgs("m")).cached
    complete(SIM, msgs("only off"))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readwrite")
    assert complete(SIM, msgs("m")).cached
    assert not complete(SIM, msgs("only off")).cached  # "off" wrote nothing


def test_cache_folder_is_read_at_each_call(tmp_path, monkeypatch):
    complete(SIM, msgs("x"))
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "other"))
    assert not complete(SIM, msgs("x")).cached
    assert (tmp_path / "other").is_dir()


def test_configure_sets_folder_and_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readwrite")
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "a"))
    environ = dict(os.environ)
    with temporary_settings():  # undoes the configure calls below
        settings = configure(cache_dir=tmp_path / "b", cache_mode="readonly", timeout=5)
        assert settings["cache_mode"] == "readonly" and settings["cache_dir"] == str(tmp_path / "b")
        assert settings["timeout"] == 5.0 and isinstance(settings["timeout"], float)
        with pytest.raises(CacheMiss):
            complete(SIM, msgs("y"))
        with pytest.raises(ValueError, match="cache_mode"):
            configure(cache_mode="sometimes")
        with pytest.raises(ValueError, match="concurrency=0"):
            configure(concurrency=0)
        # set in code, the settings win over the environment, which stays untouched
        assert dict(os.environ) == environ
        monkeypatch.setenv("WORKBENCH_CACHE_MODE", "off")
        monkeypatch.setenv("WORKBENCH_TIMEOUT", "7")
        assert settings == configure()
    assert dict(os.environ) == environ | {"WORKBENCH_CACHE_MODE": "off", "WORKBENCH_TIMEOUT": "7"}
    assert configure()["cache_mode"] == "off" and configure()["timeout"] == 7.0
    assert configure()["cache_dir"] == str(tmp_path / "a")


def test_temporary_settings_restores_what_was_set_in_code():
    before = configure()
    with temporary_settings(concurrency=3, rpm={"m": 60}):
        with temporary_settings(concurrency=5, rpm=30) as inner:
            assert inner["concurrency"] == 5 and inner["rpm"] == {"*": 30}
        assert configure()["concurrency"] == 3 and configure()["rpm"] == {"m": 60}
    assert configure() == before and before["rpm"] == {}


def test_corrupt_entry_is_a_miss_and_is_rewritten(_llm_cache):
    first = complete(SIM, msgs("z"))
    _cache.open_cache(_llm_cache).set(first.key, "{not json")
    again = complete(SIM, msgs("z"))
    assert not again.cached and again.text == first.text
    assert complete(SIM, msgs("z")).cached


def test_results_in_request_order_with_mixed_hits_and_duplicates():
    requests = [Request(SIM, msgs(f"item {i % 7}"), sample=i % 2) for i in range(30)]
    warm = complete_many(requests[::3], progress=False)
    assert all(r.ok for r in warm)
    out = complete_many(requests, progress=False)
    assert [r.key for r in out] == [cache_key(r) for r in requests]
    assert any(r.cached for r in out) and not all(r.cached for r in out)
    assert out[0].text == complete(SIM, msgs("item 0")).text


def test_progress_bar_goes_to_stderr(capsys):
    complete_many([Request(SIM, msgs(f"p{i}")) for i in range(5)], progress=True)
    assert "LLM calls" in capsys.readouterr().err


def test_a_run_without_a_progress_bar_does_not_import_tqdm():
    """(its import was the largest part of a fresh process's set-up before its first call)"""
    import subprocess
    import sys

    child = ("import sys\n"
             "from workbench.llm import Request, complete_many\n"
             "out = complete_many([Request('sim/judge-a', [{'role': 'user', 'content': 'x'}])],"
             " progress=False)\n"
             "print(out[0].ok, 'tqdm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.split() == ["True", "False"]


def test_works_inside_a_running_event_loop():
    async def notebook_cell():
        return complete(SIM, msgs("from a running loop")), complete_many(
            [Request(SIM, msgs("many from a loop"))], progress=False)

    single, many = asyncio.run(notebook_cell())
    assert single.ok and many[0].ok


# --- providers ---------------------------------------------------------------------------

def test_unknown_provider_fails_before_any_call(sim_server, sim_stats):
    before = sim_stats(sim_server)["requests"]
    requests = server_requests(sim_server, 2, prefix="unknown-provider")
    with pytest.raises(ProviderError, match="foo/bar"):
        complete_many([*requests, Request("foo/bar", msgs("x"))], progress=False)
    with pytest.raises(ProviderError, match="sim/no-such-profile"):
        complete("sim/no-such-profile", msgs("x"))
    assert sim_stats(sim_server)["requests"] == before


def test_missing_api_key_fails_before_any_call(sim_server, sim_stats, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = sim_stats(sim_server)["requests"]
    requests = server_requests(sim_server, 2, prefix="missing-key")
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        complete_many([*requests, Request("gpt-4o", msgs("x"))], progress=False)
    assert sim_stats(sim_server)["requests"] == before


def test_real_provider_replays_from_cache_without_a_key(monkeypatch, _llm_cache):
    """A cached real-provider reply needs no key (replays of published caches)."""
    from workbench.llm import _cache

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    request = Request("gpt-4o", msgs("cached elsewhere"))
    entry = _cache.make_entry(cache_key(request), request, text="7", logprobs=None,
                              usage=_cache.Usage(3, 1), cost_usd=0.01, latency_s=0.5,
                              backend="openai")
    _cache.store(_cache.open_cache(), entry)
    reply = complete("gpt-4o", msgs("cached elsewhere"))
    assert reply.cached and reply.text == "7" and reply.backend == "openai"


def test_server_reply_with_logprobs(sim_server):
    reply = complete(SERVER_MODEL, msgs("Score only: integer 1-5"), logprobs=True,
                     top_logprobs=3, api_base=sim_server)
    assert reply.backend == "sim" and reply.usage.prompt_tokens > 0
    if reply.logprobs is not None:  # the engine decides; the format is ours
        assert {"token", "logprob", "top_logprobs"} <= set(reply.logprobs[0])
    again = complete(SERVER_MODEL, msgs("Score only: integer 1-5"), logprobs=True,
                     top_logprobs=3, api_base=sim_server)
    assert again.cached and again.logprobs == reply.logprobs


# --- throughput and safety --------------------------------------------------------------

def test_duplicate_in_flight_requests_reach_the_server_once(sim_server, sim_stats):
    before = sim_stats(sim_server)["requests"]
    distinct = server_requests(sim_server, 3, prefix="dedup")
    requests = [distinct[0]] * 5 + distinct[1:] + [distinct[2]] * 2
    out = complete_many(requests, progress=False)
    assert sim_stats(sim_server)["requests"] - before == 3
    assert len({r.text for r in out[:5]}) == 1 and all(r.ok for r in out)


def test_concurrency_limits_calls_in_flight():
    from workbench.sim.server import running_server

    with running_server(latency_ms=40) as (url, server):
        complete_many(server_requests(url, 12, prefix="conc"), concurrency=3, progress=False)
        assert server.peak_in_flight <= 3
        complete_many(server_requests(url, 12, prefix="conc2"), concurrency=12, progress=False)
        assert server.peak_in_flight > 3


def test_rpm_spaces_the_calls():
    started = time.perf_counter()
    complete_many([Request(SIM, msgs(f"rpm {i}")) for i in range(4)], rpm=600, progress=False)
    assert time.perf_counter() - started >= 0.3  # 4 starts, 0.1 s apart at the least


def test_retries_recover_from_429_and_500(sim_server_factory, sim_stats, fast_retries):
    url = sim_server_factory(rate_limit_rate=0.25, server_error_rate=0.25, seed=7)
    before = sim_stats(url)
    out = complete_many(server_requests(url, 16, prefix="retry"), max_retries=20,
                        progress=False)
    after = sim_stats(url)
    assert all(isinstance(r, Completion) for r in out)
    delta = {k: after["by_status"].get(k, 0) - before["by_status"].get(k, 0)
             for k in ("200", "429", "500")}
    assert delta["200"] == 16 and delta["429"] > 0 and delta["500"] > 0
    assert after["requests"] - before["requests"] == 16 + delta["429"] + delta["500"]


def test_errors_are_recorded_not_cached_and_sent_again(sim_server_factory, sim_stats,
                                                       fast_retries, _llm_cache):
    url = sim_server_factory(server_error_rate=1.0)
    request = server_requests(url, 1, prefix="always-500")[0]
    before = sim_stats(url)["requests"]
    (out,) = complete_many([request], max_retries=2, progress=False)
    assert isinstance(out, CallFailure) and out.error_type == "server_error"
    assert out.attempts == 3 and sim_stats(url)["requests"] - before == 3
    assert entries_in(_llm_cache) == 0
    with pytest.raises(ProviderError, match="server_error") as info:
        complete(request.model, request.messages, api_base=url, num_retries=0)
    assert info.value.failure.attempts == 1
    assert sim_stats(url)["requests"] - before == 4


def test_bad_request_is_not_retried(sim_server, sim_stats, fast_retries):
    before = sim_stats(sim_server)
    # the server, like OpenAI's API, accepts temperatures in [0, 2] only
    (out,) = complete_many(server_requests(sim_server, 1, prefix="bad", temperature=3.0),
                           max_retries=5, progress=False)
    after = sim_stats(sim_server)
    assert isinstance(out, CallFailure) and out.error_type == "bad_request"
    assert out.attempts == 1 and after["requests"] - before["requests"] == 1
    (gone,) = complete_many([Request("openai/sim-no-such-profile", msgs("x"),
                                     params={"api_base": sim_server})],
                            max_retries=5, progress=False)
    assert gone.error_type == "not_found" and gone.attempts == 1


def test_malformed_bodies_are_retried_then_recorded(sim_server_factory, sim_stats,
                                                    fast_retries):
    url = sim_server_factory(malformed_rate=1.0)
    complete_many(server_requests(url, 1, prefix="warm-up"), max_retries=0, progress=False)
    before = sim_stats(url)["requests"]
    (out,) = complete_many(server_requests(url, 1, prefix="broken"), max_retries=2,
                           progress=False)
    assert isinstance(out, CallFailure) and out.error_type == "malformed"
    assert out.attempts == 3 and sim_stats(url)["requests"] - before == 3


@pytest.mark.slow
def test_hung_request_times_out_as_a_call_failure(sim_server_factory, sim_server, sim_stats,
                                                  fast_retries):
    complete(SERVER_MODEL, msgs("warm up litellm"), api_base=sim_server)
    url = sim_server_factory(timeout_rate=1.0)
    before = sim_stats(url)["requests"]
    out = complete_many(server_requests(url, 2, prefix="hang"), timeout=1.0, max_retries=1,
                        progress=False)
    assert [r.error_type for r in out] == ["timeout", "timeout"]
    assert [r.attempts for r in out] == [2, 2]
    assert sim_stats(url)["requests"] - before == 4


def test_budget_guard_stops_with_partial_results():
    """A fake price (litellm's custom-pricing params) on sim calls: input tokens only,
    and prompts of identical length, so every call costs the same."""
    pricing = {"input_cost_per_token": 1e-3}
    requests = [Request(SIM, msgs(f"budget item {chr(97 + i)}"), params=pricing)
                for i in range(12)]
    probe = complete_many(requests[:1], progress=False)[0]
    assert probe.cost_usd > 0
    budget = probe.cost_usd * 3.5
    with pytest.raises(BudgetExceeded) as info:
        complete_many(requests, concurrency=1, budget_usd=budget, progress=False)
    partial = info.value.partial
    assert len(partial) == 12
    assert [r.key for r in partial] == [cache_key(r) for r in requests]
    done = [r for r in partial if isinstance(r, Completion)]
    stopped = [r for r in partial if isinstance(r, CallFailure)]
    # the cached probe is free; three more calls fit in 3.5 x its cost, a fourth would not
    assert len(done) == 4 and partial[0].cached and partial.index(stopped[0]) == 4
    assert all(r.error_type == "budget" and r.attempts == 0 for r in stopped)
    fresh = [r for r in done if not r.cached]
    assert info.value.spent_usd == pytest.approx(sum(r.cost_usd for r in fresh))
    assert info.value.spent_usd <= budget
    # what finished is cached: a rerun with room to spare completes the rest
    rerun = complete_many(requests, budget_usd=1e6, progress=False)
    assert all(r.ok for r in rerun) and sum(r.cached for r in rerun) == len(done)


def test_budget_guard_with_concurrency_never_overspends():
    pricing = {"input_cost_per_token": 1e-3}
    requests = [Request(SIM, msgs(f"parallel item {chr(97 + i)}"), params=pricing)
                for i in range(40)]
    cost = complete_many(requests[:1], progress=False, budget_usd=1.0)[0].cost_usd
    with pytest.raises(BudgetExceeded) as info:
        complete_many(requests[1:], concurrency=8, budget_usd=cost * 10.5, progress=False)
    assert info.value.spent_usd <= cost * 10.5
    assert sum(r.ok for r in info.value.partial) == 10


def test_budget_zero_cost_calls_all_run():
    out = complete_many([Request(SIM, msgs(f"free {i}")) for i in range(5)], budget_usd=0.0,
                        progress=False)
    assert all(r.ok for r in out)


_KILL_SCRIPT = textwrap.dedent("""
    import sys
    from workbench.llm import Request, complete_many
    url, n = sys.argv[1], int(sys.argv[2])
    requests = [Request("openai/sim-judge-a", [{"role": "user", "content": f"resume {i}"}],
                        params={"api_base": url}) for i in range(n)]
    out = complete_many(requests, concurrency=4, progress=False)
    print(sum(r.ok for r in out))
""")


@pytest.mark.slow
def test_killed_run_resumes_without_repeating_finished_calls(sim_server_factory, sim_stats,
                                                             tmp_path, _llm_cache):
    url = sim_server_factory(latency_ms=150)
    script = tmp_path / "run.py"
    script.write_text(_KILL_SCRIPT)
    n = 60
    before = sim_stats(url)["requests"]
    process = subprocess.Popen([sys.executable, str(script), url, str(n)], env=os.environ.copy(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if _llm_cache.joinpath("replies.db").exists() and entries_in(_llm_cache) >= 8:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    finished = entries_in(_llm_cache)  # the dead run's claims are not entries
    sent_first = sim_stats(url)["requests"] - before
    assert 8 <= finished < n and sent_first >= finished
    requests = [Request(SERVER_MODEL, msgs(f"resume {i}"), params={"api_base": url})
                for i in range(n)]  # the same requests as the script's
    rerun = complete_many(requests, concurrency=4, progress=False)
    assert all(r.ok for r in rerun) and sum(r.cached for r in rerun) == finished
    sent_second = sim_stats(url)["requests"] - before - sent_first
    assert sent_second == n - finished


def test_no_secret_lands_in_the_cache(sim_server, monkeypatch, _llm_cache):
    env_key = "sk-test-ENVSECRET-0123456789abcdef"
    param_key = "sk-test-PARAMSECRET-fedcba9876543210"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    complete(SERVER_MODEL, msgs("secret check"), api_base=sim_server, api_key=param_key,
             extra_headers={"Authorization": f"Bearer {param_key}"})
    complete(SIM, msgs("secret check"), api_key=param_key)
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    with pytest.raises(CacheMiss) as info:
        complete(SIM, msgs("secret miss"), api_key=param_key)
    assert param_key not in str(info.value)
    files = [p for p in Path(_llm_cache).rglob("*") if p.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        assert env_key.encode() not in data and param_key.encode() not in data, path
    assert entries_in(_llm_cache) == 2


@pytest.mark.slow
def test_importing_and_calling_keeps_stderr_clean(sim_server, tmp_path):
    code = textwrap.dedent(f"""
        import workbench.llm
        from workbench.llm import Request, complete, complete_many
        complete("sim/judge-a", [{{"role": "user", "content": "quiet please"}}])
        complete("openai/sim-judge-a", [{{"role": "user", "content": "quiet"}}],
                 api_base="{sim_server}")
        out = complete_many([Request("openai/sim-no-such", [{{"role": "user", "content": "x"}}],
                                     params={{"api_base": "{sim_server}"}})], progress=False)
        assert out[0].error_type == "not_found", out
        print("ok")
    """)
    env = {**os.environ, "WORKBENCH_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    assert result.stderr == ""


def test_price_from_the_local_cost_map():
    assert price("sim/judge-a", 10_000, 500) == 0.0
    assert price("gpt-4o", 0, 0) == 0.0
    million = price("gpt-4o", 1_000_000, 1_000_000)
    assert million == price("gpt-4o", 1_000_000, 0) + price("gpt-4o", 0, 1_000_000) > 0
    assert math.isnan(price("no-such-provider/no-such-model", 100, 10))


def test_cache_entry_holds_request_reply_and_bookkeeping(_llm_cache):
    reply = complete(SIM, msgs("entry"), temperature=0.7, sample=4, max_tokens=64)
    entry = decode_entry(_cache.open_cache(_llm_cache, readonly=True).get(reply.key))
    assert entry["key"] == reply.key
    assert entry["request"]["sample"] == 4 and entry["request"]["temperature"] == 0.7
    assert entry["response"]["text"] == reply.text
    assert entry["backend"] == "sim" and entry["cost_usd"] == 0.0
    assert {"timestamp", "workbench_version", "latency_s", "usage"} <= set(entry)


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="needs OPENAI_API_KEY")
def test_live_openai_call_is_cached_with_cost():
    reply = complete("gpt-4o-mini", msgs("Reply with the single word: yes"), max_tokens=5)
    assert reply.backend == "openai" and reply.cost_usd > 0 and not reply.cached
    assert complete("gpt-4o-mini", msgs("Reply with the single word: yes"), max_tokens=5).cached
