"""The reply store: one SQLite file, ``replies.db``, in WAL mode in the cache folder
(``WORKBENCH_CACHE_DIR``, else ``data/cache/llm``; :func:`~workbench.llm.configure`).

**A row** of table ``replies`` (:data:`SCHEMA`) holds, under the
:func:`~workbench.llm.cache_key` of a request, its *entry*, *seal* and time written. The
entry is one JSON object: the reply fields ``key, model, backend, cost_usd, latency_s,
usage, response`` first (all a replay decodes), then ``attempts, timestamp,
workbench_version, schema`` and the ``request`` (no API key, header nor URL password).
Errors are never stored. ``tally`` counts the rows (kept by triggers).

**The seal** is the sha256 of the entry's JSON, compared at every replay (an entry written
before seals has its request hashed back to its key instead). An entry that fails is a
*corrupt entry*: a miss, never replayed. Nothing is ever unpickled.

**Claims** (table ``claims``) name the process sending a request until they expire, so
that processes sharing a folder send each request once.

**Writes** are committed as their calls end, before the next call starts: one reply at a
time, or a round of replies in one transaction (:func:`grouped`: the in-process ``sim/``
calls answered together, committed in the same callback, never across an ``await``), so
a killed run loses at most the round in progress; ``readonly`` never writes.
A full disk or a damaged store stops a run with one :class:`~workbench.errors.CacheError`
naming the folder.

**Older stores** (diskcache's ``cache.db``) are moved into ``replies.db`` when first opened
for writing (read through diskcache's public API, text only; ``cache.db`` is kept as
``cache.db.migrated``; :func:`move_in`), or read into a temporary copy when opened
read-only (:func:`read_older`). Stats, export, import, check and repair are in
``_maintenance.py`` (kept away from a run by the writers' lock a run holds).
"""

from __future__ import annotations

import datetime as _dt
import errno
import functools
import gc
import hashlib
import itertools
import json
import logging
import os
import re
import shutil
import socket
import sqlite3
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from json.encoder import c_make_encoder, encode_basestring
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: no locks
    fcntl = None

import diskcache
from diskcache.core import MODE_RAW, MODE_TEXT

from workbench import config
from workbench.errors import CacheError
from workbench.llm._keys import cache_key
from workbench.llm._types import Completion, Request, Usage, build_completion

log = logging.getLogger("workbench.llm")

ENTRY_SCHEMA = 1
DB_FILE = "replies.db"
LEGACY_DB = "cache.db"
#: the form of a cache key (a SHA-256 in hex)
KEY_FORM = re.compile(r"^[0-9a-f]{64}$")
#: Below this much free space on the store's disk, a run that would write stops first.
MIN_FREE_BYTES = 32 * 2**20
_HOST = socket.gethostname()
#: Pages the WAL grows to before a writer moves them into ``replies.db`` (16 MB at
#: SQLite's 4 KB page; its default is 1,000).
WAL_PAGES = 4000


# --- the entry: what is stored ---------------------------------------------------------------

_REPLY_FIELDS = ("key", "model", "backend", "cost_usd", "latency_s", "usage", "response")
_NEEDED = frozenset(_REPLY_FIELDS)
_scan = json.JSONDecoder().scan_once
_AFTER_REPLY = ',"attempts":'


def make_entry(key: str, request: Request, *, text: str, logprobs: list | None,
               usage: Usage, cost_usd: float, latency_s: float, backend: str,
               finish_reason: str | None = None, provider_model: str | None = None,
               attempts: int = 1, cost_known: bool = True) -> dict[str, Any]:
    """A cache entry: the reply and its bookkeeping, then the request without secrets.

    A reply whose model has no price is flagged ``response.cost_known: false``; its text
    and logprob tokens are stored as :func:`unicode_text` makes them."""
    if logprobs:
        logprobs = [{**item, "token": unicode_text(item["token"]),
                     "top_logprobs": [{**top, "token": unicode_text(top["token"])}
                                      for top in item["top_logprobs"]]} for item in logprobs]
    entry = {
        "key": key, "model": request.model, "backend": backend, "cost_usd": cost_usd,
        "latency_s": latency_s,
        "usage": {"prompt_tokens": usage.prompt_tokens,
                  "completion_tokens": usage.completion_tokens},
        "response": {"text": unicode_text(text), "logprobs": logprobs,
                     "finish_reason": finish_reason, "model": provider_model},
        "attempts": attempts,
        "timestamp": _now(),
        "workbench_version": config.__version__,
        "schema": ENTRY_SCHEMA,
        "request": request.to_dict(),
    }
    if not cost_known:
        entry["response"]["cost_known"] = False
    return entry


