"""The on-disk reply cache (diskcache, JSON values, never a secret, never an error) and
the LLM settings.

An entry (one JSON object per key) holds ``key, model, backend, cost_usd, latency_s,
usage {prompt_tokens, completion_tokens}, response {text, logprobs, finish_reason,
model}, attempts, timestamp, workbench_version, schema`` and ``request`` (the
request's ``to_dict()``: no API key, no header, no URL password). This module is the
only one that builds, writes and reads entries; :func:`peek` and :func:`replay_entry`
are its public doors, :mod:`workbench.llm._store` the diskcache layer below it.
Folder and mode are read at each call (:func:`configure`, else
``WORKBENCH_CACHE_DIR`` / ``WORKBENCH_CACHE_MODE``), so a notebook or a test may
switch them mid-run.

Replay checks what it replays (:func:`check_entry`). Every entry written since this
check exists is *sealed*: the sha256 of its stored JSON goes into diskcache's ``tag``
column (the JSON itself is unchanged) and is compared on replay, which catches any
edit of its text or request. An older, unsealed entry has its stored request hashed
back to the key it was found under, once per process. Either way the stored ``key``
must be the one looked up. A failed check is a corrupt entry: a miss, counted and
reported, never replayed. Limits: an edit of an unsealed entry's reply text alone is
not seen (``workbench cache repair`` seals a store); and a seal catches damage and
edits, not a forger who recomputes it -- nothing without a secret key could, and the
cache keeps no secret."""

from __future__ import annotations

import datetime as _dt
import gc
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench import config
from workbench.llm import _store
from workbench.llm._keys import cache_key
from workbench.llm._store import MISS, close_caches  # noqa: F401  (close_caches: re-exported)
from workbench.llm._types import Completion, Request, Usage, build_completion

log = logging.getLogger("workbench.llm")

ENTRY_SCHEMA = 1
LAST_MISS_FILE = "last_miss.json"


def _version() -> str:
    return config.__version__


def open_cache(path: str | os.PathLike | None = None) -> _store.Store:
    """The store at ``path`` (default: the configured cache folder), for reading and writing.

    A ``diskcache.Cache`` that only ever reads and writes text, opened once per folder
    and process with ``eviction_policy="none"`` (diskcache's default silently evicts
    entries past 1 GiB). A read-only folder or a full disk gives a reader that
    refuses writes; a damaged store raises :class:`~workbench.errors.CacheError`
    naming the folder and ``workbench cache repair``.
    """
    return _store.open_cache(config.cache_dir() if path is None else path)


def open_reader(path: str | os.PathLike | None = None) -> _store.ReadOnlyCache:
    """The store at ``path`` (default: the configured folder) for reading only."""
    return _store.open_reader(config.cache_dir() if path is None else path)


