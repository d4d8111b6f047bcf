"""``workbench cache check`` and ``workbench cache repair``: a store's health, and a fresh
store salvaged from a damaged one.

Both read the SQLite file read-only and row by row where whole ranges fail
(:func:`_rows`), so a damaged page costs the entries on it, not the store. An entry
is salvaged when its row is readable and it passes the full check of a replay
(:func:`workbench.llm._cache.entry_of`: text, seal, stored key, request hashing to
the key, reply fields). A repair never deletes: the old folder is kept beside the new one as
``<folder>.before-repair-<time>``.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import diskcache

from workbench import config
from workbench.llm import _cache, _store
from workbench.llm._batch import LEDGER_FILE
from workbench.llm._store import DBNAME

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_RANGE = 500
_COLUMNS = "rowid, key, raw, mode, filename, value, tag"


def _folder(path: str | os.PathLike | None) -> Path:
    return Path(config.cache_dir() if path is None else path).expanduser()


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _rows(con: sqlite3.Connection, db_bytes: int, counts: Counter) -> Iterator[tuple]:
    """Every readable row of the ``Cache`` table; ``counts["unreadable"]`` counts the rowids
    whose row could not be read (a damaged page), ``counts["table"]`` a table that
    could not be read at all.

    Rows are looked up by rowid, never scanned: on a damaged tree a range scan can
    silently return nothing, while a lookup still finds every row whose page is sound.
    """
    try:
        (top,), = con.execute("SELECT max(rowid) FROM Cache").fetchall()
    except sqlite3.DatabaseError:
        counts["table"] += 1
        return
    top = min(int(top or 0), db_bytes // 50 + 1000)  # a garbled maximum is not scanned
    for start in range(1, top + 1, _RANGE):
        rowids = list(range(start, min(start + _RANGE, top + 1)))
        try:
            yield from con.execute(f"SELECT {_COLUMNS} FROM Cache WHERE rowid IN "
                                   f"({','.join('?' * len(rowids))})", rowids).fetchall()
            continue
        except sqlite3.DatabaseError:
            pass
        for rowid in rowids:
            try:
                yield from con.execute(f"SELECT {_COLUMNS} FROM Cache WHERE rowid = ?",
                                       (rowid,)).fetchall()
            except sqlite3.DatabaseError:
                counts["unreadable"] += 1


def _entries(folder: Path, counts: Counter, problems: Counter) -> Iterator[tuple[str, str]]:
    """``(key, stored JSON)`` of every sound entry of the store at ``folder``; the others
    are counted in ``problems`` (why -> entries)."""
    disk = _store.TextDisk(str(folder))
    try:
        con = _store.connect_ro(folder / DBNAME)
    except sqlite3.DatabaseError as exc:
        problems[f"cannot open: {exc}"] += 1
        counts["table"] += 1
        return
    try:
        for _, key, raw, mode, filename, value, tag in _rows(con, _size(folder / DBNAME) or 0,
                                                             counts):
            key = disk.get(key, raw)
            if isinstance(key, str) and key.startswith(_store.CLAIM_PREFIX):
                continue
            if not isinstance(key, str) or not _HEX64.match(key):
                problems["its key is not a cache key"] += 1
                continue
            try:
                text = disk.fetch(mode, filename, value, False)
                _cache.entry_of(key, text, tag, full=True)
            except OSError:
                problems["its value file is missing"] += 1
                continue
            except _cache.CorruptEntry as exc:
                problems[str(exc)] += 1
                continue
            counts["sealed" if tag is not None else "unsealed"] += 1
            yield key, text
    finally:
        con.close()


def _expected(folder: Path) -> int | None:
    """How many rows diskcache's own count says the store held (None if unreadable)."""
    try:
        con = _store.connect_ro(folder / DBNAME)
        try:
            (count,), = con.execute("SELECT value FROM Settings WHERE key = 'count'").fetchall()
            (claims,), = con.execute("SELECT count(*) FROM Cache WHERE key LIKE 'claim/%'"
                                     ).fetchall()
            return int(count) - int(claims)
        finally:
            con.close()
    except (sqlite3.DatabaseError, ValueError, TypeError):
        return None