_second: tuple[int, str] = (0, "")


def _now() -> str:
    """The UTC time to the second, ISO 8601 (``2025-01-31T12:00:00+00:00``), made once a
    second: what ``datetime.now(UTC).isoformat(timespec="seconds")`` says (it truncates)."""
    global _second
    now = int(time.time())
    if _second[0] != now:
        _second = (now, _dt.datetime.fromtimestamp(now, _dt.UTC).isoformat())
    return _second[1]


def unicode_text(text: str) -> str:
    """``text`` with each unpaired surrogate (``"\\ud83d"``, half an emoji a server cut at
    a token boundary: UTF-8 cannot encode it) replaced by U+FFFD; a pair split over two
    code points is joined. Other text is returned unchanged (the same object).

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


# The C encoder ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` builds
# anew at every call, built once with the same settings (so the same text) but no
# circular-reference check: an entry is a tree.
_encode_entry = c_make_encoder(None, json.JSONEncoder().default, encode_basestring, None, ":",
                               ",", False, False, True)


def encode_entry(entry: Mapping[str, Any]) -> str:
    """The stored JSON of an entry: the reply fields first, then ``"attempts"`` (so that
    :func:`read_reply` decodes that prefix alone), always text UTF-8 can encode. An entry
    already in that order (:func:`make_entry`'s) is not copied."""
    if type(entry) is dict and tuple(itertools.islice(entry, len(_REPLY_FIELDS))) \
            == _REPLY_FIELDS:
        ordered = entry
    else:
        ordered = {name: entry[name] for name in _REPLY_FIELDS if name in entry}
        ordered.setdefault("model", entry["request"]["model"])
        ordered.update((name, value) for name, value in entry.items() if name not in ordered)
    raw = "".join(_encode_entry(ordered, 0))
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
    """The reply fields of a stored entry: the prefix :func:`encode_entry` writes before
    ``"attempts"`` alone, so a replay costs the same however long the prompt (any other
    layout is decoded whole).

    Examples
    --------
    >>> read_reply('{"key":"k","model":"m","backend":"sim","cost_usd":0,"latency_s":1,'
    ...            '"usage":{},"response":{"text":"7"},"attempts":1,"request":{}}')["response"]
    {'text': '7'}
    """
    end = raw.find(_AFTER_REPLY)
    if end > 0:
        prefix = raw[:end] + "}"
        try:
            out, stop = _scan(prefix, 0)
        except (ValueError, StopIteration):
            pass
        else:
            if stop == len(prefix) and type(out) is dict and _NEEDED <= out.keys():
                return out
    entry = json.loads(raw)
    entry.setdefault("model", entry["request"]["model"])
    return entry


def completion_from_entry(entry: Mapping[str, Any], *, cached: bool = True) -> Completion:
    """The :class:`Completion` an entry replays (``KeyError``/``TypeError`` if malformed)."""
    response, usage = entry["response"], entry["usage"]
    if not isinstance(response["text"], str):
        raise TypeError("entry text is not a string")
    return build_completion(  # by position: text, model, prompt and completion tokens, ...
        response["text"], entry.get("model") or entry["request"]["model"],
        int(usage["prompt_tokens"]), int(usage["completion_tokens"]),
        float(entry["cost_usd"]), float(entry["latency_s"]), cached, entry["key"],
        response.get("logprobs"), entry["backend"],
        response.get("cost_known", True) is not False)


# --- the seal: how an entry is checked -------------------------------------------------------

class CorruptEntry(ValueError):
    """A stored value that is not a verified entry of its key: a miss, never replayed."""


def seal(raw: str) -> str:
    """The digest stored beside an entry (its ``seal`` column). It catches damage and
    edits, not a forger who recomputes it: the store keeps no secret.

    Examples
    --------
    >>> seal('{"key":"k"}')[:15]
    'sha256:9d51e365'
    """
    return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


#: key -> the stored text that passed :func:`check_entry` in this process (the text
#: itself: comparing it costs less than hashing it, and nothing can be forged).
_checked: dict[str, str] = {}
#: At most this many keys are remembered in :data:`_checked` (when full, it is emptied):
#: it only spares a second check in one process, and a million-call replay kept a
#: million-key dict (about 150 MB) for it.
CHECKED_MAX = 32_768


def _passed(key: str, raw: str) -> None:
    if len(_checked) >= CHECKED_MAX:
        _checked.clear()
    _checked[key] = raw


def check_entry(key: str, raw: Any, tag: Any, *, full: bool = False) -> None:
    """Raise :class:`CorruptEntry`, saying why, unless ``raw`` may be replayed for ``key``.

    ``raw`` must be text. Sealed (``tag`` set): the seal must match it. Unsealed, or
    ``full`` (``workbench cache check``): its stored ``key`` must be ``key`` and its
    request must hash to it. The same text that passed in this process (one of the last
    :data:`CHECKED_MAX`) is not checked again.
    """
    if type(raw) is not str:
        raise CorruptEntry(f"not text but {type(raw).__name__}")
    if not full and _checked.get(key) == raw:
        return
    if tag is not None and tag != seal(raw):
        raise CorruptEntry("its text does not match the seal it was written with (edited)")
    if tag is None or full:
        try:
            entry = json.loads(raw)
            stored_key, request = entry["key"], Request.from_dict(entry["request"])
        except Exception as exc:
            raise CorruptEntry(f"not a readable entry ({type(exc).__name__}: "
                               f"{str(exc)[:80]})") from None
        if stored_key != key:
            raise CorruptEntry("it is the entry of another key")
        if cache_key(request) != key:
            raise CorruptEntry("its request does not hash to its key (edited or foreign)")
    _passed(key, raw)


def replay(store: Store, key: str) -> Completion | None:
    """The completion stored under ``key`` (``None``: none); :class:`CorruptEntry` when the
    entry fails its check."""
    hits, corrupt = replay_many(store.rows([key]))
    if key in corrupt:
        raise CorruptEntry(corrupt[key])
    return hits.get(key)


@contextmanager
def paused_collector() -> Iterator[None]:
    """The cyclic garbage collector off for the ``with`` block (then as it was): a warm
    replay allocates many containers that hold no cycle and live a window long, and the
    collector's passes over them took an eighth of its time (measured)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def replay_many(rows: Iterable[tuple[str, Any, Any]]
                ) -> tuple[dict[str, Completion], dict[str, str]]:
    """The completions of stored rows ``(key, entry, seal)`` (:meth:`Store.rows`) by key,
    and the corrupt entries met (key -> why), the collector paused
    (:func:`paused_collector`)."""
    hits: dict[str, Completion] = {}
    corrupt: dict[str, str] = {}
    passed = _checked.get
    with paused_collector():
        for key, raw, tag in rows:
            text = type(raw) is str
            if text and passed(key) == raw:
                pass  # passed check_entry before in this process
            elif text and type(tag) is str and tag == seal(raw):
                _passed(key, raw)  # sealed, and the seal matches: check_entry's pass
            else:
                try:
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
    return hits, corrupt


# --- the table -------------------------------------------------------------------------------

#: The tables, made in one transaction that then sets ``PRAGMA user_version = 1``.
SCHEMA = (
    "CREATE TABLE tally (replies INTEGER NOT NULL)",  # first: its page is the schema's next
    "INSERT INTO tally VALUES (0)",
    "CREATE TABLE replies (key TEXT PRIMARY KEY, entry TEXT NOT NULL, seal TEXT, "
    "created REAL NOT NULL)",
    "CREATE TRIGGER tally_in AFTER INSERT ON replies "
    "BEGIN UPDATE tally SET replies = replies + 1; END",
    "CREATE TRIGGER tally_out AFTER DELETE ON replies "
    "BEGIN UPDATE tally SET replies = replies - 1; END",
    "CREATE TABLE claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)",
)
_WRITE = ("INSERT INTO replies VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
          "entry = excluded.entry, seal = excluded.seal, created = excluded.created")
#: A chunk's keys as a table ``wanted(i, k)``: each row names its key by its place ``i``,
#: so the caller's own string comes back, not a copy.
_ROWS = ("WITH wanted(i, k) AS (VALUES {}) SELECT wanted.i, entry, seal "
         "FROM wanted JOIN replies ON key = wanted.k")
_CHUNK = 500


@functools.lru_cache(maxsize=8)
def _wanted(size: int, query: str = _ROWS) -> str:
    """``query`` (:data:`_ROWS`, :data:`_TOGETHER`) for ``size`` keys."""
    return query.format(",".join(f"({i},?)" for i in range(size)))


#: The rows of many keys in one result row (:meth:`Store.rows_together`): each one's key
#: position and lengths, all their texts concatenated, and how many values are not text.
_TOGETHER = ("WITH wanted(i, k) AS (VALUES {}) SELECT group_concat(wanted.i || ' ' || "
             "length(entry) || ' ' || ifnull(length(seal), -1), ' '), "
             "group_concat(entry || ifnull(seal, ''), ''), sum(typeof(entry) != 'text' "
             "OR typeof(seal) NOT IN ('text', 'null')) FROM wanted JOIN replies ON key = wanted.k")
_TOGETHER_MAX = 4096


def make_tables(store: Store) -> None:
    for statement in SCHEMA:
        store.execute(statement)
    store.execute("PRAGMA user_version = 1")


class Store:
    """The store of one folder: its ``replies.db`` through a connection per thread.

    ``readonly``: a missing file is an empty store; ``why``: why a writable open fell back
    to read-only (``read-only`` or ``full``); ``left_out``: rows of an older store not read
    (why -> rows). :func:`store` and :func:`replay` are the checked doors.
    """

    def __init__(self, directory: str | os.PathLike, *, readonly: bool = False,
                 db: Path | None = None, scratch: Any = None):
        self.directory = str(directory)
        self.readonly = readonly
        self.why: str | None = None
        self.db = db or Path(directory) / DB_FILE
        self.scratch = scratch  # the temporary folder of an older store's copy
        self.left_out: Counter[str] = Counter()
        self.local = threading.local()

    def execute(self, statement: str, args: Iterable[Any] = ()) -> sqlite3.Cursor:
        """``statement`` on this thread's connection (autocommit)."""
        local = self.local
        if (getattr(local, "pid", None) != os.getpid() or getattr(local, "con", None) is None
                or (local.memory and self.db.is_file())):
            local.memory = self.readonly and not self.db.is_file()
            if local.memory:  # nothing stored yet: empty tables in memory
                local.con = sqlite3.connect(":memory:", isolation_level=None)
                local.con.executescript(";".join(SCHEMA))
            elif self.readonly:
                check_not_empty(self.db)
                local.con = connect_ro(self.db)
            else:
                local.con = sqlite3.connect(self.db, timeout=60, isolation_level=None)
                # a killed process loses no commit; a power cut the last ones, never the file
                local.con.execute("PRAGMA synchronous = NORMAL")
                # the WAL moved into the file every WAL_PAGES pages, not SQLite's 1,000: a
                # page written again meanwhile is moved once (1,000,000 sim calls cold:
                # 3,713 -> 5,076 calls/s, 210 -> 178 CPU us per call; 16,000 pages: 4,861)
                local.con.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES}")
            local.pid = os.getpid()
        return local.con.execute(statement, tuple(args))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction for the ``with`` block (other writers wait meanwhile)."""
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def rows(self, keys: list[str]) -> Iterator[tuple[str, Any, Any]]:
        """``(key, entry, seal)`` of each of ``keys`` (distinct) that is stored, lazily, a
        chunk of keys per query: a replay checks each chunk while it is fresh in the CPU's
        cache. A damaged store raises :class:`~workbench.errors.CacheError`; any other
        failed read is a miss."""
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start: start + _CHUNK]
            try:
                found = self.execute(_wanted(len(chunk)), chunk).fetchall()
            except sqlite3.Error as exc:
                if is_damage(exc):
                    raise damaged(self.directory, exc) from None
                log.debug("cache %s: read failed (%s): misses", self.directory, exc)
                continue
            yield from [(chunk[i], entry, tag) for i, entry, tag in found]

    def rows_together(self, keys: list[str]) -> list[tuple[str, Any, Any]] | None:
        """:meth:`rows` (a list) in one result row per query, else None (a value not plain
        text, or text holding NUL, which ``length()`` does not count). For a thread looking
        up beside another: ``sqlite3`` releases the GIL while SQLite steps, and takes it
        back for each row, which a busy thread holds a switch interval (5 ms) each time."""
        found: list[tuple[str, Any, Any]] = []
        for start in range(0, len(keys), _TOGETHER_MAX):
            chunk = keys[start: start + _TOGETHER_MAX]
            head, body, odd = self.execute(_wanted(len(chunk), _TOGETHER), chunk).fetchone()
            if odd:
                return None
            at = 0
            fields = map(int, head.split(" ") if head else ())
            for i, length, tagged in zip(fields, fields, fields, strict=True):
                begin = at
                at += length
                if tagged < 0:
                    found.append((chunk[i], body[begin:at], None))
                else:
                    found.append((chunk[i], body[begin:at], body[at:at + tagged]))
                    at += tagged
            if at != len(body or ""):
                return None
        return found

    def get(self, key: str, *, tag: bool = False) -> Any:
        """The entry text stored under ``key`` (``(entry, seal)`` with ``tag``), else None."""
        for _, entry, seal_ in self.rows([key]):
            return (entry, seal_) if tag else entry
        return (None, None) if tag else None

    def set(self, key: str, value: Any, *, tag: str | None = None) -> None:
        self.execute(_WRITE, (key, value, tag, time.time()))

    def __len__(self) -> int:
        return self.execute("SELECT count(*) FROM replies").fetchone()[0]

    def disconnect(self) -> None:
        """Close this thread's connection (opened again when needed)."""
        if getattr(self.local, "con", None) is not None:
            self.local.con.close()
            self.local.con = None

    def close(self) -> None:
        """Close this thread's connection (another thread's closes with the thread, or
        with the store once nothing holds it: never under a query)."""
        self.disconnect()
        if self.scratch is not None:
            self.scratch.cleanup()


