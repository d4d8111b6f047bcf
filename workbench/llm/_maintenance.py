"""Maintenance of the reply store (``_cache.py``), behind ``workbench cache``.

Stats, export and explain check every entry as a replay does (:func:`_entry_of`): a
corrupt one is counted, never exported. Import (of an export, or of a replay file of
replies recorded elsewhere) and export strip secret-bearing fields.

Check and repair read ``replies.db`` by rowid (:func:`_rows`), so a damaged page costs the
entries on it, not the store. A repair never deletes (the old folder is kept as
``<folder>.before-repair-<time>``), and refuses while a run holds the writers' lock
(:func:`writing`).
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing, contextmanager, suppress
from itertools import islice
from pathlib import Path
from typing import Any

from workbench import config
from workbench.errors import CacheError
from workbench.llm import _cache
from workbench.llm._batch import LEDGER_FILE
from workbench.llm._cache import CorruptEntry
from workbench.llm._keys import cache_key, hash_fields, key_fields
from workbench.llm._secrets import strip_entry_secrets
from workbench.llm._types import Request, Usage

log = logging.getLogger("workbench.llm")
fcntl = _cache.fcntl  # None where not POSIX: no locks
_BATCH = 1000
#: A file every run that may write holds a shared ``flock`` on, a repair an exclusive one.
LOCK_FILE = "writers.lock"


def _entry_of(key: str, raw: Any, tag: Any, *, full: bool = False) -> dict[str, Any]:
    """The entry stored as ``raw`` under ``key``, decoded whole, after every check a replay
    makes; :class:`CorruptEntry` if it fails one."""
    _cache.check_entry(key, raw, tag, full=full)
    try:
        entry = _cache.decode_entry(raw)
        _cache.completion_from_entry(entry)
    except Exception as exc:
        raise CorruptEntry(f"malformed entry ({type(exc).__name__}: {str(exc)[:80]})") from None
    if entry["key"] != key:
        raise CorruptEntry("it is the entry of another key")
    return entry


def _entries(store: _cache.Store) -> Iterator[tuple[str, dict | None, str | None]]:
    """Every entry of ``store`` by key, checked: ``(key, entry, None)``, or ``(key, None,
    why)`` for a corrupt one."""
    try:
        rows = store.execute("SELECT key, entry, seal FROM replies ORDER BY key")
        for key, raw, tag in rows:
            if not (isinstance(key, str) and _cache.KEY_FORM.match(key)):
                yield repr(key)[:40], None, "its key is not a cache key"
                continue
            try:
                yield key, _entry_of(key, raw, tag), None
            except CorruptEntry as exc:
                yield key, None, str(exc)
    except sqlite3.DatabaseError as exc:
        if _cache.is_damage(exc):
            raise _cache.damaged(store.directory, exc) from None
        raise


def _folder(path: str | os.PathLike | None) -> Path:
    return Path(config.cache_dir() if path is None else path).expanduser()


def cache_stats(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Counts of the cache, read-only: ``folder, entries, size_bytes, corrupt`` (entries
    that fail their check, counted nowhere else), ``total_cost_usd, by_model`` (model ->
    entries), ``by_backend`` (backend -> entries), ``first``/``last`` timestamps."""
    cache = _cache.open_cache(path, readonly=True)
    (size,), = cache.execute("SELECT page_count * page_size FROM pragma_page_count(), "
                             "pragma_page_size()").fetchall()
    by_model: Counter[str] = Counter()
    by_backend: Counter[str] = Counter()
    cost = 0.0
    n = corrupt = sum(cache.left_out.values())  # rows of an older store not read
    stamps: list[str] = []
    for _, entry, _why in _entries(cache):
        n += 1
        try:
            by_model[entry["request"]["model"]] += 1
            by_backend[entry["backend"]] += 1
            cost += float(entry["cost_usd"])
            stamps.append(entry["timestamp"])
        except Exception:
            corrupt += 1
    return {
        "folder": str(cache.directory),
        "entries": n,
        "size_bytes": size,
        "corrupt": corrupt,
        "total_cost_usd": cost,
        "by_model": dict(sorted(by_model.items())),
        "by_backend": dict(sorted(by_backend.items())),
        "first": min(stamps) if stamps else None,
        "last": max(stamps) if stamps else None,
    }