def configure(
    *,
    cache_dir: str | os.PathLike | None = None,
    cache_mode: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    retry_backoff: float | None = None,
    circuit_breaker: int | None = None,
    rpm: int | Mapping[str, int] | None = None,
    call_mode: str | None = None,
    batch_poll: float | None = None,
) -> dict[str, Any]:
    """Set the LLM layer's settings in code; returns the settings now in force.

    The values are kept for this process (:func:`workbench.config.overrides`) and win
    over the ``WORKBENCH_*`` environment variables of the same names, which are not
    changed (child processes do not see these settings). ``None`` leaves a setting as
    it is; :func:`temporary_settings` undoes them after a ``with`` block.

    Parameters
    ----------
    cache_dir, cache_mode
        The cache folder and mode (``readwrite``, ``readonly``, ``refresh``, ``off``),
        as ``WORKBENCH_CACHE_DIR`` / ``WORKBENCH_CACHE_MODE``.
    concurrency, timeout, max_retries
        Calls in flight per model, seconds per call and retries of a retryable error
        (as ``WORKBENCH_CONCURRENCY``, ``WORKBENCH_TIMEOUT``, ``WORKBENCH_MAX_RETRIES``).
    retry_backoff
        The first retry waits up to this many seconds (full jitter), doubling per
        attempt, capped at 60 (as ``WORKBENCH_RETRY_BACKOFF``).
    circuit_breaker
        After this many consecutive connection failures of a model, its other
        requests in the batch are not run (``0``: never; as ``WORKBENCH_CIRCUIT_BREAKER``).
    rpm
        Requests per minute: one number for every model, or ``{model: rpm}``;
        ``0``/``None`` in the mapping means unlimited.
    call_mode, batch_poll
        ``online`` or ``batch``: the default ``mode`` of
        :func:`~workbench.llm.complete_many` (as ``WORKBENCH_CALL_MODE``); the first
        wait before polling a batch job, in seconds (as ``WORKBENCH_BATCH_POLL``).
    """
    values: dict[str, Any] = {}
    if cache_mode is not None:
        mode = str(cache_mode).strip().lower()
        if mode not in config.CACHE_MODES:
            raise ValueError(f"cache_mode={cache_mode!r}: expected one of {', '.join(config.CACHE_MODES)}")
        values["cache_mode"] = mode
    if cache_dir is not None:
        values["cache_dir"] = str(Path(cache_dir).expanduser())
    for name, value in (("concurrency", concurrency), ("timeout", timeout),
                        ("max_retries", max_retries), ("retry_backoff", retry_backoff),
                        ("circuit_breaker", circuit_breaker), ("batch_poll", batch_poll)):
        if value is not None:
            number = type(config.CALL_SETTINGS[name][1])(value)
            if number < (1 if name == "concurrency" else 0) or (name == "batch_poll"
                                                                 and not number > 0):
                raise ValueError(f"{name}={value!r} is out of range")
            values[name] = number
    if call_mode is not None:
        mode = str(call_mode).strip().lower()
        if mode not in config.CALL_MODES:
            raise ValueError(f"call_mode={call_mode!r}: expected one of {', '.join(config.CALL_MODES)}")
        values["call_mode"] = mode
    if rpm is not None:
        values["rpm"] = dict(rpm) if isinstance(rpm, Mapping) else {"*": int(rpm)}
    config.set_overrides(values)
    return settings()


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
    saved = config.overrides()
    try:
        yield configure(**kwargs)
    finally:
        config.set_overrides(saved, replace=True)


def settings() -> dict[str, Any]:
    """The settings now in force (:func:`configure`, else the environment, else defaults)."""
    return {
        "cache_dir": str(config.cache_dir()),
        "cache_mode": config.cache_mode(),
        "call_mode": config.call_mode(),
        **{name: config.call_setting(name) for name in config.CALL_SETTINGS},
        "rpm": dict(config.overrides().get("rpm", {})),
    }


