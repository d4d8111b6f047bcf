"""The direct OpenAI-compatible path (workbench.llm._http): the same replies, keys and
entries as litellm's path; errors classified the same; the schema form llama.cpp wants;
and an unpriced model's cost recorded as 0 with a flag."""

from __future__ import annotations

import json
import logging

import pytest

from workbench.llm import Request, _http, clear_cache, complete_many, peek
from workbench.llm._cache import open_cache
from workbench.sim.server import SimServer, running_server

MODEL = "openai/sim-judge-a"


def msgs(text: str) -> list[dict]:
    return [{"role": "system", "content": "Return JSON only."},
            {"role": "user", "content": f"Rate this answer from 1 to 10: {text}"}]


def _requests(url: str, n: int = 9) -> list[Request]:
    return [Request(MODEL, msgs(f"answer {i}"), temperature=0.7, sample=i % 2,
                    logprobs=i % 3 == 0, top_logprobs=2 if i % 3 == 0 else None,
                    max_tokens=64 if i % 2 else None, params={"api_base": url})
            for i in range(n)]


def _stored(key: str) -> dict:
    raw = open_cache().get(key)
    return json.loads(raw if isinstance(raw, str) else raw[0])


def test_direct_and_litellm_paths_give_the_same_replies_and_entries(sim_server, monkeypatch):
    requests = _requests(sim_server)
    out = {}
    for path in ("litellm", "direct"):
        monkeypatch.setenv("WORKBENCH_HTTP_PATH", path)
        monkeypatch.setenv("WORKBENCH_CACHE_MODE", "off")
        out[path] = complete_many(requests, progress=False)
    for a, b in zip(out["litellm"], out["direct"], strict=True):
        assert a.ok and b.ok
        assert (a.key, a.text, a.usage, a.logprobs, a.backend, a.cost_usd, a.cost_known) == \
               (b.key, b.text, b.usage, b.logprobs, b.backend, b.cost_usd, b.cost_known)
    assert any(r.logprobs for r in out["direct"])  # the logprobs branch was exercised


def test_the_direct_path_writes_the_entry_litellm_would(sim_server, monkeypatch):
    request = _requests(sim_server, 1)[0]
    entries = {}
    for path in ("litellm", "direct"):
        monkeypatch.setenv("WORKBENCH_HTTP_PATH", path)
        clear_cache()
        (reply,) = complete_many([request], progress=False)
        entry = _stored(reply.key)
        for volatile in ("latency_s", "timestamp"):
            entry.pop(volatile)
        entries[path] = entry
        assert peek(request).text == reply.text
    assert entries["direct"] == entries["litellm"]


@pytest.mark.parametrize("variable", ["OPENAI_BASE_URL", "OPENAI_API_BASE"])
def test_a_base_url_from_the_environment_takes_the_direct_path(sim_server, monkeypatch,
                                                                variable):
    """The same keys and replies as litellm's path, and the same replies as with
    ``api_base`` (whose key holds the ``api_base``), sent by the direct path."""
    with_param = _requests(sim_server, 6)
    from_env = [Request(r.model, r.messages, temperature=r.temperature, sample=r.sample,
                        logprobs=r.logprobs, top_logprobs=r.top_logprobs,
                        max_tokens=r.max_tokens) for r in with_param]
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "off")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    expected = complete_many(with_param, progress=False)
    monkeypatch.setenv(variable, sim_server)
    sent = []
    real_send = _http.send

    async def counting(kwargs):
        sent.append(kwargs["api_base"])
        return await real_send(kwargs)

    monkeypatch.setattr(_http, "send", counting)
    out = {}
    for path in ("litellm", "direct"):
        monkeypatch.setenv("WORKBENCH_HTTP_PATH", path)
        out[path] = complete_many(from_env, progress=False)
    assert sent == [sim_server] * len(from_env)  # only the direct run, every call
    for a, b, c in zip(expected, out["litellm"], out["direct"], strict=True):
        assert a.ok and b.ok and c.ok and b.key == c.key
        assert (a.text, a.usage, a.logprobs, a.backend) == \
               (b.text, b.usage, b.logprobs, b.backend) == \
               (c.text, c.usage, c.logprobs, c.backend)
    assert {r.backend for r in out["direct"]} == {"sim"}


def test_eligibility_is_narrow():
    base = {"api_base": "http://127.0.0.1:1/v1"}
    assert _http.eligible(MODEL, base, "openai")
    assert not _http.eligible("gpt-4o", {}, "openai")  # hosted: litellm
    assert not _http.eligible(MODEL, {**base, "drop_params": True}, "openai")  # unknown param
    assert not _http.eligible("ollama/llama3", base, "ollama")


