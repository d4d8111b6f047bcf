"""One private event loop in a daemon thread, shared by every call of the process.

``complete`` and ``complete_many`` are synchronous. Running their coroutine on a
private loop works the same in a plain script and inside Jupyter (whose own loop is
already running, so ``asyncio.run`` would fail there), and keeps litellm's pooled
HTTP clients bound to one loop that stays open between calls.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_state: dict[str, Any] = {"loop": None, "thread": None, "pid": None}


def _start() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    thread = threading.Thread(target=run, name="workbench-llm-loop", daemon=True)
    thread.start()
    ready.wait()
    _state.update(loop=loop, thread=thread, pid=os.getpid())
    return loop


def get_loop() -> asyncio.AbstractEventLoop:
    """The background loop (started on first use, restarted in a forked child)."""
    loop = _state["loop"]
    if loop is None or _state["pid"] != os.getpid() or not _state["thread"].is_alive():
        with _lock:
            loop = _state["loop"]
            if loop is None or _state["pid"] != os.getpid() or not _state["thread"].is_alive():
                loop = _start()
    return loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the background loop and wait for its result.

    A ``KeyboardInterrupt`` while waiting cancels the coroutine (work already
    finished stays in the cache) and is re-raised.
    """
    loop = get_loop()
    if threading.current_thread() is _state["thread"]:
        coro.close()
        raise RuntimeError("workbench.llm: a blocking call was made from its own event loop")
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


def _shutdown() -> None:
    loop = _state["loop"]
    if loop is None or _state["pid"] != os.getpid() or not loop.is_running():
        return

    async def close_clients() -> None:
        try:
            from workbench.llm import _http

            await _http.close()
        except Exception:  # shutting down: never raise
            pass
        try:
            import sys

            if "litellm" in sys.modules:
                from litellm.llms.custom_httpx.async_client_cleanup import (
                    close_litellm_async_clients,
                )

                await close_litellm_async_clients()
        except Exception:  # shutting down: never raise
            pass

    try:
        asyncio.run_coroutine_threadsafe(close_clients(), loop).result(timeout=2)
    except Exception:  # shutting down: never raise
        pass
    loop.call_soon_threadsafe(loop.stop)


atexit.register(_shutdown)