def connect_ro(db: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file ``db``: ``mode=ro`` (it sees the WAL, but
    needs its ``-shm`` file), else, in a read-only folder without one, ``immutable=1``."""
    uri = db.resolve().as_uri()
    con = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except sqlite3.OperationalError as exc:
        if cannot_write(exc) is None:
            raise
        con.close()
        con = sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)
        wal = db.with_name(db.name + "-wal")
        if wal.is_file() and wal.stat().st_size:
            log.warning("%s: the folder is read-only and %s holds %d bytes not yet in %s; "
                        "entries written last may be missing (open the folder once where it "
                        "is writable to merge them)", db.parent, wal.name, wal.stat().st_size,
                        db.name)
    return con


# --- opening -----------------------------------------------------------------------------------

_stores: dict[tuple[str, int, bool], tuple[Store, Any]] = {}
_stores_lock = threading.Lock()


def _identity(folder: Path) -> tuple[int, int, bool] | None:
    """The folder's ``(device, inode)`` and whether it holds ``replies.db``: a folder
    replaced (a repair in another process) or moved in since is opened again."""
    try:
        stat = folder.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, (folder / DB_FILE).exists()


def open_cache(path: str | os.PathLike | None = None, *, readonly: bool = False) -> Store:
    """The store at ``path`` (default: the configured folder), opened once per folder,
    process and mode (again when the folder was replaced).

    ``readonly`` never writes nor creates the folder. Opened for writing, a read-only
    folder or a full disk gives a read-only store (its ``why`` says which); a damaged
    store raises :class:`~workbench.errors.CacheError` naming the folder.
    """
    folder = Path(config.cache_dir() if path is None else path).expanduser()
    key = (str(folder), os.getpid(), readonly)
    with _stores_lock:
        found = _stores.get(key)
        if found is not None and found[1] != _identity(folder):
            _stores.pop(key)[0].close()
            found = None
        if found is None:
            found = _stores[key] = (_open(folder, readonly), _identity(folder))
    return found[0]


def _open(folder: Path, readonly: bool) -> Store:
    why = None
    if not readonly:
        try:
            return create(folder)
        except (sqlite3.Error, OSError) as exc:
            if is_damage(exc):
                raise damaged(folder, exc) from None
            why = cannot_write(exc)
            if why is None:
                raise
            log.debug("%s is %s: opened for reading only", folder, why)
    if (folder / DB_FILE).exists() or not (folder / LEGACY_DB).exists():
        store = Store(folder, readonly=True)
    else:
        store = read_older(folder)
    store.why = why
    return store


def create(folder: Path) -> Store:
    """The writable store of ``folder``, an older store moved in first; the first process
    to open it makes the tables (another waits, then finds them)."""
    check_not_empty(folder / DB_FILE)
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / DB_FILE).exists() and (folder / LEGACY_DB).exists():
        move_in(folder)
    store = Store(folder)
    try:
        _write_ahead_log(store)
        with store.transaction():
            if store.execute("PRAGMA user_version").fetchone()[0] == 0:
                make_tables(store)
    except BaseException:
        store.close()
        raise
    return store


def _write_ahead_log(store: Store, wait_s: float = 60.0) -> None:
    """Switch ``store``'s file to WAL. While another process writes the tables of a new file,
    SQLite answers "database is locked" at once (no busy timeout for this switch): retry."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            store.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def close_caches(folder: str | os.PathLike | None = None) -> None:
    """Close the open stores (of ``folder``, else all): tests, a forked child, a repair."""
    with _stores_lock:
        for key in list(_stores):
            if folder is None or key[0] == str(Path(folder).expanduser()):
                with suppress(Exception):  # closing must never raise
                    _stores.pop(key)[0].close()


# --- errors that name the folder ---------------------------------------------------------------

def is_damage(exc: BaseException) -> bool:
    """True when ``exc`` says the SQLite file is corrupt or not a database."""
    if getattr(exc, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return True
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


def cannot_write(exc: BaseException) -> str | None:
    """``"read-only"`` or ``"full"`` when ``exc`` says the store cannot be written, else None."""
    name, text = getattr(exc, "sqlite_errorname", "") or "", str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError):
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) or "readonly database" in text:
            return "read-only"
        if name == "SQLITE_FULL" or "disk is full" in text:
            return "full"
    elif isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "read-only"
    return None