def check_cache(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """The health of the store at ``path`` (default: the configured folder); read-only.

    Returns
    -------
    dict
        ``folder``; ``db_bytes`` and ``wal_bytes`` (sizes of ``cache.db`` and its
        write-ahead log: pages in the WAL may not be in ``cache.db`` yet, so copy the
        folder whole); ``integrity`` (SQLite's ``integrity_check`` lines, ``["ok"]``
        when sound); ``entries`` (sound ones), ``sealed``/``unsealed`` (written with a
        seal, or by a version before it: checked by their request's hash),
        ``corrupt`` and ``problems`` (why -> count), ``unreadable`` (rows on damaged
        pages), ``expected`` (diskcache's own count, None if unreadable), ``missing``
        (``expected`` minus what was found: rows a damaged tree hides) and ``ok``.
    """
    folder = _folder(path)
    db = folder / DBNAME
    report: dict[str, Any] = {
        "folder": str(folder), "db_bytes": _size(db),
        "wal_bytes": _size(db.with_name(DBNAME + "-wal")), "integrity": [], "entries": 0,
        "sealed": 0, "unsealed": 0, "corrupt": 0, "problems": {}, "unreadable": 0,
        "expected": None, "missing": None, "ok": True,
    }
    if report["db_bytes"] is None:
        report["integrity"] = ["no cache.db: an empty store"]
        return report
    if report["db_bytes"] == 0:
        report["integrity"] = ["cache.db is empty (0 bytes): everything it held is lost"]
        report["ok"] = False
        return report
    try:
        con = _store.connect_ro(db)
        try:
            lines = [line for (row,) in con.execute("PRAGMA integrity_check(20)")
                     for line in str(row).splitlines()]
        finally:
            con.close()
        report["integrity"] = lines[:20]
    except sqlite3.DatabaseError as exc:
        report["integrity"] = [str(exc)]
    counts: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    report["entries"] = sum(1 for _ in _entries(folder, counts, problems))
    report.update(sealed=counts["sealed"], unsealed=counts["unsealed"],
                  corrupt=sum(problems.values()), problems=dict(problems.most_common()),
                  unreadable=counts["unreadable"] + counts["table"], expected=_expected(folder))
    if report["expected"] is not None:
        report["missing"] = max(report["expected"] - report["entries"] - report["corrupt"], 0)
    report["ok"] = (report["integrity"] == ["ok"] and not report["corrupt"]
                    and not report["unreadable"] and not report["missing"])
    return report


def repair_cache(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Salvage every sound entry of the store at ``path`` into a fresh store in its place.

    The fresh store is built beside the folder, then the folder is renamed to
    ``<folder>.before-repair-<YYYYmmdd-HHMMSS>`` (kept: delete it when satisfied) and the
    fresh store takes its name. Every salvaged entry is written sealed. A run that may
    write to the store (in any process) makes a repair refuse at once, and a run
    started during a repair waits for it (:func:`workbench.llm._store.replacing`): the
    replies of a run are never written into the store moved aside.

    Returns
    -------
    dict
        ``folder``, ``backup`` (where the old store went), ``db_bytes`` (the old
        ``cache.db``'s size: 0 or None means nothing was there), ``salvaged``, ``corrupt`` and
        ``problems`` (entries left out, and why), ``unreadable`` (rows on damaged
        pages), ``expected`` (what diskcache's count said the store held, None if
        unreadable) and ``lost`` (``expected - salvaged`` when known).

    Raises
    ------
    CacheError
        at once while a run may write to the store (it names the folder).
    """
    folder = _folder(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no cache folder to repair")
    with _store.replacing(folder):  # refused while a run may write to the store
        return _repair(folder)


def _repair(folder: Path) -> dict[str, Any]:
    _store.close_caches(folder)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    fresh = folder.with_name(f"{folder.name}.repairing-{stamp}")
    backup = folder.with_name(f"{folder.name}.before-repair-{stamp}")
    counts: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    db_bytes = _size(folder / DBNAME)
    expected = _expected(folder) if db_bytes else None
    salvaged = 0
    store = diskcache.Cache(str(fresh), disk=_store.TextDisk, eviction_policy="none")
    try:
        if db_bytes:
            entries = _entries(folder, counts, problems)
            while True:
                with store.transact():  # one transaction per range: fast, and atomic
                    batch = 0
                    for key, text in entries:
                        store.set(key, text, tag=_cache.seal(text))
                        batch += 1
                        if batch == _RANGE:
                            break
                salvaged += batch
                if batch < _RANGE:
                    break
        store.close()
        ledger = folder / LEDGER_FILE  # the batch jobs still to collect stay with the cache
        if ledger.exists():
            shutil.copy2(ledger, fresh / LEDGER_FILE)
        folder.rename(backup)
        fresh.rename(folder)
    except BaseException:
        store.close()
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    unreadable = counts["unreadable"] + counts["table"]
    return {
        "folder": str(folder), "backup": str(backup), "db_bytes": db_bytes, "salvaged": salvaged,
        "corrupt": sum(problems.values()), "problems": dict(problems.most_common()),
        "unreadable": unreadable, "expected": expected,
        "lost": None if expected is None else max(expected - salvaged, 0),
    }
