"""The cache and the call path against hostile and broken inputs (issue 10).

A cache that runs code or replays what it cannot vouch for, a read-only folder, a
full disk, a damaged or truncated store, empty replies, duplicate work across
threads and processes, secrets in imports and URLs, and a host that cannot be
reached: each failure the issue lists is a test here.
"""

from __future__ import annotations

import errno
import functools
import json
import logging
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import diskcache
import pytest
from typer.testing import CliRunner

from workbench.errors import CacheError, ProviderError
from workbench.llm import (
    CallFailure,
    Request,
    _cache,
    _maintenance,
    cache_key,
    cache_stats,
    check_cache,
    complete,
    complete_many,
    explain,
    export_cache,
    peek,
    repair_cache,
    replay_entry,
    temporary_settings,
)
from workbench.llm._keys import hash_fields, key_fields

SIM = "sim/judge-a"
SERVER_MODEL = "openai/sim-judge-a"


def msgs(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def engine_calls(monkeypatch) -> list:
    """Every call that reaches the in-process sim engine."""
    from workbench.sim import engine

    calls: list = []
    real = engine.respond

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "respond", counting)
    return calls


def fill(n: int, prefix: str = "q") -> list[Request]:
    requests = [Request(SIM, msgs(f"{prefix} {i}")) for i in range(n)]
    assert all(r.ok for r in complete_many(requests, progress=False))
    return requests


def sql(folder: Path, statement: str, *args, db: str = "replies.db") -> list:
    """Run one statement on the store's SQLite file from outside (as an attacker would)."""
    con = sqlite3.connect(Path(folder) / db, isolation_level=None)
    try:
        return con.execute(statement, args).fetchall()
    finally:
        con.close()


def stored(folder: Path, key: str) -> tuple[str, str | None]:
    ((value, tag),) = sql(folder, "SELECT entry, seal FROM replies WHERE key = ?", key)
    return value, tag


def put(folder: Path, key: str, value, *, tag=None) -> None:
    sql(folder, "UPDATE replies SET entry = ?, seal = ? WHERE key = ?", value, tag, key)


def older_store(folder: Path, n: int, prefix: str) -> list[Request]:
    """``n`` requests whose replies ``folder`` holds as an older workbench kept them: in
    diskcache's ``cache.db``, sealed in its ``tag`` column."""
    with temporary_settings(cache_dir=folder.with_name(folder.name + "-new")):
        requests = fill(n, prefix)
        new = _cache.open_cache(readonly=True)
        rows = [(cache_key(r), *new.get(cache_key(r), tag=True)) for r in requests]
    with diskcache.Cache(str(folder), eviction_policy="none") as old:
        for key, raw, tag in rows:
            old.set(key, raw, tag=tag)
    return requests


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in ([root] if root.is_file() else root.rglob("*"))
            if p.is_file()]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- never execute a cache ------------------------------------------------------------------