def test_eligibility_reads_the_base_url_from_the_environment(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    assert not _http.eligible(MODEL, {}, "openai")
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:1/v1")
    assert _http.eligible(MODEL, {}, "openai")
    assert not _http.eligible("gpt-4o", {}, "openai")  # a bare name: litellm's mapping
    assert not _http.eligible("ollama/llama3", {}, "ollama")


@pytest.mark.parametrize(("status", "kind"), [(400, "bad_request"), (401, "auth"),
                                              (404, "not_found"), (429, "rate_limit"),
                                              (500, "server_error")])
def test_http_errors_are_classified_like_litellm_errors(status, kind):
    from workbench.llm._providers import classify

    assert classify(_http.HTTPStatusError(status, "x")) == kind


def test_an_unknown_model_is_a_classified_failure_on_both_paths(sim_server, monkeypatch):
    request = Request("openai/sim-no-such-profile", msgs("x"), params={"api_base": sim_server})
    kinds = {}
    for path in ("litellm", "direct"):
        monkeypatch.setenv("WORKBENCH_HTTP_PATH", path)
        (failed,) = complete_many([request], progress=False, max_retries=0)
        kinds[path] = (failed.ok, failed.error_type)
    assert kinds["direct"] == kinds["litellm"] == (False, "not_found")


def test_a_refused_connection_is_a_connection_error(monkeypatch):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    request = Request(MODEL, msgs("x"), params={"api_base": f"http://127.0.0.1:{port}/v1"})
    (failed,) = complete_many([request], progress=False, max_retries=0)
    assert not failed.ok and failed.error_type == "connection_error"
    assert f"127.0.0.1:{port}" in failed.message


def test_bad_http_path_setting_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("WORKBENCH_HTTP_PATH", "fast")
    with pytest.raises(ValueError, match="WORKBENCH_HTTP_PATH"):
        _http.enabled()


SCHEMA = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": {
    "type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}}}


@pytest.mark.parametrize("path", ["direct", "litellm"])
def test_a_schema_goes_to_a_llamacpp_server_in_the_form_it_accepts(path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HTTP_PATH", path)
    with running_server(mimic="llamacpp") as (url, server):
        request = Request(MODEL, msgs("schema"), response_format=SCHEMA,
                          params={"api_base": url})
        (reply,) = complete_many([request], progress=False, max_retries=0)
        assert reply.ok, reply
        assert server.by_status == {"200": 1}  # no 500 first: the form was right at once
        # the key is of the request as asked (json_schema), not of the form sent
        assert peek(request) is not None


def test_a_standard_server_gets_the_standard_schema_form(monkeypatch):
    with running_server() as (url, server):
        request = Request(MODEL, msgs("schema std"), response_format=SCHEMA,
                          params={"api_base": url})
        (reply,) = complete_many([request], progress=False, max_retries=0)
        assert reply.ok and server.by_status == {"200": 1}


def test_the_llamacpp_mimic_refuses_the_json_schema_form(monkeypatch):
    """The check above can fail: without the conversion the same server answers 500."""
    monkeypatch.setattr(_http, "as_json_object", lambda form: form)
    with running_server(mimic="llamacpp") as (url, _server):
        request = Request(MODEL, msgs("schema raw"), response_format=SCHEMA,
                          params={"api_base": url})
        (failed,) = complete_many([request], progress=False, max_retries=0)
    assert not failed.ok and failed.error_type == "server_error"


def test_an_unpriced_model_costs_zero_with_a_flag(sim_server, monkeypatch, caplog):
    # a sim-server taken for a real OpenAI-compatible server whose model litellm cannot
    # price (like openai/smollm2 on llama.cpp); price() of unknown models is NaN (doctest)
    import math

    from workbench.llm import _providers

    monkeypatch.setattr(_providers, "_WARNED_UNPRICED", set())
    monkeypatch.setattr(_providers, "is_sim_server", lambda model, params: False)
    monkeypatch.setattr(_providers, "price", lambda model, p, c: math.nan)
    request = Request(MODEL, msgs("unpriced"), params={"api_base": sim_server})
    with caplog.at_level(logging.WARNING, logger="workbench.llm"):
        (reply,) = complete_many([request], progress=False)
    assert reply.ok and reply.cost_usd == 0.0 and reply.cost_known is False
    assert "no price" in caplog.text
    assert _stored(reply.key)["response"]["cost_known"] is False
    assert peek(request).cost_known is False  # the flag survives a replay
    priced = Request(MODEL, msgs("priced"), params={"api_base": sim_server,
                                                    "input_cost_per_token": 1e-6})
    (paid,) = complete_many([priced], progress=False)
    assert paid.cost_known is True and paid.cost_usd == pytest.approx(
        paid.usage.prompt_tokens * 1e-6)
    assert "cost_known" not in _stored(paid.key)["response"]  # priced entries unchanged


def test_the_zero_price_of_a_sim_server_is_not_taken_for_a_real_server(sim_server,
                                                                       monkeypatch):
    """Through litellm a sim-server's model is priced 0 in litellm's process-wide cost
    map; a real server serving a model of the same name later has no price all the same
    (its calls flagged, its price unknown), not litellm's 0."""
    import math

    from workbench.llm import _providers, price

    monkeypatch.setenv("WORKBENCH_HTTP_PATH", "litellm")
    (sim,) = complete_many([Request(MODEL, msgs("priced 0"), params={"api_base": sim_server})],
                           progress=False)
    assert sim.ok and sim.cost_usd == 0.0 and sim.cost_known is True
    assert MODEL in _providers.get_litellm().model_cost  # what litellm needs (no search)
    monkeypatch.setattr(_providers, "is_sim_server", lambda model, params: False)
    (real,) = complete_many([Request(MODEL, msgs("unpriced"), params={"api_base": sim_server})],
                            progress=False)
    assert real.ok and real.cost_usd == 0.0 and real.cost_known is False
    assert math.isnan(price(MODEL, 1000, 1000))


def test_prices_are_looked_up_once_per_model_and_run(monkeypatch, caplog):
    """The online runner and the batch path share ``Prices``: one cost-map lookup per model
    (and custom pricing or not) per run, and one warning for an unpriced model."""
    import math

    from workbench.llm import _providers

    looked = []

    def fake_price(model, p, c):
        looked.append(model)
        return math.nan

    monkeypatch.setattr(_providers, "price", fake_price)
    monkeypatch.setattr(_providers, "_WARNED_UNPRICED", set())
    prices = _providers.Prices()
    plain = [Request("openai/local", msgs(f"q{i}"), params={"api_base": "http://x/v1"})
             for i in range(3)]
    custom = Request("openai/local", msgs("c"), params={"api_base": "http://x/v1",
                                                         "input_cost_per_token": 1e-6})
    with caplog.at_level(logging.WARNING, logger="workbench.llm"):
        assert [prices.known(r, "openai") for r in plain] == [False] * 3
        assert prices.known(custom, "openai") is True
    assert looked == ["openai/local"]
    assert caplog.text.count("no price") == 1
    with caplog.at_level(logging.WARNING, logger="workbench.llm"):  # the next complete_many
        assert _providers.Prices().known(plain[0], "openai") is False and len(looked) == 2
    assert caplog.text.count("no price") == 1  # one warning per process, not per call batch


# --- credentials: the same Authorization whichever path sends the request ----------------

class Recording(SimServer):
    """A sim-server that keeps the ``Authorization`` header of every chat request."""

    def __init__(self) -> None:
        super().__init__()
        self.authorizations: list[str | None] = []

    async def chat(self, request):
        self.authorizations.append(request.headers.get("Authorization"))
        return await super().chat(request)


def _basic(pair: str) -> str:
    import base64

    return "Basic " + base64.b64encode(pair.encode()).decode()


def _with_credentials(url: str) -> str:
    return url.replace("http://", "http://alice:pa%40ss@")  # the password is "pa@ss"


@pytest.mark.parametrize(("case", "expected"), [
    ("url credentials", _basic("alice:pa@ss")),
    ("url credentials and api_key", "Bearer sk-param-key-123"),
    ("OPENAI_API_KEY", "Bearer sk-env-key-456"),
    ("nothing", "Bearer sk-local-no-key"),
    ("own header", "Token own-789"),
    ("url credentials via litellm", _basic("alice:pa@ss")),
    ("OPENAI_BASE_URL with credentials", _basic("alice:pa@ss")),
])
def test_a_server_gets_the_same_credentials_from_both_paths(case, expected, monkeypatch):
    from workbench.llm import _providers

    # taken for a real server: a sim-server always gets the placeholder key
    monkeypatch.setattr(_providers, "is_sim_server", lambda model, params: False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "off")
    server = Recording()
    with running_server(server=server) as (url, _):
        params = {"api_base": url}
        if case.startswith("url credentials"):
            params["api_base"] = _with_credentials(url)
        if case == "url credentials and api_key":
            params["api_key"] = "sk-param-key-123"
        if case == "url credentials via litellm":
            params["user"] = "a-param-only-litellm-sends"
        if case == "OPENAI_API_KEY":
            monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-456")
        if case == "own header":
            params["extra_headers"] = {"Authorization": "Token own-789"}
        if case == "OPENAI_BASE_URL with credentials":
            monkeypatch.setenv("OPENAI_BASE_URL", _with_credentials(url))
            monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-456")
            del params["api_base"]
        request = Request(MODEL, msgs(case), params=params)
        for path in ("direct", "litellm"):
            monkeypatch.setenv("WORKBENCH_HTTP_PATH", path)
            (reply,) = complete_many([request], progress=False, max_retries=0)
            assert reply.ok, (path, reply)
    assert server.authorizations == [expected, expected]