def free_bytes(folder: str | os.PathLike) -> int | None:
    """Free space on the disk holding ``folder`` (or its nearest existing parent)."""
    path = Path(folder).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def damaged(folder: str | os.PathLike, problem: Any) -> CacheError:
    """The error for a store that cannot be read: names the folder and the repair."""
    return CacheError(
        f"the LLM cache at {folder} is damaged ({problem}): `workbench cache check --dir "
        f"{folder}` shows what is readable, `workbench cache repair --dir {folder}` moves "
        "it aside and salvages every readable entry into a fresh store", folder=str(folder))


def unwritable(folder: str | os.PathLike, why: str) -> CacheError:
    """The error for a store that cannot be written (``why``: ``read-only`` or ``full``)."""
    if why == "full":
        free = free_bytes(folder)
        room = "unknown" if free is None else f"{free / 2**20:.1f} MB"
        return CacheError(
            f"the disk of the LLM cache at {folder} is full ({room} free, the cache needs "
            f"at least {MIN_FREE_BYTES // 2**20} MB): free some space or point "
            "WORKBENCH_CACHE_DIR at another disk, then run again (replies already cached "
            "are kept)", folder=str(folder))
    return CacheError(
        f"the LLM cache at {folder} is read-only: replay it with WORKBENCH_CACHE_MODE="
        "readonly, or point WORKBENCH_CACHE_DIR at a writable folder", folder=str(folder))