def _line(entry: Mapping[str, Any]) -> str:
    """One line of an export or replay file."""
    return json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n"


def export_cache(file: str | os.PathLike, *, path: str | os.PathLike | None = None) -> int:
    """Write every sound entry as one JSON object per line (sorted by key); returns the count.

    The WAL is checkpointed first. Corrupt entries are left out and secret-bearing fields
    stripped (an older version may have written some); a warning counts both.
    """
    folder = _folder(path)
    if (folder / _cache.DB_FILE).is_file():
        _cache.checkpoint(_cache.open_cache(folder), truncate=True)
    count = corrupt = stripped = 0
    with open(file, "w", encoding="utf-8") as out:
        for _, entry, _why in _entries(_cache.open_cache(folder, readonly=True)):
            if entry is None:
                corrupt += 1
                continue
            entry, removed = strip_entry_secrets(entry)
            stripped += removed
            out.write(_line(entry))
            count += 1
    if corrupt or stripped:
        log.warning("export of %s: %d corrupt entr%s left out, %d secret field(s) removed",
                    folder, corrupt, "y" if corrupt == 1 else "ies", stripped)
    return count


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
    entry = _cache.make_entry(cache_key(request), request, text=text, logprobs=None,
                              usage=Usage(0, 0), cost_usd=0.0, latency_s=0.0, backend=backend,
                              provider_model=request.model)
    entry["imported_from"] = source
    return entry


_REPLAY_FIELDS = ("model", "messages", "temperature", "text", "source")


def write_replay_file(rows: Iterable[Mapping[str, Any]], file: str | os.PathLike, *,
                      backend: str) -> int:
    """Write replies recorded elsewhere as a file for :func:`import_cache`.

    ``rows`` are mappings with ``model``, ``messages``, ``temperature`` (an optional
    ``sample``, default 0, is the repeat index), ``text`` (the reply, kept verbatim) and
    ``source`` (where it was found): ``frame.to_dict("records")`` of a DataFrame. ``file``
    gets one entry per line (:func:`replay_entry`, checked by :func:`validate_entry`);
    ``backend`` names the provider that served the original calls. Returns the entries
    written: identical requests are written once (the first reply wins).

    Examples
    --------
    >>> import os, tempfile
    >>> rows = [{"model": "gpt-4o", "messages": [{"role": "user", "content": "Rate it."}],
    ...          "temperature": 0.0, "text": "7", "source": "a release"}] * 2
    >>> write_replay_file(rows, os.path.join(tempfile.mkdtemp(), "r.jsonl"), backend="openai")
    1
    """
    written: set[str] = set()
    with open(file, "w", encoding="utf-8") as out:
        for number, row in enumerate(rows):
            if not isinstance(row, Mapping) or not set(_REPLAY_FIELDS) <= row.keys():
                raise ValueError(f"rows[{number}]: expected a mapping with the keys "
                                 f"{', '.join(_REPLAY_FIELDS)}")
            request = Request(row["model"], row["messages"], temperature=row["temperature"],
                              sample=row.get("sample", 0))
            entry = replay_entry(request, row["text"], backend=backend,
                                        source=row["source"])
            key = validate_entry(entry)
            if key not in written:
                written.add(key)
                out.write(_line(entry))
    return len(written)


