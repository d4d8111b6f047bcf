"""Request validation, the cache key and secret handling (no provider calls)."""

from __future__ import annotations

import re

import pytest

import workbench.llm as llm
from workbench.llm import Request, cache_key
from workbench.llm._keys import key_fields
from workbench.llm._providers import classify, error_message
from workbench.llm._secrets import key_params, public_params, scrub

MSGS = [{"role": "system", "content": "You are a judge."},
        {"role": "user", "content": "Rate: 日本語の回答"}]


def req(**kwargs):
    kwargs.setdefault("messages", MSGS)
    return Request(kwargs.pop("model", "sim/judge-a"), **kwargs)


def test_public_api_all_sorted():
    assert llm.__all__ == sorted(llm.__all__)
    for name in llm.__all__:
        assert hasattr(llm, name)


def test_key_is_sha256_hex_and_stable():
    key = cache_key(req())
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    assert key == cache_key(req())


def test_int_and_float_numbers_agree_also_nested():
    assert cache_key(req(temperature=1)) == cache_key(req(temperature=1.0))
    assert cache_key(req(top_p=1)) == cache_key(req(top_p=1.0))
    a = req(response_format={"type": "json_schema", "schema": {"maximum": 10}})
    b = req(response_format={"type": "json_schema", "schema": {"maximum": 10.0}})
    assert cache_key(a) == cache_key(b)
    c = req(messages=[{"role": "user", "content": [{"type": "text", "text": "x", "w": 2}]}])
    d = req(messages=[{"role": "user", "content": [{"type": "text", "text": "x", "w": 2.0}]}])
    assert cache_key(c) == cache_key(d)


@pytest.mark.parametrize("change", [
    {"sample": 1}, {"temperature": 0.7}, {"max_tokens": 50}, {"top_p": 0.9},
    {"response_format": {"type": "json_object"}}, {"logprobs": True},
    {"logprobs": True, "top_logprobs": 5}, {"stop": ["\n"]}, {"seed": 3},
    {"model": "sim/judge-b"}, {"params": {"api_base": "http://127.0.0.1:9/v1"}},
    {"params": {"frequency_penalty": 0.5}},
])
def test_every_reply_changing_field_changes_the_key(change):
    assert cache_key(req(**change)) != cache_key(req())


def test_message_order_and_content_change_the_key():
    assert cache_key(req(messages=MSGS[::-1])) != cache_key(req())
    edited = [MSGS[0], {"role": "user", "content": "Rate: 日本語の回答 "}]
    assert cache_key(req(messages=edited)) != cache_key(req())


@pytest.mark.parametrize("params", [
    {"api_key": "sk-abcdef123456"}, {"timeout": 5}, {"num_retries": 3}, {"max_retries": 2},
    {"extra_headers": {"Authorization": "Bearer xyz"}}, {"input_cost_per_token": 1e-6},
])
def test_secrets_and_transport_settings_do_not_change_the_key(params):
    assert cache_key(req(params=params)) == cache_key(req())


def test_api_base_trailing_slash_is_the_same_server():
    a = req(params={"api_base": "http://127.0.0.1:8000/v1/"})
    b = req(params={"api_base": "http://127.0.0.1:8000/v1"})
    assert cache_key(a) == cache_key(b)


def test_key_fields_list_their_parts():
    fields = key_fields(req(sample=3, params={"api_base": "http://x/v1", "api_key": "sk-zz"}))
    assert fields["sample"] == 3
    assert fields["params"] == {"api_base": "http://x/v1"}
    assert "api_key" not in str(fields)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"messages": []}, "messages"),
    ({"messages": "hello"}, "messages"),
    ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
    ({"messages": [{"role": "user"}]}, "messages[0].content"),
    ({"messages": [{"role": "user", "content": "x"}, "y"]}, "messages[1]"),
    ({"temperature": -0.1}, "temperature"),
    ({"temperature": float("nan")}, "temperature"),
    ({"temperature": "0"}, "temperature"),
    ({"sample": -1}, "sample"),
    ({"sample": 1.5}, "sample"),
    ({"sample": True}, "sample"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"response_format": "json"}, "response_format"),
    ({"logprobs": 1}, "logprobs"),
    ({"top_logprobs": 3}, "top_logprobs"),
    ({"logprobs": True, "top_logprobs": 50}, "top_logprobs"),
    ({"top_p": 0}, "top_p"),
    ({"stop": 5}, "stop"),
    ({"seed": "1"}, "seed"),
    ({"params": {"temperature": 1}}, "params"),
    ({"params": {"stream": True}}, "params"),
    ({"model": ""}, "model"),
])
def test_malformed_field_raises_value_error_naming_it(kwargs, field):
    with pytest.raises(ValueError, match=re.escape(f"Request field '{field}'")):
        req(**kwargs)


