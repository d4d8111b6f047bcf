"""A study's results, kept for a rerun whose inputs are all unchanged (``@memoized``).

Every study's ``run`` is decorated. A run's results are a function of (a) its config,
(b) the code and installed packages, (c) the bundled data and any file or folder a
parameter names, and (d) the cache entries of the LLM calls it made — its random
generator is seeded by the config. The memo (:mod:`workbench.memo`) keeps the results
under a digest of (a)–(c), together with the list of cache keys the run requested and a
digest of their entries' seals (d). A later run with the same (a)–(c) reads the seals of
those keys again (one SQL query per 500 keys; no entry is decoded), and only if every
entry is still there with the same seal does it return the kept results instead of
running. Since the requests of a run follow from (a)–(c) and the replies to the earlier
ones, equal seals mean the run would make the same requests, get the same replies and
compute the same frames (the "verifying trace" of Mokhov, Mitchell & Peyton Jones,
"Build systems à la carte", ICFP 2018).

Results are kept only from a run in which no call failed (a failure is never cached, so a
rerun must send it again) and none raised, and only in the ``readwrite`` and
``readonly`` cache modes (``refresh`` and ``off`` call providers by definition). The
kept results are pickles in a local, git-ignored folder written by this process's own
code, never shared or imported (unlike the reply cache, which is JSON text and
checked): delete ``data/cache/derived`` rather than copying it; ``WORKBENCH_MEMO=0``
turns the memo off.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import pickle
from collections.abc import Callable
from typing import Any

import pandas as pd

from workbench import config as settings
from workbench import llm, memo
from workbench.studies._contract import StudyResults

log = logging.getLogger("workbench.studies")

KIND = "results"
#: Config fields that change how a run shows itself, not what it computes.
SESSION_FIELDS = ("progress", "cache_mode")
CACHED = "cached"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def inputs_key(study: str, config: Any) -> str:
    """Digest of what a run computes from besides its LLM replies: the study, its config
    (less :data:`SESSION_FIELDS`), the code and packages, the bundled data, and the bytes
    of every file or folder a string parameter names (relative to the current folder
    or to the project root)."""
    fields = {k: v for k, v in dataclasses.asdict(config).items() if k not in SESSION_FIELDS}
    files = {}
    for text in sorted(set(_strings(fields))):
        if not text or len(text) > 4096:
            continue
        found = {"cwd": memo.path_digest(text), "root": memo.path_digest(settings.root() / text)}
        if any(found.values()):
            files[text] = found
    return memo.digest(KIND, study, fields, files, memo.environment_digest(), memo.data_digest())


def _witness(keys: list[str]) -> str | None:
    """Digest of the seals of ``keys`` (sorted), or None when any has no entry."""
    found = llm.seals(keys)
    if len(found) != len(keys):
        return None
    return memo.digest([found[k] for k in keys])


def _load(study: str, base: str) -> dict[str, Any] | None:
    raw = memo.load(KIND, base, ".json")
    if raw is None:
        return None
    try:
        record = json.loads(raw)
        keys, witness, sha = record["keys"], record["witness"], record["sha256"]
    except (ValueError, KeyError, TypeError):
        return None
    if record.get("study") != study or _witness(keys) != witness:
        return None
    data = memo.load(KIND, memo.digest(base, witness), ".pickle")
    if data is None or hashlib.sha256(data).hexdigest() != sha:
        return None
    try:
        frames = pickle.loads(data)
    except Exception:  # damaged or from another pandas: compute again
        return None
    return {"frames": frames, "n_keys": len(keys)}


def as_replayed(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The frames as a rerun computes them: every reply then comes from the cache, so a
    ``cached`` column is True wherever it has a value (the one column in which a run
    that made calls and a rerun that replays them differ; the tests compare the two)."""
    out = {}
    for name, frame in frames.items():
        if CACHED in frame.columns and not frame[CACHED].isna().all():
            frame = frame.copy()
            column = frame[CACHED]
            frame[CACHED] = column.mask(column.notna(), True).astype(column.dtype)
        out[name] = frame
    return out


def _save(study: str, base: str, results: StudyResults, keys: list[str]) -> None:
    witness = _witness(keys)
    if witness is None:  # an entry vanished meanwhile (cleared, pruned): keep nothing
        return
    data = pickle.dumps(as_replayed(dict(results)), protocol=pickle.HIGHEST_PROTOCOL)
    if memo.save(KIND, memo.digest(base, witness), ".pickle", data):
        record = {"study": study, "witness": witness, "sha256": hashlib.sha256(data).hexdigest(),
                  "keys": keys}
        memo.save(KIND, base, ".json", json.dumps(record).encode("utf-8"))


def memoized(study: str) -> Callable[[Callable[[Any], StudyResults]], Callable[[Any], StudyResults]]:
    """Decorate a study's ``run(config)``: return the kept results when every input is
    unchanged (module docstring), else run and keep them."""

    def decorate(run: Callable[[Any], StudyResults]) -> Callable[[Any], StudyResults]:
        @functools.wraps(run)
        def wrapper(config: Any) -> StudyResults:
            if not memo.enabled() or settings.cache_mode() not in ("readwrite", "readonly"):
                return run(config)
            try:
                base = inputs_key(study, config)
            except TypeError as exc:  # a parameter value that has no digest: just run
                log.debug("%s: no memo (%s)", study, exc)
                return run(config)
            kept = _load(study, base)
            if kept is not None:
                if getattr(config, "progress", False):
                    print(f"{study}: results kept from an earlier run with the same config, "
                          f"code, data and {kept['n_keys']:,} cache entries "
                          "(WORKBENCH_MEMO=0 computes them again)")
                return StudyResults(kept["frames"], config=config)
            with llm.recording() as calls:
                results = run(config)
            if calls.complete:
                _save(study, base, results, sorted(calls.keys))
            return results

        wrapper.uncached = run  # type: ignore[attr-defined]
        return wrapper

    return decorate
