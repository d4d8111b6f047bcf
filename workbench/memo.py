"""A content-addressed store of derived results: what a rerun would compute again.

A warm rerun of a study replays every LLM call from the reply cache, then spends most of
its time recomputing the same statistics and re-rendering the same figures. This store
keeps such derived results (a study's frames, a figure's files) under a key that is a
SHA-256 digest of *everything they are computed from*, so that a rerun whose inputs are
unchanged reads them instead of computing them, and any change of input is a miss:

* :func:`environment_digest`: the Python version and hash seed, every installed
  distribution and its version, and the bytes of every file of the ``workbench`` package (code, templates,
  published numbers) — any code or dependency change invalidates everything;
* :func:`data_digest`: the bytes of the bundled data folders under ``data/``;
* :func:`path_digest`: the bytes of a file or folder a parameter names;
* what the caller adds (a study's config and the seals of the cache entries it replayed,
  a figure's pickled state; see ``workbench.studies`` and ``workbench.plots``).

Only digests of content decide (within a process a file is read again only when its size
or modification time changed). Entries are files
``<memo dir>/<kind>/<key[:2]>/<key><suffix>`` written atomically; a damaged or missing
file is a miss. The folder is ``data/cache/derived`` (``WORKBENCH_MEMO_DIR``); it is
safe to delete at any time (``make clean-cache`` does), and ``WORKBENCH_MEMO=0`` turns
the store off. The same idea as make's or DVC's up-to-date checks, at the level of a
function's inputs (Mokhov, Mitchell & Peyton Jones, "Build systems à la carte", ICFP 2018:
a "constructive trace" store keyed by the hashes of a task's inputs).

If a file of the ``workbench`` package was modified after this process imported the
package (an edit in JupyterLab), the code in memory may not be the code on disk: the
store is then off for the rest of the process, with one warning. Process state outside
these inputs is not seen (e.g. a jieba user dictionary loaded by hand): use
``WORKBENCH_MEMO=0`` when you change such state.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from workbench import config

log = logging.getLogger("workbench.memo")

MEMO_ENV = "WORKBENCH_MEMO"
MEMO_DIR_ENV = "WORKBENCH_MEMO_DIR"
#: Folders of ``data/`` that hold no input: caches, executed runs, written tables.
WORKING_FOLDERS = frozenset({"cache", "runs", "results"})
_PACKAGE = Path(__file__).resolve().parent

_lock = threading.Lock()
#: (path) -> ((size, mtime_ns), sha256 hex) of files already read in this process.
_file_digests: dict[str, tuple[tuple[int, int], str]] = {}
#: The package as first seen in this process: "paths" (folders, files), their "stats"
#: ((size, mtime_ns) each), "digest", "fresh" (none newer than the import), and "dists".
_code: dict[str, Any] = {}
_warned: set[str] = set()


def _switched_on() -> bool:
    """``WORKBENCH_MEMO`` is not ``0``/``off``/``false``/``no``."""
    return os.environ.get(MEMO_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def enabled() -> bool:
    """Whether the store is on: switched on (``WORKBENCH_MEMO``), and the package source
    has not changed under this process. Ask before making a key; :func:`load` and
    :func:`save` then only look at the switch."""
    return _switched_on() and _code_unchanged()


def memo_dir() -> Path:
    """The store's folder: ``WORKBENCH_MEMO_DIR``, else ``data/cache/derived``."""
    value = os.environ.get(MEMO_DIR_ENV)
    return Path(value).expanduser() if value else config.data_dir() / "cache" / "derived"


