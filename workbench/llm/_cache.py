"""The on-disk reply cache: diskcache, JSON values, never a secret, never an error.

An entry (one JSON object per key) holds ``key, model, backend, cost_usd, latency_s,
usage {prompt_tokens, completion_tokens}, response {text, logprobs, finish_reason,
model}, attempts, timestamp, workbench_version, schema`` and ``request`` (the
request's ``to_dict()``: no API key, no header). Folder and mode are read from the environment at each call
(``WORKBENCH_CACHE_DIR``, ``WORKBENCH_CACHE_MODE``) so a notebook or a test may
switch them mid-run; :func:`configure` sets them in code.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import diskcache

from workbench import config
from workbench.llm._types import Completion, Request, Usage

log = logging.getLogger("workbench.llm")

ENTRY_SCHEMA = 1
LAST_MISS_FILE = "last_miss.json"

_handles: dict[tuple[str, int], diskcache.Cache] = {}
_handles_lock = threading.Lock()
_settings: dict[str, Any] = {"rpm": {}}


def _version() -> str:
    from workbench import __version__

    return __version__


def open_cache(path: str | os.PathLike | None = None) -> diskcache.Cache:
    """The diskcache store at ``path`` (default: the configured cache folder).

    Opened once per folder and process, with ``eviction_policy="none"`` (diskcache's
    default silently evicts entries past 1 GiB).
    """
    folder = str(config.cache_dir() if path is None else Path(path).expanduser())
    handle_key = (folder, os.getpid())
    cache = _handles.get(handle_key)
    if cache is None:
        with _handles_lock:
            cache = _handles.get(handle_key)
            if cache is None:
                cache = diskcache.Cache(folder, eviction_policy="none")
                _handles[handle_key] = cache
    return cache


def close_caches() -> None:
    """Close every open cache handle (tests; a forked child)."""
    with _handles_lock:
        for cache in _handles.values():
            try:
                cache.close()
            except Exception:  # closing must never raise
                pass
        _handles.clear()


def configure(
    *,
    cache_dir: str | os.PathLike | None = None,
    cache_mode: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    retry_backoff: float | None = None,
    rpm: int | Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Set the LLM layer's settings in code; returns the settings now in force.

    Parameters
    ----------
    cache_dir, cache_mode
        Set ``WORKBENCH_CACHE_DIR`` / ``WORKBENCH_CACHE_MODE`` (``readwrite``,
        ``readonly``, ``refresh``, ``off``) for this process.
    concurrency, timeout, max_retries
        Set ``WORKBENCH_CONCURRENCY`` (calls in flight per model),
        ``WORKBENCH_TIMEOUT`` (seconds per call) and ``WORKBENCH_MAX_RETRIES``.
    retry_backoff
        Sets ``WORKBENCH_RETRY_BACKOFF``: the first retry waits up to this many
        seconds (full jitter), doubling per attempt (default 1.0, capped at 60).
    rpm
        Requests per minute: one number for every model, or ``{model: rpm}``;
        ``0``/``None`` in the mapping means unlimited.
    """
    if cache_mode is not None:
        mode = str(cache_mode).strip().lower()
        if mode not in config.CACHE_MODES:
            raise ValueError(f"cache_mode={cache_mode!r}: expected one of {', '.join(config.CACHE_MODES)}")
        os.environ["WORKBENCH_CACHE_MODE"] = mode
    if cache_dir is not None:
        os.environ["WORKBENCH_CACHE_DIR"] = str(Path(cache_dir).expanduser())
    for name, value, kind in (
        ("WORKBENCH_CONCURRENCY", concurrency, int),
        ("WORKBENCH_TIMEOUT", timeout, float),
        ("WORKBENCH_MAX_RETRIES", max_retries, int),
        ("WORKBENCH_RETRY_BACKOFF", retry_backoff, float),
    ):
        if value is not None:
            if kind(value) < (1 if name == "WORKBENCH_CONCURRENCY" else 0):
                raise ValueError(f"{name.removeprefix('WORKBENCH_').lower()}={value!r} is out of range")
            os.environ[name] = str(kind(value))
    if rpm is not None:
        _settings["rpm"] = dict(rpm) if isinstance(rpm, Mapping) else {"*": int(rpm)}
    return settings()


_ENV_NAMES = ("WORKBENCH_CACHE_DIR", "WORKBENCH_CACHE_MODE", "WORKBENCH_CONCURRENCY",
              "WORKBENCH_TIMEOUT", "WORKBENCH_MAX_RETRIES", "WORKBENCH_RETRY_BACKOFF")


