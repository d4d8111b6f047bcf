"""complete_many(mode="batch"): provider batch jobs through the sim-server's Files and
Batch endpoints -- mapping, replay, failures, resume after kill -9, batch prices."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from workbench.errors import ProviderError
from workbench.llm import (
    CallFailure,
    Completion,
    Request,
    _batch,
    batch_price,
    cache_key,
    complete_many,
    peek,
    price,
    temporary_settings,
)
from workbench.llm._batch import BatchRun
from workbench.sim._batches import BatchService
from workbench.sim.server import SimServer, running_server

FAST = {"batch_latency_ms": 300.0}


def _pending() -> dict:
    """The batch ledger's jobs (none once every job's replies are stored)."""
    with _batch._ledger() as jobs:
        return dict(jobs)


def requests_for(url: str, n: int, tag: str = "q") -> list[Request]:
    return [Request("openai/sim-judge-a",
                    [{"role": "user", "content": f"Explain {tag}{i}x in detail."}],
                    temperature=1.0, sample=i % 3, params={"api_base": url}) for i in range(n)]


def batch(requests, **kwargs):
    return complete_many(requests, mode="batch", poll_interval=0.05, progress=False, **kwargs)


def test_replies_are_mapped_back_to_their_requests_when_reordered(sim_server_factory, sim_stats,
                                                                   tmp_path):
    url = sim_server_factory(**FAST)
    requests = requests_for(url, 24)
    before = sim_stats(url)["batches"]
    got = batch(requests)
    stats = sim_stats(url)["batches"]
    assert stats["created"] - before["created"] == 1  # one job for the 24 requests
    assert all(isinstance(r, Completion) and not r.cached and r.backend == "sim" for r in got)
    with temporary_settings(cache_dir=tmp_path / "online"):
        online = complete_many(requests, progress=False)  # the same server, one call each
    assert [r.key for r in got] == [r.key for r in online]
    assert [r.text for r in got] == [r.text for r in online]
    assert len({r.text for r in got}) > 1 and sim_stats(url)["requests"] >= 24


def test_two_runs_batching_the_same_requests_submit_each_once(monkeypatch):
    """Batch jobs take the pipeline's claims: a run that finds requests claimed by another
    (here another thread; another process alike) waits for their replies instead of
    submitting them again (without claims, each run would submit all of them)."""
    server = SimServer(batches=BatchService(latency_ms=1000.0))
    with running_server(server=server) as (url, _):
        requests = requests_for(url, 8, "twice")
        out: list = [None, None]

        def run(i: int) -> None:
            out[i] = batch(requests)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    lines = [json.loads(line)["custom_id"] for upload in server.batches.files.values()
             if upload["meta"]["purpose"] == "batch"
             for line in upload["data"].decode().splitlines()]
    assert sorted(lines) == sorted(cache_key(r) for r in requests)  # each once
    assert server.requests == 0  # nothing sent online either
    assert all(r.ok for r in out[0] + out[1])
    assert [r.text for r in out[0]] == [r.text for r in out[1]]
    assert _pending() == {}


def test_batch_replies_replay_like_online_ones(sim_server_factory, sim_stats):
    url = sim_server_factory(**FAST)
    requests = requests_for(url, 6, "replay")
    first = batch(requests + requests[:2])  # duplicates fill every slot, sent once
    assert first[6].text == first[0].text
    stats = sim_stats(url)
    again = batch(requests)
    online = complete_many(requests, progress=False)
    assert sim_stats(url)["batches"]["created"] == stats["batches"]["created"]
    assert sim_stats(url)["requests"] == stats["requests"]  # no request at all
    assert all(r.cached for r in again + online)
    assert [r.text for r in online] == [r.text for r in first[:6]]
    assert peek(requests[0]).text == first[0].text
    assert _pending() == {}


def test_failed_requests_are_call_failures_and_can_be_retried_online(sim_server_factory):
    url = sim_server_factory(**FAST, batch_error_rate=0.5, seed=4)
    requests = requests_for(url, 20, "err")
    got = batch(requests)
    failed = [r for r in got if isinstance(r, CallFailure)]
    assert 3 <= len(failed) <= 17
    assert {f.error_type for f in failed} == {"server_error"}
    assert all("batch batch_" in f.message and "mode='online'" in f.message for f in failed)
    retried = complete_many(requests, progress=False)  # cached ones replay, failed ones sent
    assert all(isinstance(r, Completion) for r in retried)
    assert sum(not r.cached for r in retried) == len(failed)


def test_expired_job_keeps_what_it_answered(sim_server_factory):
    url = sim_server_factory(**FAST, batch_final="expired")
    got = batch(requests_for(url, 10, "exp"))
    done = [r for r in got if isinstance(r, Completion)]
    failed = [r for r in got if isinstance(r, CallFailure)]
    assert len(done) == 5 and len(failed) == 5
    assert {f.error_type for f in failed} == {"timeout"} and "batch_expired" in failed[0].message
    assert all(peek(r) is not None for r, g in zip(requests_for(url, 10, "exp"), got, strict=True)
               if isinstance(g, Completion))
    assert _pending() == {}


def test_failed_job_fails_every_request_naming_why(sim_server_factory):
    url = sim_server_factory(**FAST, batch_final="failed")
    got = batch(requests_for(url, 4, "fail"))
    assert all(isinstance(r, CallFailure) and r.error_type == "bad_request" for r in got)
    assert "failed validation" in got[0].message and "simulated validation failure" in got[0].message
    assert _pending() == {}


RUN = textwrap.dedent("""
    import sys
    from workbench.llm import Request, complete_many
    url = sys.argv[1]
    requests = [Request("openai/sim-judge-a", [{"role": "user", "content": f"Kill me {i}."}],
                        params={"api_base": url}) for i in range(8)]
    complete_many(requests, mode="batch", poll_interval=0.05, progress=False)
    print("finished", flush=True)