def check_not_empty(db: Path) -> None:
    """Raise if the SQLite file ``db`` has 0 bytes: a truncated store, never silently
    empty (unless changed in the last seconds: SQLite writes a new file's header a
    moment after creating it)."""
    deadline = time.monotonic() + 2.0
    while True:
        try:
            stat = db.stat()
        except OSError:
            return
        if stat.st_size:
            return
        if time.time() - stat.st_mtime > 5.0 or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    raise CacheError(
        f"{db} is empty (0 bytes): every reply this store held is lost (a crash or an "
        "interrupted copy truncated it). Restore the folder from a backup, or run "
        f"`workbench cache repair --dir {db.parent}` to move it aside and start a fresh "
        "store", folder=str(db.parent))


# --- writing -----------------------------------------------------------------------------------

def require_writable(store: Store) -> None:
    """Raise :class:`~workbench.errors.CacheError` unless ``store`` can take new entries
    (not read-only, and at least :data:`MIN_FREE_BYTES` free on its disk)."""
    if store.readonly:
        raise unwritable(store.directory, store.why or "read-only")
    free = free_bytes(store.directory)
    if free is not None and free < MIN_FREE_BYTES:
        raise unwritable(store.directory, "full")


def store(cache: Store, entry: Mapping[str, Any]) -> bool:
    """Write ``entry`` under its key with its seal, committed (inside :func:`grouped`: when
    the group commits); True if written. A full disk, a read-only or a damaged store raises
    :class:`~workbench.errors.CacheError` (the run stops once); any other failure (e.g.
    locked too long) is logged, and the run goes on.
    """
    if cache.readonly:
        raise unwritable(cache.directory, cache.why or "read-only")
    raw = encode_entry(entry)
    try:
        cache.set(entry["key"], raw, tag=seal(raw))
        return True
    except (sqlite3.Error, OSError) as exc:
        _fatal(cache, exc)
        log.warning("could not write cache entry %s: %s", entry["key"][:16], exc)
    return False


