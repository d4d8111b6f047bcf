"""Cache maintenance behind ``workbench cache``: stats, export, import, explain, clear."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from workbench.llm import _cache
from workbench.llm._keys import cache_key, key_fields
from workbench.llm._types import Request

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _entries(cache: Any) -> Iterator[tuple[str, dict | None]]:
    for key in sorted(k for k in cache.iterkeys() if isinstance(k, str)):
        try:
            yield key, _cache.decode_entry(cache.get(key))
        except Exception:  # a corrupt entry is reported, never fatal
            yield key, None


def cache_stats(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Counts of the cache: entries, size, per model and backend, total cost.

    Returns
    -------
    dict
        ``folder, entries, size_bytes, corrupt, total_cost_usd, by_model`` (model ->
        entries), ``by_backend`` (backend -> entries), ``first``/``last`` timestamps.
    """
    cache = _cache.open_cache(path)
    by_model: Counter[str] = Counter()
    by_backend: Counter[str] = Counter()
    cost = 0.0
    corrupt = 0
    stamps: list[str] = []
    n = 0
    for _, entry in _entries(cache):
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
        "size_bytes": int(cache.volume()),
        "corrupt": corrupt,
        "total_cost_usd": cost,
        "by_model": dict(sorted(by_model.items())),
        "by_backend": dict(sorted(by_backend.items())),
        "first": min(stamps) if stamps else None,
        "last": max(stamps) if stamps else None,
    }


def export_cache(file: str | os.PathLike, *, path: str | os.PathLike | None = None) -> int:
    """Write every entry as one JSON object per line (sorted by key); returns the count."""
    cache = _cache.open_cache(path)
    count = 0
    with open(file, "w", encoding="utf-8") as out:
        for key in sorted(k for k in cache.iterkeys() if isinstance(k, str)):
            try:
                entry = _cache.decode_entry(cache.get(key))
            except Exception:  # a corrupt entry is not exported
                continue
            out.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return count


def validate_entry(entry: Any) -> str:
    """Check one exported entry; returns its key or raises ``ValueError`` saying why."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"expected a JSON object, got {type(entry).__name__}")
    key = entry.get("key")
    if not isinstance(key, str) or not _HEX64.match(key):
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


def import_cache(file: str | os.PathLike, *, path: str | os.PathLike | None = None,
                 overwrite: bool = False) -> dict[str, int]:
    """Import a file written by :func:`export_cache`, all or nothing.

    Every line is validated first (JSON, fields, key matching its request); a bad
    line raises ``ValueError`` naming the file and line number, and nothing is
    written. Existing entries are kept unless ``overwrite``.

    Returns
    -------
    dict
        ``read``, ``imported`` and ``skipped`` (already present) counts.
    """
    entries: list[tuple[str, dict]] = []
    with open(file, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key = validate_entry(entry)
            except ValueError as exc:
                raise ValueError(f"{file}, line {number}: {exc}") from None
            entries.append((key, entry))
    cache = _cache.open_cache(path)
    imported = skipped = 0
    for key, entry in entries:
        if not overwrite and key in cache:
            skipped += 1
            continue
        if not _cache.store(cache, entry):
            raise OSError(f"could not write entry {key[:16]}… to {cache.directory}")
        imported += 1
    return {"read": len(entries), "imported": imported, "skipped": skipped}


def clear_cache(path: str | os.PathLike | None = None) -> int:
    """Delete every entry; returns how many there were."""
    cache = _cache.open_cache(path)
    count = len(cache)
    cache.clear()
    last = Path(cache.directory) / _cache.LAST_MISS_FILE
    if last.exists():
        last.unlink()
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
            at = next((j for j, (c, d) in enumerate(zip(x, y, strict=False)) if c != d),
                      min(len(x), len(y)))
            notes.append(f"messages[{i}].{part} differs from character {at}: "
                         f"{_short(x[max(0, at - 20): at + 40])} vs "
                         f"{_short(y[max(0, at - 20): at + 40])}")
    return notes


def _distance(a: str, b: str) -> int:
    """Characters outside the common prefix and suffix of ``a`` and ``b`` (cheap, O(n))."""
    prefix = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        prefix += 1
    suffix = 0
    for x, y in zip(reversed(a[prefix:]), reversed(b[prefix:]), strict=False):
        if x != y:
            break
        suffix += 1
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
    cache = _cache.open_cache(path)
    if key in cache:
        return {"key": key, "cached": True, "nearest_key": key, "differences": [], "notes": []}
    mine = key_fields(request)
    mine_text = json.dumps(mine["messages"], ensure_ascii=False, sort_keys=True)
    best: tuple | None = None
    for other_key, entry in _entries(cache):
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
                "notes": ["the cache is empty"]}
    _, other_key, theirs, fields = best
    differences = [{"field": f, "request": mine.get(f), "cached": theirs.get(f)} for f in fields]
    notes = []
    for f in fields:
        if f == "messages":
            notes.extend(_message_diffs(mine["messages"], theirs["messages"]))
        else:
            notes.append(f"{f}: {_short(mine.get(f))} vs {_short(theirs.get(f))} cached")
    return {"key": key, "cached": False, "nearest_key": other_key, "differences": differences,
            "notes": notes}
