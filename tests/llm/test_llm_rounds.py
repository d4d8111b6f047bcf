"""Group commit of in-process ``sim/`` calls: the calls sent in one event-loop turn are a
round, answered, recorded and committed in one transaction before any other call
starts. Counted through the store's statements, never timed."""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from workbench.errors import CacheError
from workbench.llm import CallFailure, Request, _cache, complete_many

SIM = "sim/judge-a"


def asks(n: int, tag: str = "round") -> list[Request]:
    return [Request(SIM, [{"role": "user", "content": f"{tag} {i}: rate this."}])
            for i in range(n)]


@pytest.fixture
def commits(monkeypatch) -> list[int]:
    """The replies each committed write transaction of the store held (an INSERT outside
    a transaction commits alone: 1)."""
    sizes: list[int] = []
    held = [0]
    real = _cache.Store.execute

    def execute(self, statement, args=()):
        con = getattr(self.local, "con", None)
        if statement.startswith("INSERT INTO replies"):
            if con is not None and con.in_transaction:
                held[0] += 1
            else:
                sizes.append(1)
        elif statement == "COMMIT" and held[0]:
            sizes.append(held[0])
            held[0] = 0
        elif statement == "ROLLBACK":
            held[0] = 0
        return real(self, statement, args)

    monkeypatch.setattr(_cache.Store, "execute", execute)
    return sizes