# --- digests ----------------------------------------------------------------------------


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes, read once per (size, mtime) in this process."""
    path = os.fspath(path)
    stat = os.stat(path)
    mark = (stat.st_size, stat.st_mtime_ns)
    known = _file_digests.get(path)
    if known is not None and known[0] == mark:
        return known[1]
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    _file_digests[path] = (mark, digest)
    return digest


def _files(folder: Path, skip: Iterable[Path] = ()) -> list[Path]:
    """Every file below ``folder`` (sorted), without ``__pycache__``, ``.pyc`` files and
    the folders in ``skip`` (pruned, never listed)."""
    skipped = {os.path.normcase(os.path.abspath(p)) for p in skip}
    out = []
    for top, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"
                   and os.path.normcase(os.path.abspath(os.path.join(top, d))) not in skipped]
        out += [Path(top, n) for n in names if not n.endswith(".pyc")]
    return sorted(out)


def tree_digest(folder: str | os.PathLike, files: Iterable[Path] | None = None) -> str:
    """SHA-256 over the relative path and byte digest of every file below ``folder``."""
    folder = Path(folder)
    h = hashlib.sha256()
    for path in (_files(folder) if files is None else files):
        h.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        h.update(file_digest(path).encode("ascii") + b"\n")
    return h.hexdigest()


def path_digest(value: str | os.PathLike) -> str | None:
    """Digest of the file or folder ``value`` names; ``None`` when it names neither.

    A file or folder that is there but cannot be read raises ``OSError``: an input left
    out of a key would make a stale result look current.
    """
    try:
        path = Path(value).expanduser()
        is_file, is_dir = path.is_file(), path.is_dir()
    except (OSError, ValueError):  # not a possible path (a NUL, too long): not a file
        return None
    if is_file:
        return "file:" + file_digest(path)
    if is_dir:
        return "tree:" + tree_digest(path)
    return None


def _stats(paths: list[Path]) -> list[tuple[int, int]] | None:
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            return None
        out.append((stat.st_size, stat.st_mtime_ns))
    return out


def _first_look() -> None:
    """Snapshot the package once per process (under ``_lock``): its files' sizes and
    times, its digest, and whether every file predates the import (``config.IMPORTED_NS``:
    a file changed after it may not be the code that runs)."""
    if "stats" in _code:
        return
    files = _files(_PACKAGE)
    folders = sorted({p.parent for p in files} | {_PACKAGE})
    _code["paths"] = folders + files
    _code["stats"] = _stats(_code["paths"])
    try:
        _code["digest"] = tree_digest(_PACKAGE, files)
    except OSError:  # a file went away meanwhile: the code on disk is in flux
        _code["stats"] = None
    _code["fresh"] = _code["stats"] is not None and all(
        m <= config.IMPORTED_NS for _, m in _code["stats"])


def _code_unchanged() -> bool:
    """Whether the package's files are the code this process runs: none modified since
    the package was imported (``config.IMPORTED_NS``), and none since (the same folders —
    a file added or removed changes its folder's mtime — and the same files)."""
    with _lock:
        _first_look()
        if _code["fresh"] and _stats(_code["paths"]) == _code["stats"]:
            return True
    if "code" not in _warned:
        _warned.add("code")
        log.warning("a workbench source file was modified after this process imported the "
                    "package (or carries a future time stamp): the memo of derived results is "
                    "off until the kernel restarts (the code in memory may differ)")
    return False


def _distributions() -> str:
    if "dists" not in _code:
        from importlib import metadata

        names = sorted({(d.metadata["Name"] or "").lower() + "==" + (d.version or "")
                        for d in metadata.distributions()})
        _code["dists"] = hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()
    return _code["dists"]


def environment_digest() -> str:
    """Digest of the code that computes: Python's version and hash seed, the installed
    distributions (names and versions) and the bytes of every file of the ``workbench``
    package (as first seen in this process; :func:`enabled` says whether it still is)."""
    with _lock:
        _first_look()
    return digest({"python": sys.version, "distributions": _distributions(),
                   "workbench": _code.get("digest"),
                   # set order (and so any result that leaks it) follows the hash seed
                   "hash_seed": os.environ.get("PYTHONHASHSEED")})


def data_digest() -> str:
    """Digest of the bundled data: every file in ``data/`` except the working folders
    (:data:`WORKING_FOLDERS`, the memo's and the LLM cache's folders) and hidden entries."""
    folder = config.data_dir()
    if not folder.is_dir():
        return "no-data"
    skip = [folder / name for name in WORKING_FOLDERS] + [memo_dir(), config.cache_dir()]
    files = [p for p in _files(folder, skip)
             if not any(part.startswith(".") for part in p.relative_to(folder).parts)]
    return tree_digest(folder, files)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"cannot digest a {type(value).__name__}: give plain values")


def digest(*parts: Any) -> str:
    """SHA-256 (hex) of plain values (dicts, lists, str, numbers, bools, None, bytes).

    Examples
    --------
    >>> digest({"b": 1, "a": [1.5, None]}) == digest({"a": [1.5, None], "b": 1})
    True
    >>> digest("x") == digest("y")
    False
    """
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, bytes | bytearray | memoryview):
            h.update(b"b" + len(part).to_bytes(8, "big") + bytes(part))
        else:
            text = json.dumps(_plain(part), sort_keys=True, ensure_ascii=False,
                              separators=(",", ":"))
            h.update(b"j" + len(text).to_bytes(8, "big") + text.encode("utf-8"))
    return h.hexdigest()


# --- the store --------------------------------------------------------------------------


def _path(kind: str, key: str, suffix: str) -> Path:
    config.check_name(kind, "memo kind")
    if len(key) < 16 or not all(c in "0123456789abcdef" for c in key):
        raise ValueError(f"memo key {key!r} is not a hex digest")
    return memo_dir() / kind / key[:2] / f"{key}{suffix}"


def load(kind: str, key: str, suffix: str) -> bytes | None:
    """The bytes stored under ``key``, or ``None`` (off, never stored, unreadable)."""
    if not _switched_on():
        return None
    try:
        return _path(kind, key, suffix).read_bytes()
    except OSError:
        return None


def save(kind: str, key: str, suffix: str, data: bytes) -> bool:
    """Store ``data`` under ``key`` (atomically); False when off or not writable (warned
    once: a memo that cannot be written never stops a run)."""
    if not _switched_on():
        return False
    path = _path(kind, key, suffix)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        tmp.replace(path)
        return True
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if "write" not in _warned:
            _warned.add("write")
            log.warning("cannot write the memo of derived results in %s (%s): reruns "
                        "will compute again", memo_dir(), exc)
        return False