class _Payload:
    """Unpickling it creates ``marker``: proof that a cache value ran code."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def test_pickled_rows_of_an_older_store_never_run(tmp_path, app):
    """An older store (diskcache's ``cache.db``) is read through a text-only ``Disk``:
    its pickled rows are left out, read-only (into a copy) and when moved in."""
    import pickle

    marker = tmp_path / "payload-ran"
    folder = tmp_path / "old"
    requests = older_store(folder, 3, "pickle")
    keys = [cache_key(r) for r in requests]
    payload = pickle.dumps(_Payload(marker))
    old = functools.partial(sql, folder, db="cache.db")
    old("UPDATE Cache SET value = ?, mode = 4 WHERE key = ?", payload, keys[0])  # pickle mode
    name = "ab/cd/" + "e" * 28 + ".val"  # pickle mode, in a value file of diskcache's layout
    (folder / "ab" / "cd").mkdir(parents=True)
    (folder / name).write_bytes(payload)
    old("UPDATE Cache SET value = NULL, mode = 4, filename = ? WHERE key = ?", name, keys[1])
    old("INSERT INTO Cache (key, raw, store_time, access_time, mode, value) "
        "VALUES (?, 0, 0, 0, 1, 'x')", payload)  # a pickled key
    runner = CliRunner()
    with temporary_settings(cache_dir=folder, cache_mode="readonly"):
        assert peek(requests[0]) is None and peek(requests[1]) is None
        stats = cache_stats()
        assert stats["corrupt"] == 3 and stats["entries"] == 4
        assert export_cache(tmp_path / "out.jsonl") == 1
        assert not explain(requests[0])["cached"]
        report = check_cache()
        assert report["corrupt"] == 3 and not report["ok"]
        assert any("pickle" in why for why in report["problems"])
        (tmp_path / "req.json").write_text(json.dumps(requests[0].to_dict()))
        for command in (["stats"], ["export", str(tmp_path / "o.jsonl")], ["check"],
                        ["explain", "--request", str(tmp_path / "req.json")]):
            result = runner.invoke(app, ["cache", *command])
            assert result.exception is None or isinstance(result.exception, SystemExit), command
        out = complete_many(requests, progress=False)
        assert [r.ok for r in out] == [False, False, True]
        assert not (folder / "replies.db").exists()  # read-only: the folder as it was
    with temporary_settings(cache_dir=folder, cache_mode="readwrite"):
        again = complete_many(requests, progress=False)
        assert [r.cached for r in again] == [False, False, True]  # sent again
        assert all(peek(r) is not None for r in requests)
    assert (folder / "cache.db.migrated").exists() and not (folder / "cache.db").exists()
    assert not marker.exists()


def test_an_older_row_pointing_outside_its_folder_is_never_read_nor_deleted(tmp_path):
    folder = tmp_path / "old"
    requests = older_store(folder, 2, "outside")
    keys = [cache_key(r) for r in requests]
    old = functools.partial(sql, folder, db="cache.db")
    ((raw,),) = old("SELECT value FROM Cache WHERE key = ?", keys[0])
    readable = tmp_path / "looks-like-an-entry.json"
    readable.write_text(json.dumps({**json.loads(raw),
                                    "response": {"text": "forged", "logprobs": None}}))
    victim = tmp_path / "victim.txt"
    victim.write_text("a file the cache must not touch")
    old("UPDATE Cache SET value = NULL, mode = 3, filename = ? WHERE key = ?", str(readable),
        keys[0])
    old("UPDATE Cache SET value = NULL, mode = 3, filename = ? WHERE key = ?",
        "../" * 12 + str(victim).lstrip("/"), keys[1])
    with temporary_settings(cache_dir=folder):
        out = complete_many(requests, progress=False)  # both left out: sent again
    assert [r.cached for r in out] == [False, False] and out[0].text != "forged"
    assert readable.exists() and victim.read_text() == "a file the cache must not touch"


# --- replay checks what it replays ----------------------------------------------------------

def _resealed(entry: dict) -> tuple[str, str]:
    raw = _cache.encode_entry(entry)
    return raw, _cache.seal(raw)


def _edit_text(raw: str, tag, other) -> tuple:
    entry = json.loads(raw)
    entry["response"]["text"] = "10"
    return _cache.encode_entry(entry), tag


def _foreign_key_rewritten(raw: str, tag, other) -> tuple:
    entry = json.loads(other)
    entry["key"] = json.loads(raw)["key"]
    return _cache.encode_entry(entry), tag


def _request_edited(raw: str, tag, other) -> tuple:
    entry = json.loads(raw)
    entry["request"]["messages"][0]["content"] += " (edited)"
    return _cache.encode_entry(entry), None


def _foreign_unsealed(raw: str, tag, other) -> tuple:
    entry = json.loads(other)
    entry["key"] = json.loads(raw)["key"]
    return _cache.encode_entry(entry), None


def _text_not_a_string(raw: str, tag, other) -> tuple:
    entry = json.loads(raw)
    entry["response"]["text"] = 10
    return _resealed(entry)


TAMPERING = {
    "reply text edited, seal kept": _edit_text,
    "another request's entry, its key field rewritten, seal kept": _foreign_key_rewritten,
    "request edited, unsealed": _request_edited,
    "another request's entry, its key field rewritten, unsealed": _foreign_unsealed,
    "another request's entry, whole": lambda raw, tag, other: (other, _cache.seal(other)),
    "reply text not a string, resealed": _text_not_a_string,
    "seal replaced": lambda raw, tag, other: (raw, "sha256:" + "0" * 64),
    "not JSON": lambda raw, tag, other: ("{not json", None),
    "JSON but not an entry": lambda raw, tag, other: (json.dumps({"key": "k"}), None),
    "bytes value": lambda raw, tag, other: (raw.encode(), tag),
    "number value": lambda raw, tag, other: (42, None),
}


@pytest.mark.parametrize("edit", list(TAMPERING))
def test_a_tampered_entry_is_a_reported_miss_never_a_replay(edit, _llm_cache, monkeypatch,
                                                            caplog):
    first, other = fill(2, "tamper")
    original = peek(first)
    key = cache_key(first)
    value, tag = TAMPERING[edit](*stored(_llm_cache, key), stored(_llm_cache, cache_key(other))[0])
    put(_llm_cache, key, value, tag=tag)
    _cache._checked.clear()  # as in a fresh process
    assert peek(first) is None
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    with caplog.at_level(logging.WARNING, logger="workbench.llm"):
        (miss,) = complete_many([first], progress=False)
    assert miss.error_type == "cache_miss" and "corrupt entry" in miss.message
    assert "failed the replay check" in caplog.text and "treated as misses" in caplog.text
    assert cache_stats()["corrupt"] == 1
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readwrite")
    (again,) = complete_many([first], progress=False)
    assert not again.cached and again.text == original.text  # sent again, then rewritten
    assert peek(first).text == original.text


def test_an_edit_after_a_first_replay_is_still_seen(_llm_cache):
    (request,) = fill(1, "twice")
    assert peek(request) is not None  # checked once, remembered
    raw, tag = _edit_text(*stored(_llm_cache, cache_key(request)), None)
    put(_llm_cache, cache_key(request), raw, tag=tag)
    assert peek(request) is None


def test_entries_written_now_are_sealed_and_older_ones_still_replay(_llm_cache):
    requests = fill(2, "seal")
    for request in requests:
        raw, tag = stored(_llm_cache, cache_key(request))
        assert tag == _cache.seal(raw)
    put(_llm_cache, cache_key(requests[0]), stored(_llm_cache, cache_key(requests[0]))[0])
    _cache._checked.clear()
    assert peek(requests[0]) is not None  # unsealed (as before this check): request hashed
    report = check_cache()
    assert (report["sealed"], report["unsealed"], report["ok"]) == (1, 1, True)


# --- read-only folders and full disks -----------------------------------------------------

_READONLY_SCRIPT = textwrap.dedent("""
    import json, sys
    from workbench.llm import Request, complete_many
    requests = [Request("sim/judge-a", [{"role": "user", "content": f"ro {i}"}])
                for i in range(int(sys.argv[1]))]
    print(json.dumps([[r.ok, getattr(r, "cached", None), getattr(r, "error_type", None)]
                      for r in complete_many(requests, progress=False)]))
""")


def _read_only_view(folder: Path) -> list[str]:
    """A command prefix under which ``folder`` is read-only, even to root.

    Root ignores file permissions: as root the folder is bind-mounted read-only in a
    private mount namespace (``unshare -m``, as a read-only bind mount of a shared
    cache would be); otherwise ``chmod a-w`` is enough.
    """
    for path in [*folder.rglob("*"), folder]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    if os.geteuid() != 0:
        return []
    mount = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"'
    prefix = ["unshare", "-m", "sh", "-c", mount, "sh", str(folder)]
    probe = subprocess.run([*prefix, "touch", str(folder / "probe")], capture_output=True)
    if shutil.which("unshare") is None or probe.returncode == 0:
        pytest.skip("running as root without a way to make a folder read-only")
    return prefix


def test_readonly_mode_replays_a_read_only_folder(tmp_path):
    """A read-only folder (a shared cache, a bind mount) replays in readonly mode."""
    folder = tmp_path / "shared-cache"
    try:
        with temporary_settings(cache_dir=folder, cache_mode="readwrite"):
            fill(5, "ro")
        _cache.close_caches(folder)
        before = sorted(p.name for p in folder.iterdir())
        prefix = _read_only_view(folder)
        env = {**os.environ, "WORKBENCH_CACHE_DIR": str(folder), "WORKBENCH_CACHE_MODE": "readonly"}
        done = subprocess.run([*prefix, sys.executable, "-c", _READONLY_SCRIPT, "6"], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        results = json.loads(done.stdout.strip().splitlines()[-1])
        assert results == [[True, True, None]] * 5 + [[False, None, "cache_miss"]]
        assert sorted(p.name for p in folder.iterdir()) == before  # nothing written
    finally:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_readonly_mode_opens_the_store_read_only(_llm_cache, monkeypatch):
    requests = fill(3, "ro-open")
    _cache.close_caches()
    data = (_llm_cache / "replies.db").read_bytes()
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    assert all(r.cached for r in complete_many(requests, progress=False))
    with pytest.raises(sqlite3.OperationalError, match="readonly"):  # even as root
        _cache.open_cache(readonly=True).execute("DELETE FROM replies")
    assert (_llm_cache / "replies.db").read_bytes() == data


def _fail_open(monkeypatch, message: str) -> None:
    def refuse(folder):
        raise sqlite3.OperationalError(message)

    monkeypatch.setattr(_cache, "create", refuse)


@pytest.mark.parametrize(("problem", "said"), [
    ("attempt to write a readonly database", "is read-only"),
    ("database or disk is full", "MB free"),
])
def test_an_unwritable_store_replays_and_fails_once_before_any_call(problem, said, _llm_cache,
                                                                    monkeypatch, engine_calls):
    cached = fill(3, "unwritable")
    _cache.close_caches()
    _fail_open(monkeypatch, problem)
    sent = len(engine_calls)
    assert all(r.cached for r in complete_many(cached, progress=False))  # reading still works
    with pytest.raises(CacheError, match=said) as info:
        complete_many([*cached, Request(SIM, msgs("new"))], progress=False)
    assert str(_llm_cache) in str(info.value) and info.value.folder == str(_llm_cache)
    assert len(engine_calls) == sent


def test_a_nearly_full_disk_stops_the_run_before_any_call(_llm_cache, monkeypatch, engine_calls):
    cached = fill(2, "full")
    full = shutil._ntuple_diskusage(10**12, 10**12 - 5 * 2**20, 5 * 2**20)
    monkeypatch.setattr(_cache.shutil, "disk_usage", lambda path: full)
    sent = len(engine_calls)
    assert all(r.cached for r in complete_many(cached, progress=False))
    with pytest.raises(CacheError, match=r"is full \(5\.0 MB free") as info:
        complete_many([Request(SIM, msgs(f"more {i}")) for i in range(50)], progress=False)
    assert str(_llm_cache) in str(info.value)
    assert len(engine_calls) == sent


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_a_disk_filling_up_mid_run_stops_it_with_one_error(_llm_cache, monkeypatch, caplog):
    real_set = _cache.Store.set
    writes = []

    def set_until_full(self, key, value, *args, **kwargs):
        if len(writes) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        writes.append(key)
        return real_set(self, key, value, *args, **kwargs)

    monkeypatch.setattr(_cache.Store, "set", set_until_full)
    requests = [Request(SIM, msgs(f"filling {i}")) for i in range(40)]
    with caplog.at_level(logging.WARNING, logger="workbench.llm"), \
            pytest.raises(CacheError, match="is full") as info:
        complete_many(requests, concurrency=2, progress=False)
    assert str(_llm_cache) in str(info.value)
    assert "could not write" not in caplog.text  # not one warning per reply
    monkeypatch.setattr(_cache.Store, "set", real_set)
    assert sum(r is not None for r in map(peek, requests)) == 3  # finished replies are kept


# --- damaged stores -------------------------------------------------------------------------

def _damage(folder: Path, pages: range) -> None:
    # the WAL emptied first: else a reader takes these pages' last versions from it
    _cache.checkpoint(_cache.open_cache(folder), truncate=True)
    _cache.close_caches()
    db = folder / "replies.db"
    size = sql(folder, "PRAGMA page_size")[0][0]
    with open(db, "r+b") as handle:
        for page in pages:
            handle.seek(page * size + 100)
            handle.write(b"\xa5" * (size - 200))


def test_a_damaged_store_names_its_folder_and_repair_salvages_the_rest(_llm_cache, app):
    requests = fill(300, "damaged")
    _damage(_llm_cache, range(6, 14))  # index roots and table leaves: a silent range scan
    with pytest.raises(CacheError, match="workbench cache repair") as info:
        complete_many(requests, progress=False)
    assert str(_llm_cache) in str(info.value)
    runner = CliRunner()
    stats = runner.invoke(app, ["cache", "stats"])
    assert stats.exit_code == 1 and "is damaged" in stats.output and "Traceback" not in stats.output
    checked = runner.invoke(app, ["cache", "check"])
    assert checked.exit_code == 1 and "workbench cache repair" in checked.output
    report = repair_cache()
    assert report["expected"] == 300 and 0 < report["salvaged"] < 300
    assert report["lost"] == 300 - report["salvaged"]
    assert Path(report["backup"]).joinpath("replies.db").exists()
    assert check_cache()["ok"]
    again = complete_many(requests, progress=False)
    assert all(r.ok for r in again) and sum(r.cached for r in again) == report["salvaged"]


# --- a repair while a run writes (issue 20, item 3) ------------------------------------------

WRITER = textwrap.dedent("""
    import sys
    from workbench.llm import Request, complete, complete_many
    url, n = sys.argv[1], int(sys.argv[2])
    ask = lambda i: Request("openai/sim-judge-a", [{"role": "user", "content": f"live {i}"}],
                            params={"api_base": url})
    if n:  # one run of n requests, one at a time
        complete_many([ask(i) for i in range(n)], progress=False, concurrency=1)
    else:  # a notebook kernel: a call, a wait, another call
        complete_many([ask(0)], progress=False)
        print("first", flush=True)
        sys.stdin.readline()
        complete_many([ask(1)], progress=False)
    print("done", flush=True)
""")


def _live(url: str, i: int) -> Request:
    return Request(SERVER_MODEL, msgs(f"live {i}"), params={"api_base": url})


def _writer(url: str, n: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, url, str(n)], env=os.environ.copy(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_repair_is_refused_while_a_run_writes_and_the_run_loses_nothing(_llm_cache, app):
    from workbench.sim.server import running_server

    with running_server(latency_ms=150.0) as (url, _):
        child = _writer(url, 12)
        try:
            deadline = time.monotonic() + 60
            while sum(peek(_live(url, i)) is not None for i in range(12)) < 2:  # writing now
                assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()
                time.sleep(0.05)
            with pytest.raises(CacheError, match="in use by a run that may write") as info:
                repair_cache()
            assert str(_llm_cache) in str(info.value)
            refused = CliRunner().invoke(app, ["cache", "repair"])
            assert refused.exit_code == 1 and "in use by a run" in refused.output
            out, err = child.communicate(timeout=60)
        finally:
            child.kill()
    assert out.strip() == "done", err
    assert list(_llm_cache.parent.glob(_llm_cache.name + ".before-repair*")) == []
    assert all(peek(_live(url, i)) is not None for i in range(12))  # all in the live store
    assert repair_cache()["salvaged"] == 12  # once the run is over


@pytest.mark.slow
def test_a_process_that_wrote_before_a_repair_writes_into_the_repaired_store(_llm_cache):
    from workbench.sim.server import running_server

    with running_server() as (url, _):
        child = _writer(url, 0)
        try:
            assert child.stdout.readline().strip() == "first", child.stderr.read()
            report = repair_cache()  # between two calls of a kernel: allowed
            child.stdin.write("go\n")
            child.stdin.flush()
            out, err = child.communicate(timeout=60)
        finally:
            child.kill()
    assert out.strip() == "done", err
    assert report["salvaged"] == 1
    assert peek(_live(url, 0)) is not None and peek(_live(url, 1)) is not None
    with temporary_settings(cache_dir=report["backup"]):
        assert peek(_live(url, 1)) is None  # nothing written into the store moved aside


def test_a_run_started_during_a_repair_waits_for_it(_llm_cache):
    fill(1, "before")
    done: list = []
    with _maintenance.writing(_llm_cache, exclusive=True):  # as a repair holds it
        thread = threading.Thread(target=lambda: done.extend(
            complete_many([Request(SIM, msgs("during"))], progress=False)))
        thread.start()
        thread.join(1.0)
        assert thread.is_alive() and not done  # waiting, nothing sent
    thread.join(30)
    assert done and done[0].ok and peek(Request(SIM, msgs("during"))) is not None


@pytest.mark.parametrize("db", ["replies.db", "cache.db"])  # this store, an older one
def test_a_zero_byte_store_is_reported_never_silently_empty(db, _llm_cache, app, monkeypatch):
    requests = fill(4, "zero")
    _cache.close_caches()
    for path in _llm_cache.glob("replies.db*"):
        path.unlink()
    (_llm_cache / db).write_bytes(b"")
    os.utime(_llm_cache / db, (time.time() - 60, time.time() - 60))  # truncated earlier
    for mode in ("readwrite", "readonly"):
        monkeypatch.setenv("WORKBENCH_CACHE_MODE", mode)
        with pytest.raises(CacheError, match=r"0 bytes.*workbench cache repair"):
            complete_many(requests, progress=False)
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readwrite")
    assert not check_cache()["ok"]
    result = CliRunner().invoke(app, ["cache", "repair"])
    assert result.exit_code == 0 and "salvaged    0 entries" in result.output
    assert "lost        everything" in result.output
    assert all(not r.cached for r in complete_many(requests, progress=False))


def test_the_db_alone_holds_every_entry_after_a_run_and_an_export(_llm_cache, tmp_path):
    requests = [Request(SIM, msgs(f"wal {i}")) for i in range(50)]
    complete_many(requests, progress=False)  # the store stays open in this process
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(_llm_cache / "replies.db", copy / "replies.db")  # without its WAL
    assert sql(copy, "SELECT count(*) FROM replies")[0][0] == 50
    export_cache(tmp_path / "all.jsonl")
    assert (_llm_cache / "replies.db-wal").stat().st_size == 0


# --- empty replies --------------------------------------------------------------------------

def test_an_empty_reply_is_a_retried_failure_never_cached(sim_server_factory, sim_stats,
                                                          monkeypatch):
    monkeypatch.setenv("WORKBENCH_RETRY_BACKOFF", "0.002")
    url = sim_server_factory(empty_rate=1.0)
    request = Request(SERVER_MODEL, msgs("say nothing"), params={"api_base": url})
    before = sim_stats(url)["requests"]
    (out,) = complete_many([request], max_retries=2, progress=False)
    assert isinstance(out, CallFailure) and (out.error_type, out.attempts) == ("empty_reply", 3)
    assert sim_stats(url)["requests"] - before == 3
    assert peek(request) is None and cache_stats()["entries"] == 0
    with pytest.raises(ProviderError, match="empty_reply"):
        complete(SERVER_MODEL, msgs("say nothing"), api_base=url, num_retries=0)


# --- duplicate work -------------------------------------------------------------------------

def test_threads_asking_the_same_request_send_it_once(sim_server_factory, sim_stats):
    url = sim_server_factory(latency_ms=300)
    before = sim_stats(url)["requests"]
    replies: list = []
    threads = [threading.Thread(target=lambda: replies.append(
        complete(SERVER_MODEL, msgs("asked by eight threads"), api_base=url))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(replies) == 8 and len({r.text for r in replies}) == 1
    assert sim_stats(url)["requests"] - before == 1


_OVERLAP_SCRIPT = textwrap.dedent("""
    import sys
    from workbench.llm import Request, complete_many
    url, name = sys.argv[1], sys.argv[2]
    texts = [f"shared {i}" for i in range(30)] + [f"{name} own {i}" for i in range(10)]
    requests = [Request("openai/sim-judge-a", [{"role": "user", "content": t}],
                        params={"api_base": url}) for t in texts]
    out = complete_many(requests, concurrency=8, progress=False)
    print(sum(r.ok for r in out))
""")


@pytest.mark.slow
def test_two_processes_sharing_a_store_rarely_send_the_same_request(sim_server_factory,
                                                                   sim_stats, tmp_path):
    url = sim_server_factory(latency_ms=200)
    before = sim_stats(url)["requests"]
    processes = [subprocess.Popen([sys.executable, "-c", _OVERLAP_SCRIPT, url, name],
                                  env=os.environ.copy(), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for name in "ab"]
    outputs = [process.communicate(timeout=180) for process in processes]
    assert [out.strip().splitlines()[-1:] for out, _ in outputs] == [["40"], ["40"]], outputs
    sent = sim_stats(url)["requests"] - before
    assert 50 <= sent <= 55, sent  # 30 shared + 2 x 10 own; without claims: 80


# --- secrets ------------------------------------------------------------------------------

SECRETS = ("sk-TOP-0123456789secret", "sk-PARAM-9876543210secret", "HEADER-bearer-secret",
           "TOKEN-secret-value", "META-password-value", "pa55-URL-secret", "REQ-header-secret")


def _old_export_line() -> str:
    """A line as versions before this check exported it: secrets inside, URL credentials
    in ``api_base`` and in the key."""
    base = "http://alice:pa55-URL-secret@10.0.0.9:8000/v1"
    request = Request("openai/served-model", msgs("imported with secrets"),
                      params={"api_base": base})
    entry = replay_entry(request, "7", backend="openai", source="an old export")
    fields = key_fields(request)
    fields["params"]["api_base"] = base
    entry["key"] = hash_fields(fields)
    entry["api_key"] = "sk-TOP-0123456789secret"
    entry["access_token"] = "TOKEN-secret-value"
    entry["headers"] = {"Authorization": "Bearer HEADER-bearer-secret"}
    entry["request"]["extra_headers"] = {"X-Api-Key": "REQ-header-secret"}
    entry["request"]["params"] = {"api_base": base, "api_key": "sk-PARAM-9876543210secret",
                                  "extra_headers": {"Authorization": "HEADER-bearer-secret"},
                                  "metadata": {"run": "x", "password": "META-password-value"}}
    return json.dumps(entry)


def test_import_strips_every_secret_and_export_holds_none(_llm_cache, tmp_path, monkeypatch,
                                                          app):
    source = tmp_path / "old.jsonl"
    source.write_text(_old_export_line() + "\n")
    result = CliRunner().invoke(app, ["cache", "import", str(source)])
    assert result.exit_code == 0, result.output
    assert "imported 1 of 1 entries (0 already present, 8 secret field(s) removed)" in result.output
    export_cache(tmp_path / "export.jsonl")
    found = [(path, secret) for path in files_under(_llm_cache, tmp_path / "export.jsonl")
             for secret in SECRETS if secret.encode() in path.read_bytes()]
    assert found == []  # secrets found on disk: 0
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    hit = complete("openai/served-model", msgs("imported with secrets"),
                   api_base="http://alice:pa55-URL-secret@10.0.0.9:8000/v1")
    assert hit.cached and hit.text == "7"  # keyed without the URL credentials


def test_url_credentials_are_never_stored_hashed_or_shown(sim_server, _llm_cache, monkeypatch):
    secret = "s3cret-URL-PASS"
    base = f"http://bob:{secret}@10.1.2.3:8000/v1"
    reply = complete(SIM, msgs("with a password"), api_base=base)  # sim ignores api_base
    plain = Request(SIM, msgs("with a password"), params={"api_base": "http://10.1.2.3:8000/v1"})
    assert reply.key == cache_key(plain) and peek(plain).text == reply.text
    request = Request(SIM, msgs("x"), params={"api_base": base})
    assert secret not in repr(request) and secret not in json.dumps(request.to_dict())
    served = sim_server.replace("http://", f"http://bob:{secret}@")
    for path in ("litellm", "direct"):  # both send them as Basic auth, not in the URL
        monkeypatch.setenv("WORKBENCH_HTTP_PATH", path)
        (sent,) = complete_many([Request(SERVER_MODEL, msgs(f"basic auth {path}"),
                                         params={"api_base": served})],
                                max_retries=0, progress=False)
        assert sent.ok and secret not in repr(sent)
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    with pytest.raises(Exception, match="cache miss"):
        complete(SIM, msgs("not cached"), api_base=base)
    last = _llm_cache / _maintenance.LAST_MISS_FILE
    assert last.stat().st_mode & 0o777 == 0o600
    assert [p for p in files_under(_llm_cache) if secret.encode() in p.read_bytes()] == []


_NESTED_SECRETS = {
    "base_url": ({"base_url": "http://u:BASEURL-pw-secret@10.0.0.7:8000/v1"},
                 {"base_url": "http://10.0.0.7:8000/v1"}, "BASEURL-pw-secret"),
    "extra_body": ({"extra_body": {"api_key": "sk-NESTED-0123456789secret", "top_k": 5}},
                   {"extra_body": {"top_k": 5}}, "sk-NESTED-0123456789secret"),
    "headers": ({"extra_body": {"top_k": 5, "headers": {"Authorization": "Bearer HDR-secret-1"}},
                 "headers": {"Authorization": "Bearer HDR-secret-2"}},
                {"extra_body": {"top_k": 5}}, "HDR-secret-"),
    "proxies": ({"proxies": {"https": "http://px:PROXY-pw-secret@proxy:3128"}},
                {"proxies": {"https": "http://proxy:3128"}}, "PROXY-pw-secret"),
}


@pytest.mark.parametrize("case", sorted(_NESTED_SECRETS))
def test_nested_secrets_and_url_passwords_never_reach_disk_key_or_log(case, _llm_cache,
                                                                      monkeypatch, caplog):
    params, clean, secret = _NESTED_SECRETS[case]
    request = Request(SIM, msgs(f"nested {case}"), params=params)
    with caplog.at_level(logging.DEBUG):
        (reply,) = complete_many([request], progress=False)  # the sim ignores these params
        assert reply.ok and reply.key == cache_key(Request(SIM, msgs(f"nested {case}"),
                                                           params=clean))
        assert secret not in json.dumps(key_fields(request), ensure_ascii=False)
        assert secret not in json.dumps(request.to_dict())
        monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
        with pytest.raises(Exception, match="cache miss"):
            complete(SIM, msgs("not cached"), **params)
    assert (_llm_cache / _maintenance.LAST_MISS_FILE).is_file()
    assert [p for p in files_under(_llm_cache) if secret.encode() in p.read_bytes()] == []
    assert secret not in caplog.text


# --- a host that cannot be reached ----------------------------------------------------------

def test_a_dead_host_fails_fast_names_the_host_and_trips_the_breaker(monkeypatch, caplog,
                                                                     capsys):
    from workbench.llm._providers import get_litellm

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    port = free_port()  # nothing listens there
    base = f"http://127.0.0.1:{port}/v1"
    requests = [Request("openai/gpt-4o-mini", msgs(f"dead {i}"), params={"api_base": base})
                for i in range(40)]
    get_litellm()  # the import is not what is timed
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="workbench.llm"):
        out = complete_many(requests, progress=True)
    assert time.monotonic() - started < 10  # was 42 s: 5 attempts each behind backoff
    kinds = Counter(r.error_type for r in out)
    assert set(kinds) == {"connection_error", "not_run"}, kinds
    assert all(f"127.0.0.1:{port}" in r.message for r in out)
    assert next(r for r in out if r.error_type == "connection_error").message.startswith(
        f"could not reach 127.0.0.1:{port}")
    warnings = [r for r in caplog.records if "consecutive connection failures" in r.getMessage()]
    assert len(warnings) == 1 and f"{kinds['not_run']} request(s)" in warnings[0].getMessage()
    assert "failed=40" in capsys.readouterr().err


def test_the_breaker_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    base = f"http://127.0.0.1:{free_port()}/v1"
    requests = [Request("openai/gpt-4o-mini", msgs(f"off {i}"), params={"api_base": base})
                for i in range(8)]
    with temporary_settings(circuit_breaker=0, max_retries=0):
        out = complete_many(requests, concurrency=2, progress=False)
    assert [r.error_type for r in out] == ["connection_error"] * 8