def test_request_roundtrip_and_repr_hide_secrets():
    r = req(temperature=0.5, sample=2, logprobs=True, top_logprobs=3, stop=("a", "b"),
            params={"api_key": "sk-live-0123456789", "api_base": "http://h/v1", "timeout": 9})
    assert "sk-live" not in repr(r)
    data = r.to_dict()
    assert "api_key" not in data["params"] and data["params"]["timeout"] == 9
    back = Request.from_dict(data)
    assert cache_key(back) == cache_key(r)
    assert back.stop == ["a", "b"]
    with pytest.raises(ValueError, match="unknown request field"):
        Request.from_dict({**data, "colour": "red"})


def test_request_is_immutable_and_copies_its_inputs():
    messages = [{"role": "user", "content": "a"}]
    r = Request("sim/judge-a", messages)
    key = cache_key(r)
    messages[0]["content"] = "b"
    assert cache_key(r) == key
    with pytest.raises(AttributeError):
        r.sample = 3  # type: ignore[misc]
    assert len({r, Request("sim/judge-a", [{"role": "user", "content": "a"}])}) == 1


def test_secret_param_split():
    params = {"api_key": "k", "aws_secret_access_key": "s", "extra_headers": {},
              "api_base": "b", "timeout": 3, "max_completion_tokens": 9, "user": "u"}
    assert set(public_params(params)) == {"api_base", "timeout", "max_completion_tokens", "user"}
    assert set(key_params(params)) == {"api_base", "max_completion_tokens", "user"}


def test_secrets_are_dropped_at_any_depth_and_url_passwords_everywhere():
    params = {"base_url": "http://u:hunter2@h/v1", "timeout": 3,
              "extra_body": {"api_key": "sk-nested-0123456789", "top_k": 5,
                             "headers": {"Authorization": "Bearer abc"}},
              "proxies": {"https": "http://px:proxy-pw@proxy:3128", "http": "http://proxy:3128"},
              "stop_hint": ["see https://me:pw@example.org/x", "a@b", "http://a:pw@[b"]}
    clean = {"base_url": "http://h/v1", "timeout": 3, "extra_body": {"top_k": 5},
             "proxies": {"https": "http://proxy:3128", "http": "http://proxy:3128"},
             "stop_hint": ["see https://example.org/x", "a@b", "http://[b"]}
    assert public_params(params) == clean
    assert key_params(params) == {k: v for k, v in clean.items() if k != "timeout"}


# Keys computed by the code before secrets were dropped at any depth: a warm cache of
# requests without secrets must keep hitting.
_OLD_KEYS = [
    ({}, "cf28ae9969f79fd63b27e8c5ad3ecf03ac723f77d724a5074ab0b48da8741867"),
    ({"frequency_penalty": 0.5,
      "extra_body": {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}}},
     "3160ccd9dbdb37018ef2ca14bd21a0ecb89bcfe419beebbbb543f618e91d92d4"),
    ({"base_url": "http://10.0.0.9:8000/v1", "proxies": {"https": "http://proxy:3128"},
      "user": "me@example.com"},
     "13902ba81ad9f841f94ba8b8b35122bcb8aa6f0b54f5dd583d158559161edeeb"),
    ({"extra_body": {"guided_choice": ["1", "2", "3"], "note": "see http://example.org/a@b"}},
     "bf18bcad549643fa0b577f30c7b7dcd82c36dfe9158b50ddeff5aceddc72c624"),
    ({"api_base": "http://bob:pw@10.0.0.9:8000/v1"},
     "1529903904f00cd9d57818eccc5c64eb9154eb43c251bf8119dccf17f58297cc"),
    ({"api_base": "http://127.0.0.1:8000/v1/", "timeout": 30, "api_key": "sk-abcdef123456"},
     "c7eb0d9cea2118b056d417c012f5acee57c59d498627ad0fecda7bf7e26da852"),
]


@pytest.mark.parametrize(("params", "key"), _OLD_KEYS)
def test_requests_without_nested_secrets_keep_their_old_key(params, key):
    request = Request("sim/judge-a", [{"role": "user", "content": "Rate this answer."}],
                      temperature=0.7, params=params)
    assert cache_key(request) == key


def test_repr_hides_nested_secrets_and_url_passwords():
    r = req(params={"base_url": "http://u:BASE-pw-secret@h/v1",
                    "extra_body": {"api_key": "sk-NESTED-0123456789", "top_k": 5},
                    "proxies": {"https": "http://px:PROXY-pw-secret@proxy:3128"}})
    shown = repr(r)
    for secret in ("BASE-pw-secret", "sk-NESTED-0123456789", "PROXY-pw-secret"):
        assert secret not in shown
    assert "http://h/v1" in shown and "'top_k': 5" in shown


