"""The store under the reply cache: diskcache's SQLite table, opened so that it only ever
hands back text, read-only when asked, with failures that name the folder.

* :class:`TextDisk` never unpickles. A row in diskcache's pickle or binary mode, a
  non-text value, or a value file outside diskcache's own layout comes back as
  :class:`Refused` (a corrupt entry): a hostile or damaged store cannot run code, nor
  make the cache read or delete a file elsewhere.
* :class:`ReadOnlyCache` reads the same table through SQLite's ``mode=ro`` (or
  ``immutable=1`` when not even the WAL index can be created, e.g. a read-only bind
  mount). The ``readonly`` mode, :func:`~workbench.llm.peek` and ``workbench cache
  stats/export/explain/check`` read through it and never write.
* :func:`open_cache` opens the writable store. On a read-only folder or a full disk it
  falls back to reading (a run fails only when it has to write, with one
  :class:`~workbench.errors.CacheError` naming the folder and the free space); a
  damaged or zero-byte ``cache.db`` raises one naming the folder and ``workbench cache
  repair``.
* Claims: a short-lived row ``claim/<key>`` says which process is sending a request,
  so that processes sharing a store rarely send the same request twice.
* The writers' lock (:data:`LOCK_FILE`): a run that may write holds it shared
  (:func:`writing`), ``workbench cache repair`` alone (:func:`replacing`), so a repair
  never moves a live run's replies aside; a handle whose folder was replaced since it
  was opened is opened again.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import re
import shutil
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Any

import diskcache
from diskcache.core import DBNAME, MODE_RAW, MODE_TEXT

from workbench.errors import CacheError

log = logging.getLogger("workbench.llm")

#: Below this much free space on the cache's disk, a run that would write stops first.
MIN_FREE_BYTES = 32 * 2**20
CLAIM_PREFIX = "claim/"
_VALUE_FILE = re.compile(r"^[0-9a-f]{2}[/\\][0-9a-f]{2}[/\\][0-9a-f]{28}\.val$")
_HOST = socket.gethostname()


class _Missing:
    """The type of :data:`MISS` (a named sentinel, like diskcache's ``ENOVAL``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISS"


#: "No stored value for this key" (a stored value is always a string).
MISS = _Missing()


class Refused:
    """A stored key or value the store will not decode: not text, or a file elsewhere."""

    __slots__ = ("why",)

    def __init__(self, why: str):
        self.why = why

    def __repr__(self) -> str:
        return f"Refused({self.why!r})"


class TextDisk(diskcache.Disk):
    """diskcache's ``Disk`` for text only: it writes ``str`` and reads text, nothing else.

    diskcache's own ``Disk`` unpickles rows in pickle mode and opens any path a row
    names; this one returns :class:`Refused` instead, and removes only value files of
    diskcache's layout (``ab/cd/<28 hex>.val`` inside the folder).
    """

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            return Refused("a pickled key")
        return bytes(key) if type(key) is sqlite3.Binary else key

    def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> tuple:
        if type(value) is not str:
            raise TypeError(f"the LLM cache stores text only, not {type(value).__name__}")
        return super().store(value, read, key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode == MODE_RAW:
            return value if type(value) is str else Refused(f"a {type(value).__name__} value")
        if mode != MODE_TEXT:
            return Refused(f"diskcache mode {mode} (binary or pickle): never decoded")
        if read or not isinstance(filename, str) or not _VALUE_FILE.match(filename):
            return Refused(f"a value file outside the cache's layout: {filename!r}")
        try:
            return super().fetch(mode, filename, value, read)
        except UnicodeDecodeError:
            return Refused("a value file that is not UTF-8 text")

    def remove(self, file_path: str) -> None:
        if isinstance(file_path, str) and _VALUE_FILE.match(file_path):
            super().remove(file_path)


_SCHEMA = ("CREATE TABLE Cache (rowid INTEGER PRIMARY KEY, key BLOB, raw INTEGER, "
           "store_time REAL, expire_time REAL, access_time REAL, access_count INTEGER "
           "DEFAULT 0, tag BLOB, size INTEGER DEFAULT 0, mode INTEGER DEFAULT 0, "
           "filename TEXT, value BLOB)")
_LIVE = "raw = 1 AND (expire_time IS NULL OR expire_time > ?)"


class ReadOnlyCache:
    """The reading half of ``diskcache.Cache`` over a read-only SQLite connection.

    ``get``, ``in``, ``iterkeys``, ``len`` and ``volume`` as diskcache's, for string
    keys; nothing is ever written and a missing folder is an empty store (not created).
    ``why`` says why a writable open fell back to this (``read-only`` or ``full``).
    """

    def __init__(self, directory: str | os.PathLike, *, why: str | None = None):
        self.directory = str(directory)
        self.why = why
        self._db = Path(self.directory) / DBNAME
        self._disk = TextDisk(self.directory)
        self._local = threading.local()

    def _connect(self) -> tuple[sqlite3.Connection, bool]:
        if not self._db.is_file():  # nothing stored yet: an empty table in memory
            con = sqlite3.connect(":memory:")
            con.execute(_SCHEMA)
            return con, True
        check_not_empty(self.directory)
        return connect_ro(self._db), False

    @property
    def _sql(self) -> Any:
        """``execute`` of this thread's connection (as diskcache's ``Cache._sql``)."""
        local = self._local
        if (getattr(local, "pid", None) != os.getpid() or getattr(local, "con", None) is None
                or (local.memory and self._db.is_file())):
            local.con, local.memory = self._connect()
            local.pid = os.getpid()
        return local.con.execute

    def get(self, key: str, default: Any = None, *, tag: bool = False) -> Any:
        rows = self._sql(f"SELECT mode, filename, value, tag FROM Cache WHERE key = ? AND {_LIVE}",
                         (key, time.time())).fetchall()
        if not rows:
            return (default, None) if tag else default
        mode, filename, value, db_tag = rows[0]
        try:
            value = self._disk.fetch(mode, filename, value, False)
        except OSError:  # the value file is gone
            return (default, None) if tag else default
        return (value, db_tag) if tag else value

    def __contains__(self, key: str) -> bool:
        return bool(self._sql(f"SELECT 1 FROM Cache WHERE key = ? AND {_LIVE}",
                              (key, time.time())).fetchall())

    def iterkeys(self) -> Iterator[Any]:
        for key, raw in self._sql("SELECT key, raw FROM Cache ORDER BY key, raw").fetchall():
            yield self._disk.get(key, raw)

    def __len__(self) -> int:
        return int(self._sql("SELECT count(*) FROM Cache").fetchone()[0])

    def volume(self) -> int:
        (pages,), = self._sql("PRAGMA page_count").fetchall()
        (size,), = self._sql("PRAGMA page_size").fetchall()
        (files,), = self._sql("SELECT COALESCE(SUM(size), 0) FROM Cache").fetchall()
        return int(pages * size + files)

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


Store = diskcache.Cache | ReadOnlyCache


def connect_ro(db: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file ``db`` (``mode=ro``, else ``immutable=1``).

    ``mode=ro`` sees the WAL but needs its index file (``-shm``) to exist or be
    creatable; where neither is possible (a read-only folder without one), the file is
    read as it is, and a warning says when the WAL holds pages that are then not seen.
    """
    uri = db.resolve().as_uri()
    con = sqlite3.connect(f"{uri}?mode=ro", uri=True)
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except sqlite3.OperationalError as exc:
        if cannot_write(exc) is None:
            raise
        con.close()
        con = sqlite3.connect(f"{uri}?immutable=1", uri=True)
        wal = db.with_name(db.name + "-wal")
        if wal.is_file() and wal.stat().st_size:
            log.warning("%s: the folder is read-only and %s holds %d bytes not yet in %s; "
                        "entries written last may be missing (open the folder once where it "
                        "is writable to merge them)", db.parent, wal.name, wal.stat().st_size,
                        db.name)
    return con

# --- errors that name the folder -----------------------------------------------------------


def _errname(exc: BaseException) -> str:
    return getattr(exc, "sqlite_errorname", "") or ""


def is_damage(exc: BaseException) -> bool:
    """True when ``exc`` says the SQLite file is corrupt or not a database."""
    if _errname(exc) in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return True
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


def cannot_write(exc: BaseException) -> str | None:
    """``"read-only"`` or ``"full"`` when ``exc`` says the store cannot be written, else None."""
    name, text = _errname(exc), str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError):
        if name.startswith("SQLITE_READONLY") or "readonly database" in text:
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


def check_not_empty(folder: str | os.PathLike) -> None:
    """Raise if ``cache.db`` exists with 0 bytes: a truncated store, never silently empty.

    SQLite creates the file empty and writes its header a moment later: a 0-byte file
    changed in the last few seconds (another process creating the store) is given
    that moment.
    """
    db = Path(folder) / DBNAME
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
        f"`workbench cache repair --dir {folder}` to move it aside and start a fresh "
        "store", folder=str(folder))


# --- opening ---------------------------------------------------------------------------------

_handles: dict[tuple[str, int, bool], tuple[Any, tuple[int, int] | None]] = {}
_handles_lock = threading.Lock()


def _identity(folder: Path) -> tuple[int, int] | None:
    """The folder's ``(device, inode)``: a store moved away and replaced (``workbench cache
    repair`` in another process) is another folder under the same name."""
    try:
        stat = folder.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _handle(folder: Path, readonly: bool) -> Any:
    """The open store of ``folder``, opened again when the folder was replaced since."""
    key = (str(folder), os.getpid(), readonly)
    identity = _identity(folder)
    found = _handles.get(key)
    if found is None or found[1] != identity:
        with _handles_lock:
            found = _handles.get(key)
            if found is not None and found[1] != identity:
                _close(_handles.pop(key)[0])
                found = None
            if found is None:
                store = ReadOnlyCache(folder) if readonly else _open_writable(folder)
                found = _handles[key] = (store, _identity(folder))
    return found[0]


def _close(store: Any) -> None:
    try:
        store.close()
    except Exception:  # closing must never raise
        pass


def _open_writable(folder: Path) -> Store:
    check_not_empty(folder)
    try:
        return diskcache.Cache(str(folder), disk=TextDisk, eviction_policy="none")
    except (sqlite3.Error, OSError) as exc:
        if is_damage(exc):
            raise damaged(folder, exc) from None
        why = cannot_write(exc)
        if why is None:
            raise
        log.debug("%s is %s: opened for reading only", folder, why)
        return ReadOnlyCache(folder, why=why)


def open_cache(folder: str | os.PathLike) -> Store:
    """The store at ``folder`` for reading and writing, opened once per folder and process.

    ``eviction_policy="none"`` (diskcache's default silently evicts entries past 1 GiB).
    A read-only folder or a full disk gives a :class:`ReadOnlyCache` (its ``why`` says
    which); a damaged store raises :class:`~workbench.errors.CacheError`.
    """
    return _handle(Path(folder).expanduser(), False)


def open_reader(folder: str | os.PathLike) -> ReadOnlyCache:
    """The store at ``folder`` for reading only (never writes, never creates the folder)."""
    return _handle(Path(folder).expanduser(), True)


def close_caches(folder: str | os.PathLike | None = None) -> None:
    """Close the open handles (of ``folder``, else all): tests, a forked child, a repair."""
    with _handles_lock:
        for key in list(_handles):
            if folder is None or key[0] == str(Path(folder).expanduser()):
                _close(_handles.pop(key)[0])


# --- the writers' lock: no repair while a run may write -------------------------------------

#: A file in the cache folder that every run which may write holds a shared ``flock`` on,
#: and a repair an exclusive one (released by the system when a process dies).
LOCK_FILE = "writers.lock"


def _lock(folder: Path, *, exclusive: bool) -> int | None:
    """A descriptor of ``folder``'s :data:`LOCK_FILE` holding its lock (``None``: no lock
    can be taken there, e.g. a read-only folder, where nothing is written anyway)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return None
    path = folder / LOCK_FILE
    while True:
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None
        kind = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(descriptor, kind | fcntl.LOCK_NB)
        except BlockingIOError:
            if exclusive:
                os.close(descriptor)
                raise CacheError(
                    f"the LLM cache at {folder} is in use by a run that may write to it (a "
                    "notebook, `workbench run`, a batch job being collected, another "
                    "process): replacing the store now would move the replies it writes "
                    "aside. Let it finish (or stop it), then run this again",
                    folder=str(folder)) from None
            log.warning("the LLM cache at %s is being repaired: waiting for it", folder)
            fcntl.flock(descriptor, kind)
        except OSError:
            os.close(descriptor)
            return None
        try:  # a repair may have moved the folder (and this file) away meanwhile
            if os.path.samestat(os.fstat(descriptor), os.stat(path)):
                return descriptor
        except OSError:
            pass
        os.close(descriptor)


@contextmanager
def writing(folder: str | os.PathLike) -> Iterator[None]:
    """Hold the store's writers' lock, shared, while a run may write to it: a repair
    (:func:`replacing`) refuses meanwhile, and a run started during a repair waits for
    it."""
    descriptor = _lock(Path(folder), exclusive=False)
    try:
        yield
    finally:
        if descriptor is not None:
            os.close(descriptor)


@contextmanager
def replacing(folder: str | os.PathLike) -> Iterator[None]:
    """Hold the store's writers' lock alone, while the store is replaced; raise
    :class:`~workbench.errors.CacheError` at once while a run may write to it."""
    descriptor = _lock(Path(folder), exclusive=True)
    try:
        yield
    finally:
        if descriptor is not None:
            os.close(descriptor)


def writable(store: Store) -> bool:
    return not isinstance(store, ReadOnlyCache)


def require_writable(store: Store) -> None:
    """Raise :class:`~workbench.errors.CacheError` unless ``store`` can take new entries
    (not read-only, and at least :data:`MIN_FREE_BYTES` free on its disk)."""
    if not writable(store):
        raise unwritable(store.directory, store.why or "read-only")
    free = free_bytes(store.directory)
    if free is not None and free < MIN_FREE_BYTES:
        raise unwritable(store.directory, "full")


# --- reading and writing ---------------------------------------------------------------------

_BULK_CHUNK = 500
_LIVE = "raw = 1 AND (expire_time IS NULL OR expire_time > ?)"
#: The chunk's keys as a table ``wanted(i, k)`` (``i``: the key's place in the chunk), and
#: the rows whose value is text kept inline (diskcache's raw mode, no file), as ``get``
#: reads them. Each row names its key by place: the caller's own string comes back, not a
#: copy (its hash is known, and dict lookups compare it by identity).
_INLINE_SQL = ("WITH wanted(i, k) AS (VALUES {}) SELECT wanted.i, value, tag FROM wanted "
               "JOIN Cache ON key = wanted.k WHERE " + _LIVE + " AND mode = " + str(MODE_RAW)
               + " AND filename IS NULL AND typeof(value) = 'text'")
_PRESENT_SQL = "SELECT key FROM Cache WHERE " + _LIVE + " AND key IN ({})"


@functools.lru_cache(maxsize=8)
def _wanted(size: int) -> str:
    return ",".join(f"({i},?)" for i in range(size))


def read_values(store: Store, keys: list[str]) -> dict[str, tuple[Any, Any] | _Missing]:
    """``(value, tag)`` stored under each of ``keys`` (distinct), :data:`MISS` where none.

    A value is text or :class:`Refused`. A damaged store raises
    :class:`~workbench.errors.CacheError`; any other failed read is a miss. The keys
    whose values diskcache keeps in files come last (see :func:`iter_stored`).
    """
    rows: list[tuple[str, str, Any]] = []
    pending: list[str] = []
    for inline, later in _bulk(store, keys):
        rows += inline
        pending += later
    last = set(pending)
    found: dict[str, tuple[Any, Any] | _Missing] = dict.fromkeys(
        [key for key in keys if key not in last] if last else keys, MISS)
    for key, value, tag in rows:
        found[key] = (value, tag)
    for key in pending:
        found[key] = _get(store, key)
    return found


def iter_stored(store: Store, keys: list[str]) -> Iterator[tuple[str, Any, Any]]:
    """``(key, value, tag)`` for each of ``keys`` (distinct) that has a stored value.

    The replay fast path (:func:`read_values` without a slot per miss), read lazily,
    ``_BULK_CHUNK`` keys at a time: a replay checks and decodes each chunk's values
    while they are fresh in the CPU's cache, and never holds all of them at once. A
    value is text or :class:`Refused`; a damaged store raises
    :class:`~workbench.errors.CacheError`; any other failed read is a miss.
    """
    return chain.from_iterable(_stored_chunks(store, keys))


def _stored_chunks(store: Store, keys: list[str]) -> Iterator[list[tuple[str, Any, Any]]]:
    for inline, later in _bulk(store, keys):
        yield inline
        if later:
            yield [(key, *stored) for key in later
                   if (stored := _get(store, key)) is not MISS]


def _bulk(store: Store, keys: list[str]) -> Iterator[tuple[list[tuple[str, str, Any]],
                                                           list[str]]]:
    """Per chunk of ``keys``: the rows ``(key, text, tag)`` whose text is inline in the
    table, and the keys left to read with ``get``.

    diskcache's ``get`` costs one SQL query and its Python bookkeeping per key, which
    dominates a warm run of tens of thousands of requests, so the values kept inline
    in diskcache's documented SQLite table ``Cache`` are selected ``_BULK_CHUNK`` keys
    per query. Anything that query does not answer (values diskcache keeps in files;
    every key from the chunk on when the query cannot be made: another layout) is left
    to the public ``get``; the tests check that both paths agree.
    """
    if len(keys) < 2:
        yield [], list(keys)
        return
    for start in range(0, len(keys), _BULK_CHUNK):
        chunk = keys[start: start + _BULK_CHUNK]
        try:
            now = time.time()
            rows = [(chunk[i], value, tag) for i, value, tag in store._sql(
                _INLINE_SQL.format(_wanted(len(chunk))), (*chunk, now)).fetchall()]
            later: list[str] = []
            if len(rows) < len(chunk):  # misses, or values kept otherwise: which are there?
                inline = {row[0] for row in rows}
                rest = [key for key in chunk if key not in inline]
                later = [key for key, in store._sql(
                    _PRESENT_SQL.format(",".join("?" * len(rest))), (now, *rest)).fetchall()]
        except CacheError:
            raise
        except Exception as exc:  # another layout: every key left through get
            if is_damage(exc):
                raise damaged(store.directory, exc) from None
            yield [], keys[start:]
            return
        yield rows, later


def _get(store: Store, key: str) -> tuple[Any, Any] | _Missing:
    """``(value, tag)`` of ``key`` through the store's public ``get``, :data:`MISS` if none."""
    try:
        value, tag = store.get(key, default=MISS, tag=True)
        return MISS if value is MISS else (value, tag)
    except CacheError:
        raise
    except Exception as exc:  # a failed read is a miss
        if is_damage(exc):
            raise damaged(store.directory, exc) from None
        return MISS


def write(store: Store, key: str, value: str, *, tag: str | None = None) -> bool:
    """Store ``value`` under ``key``; True if written.

    A full disk, a read-only or a damaged store raises
    :class:`~workbench.errors.CacheError` (the run stops once, instead of warning per
    reply); any other failure (e.g. a store locked too long) is logged and the run
    goes on.
    """
    if not writable(store):
        raise unwritable(store.directory, store.why or "read-only")
    try:
        store.set(key, value, tag=tag)
        return True
    except (sqlite3.Error, OSError) as exc:
        if is_damage(exc):
            raise damaged(store.directory, exc) from None
        why = cannot_write(exc)
        if why is not None:
            raise unwritable(store.directory, why) from None
        log.warning("could not write cache entry %s: %s", key[:16], exc)
    except Exception as exc:  # e.g. diskcache.Timeout: the cache can never break a run
        log.warning("could not write cache entry %s: %s", key[:16], exc)
    return False


def checkpoint(store: Store, *, truncate: bool = False) -> None:
    """Move the WAL's pages into ``cache.db`` (after a run that wrote, before an export).

    ``PASSIVE`` never waits for other connections; ``truncate`` waits for them and
    empties the WAL file, so that ``cache.db`` alone holds every entry.
    """
    if not writable(store):
        return
    try:
        store._sql(f"PRAGMA wal_checkpoint({'TRUNCATE' if truncate else 'PASSIVE'})").fetchall()
    except sqlite3.Error as exc:  # a busy store: the next run checkpoints
        log.debug("WAL checkpoint of %s skipped: %s", store.directory, exc)


# --- claims: one sender per request across processes ------------------------------------------


def claim(store: Store, key: str, ttl: float) -> bool:
    """Try to become the sender of ``key`` for ``ttl`` seconds; False if another process is.

    A store that cannot be written raises (as :func:`write`); any other failure
    answers True (the request is sent, as without claims).
    """
    try:
        return bool(store.add(CLAIM_PREFIX + key, f"{_HOST}:{os.getpid()}", expire=ttl))
    except (sqlite3.Error, OSError) as exc:
        why = cannot_write(exc)
        if why is not None:
            raise unwritable(store.directory, why) from None
        return True
    except Exception:  # e.g. diskcache.Timeout: send without a claim
        return True


def extend(store: Store, key: str, ttl: float) -> None:
    """Keep this process's claim on ``key`` alive for another ``ttl`` seconds."""
    try:
        store.touch(CLAIM_PREFIX + key, expire=ttl)
    except Exception:  # the claim then expires: at worst the request is sent twice
        pass


def release(store: Store, key: str) -> None:
    """Give up the claim on ``key`` (after the reply is stored, or on failure)."""
    try:
        store.delete(CLAIM_PREFIX + key)
    except Exception:  # it expires anyway
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def claimed_elsewhere(store: Store, key: str) -> bool:
    """True while another live process holds the claim on ``key``.

    A claim expires on its own; one left by a dead process of this machine (``kill
    -9``) is dropped at once.
    """
    try:
        owner = store.get(CLAIM_PREFIX + key)
        if not isinstance(owner, str):
            return False
        host, _, pid = owner.rpartition(":")
        if host == _HOST and pid.isdigit() and not _alive(int(pid)):
            with store.transact():
                if store.get(CLAIM_PREFIX + key) == owner:
                    store.delete(CLAIM_PREFIX + key)
            return False
        return True
    except Exception:  # cannot tell: stop waiting
        return False
