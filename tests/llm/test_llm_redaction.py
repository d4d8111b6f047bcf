"""No credential the client sent is in anything written (issue 32, item 3): a stub server
answers 401 and echoes what it received, in its body and headers, in every form (the
header as sent, its token, a ``Basic`` token decoded, the password alone); the failure
rows, the log and the cache folder hold none of it, through the direct transport,
litellm and the batch route."""

from __future__ import annotations

import base64
import logging

import pytest
from aiohttp import web

from workbench.llm import Request, complete_many, temporary_settings
from workbench.llm._secrets import forms

B64 = base64.b64encode(b"carol:HDRpass-2345").decode()
#: name -> (request params, the environment, the credentials the client sends)
CASES = {
    "api_key": ({"api_key": "plainKEYvalue-0123"}, {}, ["plainKEYvalue-0123"]),
    "url userinfo": ({"api_base": "http://alice:URLpass-4567@{host}/v1"}, {},
                     ["alice:URLpass-4567"]),
    "base url in the environment": ({}, {"OPENAI_BASE_URL": "http://dave:ENVpass-3456@{host}/v1"},
                                    ["dave:ENVpass-3456"]),
    "own Authorization": ({"extra_headers": {"Authorization": "Token HDRtoken-8901"}}, {},
                          ["Token HDRtoken-8901"]),
    "own Basic": ({"extra_headers": {"Authorization": f"Basic {B64}"}}, {}, [f"Basic {B64}"]),
    "own X-Api-Key": ({"extra_headers": {"X-Api-Key": "XKEYvalue-6789"}}, {},
                      ["XKEYvalue-6789"]),
}


async def echo(request: web.Request, body: dict) -> web.Response:
    """401, saying back each credential header, its token and a Basic token decoded."""
    said = []
    for name in ("Authorization", "X-Api-Key"):
        value = request.headers.get(name, "")
        token = value.split(" ", 1)[-1]
        said.append(f"header {name}: {value}; token {token}")
        if value.startswith("Basic "):
            pair = base64.b64decode(token).decode()
            said.append(f"user:password {pair}; password {pair.split(':', 1)[1]}")
    echoed = {name: request.headers.get(name, "") for name in ("Authorization", "X-Api-Key")}
    return web.json_response({"error": {"message": "bad credentials: " + " | ".join(said),
                                        "type": "invalid_request_error"}},
                             status=401, headers={f"X-Echo-{k}": v for k, v in echoed.items()})


def leaked(text: str, credentials: list[str]) -> list[str]:
    return [form for value in credentials for form in forms(value) if form in text]


@pytest.mark.parametrize("route", ["direct", "litellm", "batch"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_no_credential_in_any_form_reaches_a_row_the_log_or_the_cache(
        case, route, stub_server, monkeypatch, tmp_path, caplog):
    stub = stub_server(echo)
    host = stub.url.split("//", 1)[1].split("/", 1)[0]
    params, environment, credentials = CASES[case]
    params = {k: v.replace("{host}", host) if isinstance(v, str) else v for k, v in params.items()}
    if not environment:
        params.setdefault("api_base", stub.url)
    for name, value in environment.items():
        monkeypatch.setenv(name, value.replace("{host}", host))
    monkeypatch.setenv("WORKBENCH_HTTP_PATH", "litellm" if route == "litellm" else "direct")
    request = Request("openai/echo-judge", [{"role": "user", "content": f"{case} {route}"}],
                      params=params)
    options = {"mode": "batch", "poll_interval": 0.05} if route == "batch" else {}
    with temporary_settings(cache_dir=tmp_path / "cache", cache_mode="readwrite",
                            max_retries=0), caplog.at_level(logging.DEBUG):
        (row,) = complete_many([request], progress=False, **options)
    assert row.error_type == "auth", row
    assert sum(stub.sent.values()) + stub.arrived >= 1  # the server was asked and echoed
    assert "***" in row.message  # what it echoed is there, masked
    assert leaked(row.message, credentials) == []
    assert leaked(repr(row), credentials) == []
    assert leaked(caplog.text, credentials) == []
    written = [path for path in (tmp_path / "cache").rglob("*") if path.is_file()]
    assert [p for p in written if leaked(p.read_bytes().decode("latin-1"), credentials)] == []


def test_a_batch_job_whose_validation_errors_echo_the_credentials_shows_none(
        stub_server, monkeypatch, tmp_path):
    """The provider's reasons for failing a job (``errors.data``) echo what it received."""
    monkeypatch.setenv("WORKBENCH_HTTP_PATH", "direct")

    async def jobs(request: web.Request, body: dict) -> web.Response:
        auth = request.headers.get("Authorization", "")
        if request.path.endswith("/files"):
            return web.json_response({"id": "file-1", "object": "file", "bytes": 1,
                                      "created_at": 0, "filename": "b.jsonl",
                                      "purpose": "batch", "status": "processed"})
        return web.json_response({
            "id": "batch_1", "object": "batch", "endpoint": "/v1/chat/completions",
            "input_file_id": "file-1", "completion_window": "24h", "status": "failed",
            "created_at": 0, "metadata": {},
            "errors": {"object": "list", "data": [
                {"code": "invalid_auth", "message": f"you sent {auth}", "line": 1}]}})

    stub = stub_server(jobs)
    credentials = [f"Basic {B64}"]
    request = Request("openai/echo-judge", [{"role": "user", "content": "batch errors"}],
                      params={"api_base": stub.url,
                              "extra_headers": {"Authorization": f"Basic {B64}"}})
    with temporary_settings(cache_dir=tmp_path / "cache", cache_mode="readwrite"):
        (row,) = complete_many([request], progress=False, mode="batch", poll_interval=0.05)
    assert row.error_type == "bad_request" and "failed validation" in row.message, row
    assert "you sent ***" in row.message
    assert leaked(row.message, credentials) == []
