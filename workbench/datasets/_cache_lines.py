"""Entries of a ``workbench cache import`` file, built from replies found in a release.

The format is the one ``workbench cache export`` writes (``workbench.llm``): one JSON
object per line with ``key`` (= ``cache_key`` of the request), ``request``,
``response``, ``usage``, ``cost_usd``, ``latency_s``, ``backend`` and bookkeeping.
Each entry is checked with ``workbench.llm.validate_entry`` before it is returned, so
a change of that format fails here, loudly, instead of at import time.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def cache_import_entry(
    *, model: str, messages: list[dict], temperature: float, text: str, backend: str, source: str
) -> dict[str, Any]:
    """One cache entry replaying ``text`` as the reply to (model, messages, temperature).

    Token counts, cost and latency of the original call are unknown and recorded as 0;
    ``imported_from`` names the release the reply came from.
    """
    from workbench import __version__
    from workbench.llm import Request, cache_key, validate_entry

    request = Request(model=model, messages=messages, temperature=temperature)
    entry = {
        "schema": 1,
        "key": cache_key(request),
        "request": request.to_dict(),
        "response": {"text": text, "logprobs": None, "finish_reason": None, "model": model},
        "usage": {"prompt_tokens": 0, "completion_tokens": 0},
        "cost_usd": 0.0,
        "latency_s": 0.0,
        "backend": backend,
        "attempts": 1,
        "timestamp": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "workbench_version": __version__,
        "imported_from": source,
    }
    validate_entry(entry)
    return entry


def write_cache_file(
    pairs: Iterable[tuple[list[dict], str, str]],
    path: str | Path,
    *,
    model: str,
    temperature: float,
    backend: str,
) -> int:
    """Write ``(messages, reply text, source)`` pairs as a cache-import JSONL file.

    Identical requests are written once (the first reply wins); returns the count.
    """
    written: set[str] = set()
    with Path(path).open("w", encoding="utf-8") as handle:
        for messages, text, source in pairs:
            entry = cache_import_entry(
                model=model,
                messages=messages,
                temperature=temperature,
                text=text,
                backend=backend,
                source=source,
            )
            if entry["key"] in written:
                continue
            written.add(entry["key"])
            handle.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
    return len(written)