def rpm_for(model: str, override: int | Mapping[str, int] | None = None) -> int | None:
    """Requests-per-minute limit of ``model`` (``None``: unlimited)."""
    table = config.overrides().get("rpm", {}) if override is None else (
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
_AFTER_REPLY = ',"attempts":'


def make_entry(key: str, request: Request, *, text: str, logprobs: list | None,
               usage: Usage, cost_usd: float, latency_s: float, backend: str,
               finish_reason: str | None = None, provider_model: str | None = None,
               attempts: int = 1, cost_known: bool = True) -> dict[str, Any]:
    """A cache entry: the reply and its bookkeeping, then the request without secrets.

    A reply whose model has no price is flagged ``response.cost_known: false`` (the key
    is absent otherwise, so entries of priced and simulated models are unchanged). The
    reply text and logprob tokens are stored as :func:`unicode_text` makes them."""
    text = unicode_text(text)
    if logprobs:
        logprobs = [{**item, "token": unicode_text(item["token"]),
                     "top_logprobs": [{**top, "token": unicode_text(top["token"])}
                                      for top in item["top_logprobs"]]} for item in logprobs]
    entry = {
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
    if not cost_known:
        entry["response"]["cost_known"] = False
    return entry


def unicode_text(text: str) -> str:
    """``text`` with each unpaired surrogate (``"\\ud83d"``) replaced by U+FFFD.

    A server that cuts a reply inside a character made of a surrogate pair (an emoji cut
    at a token boundary) sends half of the pair as a JSON escape; Python decodes it into
    a string that cannot be written as UTF-8 (not to the cache, a results table or a
    notebook). Each such half becomes U+FFFD, as a UTF-8 decoder makes of broken bytes;
    a pair split over two code points is joined. Any other text is returned unchanged
    (the same object).

    Examples
    --------
    >>> unicode_text("score: 7 \\ud83d"), unicode_text("\\ud83d\\ude00") == "\\U0001f600"
    ('score: 7 \ufffd', True)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def replay_entry(request: Request, text: str, *, backend: str, source: str) -> dict[str, Any]:
    """A cache entry replaying ``text`` as the reply to ``request`` (built as real writes are).

    For replies recorded elsewhere, e.g. in a paper's release: token counts, cost and
    latency of the original call are unknown and recorded as 0, ``backend`` names the
    provider that served it and ``imported_from`` the ``source``.

    Examples
    --------
    >>> entry = replay_entry(Request("gpt-4o", [{"role": "user", "content": "Rate it."}]),
    ...                      "7", backend="openai", source="a release")
    >>> entry["response"]["text"], entry["cost_usd"], entry["imported_from"]
    ('7', 0.0, 'a release')
    """
    entry = make_entry(cache_key(request), request, text=text, logprobs=None, usage=Usage(0, 0),
                       cost_usd=0.0, latency_s=0.0, backend=backend,
                       provider_model=request.model)
    entry["imported_from"] = source
    return entry


def encode_entry(entry: Mapping[str, Any]) -> str:
    """The stored JSON of an entry, reply fields first (see :func:`read_reply`): always
    text that UTF-8 can encode (what the seal hashes and SQLite stores)."""
    ordered = {name: entry[name] for name in _REPLY_FIELDS if name in entry}
    if "model" not in ordered:
        ordered["model"] = entry["request"]["model"]
    ordered.update((name, value) for name, value in entry.items() if name not in ordered)
    raw = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:  # an unpaired surrogate somewhere: kept as its JSON escape
        raw = json.dumps(ordered, ensure_ascii=True, separators=(",", ":"))
    return raw


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
        prefix = raw[:end] + "}"
        try:  # the scanner alone: json.loads of the prefix, without its Python wrapper
            out, stop = _scan(prefix, 0)
        except (ValueError, StopIteration):
            pass
        else:
            if stop == len(prefix) and type(out) is dict and _NEEDED <= out.keys():
                return out
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
    return build_completion(
        text=text,
        model=model,
        prompt_tokens=int(usage["prompt_tokens"]),
        completion_tokens=int(usage["completion_tokens"]),
        cost_usd=float(entry["cost_usd"]),
        latency_s=float(entry["latency_s"]),
        cached=cached,
        key=entry["key"],
        logprobs=response.get("logprobs"),
        backend=entry["backend"],
        cost_known=response.get("cost_known", True) is not False,
    )


class CorruptEntry(ValueError):
    """A stored value that is not a verified entry of its key: a miss, never replayed."""


def seal(raw: str) -> str:
    """The digest stored beside a value (diskcache's ``tag`` column) when it is written.

    Examples
    --------
    >>> seal('{"key":"k"}')[:15]
    'sha256:9d51e365'
    """
    return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


#: key -> ``hash()`` of the stored value that passed :func:`check_entry` in this process.
_checked: dict[str, int] = {}


def check_entry(key: str, raw: Any, tag: Any, *, full: bool = False) -> None:
    """Raise :class:`CorruptEntry`, saying why, unless ``raw`` may be replayed for ``key``.

    ``raw`` must be text. Sealed (``tag`` set): the seal must match it. Unsealed: the
    stored ``key`` must be ``key`` and the stored request must hash to it. ``full``
    (``workbench cache check``) hashes the request of a sealed entry too. A value that
    passed in this process is recognised by its ``hash()`` (keyed per process, so not
    forgeable) and not checked again. :func:`replay` then checks the stored ``key``
    and the reply fields of every entry.
    """
    if type(raw) is not str:
        what = raw.why if isinstance(raw, _store.Refused) else type(raw).__name__
        raise CorruptEntry(f"not text but {what}")
    fingerprint = hash(raw)
    if not full and _checked.get(key) == fingerprint:
        return
    if tag is not None and tag != seal(raw):
        raise CorruptEntry("its text does not match the seal it was written with (edited)")
    if tag is None or full:
        try:
            entry = json.loads(raw)
            stored_key = entry["key"]
            request = Request.from_dict(entry["request"])
        except Exception as exc:
            raise CorruptEntry(f"not a readable entry ({type(exc).__name__}: "
                               f"{str(exc)[:80]})") from None
        if stored_key != key:
            raise CorruptEntry("it is the entry of another key")
        if cache_key(request) != key:
            raise CorruptEntry("its request does not hash to its key (edited or foreign)")
    _checked[key] = fingerprint


def entry_of(key: str, raw: Any, tag: Any, *, full: bool = False) -> dict[str, Any]:
    """The entry stored as ``raw`` under ``key``, fully decoded, after every check a replay
    makes (:func:`check_entry`, stored key, reply fields); :class:`CorruptEntry` if not."""
    check_entry(key, raw, tag, full=full)
    try:
        entry = decode_entry(raw)
        completion_from_entry(entry)
    except Exception as exc:
        raise CorruptEntry(f"malformed entry ({type(exc).__name__}: {str(exc)[:80]})") from None
    if entry["key"] != key:
        raise CorruptEntry("it is the entry of another key")
    return entry


def replay(key: str, stored: tuple[Any, Any] | Any) -> Completion | None:
    """The completion stored under ``key`` (``(value, tag)`` from the store), or ``None``
    when nothing is stored; :class:`CorruptEntry` when the entry fails its check."""
    if stored is MISS:
        return None
    hits, corrupt = replay_many([(key, *stored)])
    if corrupt:
        raise CorruptEntry(corrupt[key])
    return hits[key]


def replay_many(rows: Iterable[tuple[str, Any, Any]]
                ) -> tuple[dict[str, Completion], dict[str, str]]:
    """:func:`replay` of many stored rows ``(key, value, tag)`` (as
    :func:`~workbench.llm._store.iter_stored` gives them): the completions by key, and
    the corrupt entries met (key -> why). Every row is checked as :func:`replay` checks.

    Python's cyclic garbage collector is switched off meanwhile (process-wide; back on
    after, also on an error, unless it was off): the objects made here hold no
    reference cycle, so it has nothing to collect, yet tens of thousands of new
    completions set off its passes over older and older generations (an eighth of the
    time of a 100,000-entry replay, measured; see :func:`gc.disable`). The new objects
    are then looked at once, by the next young-generation pass.
    """
    hits: dict[str, Completion] = {}
    corrupt: dict[str, str] = {}
    passed = _checked.get
    collecting = gc.isenabled()
    gc.disable()
    try:
        for key, raw, tag in rows:
            if type(raw) is not str or passed(key) != hash(raw):  # else: check_entry's
                try:                                              # own first test passes
                    check_entry(key, raw, tag)
                except CorruptEntry as exc:
                    corrupt[key] = str(exc)
                    continue
            try:
                reply = read_reply(raw)
                if reply["key"] != key:
                    corrupt[key] = "it is the entry of another key"
                else:
                    hits[key] = completion_from_entry(reply)
            except Exception as exc:
                corrupt[key] = f"malformed reply fields ({type(exc).__name__})"
    finally:
        if collecting:
            gc.enable()
    return hits, corrupt


def peek(request: Request) -> Completion | None:
    """The cached reply to ``request``, or ``None``; never calls a provider, never writes.

    Exactly what :func:`~workbench.llm.complete` would replay (``cached=True``): in the
    ``refresh`` and ``off`` modes nothing counts as cached, and a corrupt entry is a
    miss. The store is opened read-only: a cache folder that does not exist yet is not
    created, and a damaged one raises :class:`~workbench.errors.CacheError`.

    Examples
    --------
    >>> import tempfile
    >>> from workbench.llm import Request, complete, temporary_settings
    >>> ask = [{"role": "user", "content": "Say hi."}]
    >>> with temporary_settings(cache_dir=tempfile.mkdtemp()):
    ...     before = peek(Request("sim/judge-a", ask))
    ...     reply = complete("sim/judge-a", ask)
    ...     after = peek(Request("sim/judge-a", ask))
    >>> before is None, after.cached, after.text == reply.text
    (True, True, True)
    """
    if config.cache_mode() not in ("readwrite", "readonly"):
        return None
    key = cache_key(request)
    try:
        return replay(key, _store.read_values(open_reader(), [key])[key])
    except CorruptEntry:
        return None


def store(cache: _store.Store, entry: Mapping[str, Any]) -> bool:
    """Write ``entry`` under its key, sealed (see :func:`seal`); True if written.

    A full disk, a read-only or damaged store raises
    :class:`~workbench.errors.CacheError`; other failures are logged (:func:`_store.write`).
    """
    raw = encode_entry(entry)
    return _store.write(cache, entry["key"], raw, tag=seal(raw))


_last_miss: dict[str, Any] = {}


def record_miss(request: Request, key: str) -> None:
    """Remember the last readonly miss for ``workbench cache explain --last`` (the file is
    private to its owner, mode 600: a prompt may be confidential)."""
    data = {"key": key, "request": request.to_dict()}
    _last_miss.clear()
    _last_miss.update(data)
    try:
        folder = config.cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(folder / LAST_MISS_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                             0o600)
        os.fchmod(descriptor, 0o600)  # also when the file was there before
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, ensure_ascii=False, indent=1))
    except Exception:  # diagnostics only (e.g. a read-only folder)
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