def write_lock_free(folder) -> bool:
    """True when another connection can take the store's write lock at once."""
    con = sqlite3.connect(folder / _cache.DB_FILE, timeout=0, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        con.close()


@pytest.mark.parametrize("concurrency", [4, 16])
def test_sim_calls_commit_once_per_round(commits, concurrency, _llm_cache):
    n = 160
    out = complete_many(asks(n), concurrency=concurrency, progress=False)
    assert all(r.ok and not r.cached for r in out)
    assert sum(commits) == n == len(_cache.open_cache(_llm_cache, readonly=True))
    assert len(commits) <= math.ceil(n / concurrency) + 1  # was one commit per reply
    assert max(commits) == concurrency
    assert write_lock_free(_llm_cache)


def test_a_failed_call_in_a_round_is_a_failure_row_the_others_are_stored(
        monkeypatch, commits, _llm_cache):
    from workbench.sim import engine

    real = engine.respond

    def respond(profile, messages, **options):
        if "round 5:" in messages[-1]["content"]:
            raise ValueError("no such prompt")
        if "round 6:" in messages[-1]["content"]:
            return dataclasses.replace(real(profile, messages, **options), text="  ")
        return real(profile, messages, **options)

    monkeypatch.setattr(engine, "respond", respond)
    out = complete_many(asks(12), concurrency=4, progress=False, max_retries=0)
    failed = {i: r for i, r in enumerate(out) if isinstance(r, CallFailure)}
    assert sorted(failed) == [5, 6]
    assert failed[5].error_type == "bad_request" and "no such prompt" in failed[5].message
    assert failed[6].error_type == "empty_reply"
    assert len(_cache.open_cache(_llm_cache, readonly=True)) == 10 == sum(commits)
    assert write_lock_free(_llm_cache)


@pytest.mark.parametrize("statement", ["INSERT INTO replies", "COMMIT"])
def test_a_store_failure_in_a_round_stops_the_run_and_leaves_nothing_open(
        monkeypatch, statement, _llm_cache):
    """A full disk met in the second round, at its second reply (the sixth write) or at
    its commit: the run stops with a CacheError; what was written before the failure is
    committed (a failed commit loses the round), the write lock is free, and the next run
    sends only what is missing."""
    real = _cache.Store.execute
    seen = [0]

    def execute(self, sql, args=()):
        if sql.startswith(statement):
            seen[0] += 1
            if seen[0] == (6 if statement.startswith("INSERT") else 3):  # (2: create())
                raise sqlite3.OperationalError("database or disk is full")
        return real(self, sql, args)

    monkeypatch.setattr(_cache.Store, "execute", execute)
    with pytest.raises(CacheError, match="full"):
        complete_many(asks(12), concurrency=4, progress=False)
    assert write_lock_free(_llm_cache)
    stored = len(_cache.open_cache(_llm_cache, readonly=True))
    monkeypatch.setattr(_cache.Store, "execute", real)
    again = complete_many(asks(12), concurrency=4, progress=False)
    assert all(r.ok for r in again) and sum(r.cached for r in again) == stored
    cached = {i for i, r in enumerate(again) if r.cached}
    kept = {0, 1, 2, 3, 4} if statement.startswith("INSERT") else {0, 1, 2, 3}
    assert kept <= cached and not cached & ({4, 5, 6, 7} - kept), cached


_KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    from workbench.llm import Request, complete_many
    from workbench.sim import engine
    real = engine.respond

    def respond(*args, **kwargs):  # slow enough to be killed mid-run; each answer told
        time.sleep(0.004)
        print("answered", flush=True)
        return real(*args, **kwargs)

    engine.respond = respond
    n, concurrency = int(sys.argv[1]), int(sys.argv[2])
    complete_many([Request("sim/judge-a", [{"role": "user", "content": f"killed {i}"}])
                   for i in range(n)], concurrency=concurrency, progress=False)
""")


@pytest.mark.slow
def test_a_killed_run_keeps_its_committed_rounds_and_the_rerun_sends_the_rest(
        tmp_path, monkeypatch, _llm_cache):
    """SIGKILL mid-run: every committed round is kept, at most the round in progress is
    lost (no round starts before the last is committed), and a rerun answers only the
    missing calls."""
    from workbench.sim import engine

    n, concurrency = 2000, 8  # (8 s of answers: killed long before the end)
    script = tmp_path / "run.py"
    script.write_text(_KILL_SCRIPT)
    child = subprocess.Popen([sys.executable, str(script), str(n), str(concurrency)],
                             env=os.environ.copy(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        try:
            if len(_cache.open_cache(_llm_cache, readonly=True)) >= 5 * concurrency:
                break
        except sqlite3.OperationalError:  # the child is making the store
            pass
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    answered = child.communicate()[0].count("answered")
    assert child.returncode == -signal.SIGKILL
    _cache.close_caches()
    finished = len(_cache.open_cache(_llm_cache, readonly=True))
    assert 5 * concurrency <= finished < n
    assert finished <= answered <= finished + concurrency
    calls = []
    real = engine.respond
    monkeypatch.setattr(engine, "respond", lambda *a, **k: calls.append(1) or real(*a, **k))
    rerun = complete_many([Request(SIM, [{"role": "user", "content": f"killed {i}"}])
                           for i in range(n)], concurrency=concurrency, progress=False)
    assert all(r.ok for r in rerun) and sum(r.cached for r in rerun) == finished
    assert len(calls) == n - finished


def test_a_cancelled_run_keeps_its_committed_rounds_and_leaves_nothing_open(_llm_cache):
    """Cancelled (as a KeyboardInterrupt cancels it) after a few event-loop turns: the
    rounds answered so far are stored whole, the write lock is free, the next run sends
    only the rest."""
    import asyncio

    from workbench.llm import _pipeline, _providers, cache_key
    from workbench.llm._loop import run_sync

    requests = asks(64, "cancel")
    jobs = {cache_key(request): request for request in requests}
    sender = _pipeline._Sender(
        {_providers.route_id(requests[0]): _providers.route(requests[0])},
        slots=dict.fromkeys(jobs, 1), cache=_cache.open_cache(), claims=True,
        bar=_pipeline._progress_bar(64, False), concurrency=4, budget_usd=None, rpm=None,
        timeout=None, max_retries=None, deadline=None)

    async def cancel_soon() -> None:
        task = asyncio.ensure_future(sender.online(jobs))
        for _ in range(8):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run_sync(cancel_soon())
    assert write_lock_free(_llm_cache)
    stored = len(_cache.open_cache(_llm_cache, readonly=True))
    assert 0 < stored < 64 and stored % 4 == 0
    again = complete_many(requests, concurrency=4, progress=False)
    assert all(r.ok for r in again) and sum(r.cached for r in again) == stored