def test_scrub_masks_keys_from_environment_params_and_shapes(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-env-secret-value-42")
    text = ("failed with ant-env-secret-value-42, param my-own-token-777, "
            "Authorization: Bearer abc.def.ghijk, sk-proj-ABCDEFGHIJKLMNOP, api_key=zzz123")
    out = scrub(text, ["my-own-token-777"])
    for secret in ("ant-env-secret-value-42", "my-own-token-777", "abc.def.ghijk",
                   "sk-proj-ABCDEFGHIJKLMNOP", "zzz123"):
        assert secret not in out
    assert out.startswith("failed with ***")


class _FakeStatusError(Exception):
    def __init__(self, message, status_code):
        super().__init__(message)
        self.status_code = status_code


@pytest.mark.parametrize(("exc", "kind"), [
    (TimeoutError(), "timeout"),
    (_FakeStatusError("slow down", 429), "rate_limit"),
    (_FakeStatusError("boom", 503), "server_error"),
    (_FakeStatusError("bad", 400), "bad_request"),
    (_FakeStatusError("who", 401), "auth"),
    (_FakeStatusError("gone", 404), "not_found"),
    (ConnectionRefusedError("refused"), "connection_error"),
    (ValueError("Expecting value: line 1 column 1"), "malformed"),
    (RuntimeError("something else"), "other"),
])
def test_classify_errors(exc, kind):
    assert classify(exc) == kind


def test_classify_litellm_exceptions():
    import litellm

    assert classify(litellm.RateLimitError("x", "openai", "m")) == "rate_limit"
    assert classify(litellm.BadRequestError("x", "m", "openai")) == "bad_request"
    assert classify(litellm.AuthenticationError("x", "openai", "m")) == "auth"
    assert classify(litellm.InternalServerError("x", "openai", "m")) == "server_error"
    assert classify(litellm.Timeout("x", "m", "openai")) == "timeout"
    assert classify(litellm.APIConnectionError("x", "openai", "m")) == "connection_error"


def test_credentials_the_http_client_refuses_are_an_auth_failure_not_retried():
    """aiohttp's refusal of URL credentials beside a header, as litellm reports it, was
    classed server_error and retried (issue 20, item 6)."""
    import litellm

    from workbench.llm import RETRYABLE

    refused = litellm.InternalServerError(
        "OpenAIException - Cannot combine AUTHORIZATION header with AUTH argument or "
        "credentials encoded in URL", "openai", "m")
    assert classify(refused) == "auth" and "auth" not in RETRYABLE


def test_error_message_never_carries_the_request_key():
    r = req(params={"api_key": "zz-request-secret-999"})
    exc = _FakeStatusError("401 Incorrect API key provided: zz-request-secret-999", 401)
    message = error_message(exc, r)
    assert "zz-request-secret-999" not in message and "401" in message


# Credentials under names beyond api_key/token/secret (issue 20, item 8): each word, alone
# and inside longer names, in any spelling.
_CREDENTIAL_NAMES = ["auth", "authorization", "cookie", "bearer", "credential", "session",
                     "signature", "x-auth", "Auth-Header", "cookies", "sessionId",
                     "request_signature", "bearer_value", "credential_ref"]


@pytest.mark.parametrize("name", _CREDENTIAL_NAMES)
def test_a_credential_under_any_such_name_is_neither_stored_nor_hashed(name, sim_server,
                                                                       _llm_cache):
    secret = "s3cret-" + name.lower().replace("-", "")
    plain = Request("openai/sim-judge-a", MSGS, params={"api_base": sim_server,
                                                        "extra_body": {"top_k": 5}})
    carrying = Request("openai/sim-judge-a", MSGS, params={
        "api_base": sim_server, "extra_body": {"top_k": 5, name: secret}, name: secret})
    assert cache_key(carrying) == cache_key(plain)
    assert secret not in repr(carrying) and secret not in str(carrying.to_dict())
    (reply,) = llm.complete_many([carrying], progress=False)
    assert reply.ok, reply
    stored = [path for path in _llm_cache.rglob("*") if path.is_file()
              and secret.encode() in path.read_bytes()]
    assert stored == []


def test_names_that_only_contain_such_letters_are_not_secrets():
    from workbench.llm._secrets import is_secret_param

    assert not any(is_secret_param(name) for name in (
        "author", "oauth_scope", "authority", "sessions_per_day", "max_tokens", "top_k"))