def _fatal(cache: Store, exc: BaseException) -> None:
    """Raise the :class:`~workbench.errors.CacheError` of a failed write when ``exc`` says
    the store is damaged, read-only or full."""
    if is_damage(exc):
        raise damaged(cache.directory, exc) from None
    why = cannot_write(exc)
    if why is not None:
        raise unwritable(cache.directory, why) from None


@contextmanager
def grouped(cache: Store) -> Iterator[None]:
    """The :func:`store` calls of the ``with`` block (a round of replies) in one write
    transaction: committed when the block ends, rolled back if it raises; never open
    across an ``await`` (other processes wait for the write lock meanwhile). A failed
    ``BEGIN`` leaves each :func:`store` to commit its own; a failed ``COMMIT`` loses the
    round: raised as :func:`store` raises (damaged, read-only, full), else logged."""
    try:
        cache.execute("BEGIN IMMEDIATE")
    except (sqlite3.Error, OSError) as exc:
        _fatal(cache, exc)
        log.warning("cache %s: no write transaction (%s): one commit per reply",
                    cache.directory, exc)
        yield
        return
    try:
        yield
    except BaseException:
        with suppress(sqlite3.Error):  # (SQLite may have rolled it back already)
            cache.execute("ROLLBACK")
        raise
    try:
        cache.execute("COMMIT")
    except (sqlite3.Error, OSError) as exc:
        with suppress(sqlite3.Error):
            cache.execute("ROLLBACK")
        _fatal(cache, exc)
        log.warning("cache %s: a round of replies could not be committed: %s",
                    cache.directory, exc)