""")


@pytest.mark.slow
def test_a_killed_run_resumes_its_jobs_without_submitting_again(sim_server_factory, sim_stats,
                                                                _llm_cache):
    url = sim_server_factory(batch_latency_ms=3000.0)
    before = sim_stats(url)["batches"]
    child = subprocess.Popen([sys.executable, "-c", RUN, url], env=os.environ.copy(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while sim_stats(url)["batches"]["retrieved"] <= before["retrieved"]:  # polling now
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    ledger = json.loads((_llm_cache / _batch.LEDGER_FILE).read_text())["jobs"]
    assert len(ledger) == 1 and len(next(iter(ledger.values()))["keys"]) == 8
    requests = [Request("openai/sim-judge-a", [{"role": "user", "content": f"Kill me {i}."}],
                        params={"api_base": url}) for i in range(8)]
    got = batch(requests)
    after = sim_stats(url)["batches"]
    assert after["created"] - before["created"] == 1  # resumed, not submitted again
    assert after["files_uploaded"] - before["files_uploaded"] == 1
    assert all(isinstance(r, Completion) for r in got)
    assert _pending() == {}


def test_sim_models_are_answered_online_and_bad_arguments_refused(sim_server):
    got = batch([Request("sim/judge-a", [{"role": "user", "content": "Hi"}])])
    assert isinstance(got[0], Completion) and got[0].backend == "sim"
    one = [Request("openai/sim-judge-a", [{"role": "user", "content": "Hi"}],
                   params={"api_base": sim_server})]
    with pytest.raises(ValueError, match="mode="):
        complete_many(one, mode="offline")
    with pytest.raises(ValueError, match="budget_usd"):
        complete_many(one, mode="batch", budget_usd=1.0)
    with pytest.raises(ProviderError, match="no batch jobs"):
        batch([Request("anthropic/claude-3-5-haiku-latest", [{"role": "user", "content": "Hi"}],
                       params={"api_key": "sk-test"})])


def test_batch_body_is_the_online_request():
    from workbench.llm._http import body_of
    from workbench.llm._providers import Route, call_kwargs

    request = Request("openai/sim-judge-a", [{"role": "user", "content": "Hi"}], sample=2,
                      max_tokens=5, response_format={"type": "json_object"},
                      params={"api_base": "http://127.0.0.1:1/v1", "api_key": "sk-x", "timeout": 3})
    route = Route("openai/sim-judge-a", "openai", "sim", True)
    body = body_of(call_kwargs(request, route, timeout=0), route.provider)
    assert body == {"model": "sim-judge-a", "messages": [{"role": "user", "content": "Hi"}],
                    "temperature": 0.0, "max_tokens": 5, "response_format": {"type": "json_object"},
                    "workbench_sample": 2}


def test_batch_prices_and_the_estimate_shows_both():
    assert batch_price("sim/judge-a", 10, 10) == 0.0
    assert math.isclose(batch_price("gpt-4o", 1000, 100), price("gpt-4o", 1000, 100) / 2)
    assert math.isnan(batch_price("no-such-provider/no-such-model", 10, 1))
    import pandas as pd

    from workbench.judges import Design, JudgeSpec, estimate

    items = pd.DataFrame({"item_id": ["a", "b"], "question": ["Q1?", "Q2?"],
                          "response": ["A1.", "A2."], "answer_model": ["m", "m"]})
    row = estimate(Design(items, JudgeSpec("holistic_simple", "gpt-4o"))).iloc[0]
    assert row["cost_usd"] > 0 and math.isclose(row["cost_usd_batch"], row["cost_usd"] / 2)


def test_the_call_mode_setting_sends_batches(sim_server_factory, sim_stats, monkeypatch):
    url = sim_server_factory(**FAST)
    before = sim_stats(url)["batches"]["created"]
    monkeypatch.setenv("WORKBENCH_CALL_MODE", "batch")
    got = complete_many(requests_for(url, 3, "env"), poll_interval=0.05, progress=False)
    assert all(isinstance(r, Completion) for r in got)
    assert sim_stats(url)["batches"]["created"] == before + 1
    with temporary_settings(call_mode="online") as now:
        assert now["call_mode"] == "online"
        complete_many(requests_for(url, 2, "env-online"), progress=False)
    assert sim_stats(url)["batches"]["created"] == before + 1
    monkeypatch.setenv("WORKBENCH_CALL_MODE", "sometimes")
    with pytest.raises(ValueError, match="WORKBENCH_CALL_MODE"):
        complete_many(requests_for(url, 1, "bad"), progress=False)


def test_sim_server_batch_endpoints_speak_the_openai_format():
    """Upload, create, status transitions, shuffled output, download: the raw HTTP API."""
    import asyncio

    import aiohttp

    from workbench.sim.server import running_server

    lines = [{"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
              "body": {"model": "sim-judge-a", "temperature": 0,
                       "messages": [{"role": "user", "content": f"Explain w{i}x."}]}}
             for i in range(12)]

    async def go(url: str) -> tuple[list[str], list[dict]]:
        async with aiohttp.ClientSession() as session:
            form = aiohttp.FormData()
            form.add_field("purpose", "batch")
            form.add_field("file", "".join(json.dumps(x) + "\n" for x in lines).encode(),
                           filename="in.jsonl")
            async with session.post(f"{url}/files", data=form) as response:
                upload = await response.json()
            body = {"input_file_id": upload["id"], "endpoint": "/v1/chat/completions",
                    "completion_window": "24h"}
            async with session.post(f"{url}/batches", json=body) as response:
                job = await response.json()
            seen = [job["status"]]
            while job["status"] in ("validating", "in_progress"):
                await asyncio.sleep(0.02)
                async with session.get(f"{url}/batches/{job['id']}") as response:
                    job = await response.json()
                if job["status"] != seen[-1]:
                    seen.append(job["status"])
            async with session.get(f"{url}/files/{job['output_file_id']}/content") as response:
                out = [json.loads(x) for x in (await response.text()).splitlines()]
            return seen, out

    with running_server() as (url, server):
        server.batches.latency_s = 0.2
        seen, out = asyncio.run(go(url))
    assert seen == ["validating", "in_progress", "completed"]
    assert sorted(x["custom_id"] for x in out) == sorted(f"r{i}" for i in range(12))
    assert [x["custom_id"] for x in out] != [f"r{i}" for i in range(12)]  # reordered
    assert all(x["response"]["status_code"] == 200 for x in out)


def test_run_judging_in_batch_mode_gives_the_online_results(sim_server_factory, sim_stats,
                                                            monkeypatch, tmp_path):
    """End to end: a judging run (two stages: summaries, then judge calls) with every call
    in batch jobs gives the same scores and keys as online; its rows replay."""
    import pandas as pd

    from workbench.judges import JudgeSpec, run_judging

    url = sim_server_factory(**FAST)
    items = pd.DataFrame({"item_id": ["a", "b", "c"],
                          "question": ["Why is the sky blue?", "What is HIV?", "Define tea."],
                          "response": ["Rayleigh scattering.", "A virus.", "A drink."],
                          "answer_model": ["m", "m", "m"]})
    inner = JudgeSpec("holistic_simple", "openai/sim-judge-a", trials=2,
                      params={"api_base": url})
    spec = JudgeSpec("summarize_then", "openai/sim-judge-a", inner=inner,
                     summarizer_model="openai/sim-summarizer", params={"api_base": url})
    before = sim_stats(url)["batches"]["created"]
    monkeypatch.setenv("WORKBENCH_CALL_MODE", "batch")
    monkeypatch.setenv("WORKBENCH_BATCH_POLL", "0.05")
    batched = run_judging(items, spec, progress=False)
    assert sim_stats(url)["batches"]["created"] - before == 2  # one job per stage
    replayed = run_judging(items, spec, progress=False)
    monkeypatch.setenv("WORKBENCH_CALL_MODE", "online")
    with temporary_settings(cache_dir=tmp_path / "online"):
        online = run_judging(items, spec, progress=False)
    cols = ["item_id", "trial", "score", "parse_ok", "cache_key", "raw_reply"]
    pd.testing.assert_frame_equal(batched[cols], online[cols])
    assert replayed["cached"].all() and not batched["cached"].any()
    pd.testing.assert_frame_equal(replayed[cols], batched[cols])


def test_a_job_the_provider_refuses_gives_call_failures():
    dead = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    got = batch(requests_for(dead, 3, "dead"))
    assert all(isinstance(r, CallFailure) and r.error_type == "connection_error" for r in got)
    assert "could not submit a batch job" in got[0].message
    assert _pending() == {}


# --- a kill between the provider creating a job and the ledger recording it (issue 20, item 2)

class SlowToAnswer(BatchService):
    """Creates the job at once, answers the create call only ``delay_s`` later."""

    def __init__(self, delay_s: float, **kwargs):
        super().__init__(**kwargs)
        self.delay_s = delay_s

    async def create(self, request):
        response = await super().create(request)
        await asyncio.sleep(self.delay_s)
        return response


KILLED = textwrap.dedent("""
    import sys
    from workbench.llm import Request, complete_many
    url = sys.argv[1]
    requests = [Request("openai/sim-judge-a", [{"role": "user", "content": f"Paid once {i}."}],
                        params={"api_base": url}) for i in range(6)]
    complete_many(requests, mode="batch", poll_interval=0.05, progress=False)
