"""The sim-server's quota: token buckets per model and API key, 429 + Retry-After and the
``x-ratelimit-*`` headers, prompt + ``max_tokens`` charged against the token limit."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from workbench.sim._quota import Limiter, Quota, duration, prompt_tokens
from workbench.sim.server import fetch_stats, running_server

CHAT = {"model": "sim-judge-a", "messages": [{"role": "user", "content": "Hello there"}]}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def post(url: str, body: dict, key: str = "k1") -> tuple[int, dict, dict]:
    request = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_request_bucket_refills_at_the_rate_and_says_when():
    clock = Clock()
    limiter = Limiter(Quota(rpm=120, burst_s=1.0), clock=clock)  # 2/s, capacity 2
    assert [limiter.admit("m", "k", CHAT)[0] for _ in range(3)] == [True, True, False]
    ok, headers, _ = limiter.admit("m", "k", CHAT)
    assert not ok and headers["retry-after-ms"] == "500" and headers["retry-after"] == "1"
    assert headers["x-ratelimit-limit-requests"] == "120"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["x-ratelimit-reset-requests"] == "1s"
    clock.now += 0.5
    assert limiter.admit("m", "k", CHAT)[0]
    assert limiter.rejected == 2 and limiter.admitted == 3


def test_buckets_are_per_model_and_per_key():
    clock = Clock()
    limiter = Limiter(Quota(rpm=60, burst_s=1.0), clock=clock)  # capacity 1
    assert limiter.admit("m", "k", CHAT)[0]
    assert not limiter.admit("m", "k", CHAT)[0]
    assert limiter.admit("m", "other key", CHAT)[0]
    assert limiter.admit("other model", "k", CHAT)[0]


def test_token_limit_charges_prompt_plus_max_tokens():
    clock = Clock()
    limiter = Limiter(Quota(tpm=6000, burst_s=1.0), clock=clock)  # 100 tokens/s, capacity 100
    body = {**CHAT, "max_tokens": 50}
    cost = prompt_tokens(body) + 50
    ok, headers, _ = limiter.admit("m", "k", body)
    assert ok and int(headers["x-ratelimit-remaining-tokens"]) == 100 - cost
    ok, headers, _ = limiter.admit("m", "k", body)  # 100 - 2 * cost < 0: refused
    assert not ok
    assert headers["retry-after-ms"] == str(round((2 * cost - 100) / 100 * 1000))
    clock.now += (2 * cost - 100) / 100
    assert limiter.admit("m", "k", body)[0]


def test_completion_is_charged_after_the_reply_without_max_tokens():
    clock = Clock()
    limiter = Limiter(Quota(tpm=6000, burst_s=1.0), clock=clock)
    ok, _, buckets = limiter.admit("m", "k", CHAT)
    limiter.charge_completion(buckets, 200)
    assert ok and buckets["tokens"].level == 100 - prompt_tokens(CHAT) - 200
    assert not limiter.admit("m", "k", CHAT)[0]


def test_reset_durations_are_openai_style():
    assert duration(0.0005) == "1ms"
    assert duration(61.5) == "1m1.5s"


def test_quota_is_validated():
    with pytest.raises(ValueError, match="quota-rpm"):
        Quota(rpm=0)
    with pytest.raises(ValueError, match="burst"):
        Quota(rpm=10, burst_s=0)


def test_server_answers_429_with_retry_after_and_headers_and_counts_them():
    with running_server(quota=Quota(rpm=60, burst_s=2.0)) as (url, _):  # capacity 2
        replies = [post(url, CHAT) for _ in range(3)]
        other = post(url, CHAT, key="k2")
        stats = fetch_stats(url)
    assert [status for status, _, _ in replies] == [200, 200, 429]
    ok_headers = {k.lower(): v for k, v in replies[0][1].items()}
    assert ok_headers["x-ratelimit-limit-requests"] == "60"
    assert ok_headers["x-ratelimit-remaining-requests"] == "1"
    _, headers, body = replies[2]
    headers = {k.lower(): v for k, v in headers.items()}
    assert body["error"]["code"] == "rate_limit_exceeded"
    assert headers["retry-after"] == "1" and 0 < int(headers["retry-after-ms"]) <= 1000
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert other[0] == 200  # another key has its own bucket
    assert stats["by_status"] == {"200": 3, "429": 1}
    assert stats["quota"]["rejected"] == 1 and stats["quota"]["admitted"] == 3


def test_server_token_quota_refuses_a_max_tokens_that_does_not_fit():
    with running_server(quota=Quota(tpm=600, burst_s=60.0)) as (url, _):  # 600 tokens
        first = post(url, {**CHAT, "max_tokens": 500})
        second = post(url, {**CHAT, "max_tokens": 500})
    assert first[0] == 200 and second[0] == 429
    assert {k.lower() for k in second[1]} >= {"x-ratelimit-remaining-tokens", "retry-after"}


def test_no_quota_no_headers(sim_server):
    status, headers, _ = post(sim_server, CHAT)
    assert status == 200 and not any(k.lower().startswith("x-ratelimit") for k in headers)
    assert fetch_stats(sim_server)["quota"] is None