def checkpoint(store: Store, *, truncate: bool = False) -> None:
    """Move the WAL's pages into ``replies.db`` (after a run that wrote, before an export):
    ``PASSIVE`` never waits for other connections; ``truncate`` waits for them and
    empties the WAL file, so that ``replies.db`` alone holds every entry."""
    if store.readonly:
        return
    try:
        store.execute(f"PRAGMA wal_checkpoint({'TRUNCATE' if truncate else 'PASSIVE'})")
    except sqlite3.Error as exc:  # a busy store: the next run checkpoints
        log.debug("WAL checkpoint of %s skipped: %s", store.directory, exc)


def peek(request: Request) -> Completion | None:
    """The cached reply to ``request``, or ``None``; never calls a provider, never writes.

    Exactly what :func:`~workbench.llm.complete` would replay (``cached=True``): nothing in
    the ``refresh`` and ``off`` modes, never a corrupt entry. A missing cache folder is not
    created; a damaged one raises :class:`~workbench.errors.CacheError`.

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
    try:
        return replay(open_cache(readonly=True), cache_key(request))
    except CorruptEntry:
        return None


# --- claims: one sender per request across processes -------------------------------------------

def _owner() -> str:
    return f"{_HOST}:{os.getpid()}"


def claim(store: Store, key: str, ttl: float) -> bool:
    """Try to become the sender of ``key`` for ``ttl`` seconds (an expired claim is taken
    over); False if another sender holds it. A store that cannot be written raises (as
    :func:`store`); any other failure answers True (sent, as without claims)."""
    now = time.time()
    try:
        return store.execute(
            "INSERT INTO claims VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET owner = "
            "excluded.owner, expires = excluded.expires WHERE claims.expires <= ?",
            (key, _owner(), now + ttl, now)).rowcount == 1
    except (sqlite3.Error, OSError) as exc:
        why = cannot_write(exc)
        if why is not None:
            raise unwritable(store.directory, why) from None
        return True


def extend(store: Store, key: str, ttl: float) -> None:
    """Keep this process's claim on ``key`` alive for another ``ttl`` seconds."""
    with suppress(Exception):  # else the claim expires: at worst the request is sent twice
        store.execute("UPDATE claims SET expires = ? WHERE key = ? AND owner = ?",
                      (time.time() + ttl, key, _owner()))


def release(store: Store, key: str) -> None:
    """Give up this process's claim on ``key`` (after the reply is stored, or on failure)."""
    with suppress(Exception):  # else it expires
        store.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, _owner()))


def claimed_elsewhere(store: Store, key: str) -> bool:
    """True while a live sender holds the claim on ``key`` (one left by a dead process of
    this machine, ``kill -9``, is dropped at once)."""
    try:
        found = store.execute("SELECT owner FROM claims WHERE key = ? AND expires > ?",
                              (key, time.time())).fetchall()
        if not found:
            return False
        host, _, pid = found[0][0].rpartition(":")
        if host == _HOST and pid.isdigit() and not _alive(int(pid)):
            store.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, found[0][0]))
            return False
        return True
    except Exception:  # cannot tell: stop waiting
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


# --- older stores: diskcache's cache.db, read through its public API -------------------------

_VALUE_FILE = re.compile(r"^[0-9a-f]{2}[/\\][0-9a-f]{2}[/\\][0-9a-f]{28}\.val$")