def validate_entry(entry: Any) -> str:
    """Check one exported entry; returns its key or raises ``ValueError`` saying why."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"expected a JSON object, got {type(entry).__name__}")
    key = entry.get("key")
    if not isinstance(key, str) or not _cache.KEY_FORM.match(key):
        raise ValueError("field 'key': expected a 64-character sha256 hex digest")
    for name in ("request", "response", "usage", "cost_usd", "latency_s", "backend"):
        if name not in entry:
            raise ValueError(f"field {name!r} is missing")
    try:
        request = Request.from_dict(entry["request"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"field 'request': {exc}") from None
    if entry.get("model", request.model) != request.model:
        raise ValueError("field 'model' does not match the request's model")
    if cache_key(request) != key:
        raise ValueError("field 'key' does not match the request (edited, or written by "
                         "another key version)")
    try:
        _cache.completion_from_entry(entry)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed reply fields: {type(exc).__name__}: {exc}") from None
    return key


def _clean(entry: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """``entry`` without secrets (:func:`strip_entry_secrets`), and how many were removed.

    An entry whose ``api_base`` held ``user:password@`` was keyed with them by versions
    before this check: it is keyed again without them (if its key was that hash).
    """
    request = entry.get("request")
    params = request.get("params") if isinstance(request, Mapping) else None
    base = params.get("api_base") if isinstance(params, Mapping) else None
    clean, removed = strip_entry_secrets(entry)
    if isinstance(base, str) and base != clean["request"]["params"]["api_base"]:
        fields = key_fields(Request.from_dict(clean["request"]))
        fields["params"] = {**fields["params"], "api_base": base.rstrip("/")}
        if clean.get("key") == hash_fields(fields):
            clean["key"] = cache_key(Request.from_dict(clean["request"]))
    return clean, removed


def import_cache(file: str | os.PathLike, *, path: str | os.PathLike | None = None,
                 overwrite: bool = False) -> dict[str, int]:
    """Import a file written by :func:`export_cache`, all or nothing.

    Every line is cleaned of secret-bearing fields (:func:`_clean`) and validated
    (:func:`validate_entry`); a bad line raises ``ValueError`` naming the file and line
    number, and nothing is written. Existing entries are kept unless ``overwrite``.
    Returns the counts ``read``, ``imported``, ``skipped`` (already present) and
    ``secrets_removed`` (fields stripped).
    """
    entries: list[tuple[str, dict]] = []
    removed = 0
    with open(file, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                if isinstance(entry, Mapping):
                    entry, n = _clean(entry)
                    removed += n
                key = validate_entry(entry)
            except ValueError as exc:
                raise ValueError(f"{file}, line {number}: {exc}") from None
            entries.append((key, entry))
    folder = _cache.open_cache(path).directory
    imported = skipped = 0
    with writing(folder):  # no repair meanwhile
        cache = _cache.open_cache(folder)
        if entries:
            _cache.require_writable(cache)
        for start in range(0, len(entries), _BATCH):
            with cache.transaction():  # a thousand entries per commit
                for key, entry in entries[start: start + _BATCH]:
                    if not overwrite and cache.get(key) is not None:
                        skipped += 1
                        continue
                    if not _cache.store(cache, entry):
                        raise OSError(f"could not write entry {key[:16]}… to {cache.directory}")
                    imported += 1
        _cache.checkpoint(cache)
    return {"read": len(entries), "imported": imported, "skipped": skipped,
            "secrets_removed": removed}


def clear_cache(path: str | os.PathLike | None = None) -> int:
    """Delete every entry; returns how many there were."""
    cache = _cache.open_cache(path)
    if cache.readonly:
        raise _cache.unwritable(cache.directory, cache.why or "read-only")
    with cache.transaction():
        count = cache.execute("DELETE FROM replies").rowcount
        cache.execute("DELETE FROM claims")
    (Path(cache.directory) / LAST_MISS_FILE).unlink(missing_ok=True)
    return count


def _short(value: Any, width: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def _message_diffs(mine: list, theirs: list) -> list[str]:
    notes = []
    if len(mine) != len(theirs):
        notes.append(f"{len(mine)} messages vs {len(theirs)} cached")
    for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a == b:
            continue
        for part in sorted(set(a) | set(b)):
            if a.get(part) == b.get(part):
                continue
            x, y = str(a.get(part)), str(b.get(part))
            at = len(os.path.commonprefix([x, y]))
            notes.append(f"messages[{i}].{part} differs from character {at}: "
                         f"{_short(x[max(0, at - 20): at + 40])} vs "
                         f"{_short(y[max(0, at - 20): at + 40])}")
    return notes


def _distance(a: str, b: str) -> int:
    """Characters outside the common prefix and suffix of ``a`` and ``b`` (cheap, O(n))."""
    prefix = len(os.path.commonprefix([a, b]))
    suffix = len(os.path.commonprefix([a[prefix:][::-1], b[prefix:][::-1]]))
    return len(a) + len(b) - 2 * (prefix + suffix)


def explain(request: Request | Mapping[str, Any], *,
            path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Why a request misses: the nearest cached request and which fields differ.

    Parameters
    ----------
    request
        A :class:`Request` or its ``to_dict()`` form (e.g. the ``request`` of a
        cache entry, or ``last_miss()["request"]``).

    Returns
    -------
    dict
        ``key``, ``cached`` (bool), ``nearest_key`` (``None`` if the cache is empty),
        ``differences`` (list of ``{"field", "request", "cached"}``) and ``notes``
        (readable lines, e.g. where two message texts start to differ).
    """
    if not isinstance(request, Request):
        request = Request.from_dict(request)
    key = cache_key(request)
    cache = _cache.open_cache(path, readonly=True)
    notes = []
    try:
        if _cache.replay(cache, key) is not None:
            return {"key": key, "cached": True, "nearest_key": key, "differences": [],
                    "notes": []}
    except CorruptEntry as exc:
        notes.append(f"the entry stored under this key is corrupt: {exc}")
    mine = key_fields(request)
    mine_text = json.dumps(mine["messages"], ensure_ascii=False, sort_keys=True)
    best: tuple | None = None
    for other_key, entry, _why in _entries(cache):
        if entry is None:
            continue
        try:
            theirs = key_fields(Request.from_dict(entry["request"]))
        except Exception:
            continue
        fields = sorted(f for f in set(mine) | set(theirs) if mine.get(f) != theirs.get(f))
        closeness = (len(fields), "model" in fields, "messages" in fields,
                     _distance(mine_text, json.dumps(theirs["messages"], ensure_ascii=False,
                                                    sort_keys=True))
                     if "messages" in fields else 0)
        if best is None or closeness < best[0]:
            best = (closeness, other_key, theirs, fields)
    if best is None:
        return {"key": key, "cached": False, "nearest_key": None, "differences": [],
                "notes": notes or ["the cache is empty"]}
    _, other_key, theirs, fields = best
    differences = [{"field": f, "request": mine.get(f), "cached": theirs.get(f)} for f in fields]
    for f in fields:
        if f == "messages":
            notes.extend(_message_diffs(mine["messages"], theirs["messages"]))
        else:
            notes.append(f"{f}: {_short(mine.get(f))} vs {_short(theirs.get(f))} cached")
    return {"key": key, "cached": False, "nearest_key": other_key, "differences": differences,
            "notes": notes}


