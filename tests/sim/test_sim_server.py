"""The OpenAI-compatible sim-server: endpoints, validation, faults, concurrency, CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import aiohttp
import pytest

from workbench.sim.server import FaultRates, fetch_stats, running_server


def post(url: str, body: dict | bytes, timeout: float = 10.0) -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}/chat/completions", data=data,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


CHAT = {"model": "sim-judge-a", "messages": [{"role": "user", "content": "Hello"}]}


def test_chat_completion_has_the_openai_shape(sim_server):
    status, body = post(sim_server, {**CHAT, "logprobs": True, "top_logprobs": 2})
    assert status == 200
    reply = json.loads(body)
    assert reply["object"] == "chat.completion" and reply["model"] == "sim-judge-a"
    choice = reply["choices"][0]
    assert choice["message"]["role"] == "assistant" and isinstance(choice["message"]["content"], str)
    assert choice["finish_reason"] == "stop"
    usage = reply["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    if choice["logprobs"] is not None:
        assert {"token", "logprob", "top_logprobs"} <= set(choice["logprobs"]["content"][0])


def test_same_request_same_reply_and_sample_is_read(sim_server):
    from workbench.sim import engine

    body = {**CHAT, "temperature": 1.0, "workbench_sample": 3}
    first = json.loads(post(sim_server, body)[1])["choices"][0]["message"]["content"]
    second = json.loads(post(sim_server, body)[1])["choices"][0]["message"]["content"]
    assert first == second
    expected = engine.respond("judge-a", CHAT["messages"], temperature=1.0, sample=3).text
    assert first == expected


@pytest.mark.parametrize(("body", "status"), [
    (b"{not json", 400),
    ({"messages": CHAT["messages"]}, 400),
    ({"model": "sim-judge-a", "messages": []}, 400),
    ({"model": "sim-judge-a", "messages": [{"role": "wizard", "content": "x"}]}, 400),
    ({**CHAT, "temperature": 2.5}, 400),
    ({**CHAT, "stream": True}, 400),
    ({**CHAT, "n": 3}, 400),
    ({**CHAT, "model": "sim-no-such-profile"}, 404),
])
def test_invalid_requests_get_openai_style_errors(sim_server, body, status):
    got, raw = post(sim_server, body)
    assert got == status
    assert "message" in json.loads(raw)["error"]


_DEEP = b'{"model": "sim-judge-a", "messages": [{"role": "user", "content": "x"}], "x": ' + (
    b"[" * 50_000) + (b"]" * 50_000) + b"}"


@pytest.mark.parametrize(("body", "param", "code"), [
    ({**CHAT, "max_tokens": "abc"}, "max_tokens", "invalid_type"),
    ({**CHAT, "max_tokens": -5}, "max_tokens", "integer_below_min_value"),
    ({**CHAT, "max_tokens": 0}, "max_tokens", "integer_below_min_value"),
    ({**CHAT, "max_completion_tokens": 2.5}, "max_completion_tokens", "invalid_type"),
    ({**CHAT, "logprobs": True, "top_logprobs": "x"}, "top_logprobs", "invalid_type"),
    ({**CHAT, "logprobs": True, "top_logprobs": 21}, "top_logprobs", "integer_above_max_value"),
    ({**CHAT, "logprobs": "yes"}, "logprobs", "invalid_type"),
    ({**CHAT, "messages": [{"role": "user", "content": [1, 2]}]}, "messages[0].content[0]",
     "invalid_type"),
    ({**CHAT, "messages": [{"role": "user", "content": {"text": "x"}}]}, "messages[0].content",
     "invalid_type"),
    ({**CHAT, "messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]},
     "messages[0].content[0].text", "invalid_type"),
    ({**CHAT, "messages": ["hello"]}, "messages[0]", "invalid_type"),
    ({**CHAT, "temperature": "hot"}, "temperature", "invalid_type"),
    ({**CHAT, "top_p": 1.5}, "top_p", "invalid_value"),
    ({**CHAT, "seed": "s"}, "seed", "invalid_type"),
    ({**CHAT, "stop": [1]}, "stop", "invalid_type"),
    ({**CHAT, "response_format": "json"}, "response_format", "invalid_value"),
    ({**CHAT, "workbench_sample": "abc"}, "workbench_sample", "invalid_type"),
    ([CHAT], None, "invalid_type"),
    (_DEEP, None, "invalid_json"),
])
def test_a_request_the_provider_refuses_is_a_400_in_its_error_shape(sim_server, body, param,
                                                                    code):
    """OpenAI answers these with a 400 naming the parameter; the sim-server answered a 500
    (a crash in the engine or the JSON parser) or a 200."""
    got, raw = post(sim_server, body)
    assert got == 400, raw[:300]
    error = json.loads(raw)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert (error["type"], error["param"], error["code"]) == (
        "invalid_request_error", param, code), error
    assert error["message"]


def test_a_batch_line_the_provider_refuses_is_a_400_line_of_the_error_file():
    from workbench.sim._batches import _parse_input
    from workbench.sim.server import answer_body

    status, body = answer_body({**CHAT, "max_tokens": "abc"})
    assert status == 400 and body["error"]["param"] == "max_tokens"
    deep = b'{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": ' + (
        b"[" * 50_000) + (b"]" * 50_000) + b"}\n"
    lines, problems = _parse_input(deep)
    assert lines == [] and problems[0]["code"] == "invalid_json_line"


def test_models_and_stats_endpoints(sim_server, sim_stats):
    root = sim_server.removesuffix("/v1")
    with urllib.request.urlopen(f"{sim_server}/models", timeout=5) as response:
        models = json.loads(response.read())
    from workbench.sim import engine

    assert [m["id"] for m in models["data"]] == ["sim-" + p for p in engine.profiles()]
    before = sim_stats(sim_server)
    post(sim_server, CHAT)
    post(sim_server, {**CHAT, "model": "sim-no-such-profile"})
    after = fetch_stats(root)
    assert after["requests"] - before["requests"] == 2
    assert after["by_status"]["200"] - before["by_status"].get("200", 0) == 1
    assert after["by_status"]["404"] - before["by_status"].get("404", 0) == 1


def test_fault_rates_are_validated():
    with pytest.raises(ValueError, match="rate-limit-rate"):
        FaultRates(rate_limit=1.2)
    with pytest.raises(ValueError, match="sum"):
        FaultRates(rate_limit=0.6, server_error=0.6)
    rates = FaultRates(rate_limit=0.1, server_error=0.2, timeout=0.3, malformed=0.1)
    assert [rates.draw(u) for u in (0.05, 0.2, 0.5, 0.65, 0.9)] == \
           ["rate_limit", "server_error", "timeout", "malformed", None]


def test_faults_are_injected_at_their_rates_from_a_seeded_rng():
    faults = FaultRates(rate_limit=0.3, server_error=0.2, malformed=0.1)

    def run() -> tuple[list[int], dict]:
        with running_server(faults=faults, seed=11) as (url, _):
            statuses = []
            for i in range(200):
                status, body = post(url, {**CHAT, "messages": [{"role": "user", "content": str(i)}]})
                if status == 200:
                    try:
                        json.loads(body)
                    except ValueError:
                        status = -1  # malformed body
                statuses.append(status)
            return statuses, fetch_stats(url)

    statuses, stats = run()
    assert statuses == run()[0]  # same seed, same faults
    assert 40 <= statuses.count(429) <= 80 and 20 <= statuses.count(500) <= 60
    assert 5 <= statuses.count(-1) <= 40
    assert stats["by_status"]["429"] == statuses.count(429)
    assert stats["faults"]["malformed"] == statuses.count(-1)
    assert stats["requests"] == 200


def test_hung_requests_never_answer():
    with running_server(faults=FaultRates(timeout=1.0)) as (url, _):
        with pytest.raises((TimeoutError, urllib.error.URLError)):
            post(url, CHAT, timeout=0.5)
        assert fetch_stats(url)["faults"]["timeout"] == 1


def test_64_concurrent_requests_with_latency_are_all_in_flight_together():
    async def burst(url: str) -> list[int]:
        async with aiohttp.ClientSession() as session:
            async def one(i):
                body = {**CHAT, "messages": [{"role": "user", "content": f"c{i}"}]}
                async with session.post(f"{url}/chat/completions", json=body) as response:
                    await response.read()
                    return response.status

            return await asyncio.gather(*(one(i) for i in range(96)))

    with running_server(latency_ms=300) as (url, server):
        statuses = asyncio.run(burst(url))
        assert statuses == [200] * 96
        assert server.peak_in_flight >= 64  # latency overlaps: an asyncio server


def test_workbench_sim_server_command_serves(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", "sim-server", "--port", "0", "--latency-ms", "5",
         "--seed", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=os.environ.copy())
    try:
        line = process.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, process.stderr.read()
        url = line.rsplit(" on ", 1)[1].strip()
        status, _ = post(url, CHAT)
        assert status == 200
        stats = fetch_stats(url)
        assert (stats["requests"], stats["by_status"], stats["faults"]) == (1, {"200": 1}, {})
        assert (stats["connections"], stats["in_flight"], stats["peak_in_flight"]) == (1, 0, 1)
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert process.returncode in (0, -15)