class TextDisk(diskcache.Disk):
    """diskcache's ``Disk`` for text only (its documented extension point): a pickled key
    reads as ``"<pickled key>"``; a value that is not text, or a file outside diskcache's
    layout in the folder, raises :class:`CorruptEntry`. Nothing is unpickled or deleted."""

    def get(self, key: Any, raw: bool) -> Any:
        return super().get(key, raw) if raw else "<pickled key>"

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode == MODE_RAW and type(value) is str:
            return value
        if mode != MODE_TEXT:
            raise CorruptEntry(f"diskcache mode {mode} (binary or pickle): never decoded")
        if read or not isinstance(filename, str) or not _VALUE_FILE.match(filename):
            raise CorruptEntry(f"a value file outside the cache's layout: {filename!r}")
        try:
            return super().fetch(mode, filename, value, read)
        except UnicodeDecodeError:
            raise CorruptEntry("a value file that is not UTF-8 text") from None

    def remove(self, file_path: str) -> None:
        pass


def _readable(keys: Iterator[Any], left_out: Counter) -> Iterator[Any]:
    try:
        yield from keys
    except sqlite3.DatabaseError:  # a damaged page of its keys: those after it are lost
        left_out["unreadable: the store's list of keys is damaged"] += 1


def migrate(folder: Path, db: Path) -> tuple[int, Counter]:
    """Make the new SQLite file ``db`` hold each entry of the diskcache store in ``folder``
    as it was stored, seal included (claims are not copied), in one transaction. Returns
    how many were copied, and the rows left out (why -> rows)."""
    left_out: Counter[str] = Counter()
    moved = 0
    into = Store(db.parent, db=db)
    try:
        with into.transaction(), \
                diskcache.Cache(str(folder), disk=TextDisk, eviction_policy="none") as old:
            make_tables(into)
            for key in _readable(old.iterkeys(), left_out):
                if not (isinstance(key, str) and KEY_FORM.match(key)):
                    if not (isinstance(key, str) and key.startswith("claim/")):
                        left_out["its key is not a cache key"] += 1
                    continue
                try:
                    value, tag = old.get(key, tag=True)
                except CorruptEntry as exc:
                    left_out[str(exc)] += 1
                except (OSError, sqlite3.Error) as exc:
                    left_out[f"unreadable ({type(exc).__name__})"] += 1
                else:
                    if value is not None:  # else: gone meanwhile (TextDisk returns no None)
                        into.set(key, value, tag=tag)
                        moved += 1
    finally:
        into.close()
    return moved, left_out


def move_in(folder: Path) -> None:
    """Move the older store of ``folder`` into its ``replies.db``, built aside and then
    renamed into place, by one process at a time (the others wait, then find it done);
    ``cache.db`` is then renamed ``cache.db.migrated``."""
    check_not_empty(folder / LEGACY_DB)
    aside, target = folder / f"{DB_FILE}.moving", folder / DB_FILE
    with open(folder / f"{LEGACY_DB}.moving.lock", "a") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists() or not (folder / LEGACY_DB).exists():  # done meanwhile
            Path(lock.name).unlink(missing_ok=True)
            return
        for leftover in (aside, aside.with_name(aside.name + "-journal")):  # of a crash
            leftover.unlink(missing_ok=True)
        try:
            moved, left_out = migrate(folder, aside)
            os.replace(aside, target)
        finally:
            aside.unlink(missing_ok=True)
        for suffix in ("", "-wal", "-shm"):
            old = folder / (LEGACY_DB + suffix)
            if old.exists():
                old.rename(old.with_name(old.name + ".migrated"))
        Path(lock.name).unlink()
    log.warning("%s: %d entries of the older store moved into %s (cache.db kept as "
                "cache.db.migrated)%s", folder, moved, DB_FILE,
                f"; left out: {dict(left_out)}" if left_out else "")


def read_older(folder: Path) -> Store:
    """The older store of ``folder`` read into a temporary copy, opened read-only (the
    copy goes when the store is closed); the folder is left as it is."""
    scratch = tempfile.TemporaryDirectory(prefix="workbench-cache-")
    copy = Path(scratch.name)
    try:
        check_not_empty(folder / LEGACY_DB)
        shutil.copytree(folder, copy / "old", ignore=shutil.ignore_patterns("*.lock", "*.json"))
        moved, left_out = migrate(copy / "old", copy / DB_FILE)
    except BaseException as exc:
        scratch.cleanup()
        if isinstance(exc, sqlite3.Error) and is_damage(exc):
            raise damaged(folder, exc) from None
        raise
    log.info("%s: an older store (cache.db), %d entries read into a temporary copy; open it "
             "for writing once to move it in", folder, moved)
    store = Store(folder, readonly=True, db=copy / DB_FILE, scratch=scratch)
    store.left_out = left_out
    return store