@contextmanager
def temporary_settings(**kwargs: Any) -> Iterator[dict[str, Any]]:
    """:func:`configure` for a ``with`` block; the previous settings come back after it.

    Examples
    --------
    >>> import tempfile
    >>> with temporary_settings(cache_dir=tempfile.mkdtemp(), cache_mode="off") as now:
    ...     now["cache_mode"]
    'off'
    """
    saved_env = {name: os.environ.get(name) for name in _ENV_NAMES}
    saved_rpm = dict(_settings["rpm"])
    try:
        yield configure(**kwargs)
    finally:
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _settings["rpm"] = saved_rpm


def settings() -> dict[str, Any]:
    """The settings now in force (environment plus :func:`configure`)."""
    return {
        "cache_dir": str(config.cache_dir()),
        "cache_mode": config.cache_mode(),
        "concurrency": config.env_int("WORKBENCH_CONCURRENCY", 16),
        "timeout": config.env_float("WORKBENCH_TIMEOUT", 120.0),
        "max_retries": config.env_int("WORKBENCH_MAX_RETRIES", 4),
        "retry_backoff": config.env_float("WORKBENCH_RETRY_BACKOFF", 1.0),
        "rpm": dict(_settings["rpm"]),
    }


def rpm_for(model: str, override: int | Mapping[str, int] | None = None) -> int | None:
    """Requests-per-minute limit of ``model`` (``None``: unlimited)."""
    table = _settings["rpm"] if override is None else (
        dict(override) if isinstance(override, Mapping) else {"*": override}
    )
    value = table.get(model, table.get("*"))
    return int(value) if value else None


# --- entries ---------------------------------------------------------------------------
#
# A stored value is one JSON object with the reply fields first and the request after
# them. A replay reads only the leading reply fields (with the stdlib decoder's own
# scanner), so the warm path stays fast however long the prompt; anything else that
# reads the cache can simply ``json.loads`` a value.

_REPLY_FIELDS = ("key", "model", "backend", "cost_usd", "latency_s", "usage", "response")
_NEEDED = frozenset(_REPLY_FIELDS)
_decoder = json.JSONDecoder()
_scan = _decoder.scan_once
_loads = _decoder.decode
_AFTER_REPLY = ',"attempts":'


def make_entry(key: str, request: Request, *, text: str, logprobs: list | None,
               usage: Usage, cost_usd: float, latency_s: float, backend: str,
               finish_reason: str | None = None, provider_model: str | None = None,
               attempts: int = 1) -> dict[str, Any]:
    """A cache entry: the reply and its bookkeeping, then the request without secrets."""
    return {
        "key": key,
        "model": request.model,
        "backend": backend,
        "cost_usd": cost_usd,
        "latency_s": latency_s,
        "usage": {"prompt_tokens": usage.prompt_tokens,
                  "completion_tokens": usage.completion_tokens},
        "response": {
            "text": text,
            "logprobs": logprobs,
            "finish_reason": finish_reason,
            "model": provider_model,
        },
        "attempts": attempts,
        "timestamp": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "workbench_version": _version(),
        "schema": ENTRY_SCHEMA,
        "request": request.to_dict(),
    }


def encode_entry(entry: Mapping[str, Any]) -> str:
    """The stored JSON of an entry, reply fields first (see :func:`read_reply`)."""
    ordered = {name: entry[name] for name in _REPLY_FIELDS if name in entry}
    if "model" not in ordered:
        ordered["model"] = entry["request"]["model"]
    ordered.update((name, value) for name, value in entry.items() if name not in ordered)
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))


def decode_entry(raw: str) -> dict[str, Any]:
    """The entry stored as ``raw`` (``ValueError`` if it is not one)."""
    entry = json.loads(raw)
    if not isinstance(entry, dict) or "key" not in entry or "request" not in entry:
        raise ValueError("not a workbench cache entry")
    return entry


def read_reply(raw: str) -> dict[str, Any]:
    """The reply fields of a stored entry, without decoding the request behind them.

    Values written by :func:`encode_entry` hold the reply fields first and then
    ``"attempts"``: the prefix up to it is decoded alone. Otherwise the object's
    members are walked with the stdlib decoder's scanner until every reply field is
    read, and anything unexpected falls back to ``json.loads``.

    Examples
    --------
    >>> read_reply('{"key":"k","model":"m","backend":"sim","cost_usd":0,"latency_s":1,'
    ...            '"usage":{},"response":{"text":"7"},"request":{"messages":[]}}')["response"]
    {'text': '7'}
    """
    # Our own writer puts "attempts" right after the reply fields: decode just that prefix.
    end = raw.find(_AFTER_REPLY)
    if end > 0:
        try:
            out = _loads(raw[:end] + "}")
            if _NEEDED <= out.keys():
                return out
        except ValueError:
            pass
    try:
        out = {}
        if raw[0] != "{":
            raise ValueError
        i = 1
        while True:
            if raw[i] != '"':
                raise ValueError
            name, i = _scan(raw, i)
            if raw[i] != ":":
                raise ValueError
            value, i = _scan(raw, i + 1)
            if name in _NEEDED:
                out[name] = value
                if len(out) == len(_NEEDED):
                    return out
            if raw[i] != ",":
                raise ValueError
            i += 1
    except (ValueError, IndexError, StopIteration):
        entry = json.loads(raw)
        if "model" not in entry:
            entry["model"] = entry["request"]["model"]
        return entry


