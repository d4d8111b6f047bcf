"""A stub HTTP server on 127.0.0.1 for tests of what the client does with odd replies
(headers that lie, 401s that echo credentials): every request is answered by the test's
own handler, and counted by the prompt it carries."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator

import pytest
from aiohttp import web

Handler = Callable[[web.Request, dict], Awaitable[web.StreamResponse]]


class Stub:
    """A running stub: ``url`` (``http://127.0.0.1:<port>/v1``), ``sent`` (requests per
    prompt text), ``in_flight`` and ``arrived`` (requests being answered, received)."""

    def __init__(self, handler: Handler):
        self.handler = handler
        self.sent: Counter[str] = Counter()
        self.in_flight = self.arrived = 0
        self.loop = asyncio.new_event_loop()
        self.url = ""

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        self.arrived += 1
        self.in_flight += 1
        try:
            body = await request.json() if request.can_read_body else {}
        except ValueError:
            body = {}
        messages = body.get("messages") if isinstance(body, dict) else None
        if messages:
            self.sent[str(messages[-1].get("content"))] += 1
        try:
            return await self.handler(request, body if isinstance(body, dict) else {})
        finally:
            self.in_flight -= 1

    def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._answer)
        runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0, shutdown_timeout=0.1)
        self.loop.run_until_complete(site.start())
        self.runner = runner
        self.url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)


def reply(text: str = "7", *, model: str = "stub", headers: dict | None = None) -> web.Response:
    """A chat-completions reply with ``text``."""
    body = {"id": f"chatcmpl-{abs(hash(text))}", "object": "chat.completion", "created": 0,
            "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}
    return web.Response(text=json.dumps(body), content_type="application/json",
                        headers=headers or {})


@pytest.fixture
def chat_reply() -> Callable[..., web.Response]:
    """:func:`reply`, for handlers."""
    return reply


@pytest.fixture
def stub_server() -> Iterator[Callable[[Handler], Stub]]:
    """``stub_server(handler)``: a started :class:`Stub` (stopped after the test)."""
    stubs: list[Stub] = []

    def make(handler: Handler) -> Stub:
        stub = Stub(handler)
        stub.start()
        stubs.append(stub)
        return stub

    yield make
    for stub in stubs:
        stub.stop()
