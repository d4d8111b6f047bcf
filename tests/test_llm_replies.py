"""What a reply may be (issue 20): a reply cut inside a character, a redirect, a body or a
text too large, an empty text. Each is stored as a valid reply or recorded as a failure
of its own request, never one that takes the other requests of the run down.

The faults come from in-process sim-servers (:func:`workbench.sim.server.running_server`)
whose answers the subclasses below change."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from workbench.llm import Request, _batch, complete_many
from workbench.sim._batches import BatchService
from workbench.sim.server import SimServer, running_server

MODEL = "openai/sim-judge-a"


def msgs(text: str) -> list[dict]:
    return [{"role": "user", "content": f"Rate this answer from 1 to 10: {text}"}]


def _cut(payload: dict) -> dict:
    """The reply as a server sends it when a token ends inside an emoji: half a pair."""
    payload["choices"][0]["message"]["content"] += "\ud83d"
    return payload


class CutServer(SimServer):
    """Replies to prompts holding the word ``cut`` end in an unpaired surrogate."""

    async def _answer(self, request: web.Request, fault: str | None) -> web.Response:
        response = await super()._answer(request, fault)
        body = await request.json()
        if response.status != 200 or "cut" not in body["messages"][-1]["content"]:
            return response
        return web.json_response(_cut(json.loads(response.text)))


class CutBatches(BatchService):
    """The same fault in the answers of batch jobs."""

    def routes(self, app: web.Application, answer) -> None:
        def cut(body: dict) -> tuple[int, dict]:
            status, payload = answer(body)
            if status == 200 and "cut" in body["messages"][-1]["content"]:
                payload = _cut(payload)
            return status, payload

        super().routes(app, cut)


@pytest.mark.parametrize("path", ["direct", "litellm", "batch"])
def test_a_reply_cut_inside_a_character_is_stored_and_takes_nothing_down(path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HTTP_PATH", "litellm" if path == "litellm" else "direct")
    server = CutServer(batches=CutBatches(latency_ms=100.0))
    with running_server(server=server) as (url, _):
        requests = [Request(MODEL, msgs(f"{'cut ' if i % 3 == 0 else ''}answer {i}"),
                            params={"api_base": url}) for i in range(9)]
        mode = "batch" if path == "batch" else "online"
        got = complete_many(requests, progress=False, max_retries=0, mode=mode,
                            poll_interval=0.05)
        assert all(r.ok for r in got), got
        assert [r.text.endswith("\ufffd") for r in got] == [i % 3 == 0 for i in range(9)]
        again = complete_many(requests, progress=False, mode=mode, poll_interval=0.05)
    assert all(r.cached for r in again)  # stored: a rerun sends nothing
    assert [r.text for r in again] == [r.text for r in got]
    assert _batch.pending_jobs() == {}
