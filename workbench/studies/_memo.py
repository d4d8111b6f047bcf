"""A study's results, kept for a rerun whose inputs are all unchanged (``@memoized``).

Every study's ``run`` is decorated. A run's results are a function of (a) its config,
(b) the code and installed packages, (c) the bundled data, the simulator's known items
and any file or folder a parameter names, and (d) the cache entries of the LLM calls it
made — its random generator is seeded by the config. The memo (:mod:`workbench.memo`)
keeps the results under a digest of (a)–(c), together with the cache keys of the calls
made in this process during the run and a digest of their entries' seals (d), read in
the same read as a replay of those entries that must give back exactly the replies the
run got (else an entry changed during the run, and nothing is kept). A later run with
the same (a)–(c) reads the seals of those keys again (one SQL query per 500 keys; no
entry is decoded), and only if every entry is still there with the same seal does it
return the kept results instead of running. Since the requests of a run follow from
(a)–(c) and the replies to the earlier ones, equal seals mean the run would make the
same requests, get the same replies and compute the same frames (the "verifying trace"
of Mokhov, Mitchell & Peyton Jones, "Build systems à la carte", ICFP 2018). Kept frames
are exactly those of the run that kept them, bookkeeping included: their ``cached``
column says whether *that* run replayed the call (the one column in which a rerun that
recomputes differs; the tests compare both).

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
import os
import pickle
from collections.abc import Callable
from typing import Any

from workbench import config as settings
from workbench import llm, memo
from workbench.sim import registry
from workbench.studies._contract import StudyResults

log = logging.getLogger("workbench.studies")

KIND = "results"
#: Config fields that change how a run shows itself, not what it computes.
SESSION_FIELDS = ("progress", "cache_mode")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str | os.PathLike):
        return [os.fspath(value)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def inputs_key(study: str, config: Any) -> str:
    """Digest of what a run computes from besides its LLM replies: the study, its config
    (less :data:`SESSION_FIELDS`), the code and packages, the bundled data, the items the
    simulator knows, and the bytes of every file or folder a text or path parameter names
    (relative to the current folder or to the project root). ``OSError`` when a named
    file is there but cannot be read; ``TypeError`` for a value that has no digest."""
    fields = {k: v for k, v in dataclasses.asdict(config).items() if k not in SESSION_FIELDS}
    files = {}
    for text in sorted(set(_strings(fields))):
        if not text or len(text) > 4096:
            continue
        found = {"cwd": memo.path_digest(text), "root": memo.path_digest(settings.root() / text)}
        if any(found.values()):
            files[text] = found
    return memo.digest(KIND, study, fields, files, memo.environment_digest(), memo.data_digest(),
                       registry.fingerprint())


def _witness(keys: list[str], seals: dict[str, str]) -> str | None:
    """Digest of the seals of ``keys`` (sorted), or None when any has no entry."""
    if len(seals) != len(keys):
        return None
    return memo.digest([seals[k] for k in keys])


def _load(study: str, base: str) -> dict[str, Any] | None:
    raw = memo.load(KIND, base, ".json")
    if raw is None:
        return None
    try:
        record = json.loads(raw)
        keys, witness, sha = record["keys"], record["witness"], record["sha256"]
    except (ValueError, KeyError, TypeError):
        return None
    if record.get("study") != study or _witness(keys, llm.seals(keys)) != witness:
        return None
    data = memo.load(KIND, memo.digest(base, witness), ".pickle")
    if data is None or hashlib.sha256(data).hexdigest() != sha:
        return None
    try:
        frames = pickle.loads(data)
    except Exception:  # damaged or from another pandas: compute again
        return None
    return {"frames": frames, "n_keys": len(keys)}


def _save(study: str, base: str, results: StudyResults, calls: llm.Recording) -> None:
    """Keep ``results`` if every reply the run got is still what its key's entry holds."""
    keys = sorted(calls.keys)
    if set(calls.replies) != calls.keys:
        return
    found = llm.sealed_replies(keys)
    witness = _witness(keys, {k: sealed for k, (sealed, _) in found.items()})
    if witness is None or not all(llm.same_reply(found[k][1], calls.replies[k]) for k in keys):
        return  # an entry changed or vanished during the run: this run's replies are gone
    data = pickle.dumps(dict(results), protocol=pickle.HIGHEST_PROTOCOL)
    if memo.save(KIND, memo.digest(base, witness), ".pickle", data):
        record = {"study": study, "witness": witness, "sha256": hashlib.sha256(data).hexdigest(),
                  "keys": keys}
        memo.save(KIND, base, ".json", json.dumps(record).encode("utf-8"))


def memoized(study: str) -> Callable[[Callable[[Any], StudyResults]], Callable[[Any], StudyResults]]:
    """Decorate a study's ``run(config)``: return the kept results when every input is
    unchanged (module docstring), else run and keep them. A problem of the memo itself
    (an unreadable input, a full disk, a frame that cannot be pickled) is logged and the
    study runs as without it."""

    def decorate(run: Callable[[Any], StudyResults]) -> Callable[[Any], StudyResults]:
        @functools.wraps(run)
        def wrapper(config: Any) -> StudyResults:
            if (not memo.enabled() or settings.cache_mode() not in ("readwrite", "readonly")
                    or llm.recording_active()):  # inside another kept computation: just run
                return run(config)
            try:
                base = inputs_key(study, config)
                kept = _load(study, base)
            except Exception as exc:
                log.warning("%s: memo of derived results not used (%s: %s)", study,
                            type(exc).__name__, exc)
                return run(config)
            if kept is not None:
                if getattr(config, "progress", False):
                    print(f"{study}: results kept from an earlier run with the same config, "
                          f"code, data and {kept['n_keys']:,} cache entries "
                          "(WORKBENCH_MEMO=0 computes them again)")
                return StudyResults(kept["frames"], config=config)
            with llm.recording() as calls:
                results = run(config)
            if calls.complete:
                try:
                    _save(study, base, results, calls)
                except Exception as exc:
                    log.warning("%s: results not kept (%s: %s)", study, type(exc).__name__, exc)
            return results

        wrapper.uncached = run  # type: ignore[attr-defined]
        return wrapper

    return decorate