# --- the writers' lock: no repair while a run may write --------------------------------------

@contextmanager
def writing(folder: str | os.PathLike, *, exclusive: bool = False) -> Iterator[None]:
    """Hold the store's writers' lock (:data:`LOCK_FILE`): shared while a run may write
    (a repair refuses meanwhile, and a run started during a repair waits for it), or
    ``exclusive`` while a repair replaces the store (a
    :class:`~workbench.errors.CacheError` at once while a run may write)."""
    descriptor = _lock(Path(folder), exclusive=exclusive)
    try:
        yield
    finally:
        if descriptor is not None:
            os.close(descriptor)


def _lock(folder: Path, *, exclusive: bool) -> int | None:
    """A descriptor holding the lock (``None``: no lock can be taken there, e.g. a
    read-only folder, where nothing is written anyway); released when a process dies."""
    if fcntl is None:  # not POSIX: no lock
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


# --- check and repair ----------------------------------------------------------------------

_RANGE = 500


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _rows(con: sqlite3.Connection, db_bytes: int, counts: Counter) -> Iterator[tuple]:
    """Every readable row of ``replies``, counting in ``counts`` the ``unreadable`` rowids
    (a damaged page) and a ``table`` that cannot be read. Rows are looked up by rowid:
    on a damaged tree a range scan can silently return nothing, while a lookup still
    finds every row whose page is sound."""
    try:
        (top,), = con.execute("SELECT max(rowid) FROM replies").fetchall()
    except sqlite3.DatabaseError:
        counts["table"] += 1
        return
    top = min(int(top or 0), db_bytes // 50 + 1000)  # a garbled maximum is not scanned
    select = "SELECT key, entry, seal FROM replies WHERE rowid "
    for start in range(1, top + 1, _RANGE):
        rowids = list(range(start, min(start + _RANGE, top + 1)))
        try:
            yield from con.execute(select + f"IN ({','.join('?' * len(rowids))})",
                                   rowids).fetchall()
            continue
        except sqlite3.DatabaseError:
            pass
        for rowid in rowids:
            try:
                yield from con.execute(select + "= ?", (rowid,)).fetchall()
            except sqlite3.DatabaseError:
                counts["unreadable"] += 1


def _salvage(db: Path, counts: Counter, problems: Counter) -> Iterator[tuple[str, str]]:
    """``(key, entry)`` of every sound entry in the file ``db``; the others are counted in
    ``problems`` (why -> entries)."""
    try:
        con = _cache.connect_ro(db)
    except sqlite3.DatabaseError as exc:
        problems[f"cannot open: {exc}"] += 1
        counts["table"] += 1
        return
    with closing(con):
        for key, text, tag in _rows(con, _size(db) or 0, counts):
            if not (isinstance(key, str) and _cache.KEY_FORM.match(key)):
                problems["its key is not a cache key"] += 1
                continue
            try:
                _entry_of(key, text, tag, full=True)
            except CorruptEntry as exc:
                problems[str(exc)] += 1
                continue
            counts["sealed" if tag is not None else "unsealed"] += 1
            yield key, text


def _expected(db: Path) -> int | None:
    """How many entries the store's own count says it held (None if unreadable)."""
    try:
        with closing(_cache.connect_ro(db)) as con:
            return int(con.execute("SELECT replies FROM tally").fetchone()[0])
    except (sqlite3.DatabaseError, ValueError, TypeError):
        return None


def check_cache(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """The health of the store at ``path`` (default: the configured folder); read-only.

    Returns
    -------
    dict
        ``folder``; ``db_bytes`` and ``wal_bytes`` (sizes of ``replies.db`` and its
        write-ahead log: pages in the WAL may not be in ``replies.db`` yet, so copy the
        folder whole); ``integrity`` (SQLite's ``integrity_check`` lines, ``["ok"]``
        when sound); ``entries`` (sound ones), ``sealed``/``unsealed`` (written with a
        seal, or by a version before it: checked by their request's hash),
        ``corrupt`` and ``problems`` (why -> count), ``unreadable`` (rows on damaged
        pages), ``expected`` (the store's own count, None if unreadable), ``missing``
        (``expected`` minus what was found: rows a damaged tree hides) and ``ok``.
    """
    folder = _folder(path)
    report: dict[str, Any] = {
        "folder": str(folder), "db_bytes": None, "wal_bytes": None, "integrity": [],
        "entries": 0, "sealed": 0, "unsealed": 0, "corrupt": 0, "problems": {},
        "unreadable": 0, "expected": None, "missing": None, "ok": False,
    }
    try:
        reader = _cache.open_cache(folder, readonly=True)  # an older store: its copy
    except CacheError as exc:  # an older store that cannot be read at all
        report["integrity"] = [str(exc)]
        return report
    db = reader.db
    report.update(db_bytes=_size(db), wal_bytes=_size(db.with_name(db.name + "-wal")))
    if report["db_bytes"] is None:
        report.update(integrity=[f"no {db.name}: an empty store"], ok=True)
        return report
    if report["db_bytes"] == 0:
        report["integrity"] = [f"{db.name} is empty (0 bytes): everything it held is lost"]
        return report
    try:
        with closing(_cache.connect_ro(db)) as con:
            report["integrity"] = [line for (row,) in con.execute("PRAGMA integrity_check(20)")
                                   for line in str(row).splitlines()][:20]
    except sqlite3.DatabaseError as exc:
        report["integrity"] = [str(exc)]
    counts: Counter[str] = Counter()
    problems: Counter[str] = Counter(reader.left_out)
    report["entries"] = sum(1 for _ in _salvage(db, counts, problems))
    report.update(sealed=counts["sealed"], unsealed=counts["unsealed"],
                  corrupt=sum(problems.values()), problems=dict(problems.most_common()),
                  unreadable=counts["unreadable"] + counts["table"], expected=_expected(db))
    if report["expected"] is not None:
        found = report["entries"] + report["corrupt"] - sum(reader.left_out.values())
        report["missing"] = max(report["expected"] - found, 0)
    report["ok"] = (report["integrity"] == ["ok"] and not report["corrupt"]
                    and not report["unreadable"] and not report["missing"])
    return report


def repair_cache(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Salvage every sound entry of the store at ``path`` into a fresh store in its place.

    The fresh store, every salvaged entry sealed, is built beside the folder, which is
    then renamed ``<folder>.before-repair-<YYYYmmdd-HHMMSS>`` (kept: delete it when
    satisfied). Raises :class:`~workbench.errors.CacheError` at once while a run (in any
    process) may write to the store; a run started meanwhile waits (:func:`writing`).

    Returns
    -------
    dict
        ``folder``, ``backup``, ``db_bytes`` (the old ``replies.db``'s size: 0 or None:
        nothing was there), ``salvaged``, ``corrupt`` and ``problems`` (entries left out,
        and why), ``unreadable`` (rows on damaged pages), ``expected`` (the store's own
        count, None if unreadable) and ``lost`` (``expected - salvaged`` when known).
    """
    folder = _folder(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no cache folder to repair")
    with writing(folder, exclusive=True):  # refused while a run may write to the store
        try:
            return _repair(folder)
        finally:
            _cache.close_caches(folder)


def _repair(folder: Path) -> dict[str, Any]:
    _cache.close_caches(folder)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    fresh = folder.with_name(f"{folder.name}.repairing-{stamp}")
    backup = folder.with_name(f"{folder.name}.before-repair-{stamp}")
    counts: Counter[str] = Counter()
    try:
        source = _cache.open_cache(folder, readonly=True)  # an older store: its copy
    except CacheError as exc:  # an older store that cannot be read at all
        log.warning("%s", exc)
        source = None
    problems: Counter[str] = Counter(source.left_out if source is not None else ())
    db_bytes = _size(source.db) if source is not None else 0
    expected = _expected(source.db) if db_bytes else None
    salvaged = 0
    store = _cache.create(fresh)
    try:
        if db_bytes:
            entries = _salvage(source.db, counts, problems)  # type: ignore[union-attr]
            while batch := list(islice(entries, _RANGE)):
                with store.transaction():  # one transaction per range: fast, and atomic
                    for key, text in batch:
                        store.set(key, text, tag=_cache.seal(text))
                salvaged += len(batch)
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


# --- the last readonly miss, for `workbench cache explain --last` ----------------------------

LAST_MISS_FILE = "last_miss.json"
_last_miss: dict[str, Any] = {}


def record_miss(request: Request, key: str) -> None:
    """Remember the last readonly miss for ``workbench cache explain --last`` (the file is
    private to its owner, mode 600: a prompt may be confidential)."""
    data = {"key": key, "request": request.to_dict()}
    _last_miss.clear()
    _last_miss.update(data)
    with suppress(Exception):  # diagnostics only (e.g. a read-only folder)
        folder = config.cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(folder / LAST_MISS_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                             0o600)
        os.fchmod(descriptor, 0o600)  # also when the file was there before
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, ensure_ascii=False, indent=1))


def last_miss() -> dict[str, Any] | None:
    """The last recorded readonly miss (this process, else the cache folder's file)."""
    if _last_miss:
        return dict(_last_miss)
    try:
        return json.loads((config.cache_dir() / LAST_MISS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