""")


@pytest.mark.slow
def test_a_kill_while_the_job_is_created_does_not_submit_it_again(_llm_cache):
    server = SimServer(batches=SlowToAnswer(30.0, latency_ms=200.0))
    with running_server(server=server) as (url, _):
        child = subprocess.Popen([sys.executable, "-c", KILLED, url], env=os.environ.copy(),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while server.batches.counts["created"] < 1:  # created; the reply is on its way
                assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()
                time.sleep(0.02)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
            child.stdout.close()
            child.stderr.close()
        server.batches.delay_s = 0.0
        requests = [Request("openai/sim-judge-a", [{"role": "user", "content": f"Paid once {i}."}],
                            params={"api_base": url}) for i in range(6)]
        got = batch(requests)
        stats = server.batches.stats()
    assert all(isinstance(r, Completion) for r in got), got
    assert stats["created"] == 1  # found the job the killed run had submitted, not a second
    assert _pending() == {}


@pytest.mark.slow
def test_an_intent_whose_job_was_never_created_is_submitted(_llm_cache):
    with running_server() as (url, server):
        requests = requests_for(url, 3, "intent")
        with _batch._ledger() as ledger:  # a run killed before its upload
            ledger[_batch.INTENT + "0" * 32] = {
                "model": "openai/sim-judge-a", "keys": [cache_key(r) for r in requests[:2]], "tag": "0" * 32,
                "since": time.time(), "submitted": "2026-01-01T00:00:00+00:00"}
        got = batch(requests)
        stats = server.batches.stats()
    assert all(isinstance(r, Completion) for r in got), got
    assert stats["created"] == 1 and _pending() == {}


@pytest.mark.parametrize("line", [
    {"custom_id": "k", "response": {"status_code": 500, "body": "upstream exploded"}},
    {"custom_id": "k", "response": {"status_code": 200, "body": ["not", "an", "object"]}},
    {"custom_id": "k", "response": "not an object either"},
    {"custom_id": "k", "error": "a bare string"},
    {"custom_id": "k", "response": {"status_code": 502, "body": {"error": "text, not a dict"}}},
])
def test_an_odd_output_line_is_a_failure_row_of_its_request_alone(line):
    """Whatever shape a provider's output line has, it gives its own request a failure row
    and never raises (which would cost the job's other replies)."""
    request = Request("openai/sim-judge-a", [{"role": "user", "content": "odd line"}])
    run = BatchRun({"k": request}, {}, record=None, poll_interval=0.0, done=None, litellm=None)
    got = run._result("batch_1", "k", request, line)
    assert isinstance(got, CallFailure)
    assert got.message.startswith("batch batch_1: ")


_ONE_RUN = """
import sys
from workbench.llm import Request, complete_many, temporary_settings
url, cache, tag = sys.argv[1:4]
requests = [Request("openai/sim-judge-a", [{"role": "user", "content": f"Say {tag} {i}."}],
                    temperature=1.0, sample=i, params={"api_base": url}) for i in range(3)]
with temporary_settings(cache_dir=cache):
    out = complete_many(requests, mode="batch", poll_interval=0.05, progress=False)
print("answered", sum(r.ok for r in out))
"""


@pytest.mark.slow
def test_batch_runs_end_cleanly_and_read_each_output_once(tmp_path):
    """litellm's retrieve of a finished job has its success logging download the output
    again in a task the run's closing loop cuts short (a traceback after the result, about
    one run in two): 20 runs, each its own process and job, none with a traceback, and the
    server saw one download per job."""
    from workbench.sim.server import fetch_stats, spawned_server

    runs, outputs = 20, []
    with spawned_server(batch_latency_ms=200.0) as url:
        for start in range(0, runs, 4):  # four processes at a time
            processes = [subprocess.Popen(
                [sys.executable, "-c", _ONE_RUN, url, str(tmp_path / f"cache{i}"), f"run{i}"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for i in range(start, start + 4)]
            outputs += [p.communicate(timeout=300)[0] for p in processes]
        stats = fetch_stats(url)
    assert [out.splitlines()[0] for out in outputs] == ["answered 3"] * runs, outputs
    noisy = [out for out in outputs if "Traceback" in out or "ERROR" in out]
    assert noisy == [], f"{len(noisy)} of {runs} runs printed an error: {noisy[0][:2000]}"
    batches = stats["batches"]
    assert batches["created"] == runs and batches["by_status"] == {"completed": runs}
    assert len(batches["downloads_by_file"]) == runs  # each job's output file ...
    assert set(batches["downloads_by_file"].values()) == {1}  # ... downloaded once
    assert stats["by_endpoint"]["GET /v1/files/{file_id}/content"] == runs