def completion_from_entry(entry: Mapping[str, Any], *, cached: bool = True) -> Completion:
    """The :class:`Completion` an entry replays (``KeyError``/``TypeError`` if malformed)."""
    response = entry["response"]
    text = response["text"]
    if not isinstance(text, str):
        raise TypeError("entry text is not a string")
    usage = entry["usage"]
    model = entry.get("model") or entry["request"]["model"]
    return Completion(
        text=text,
        model=model,
        usage=Usage(int(usage["prompt_tokens"]), int(usage["completion_tokens"])),
        cost_usd=float(entry["cost_usd"]),
        latency_s=float(entry["latency_s"]),
        cached=cached,
        key=entry["key"],
        logprobs=response.get("logprobs"),
        backend=entry["backend"],
    )


def lookup(cache: diskcache.Cache, key: str, raw: str | None | bool = False) -> Completion | None:
    """The cached completion for ``key``, or ``None``; a failed or corrupt read is a miss.

    ``raw`` is the stored value when the caller already read it (``None``: known
    absent); by default it is read here.
    """
    try:
        if raw is False:
            raw = cache.get(key)
        if raw is None:
            return None
        reply = read_reply(raw)
        if reply["key"] != key:
            return None
        return completion_from_entry(reply)
    except Exception:  # the cache can never break a run
        return None


_BULK_CHUNK = 500
_BULK_SQL = ("SELECT key, mode, filename, value FROM Cache WHERE raw = 1 "
             "AND (expire_time IS NULL OR expire_time > ?) AND key IN ({})")


def bulk_read(cache: diskcache.Cache, keys: list[str]) -> dict[str, str | None] | None:
    """Stored values of many keys in a few SQL queries (the replay fast path).

    Returns ``{key: value}`` for values stored inline as text, ``{key: None}`` for
    keys known to be absent, and leaves out keys whose value needs diskcache's own
    reader (large values kept in files). Returns ``None`` when the store cannot be
    read this way (another diskcache layout): callers then use ``cache.get``. This
    reads diskcache's documented SQLite table ``Cache`` directly; results equal
    ``cache.get`` (checked by the tests).
    """
    try:
        execute = cache._sql  # diskcache's connection for this thread
        found: dict[str, str | None] = {}
        pending: set[str] = set()
        now = time.time()
        for start in range(0, len(keys), _BULK_CHUNK):
            chunk = keys[start: start + _BULK_CHUNK]
            query = _BULK_SQL.format(",".join("?" * len(chunk)))
            for key, mode, filename, value in execute(query, (now, *chunk)).fetchall():
                if mode == diskcache.core.MODE_RAW and filename is None and isinstance(value, str):
                    found[key] = value
                else:
                    pending.add(key)
        for key in keys:
            if key not in found and key not in pending:
                found[key] = None
        return found
    except Exception:  # fall back to cache.get, never fail
        return None


def store(cache: diskcache.Cache, entry: Mapping[str, Any]) -> bool:
    """Write ``entry`` under its key; a failed write is logged, never raised."""
    try:
        cache.set(entry["key"], encode_entry(entry))
        return True
    except Exception as exc:  # the cache can never break a run
        log.warning("could not write cache entry %s: %s", str(entry.get("key", "?"))[:16], exc)
        return False


_last_miss: dict[str, Any] = {}


def record_miss(request: Request, key: str) -> None:
    """Remember the last readonly miss for ``workbench cache explain --last``."""
    data = {"key": key, "request": request.to_dict()}
    _last_miss.clear()
    _last_miss.update(data)
    try:
        folder = config.cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / LAST_MISS_FILE).write_text(json.dumps(data, ensure_ascii=False, indent=1),
                                             encoding="utf-8")
    except Exception:  # diagnostics only
        pass


def last_miss() -> dict[str, Any] | None:
    """The last recorded readonly miss (this process, else the cache folder's file)."""
    if _last_miss:
        return dict(_last_miss)
    path = config.cache_dir() / LAST_MISS_FILE
    if path.exists():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
    return None
