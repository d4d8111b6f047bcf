"""The cache's doors (peek, replay files) and maintenance (stats, export, import, explain,
clear), and the ``workbench cache`` CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from workbench.errors import CacheMiss
from workbench.llm import (
    Request,
    _cache,
    cache_key,
    cache_stats,
    clear_cache,
    complete,
    complete_many,
    explain,
    export_cache,
    import_cache,
    peek,
    replay_entry,
    temporary_settings,
    write_replay_file,
)

SIM = "sim/judge-a"


def msgs(text: str, system: str | None = None) -> list[dict]:
    out = [{"role": "system", "content": system}] if system else []
    return out + [{"role": "user", "content": text}]


@pytest.fixture
def filled(_llm_cache):
    """A cache with 6 entries of two models' worth of requests."""
    requests = [Request(SIM, msgs(f"question {i}", "Be strict."), temperature=1, sample=i % 2)
                for i in range(5)]
    requests.append(Request("sim/judge-b", msgs("other judge")))
    try:
        out = complete_many(requests, progress=False)
    except Exception:  # judge-b may not exist in an engine version: use judge-a only
        requests[-1] = Request(SIM, msgs("other judge"))
        out = complete_many(requests, progress=False)
    assert all(r.ok for r in out)
    return requests


def _raw_entries(folder) -> dict[str, dict]:
    cache = _cache.open_cache(folder, readonly=True)
    return {k: json.loads(raw) for k, raw in cache.execute("SELECT key, entry FROM replies")}


def test_stats_counts_entries_models_and_cost(filled, _llm_cache):
    stats = cache_stats()
    assert stats["entries"] == 6 and stats["corrupt"] == 0
    assert sum(stats["by_model"].values()) == 6 and stats["by_backend"] == {"sim": 6}
    assert stats["total_cost_usd"] == 0.0 and stats["size_bytes"] > 0
    assert stats["folder"] == str(_llm_cache)


def test_export_then_import_into_an_empty_cache_reproduces_every_entry(filled, _llm_cache,
                                                                       tmp_path, monkeypatch):
    original = _raw_entries(_llm_cache)
    dump = tmp_path / "cache.jsonl"
    assert export_cache(dump) == 6
    lines = dump.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and all(json.loads(line)["key"] in original for line in lines)
    empty = tmp_path / "empty"
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(empty))
    assert import_cache(dump) == {"read": 6, "imported": 6, "skipped": 0,
                                  "secrets_removed": 0}
    assert _raw_entries(empty) == original
    assert import_cache(dump) == {"read": 6, "imported": 0, "skipped": 6,
                                  "secrets_removed": 0}
    assert complete(SIM, msgs("question 3", "Be strict."), temperature=1, sample=1).cached


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda e: "not json at all", "line 3"),
    (lambda e: json.dumps({**e, "key": "abc"}), "sha256"),
    (lambda e: json.dumps({**e, "key": "0" * 64}), "does not match"),
    (lambda e: json.dumps({k: v for k, v in e.items() if k != "response"}), "'response'"),
    (lambda e: json.dumps({**e, "request": {**e["request"], "temperature": -1}}), "temperature"),
    (lambda e: json.dumps({**e, "response": {"text": 5}}), "malformed reply"),
])
def test_import_rejects_a_bad_line_naming_it_and_writes_nothing(filled, tmp_path, monkeypatch,
                                                                edit, reason):
    dump = tmp_path / "cache.jsonl"
    export_cache(dump)
    lines = dump.read_text(encoding="utf-8").splitlines()
    lines[2] = edit(json.loads(lines[2]))
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "fresh"))
    with pytest.raises(ValueError, match="line 3") as info:
        import_cache(dump)
    assert reason in str(info.value)
    assert cache_stats()["entries"] == 0


def test_explain_names_the_differing_fields(filled):
    near = Request(SIM, msgs("question 2!", "Be strict."), temperature=1, sample=0)
    report = explain(near)
    assert not report["cached"] and report["key"] == cache_key(near)
    assert report["nearest_key"] == cache_key(filled[2])
    assert [d["field"] for d in report["differences"]] == ["messages"]
    assert any("messages[1].content" in line for line in report["notes"])
    other = explain(Request(SIM, msgs("question 4", "Be strict."), temperature=0.5, sample=0))
    assert [d["field"] for d in other["differences"]] == ["temperature"]
    assert explain(filled[0].to_dict())["cached"]


def test_explain_on_an_empty_cache():
    assert explain(Request(SIM, msgs("x")))["nearest_key"] is None


def test_clear_needs_no_args_in_python_but_a_flag_on_the_cli(filled, app):
    runner = CliRunner()
    refused = runner.invoke(app, ["cache", "clear"])
    assert refused.exit_code == 1 and cache_stats()["entries"] == 6
    done = runner.invoke(app, ["cache", "clear", "--yes"])
    assert done.exit_code == 0 and "deleted 6" in done.output
    assert clear_cache() == 0


def test_cli_stats_export_import_explain(filled, app, tmp_path, monkeypatch, _llm_cache):
    runner = CliRunner()
    result = runner.invoke(app, ["cache", "stats", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["entries"] == 6
    assert "entries     6" in runner.invoke(app, ["cache", "stats"]).output

    dump = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["cache", "export", str(dump)])
    assert result.exit_code == 0 and "exported 6" in result.output
    fresh = tmp_path / "fresh"
    result = runner.invoke(app, ["cache", "import", str(dump), "--dir", str(fresh)])
    assert result.exit_code == 0 and "imported 6 of 6" in result.output
    assert _raw_entries(fresh) == _raw_entries(_llm_cache)

    bad = tmp_path / "bad.jsonl"
    bad.write_text(dump.read_text().replace('"key": "', '"key": "zz', 1))
    result = runner.invoke(app, ["cache", "import", str(bad), "--dir", str(tmp_path / "x")])
    assert result.exit_code == 1 and "line 1" in result.output

    request_file = tmp_path / "request.json"
    changed = Request(SIM, msgs("question 1", "Be strict."), temperature=1, sample=0)
    request_file.write_text(json.dumps(changed.to_dict()))
    result = runner.invoke(app, ["cache", "explain", "--request", str(request_file)])
    assert result.exit_code == 0 and "sample" in result.output


def test_cli_explain_last_readonly_miss(filled, app, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    with pytest.raises(CacheMiss):
        complete(SIM, msgs("question 0", "Be lenient."), temperature=1, sample=0)
    result = CliRunner().invoke(app, ["cache", "explain", "--last", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [d["field"] for d in report["differences"]] == ["messages"]
    assert report["nearest_key"] == cache_key(filled[0])


def test_cli_sim_server_rejects_bad_rates(app):
    result = CliRunner().invoke(app, ["sim-server", "--rate-limit-rate", "1.5"])
    assert result.exit_code == 1 and "rate-limit-rate" in result.output


def test_bulk_read_agrees_with_cache_get(filled, _llm_cache):
    big = Request(SIM, msgs("x" * 40_000))  # > 32 KB: on SQLite's overflow pages
    complete(SIM, big.messages)
    for cache in (_cache.open_cache(), _cache.open_cache(readonly=True)):
        _cache.open_cache().set("0" * 64, "corrupt value")
        keys = [cache_key(r) for r in filled] + [cache_key(big), "f" * 64, "0" * 64]
        bulk = {key: (value, tag) for key, value, tag in cache.rows(keys)}
        assert set(bulk) == set(keys) - {"f" * 64}  # the long value too
        assert cache.get("f" * 64) is None and _cache.replay(cache, "f" * 64) is None
        hits, corrupt = _cache.replay_many(cache.rows(keys))
        assert set(corrupt) == {"0" * 64} and set(hits) == set(keys) - {"f" * 64, "0" * 64}
        for key, value in bulk.items():
            assert cache.get(key, tag=True) == value
            if key != "0" * 64:  # the replay path gives the same completions either way
                assert _cache.replay(cache, key) == hits[key]
        with pytest.raises(_cache.CorruptEntry):
            _cache.replay(cache, "0" * 64)
    replay = complete_many([*filled, big], progress=False)
    assert all(r.cached for r in replay)


def test_read_reply_handles_foreign_key_order():
    request = Request(SIM, msgs("order"))
    entry = _cache.make_entry(cache_key(request), request, text="5", logprobs=None,
                              usage=_cache.Usage(1, 1), cost_usd=0.5, latency_s=0.25,
                              backend="sim")
    for raw in (_cache.encode_entry(entry), json.dumps(entry, sort_keys=True),
                json.dumps(entry, indent=2)):
        reply = _cache.read_reply(raw)
        assert _cache.completion_from_entry(reply) == _cache.completion_from_entry(entry)


# --- peek --------------------------------------------------------------------------------

def test_peek_returns_what_complete_replays(filled):
    for request in filled:
        seen = peek(request)
        replayed = complete_many([request], progress=False)[0]
        assert seen == replayed and seen.cached and seen.key == cache_key(request)
    cold = Request(SIM, msgs("never asked"))
    assert peek(cold) is None
    assert cache_stats()["entries"] == len(filled)  # peek neither calls nor writes


def test_peek_sees_logprobs_usage_cost_and_backend(_llm_cache):
    request = Request(SIM, msgs("with logprobs"), logprobs=True, top_logprobs=2)
    reply = complete_many([request], progress=False)[0]
    seen = peek(request)
    assert seen.logprobs == reply.logprobs and seen.usage == reply.usage
    assert (seen.cost_usd, seen.latency_s, seen.backend) == (reply.cost_usd, reply.latency_s, "sim")


def test_peek_honours_the_cache_mode(filled, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    assert peek(filled[0]) is not None
    for mode in ("refresh", "off"):
        monkeypatch.setenv("WORKBENCH_CACHE_MODE", mode)
        assert peek(filled[0]) is None
        with temporary_settings(cache_mode="readwrite"):  # configure() wins over the environment
            assert peek(filled[0]) is not None


def test_peek_treats_a_corrupt_or_foreign_entry_as_a_miss(filled, _llm_cache):
    cache = _cache.open_cache(_llm_cache)
    cache.set(cache_key(filled[0]), "{not json")
    cache.set(cache_key(filled[1]), cache.get(cache_key(filled[2])))  # another key's entry
    assert peek(filled[0]) is None and peek(filled[1]) is None
    assert peek(filled[2]) is not None


def test_peek_does_not_create_a_cache_folder(tmp_path, monkeypatch):
    folder = tmp_path / "nowhere"
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(folder))
    assert peek(Request(SIM, msgs("x"))) is None and not folder.exists()


# --- replay files --------------------------------------------------------------------------

def test_replay_file_round_trip(tmp_path, monkeypatch):
    rows = [{"model": "gpt-4o", "messages": msgs(f"q {i % 3}"), "temperature": 0.0,
             "text": f"reply {i}", "source": f"release file {i}"} for i in range(4)]
    rows.append({**rows[0], "sample": 1, "text": "second sample"})
    path = tmp_path / "replay.jsonl"
    assert write_replay_file(rows, path, backend="openai") == 4  # q 0 twice: the first wins
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    request = Request("gpt-4o", msgs("q 0"))
    assert entries[0] == {**replay_entry(request, "reply 0", backend="openai",
                                         source="release file 0"),
                          "timestamp": entries[0]["timestamp"]}
    assert entries[0]["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    assert import_cache(path) == {"read": 4, "imported": 4, "skipped": 0,
                                  "secrets_removed": 0}
    first = complete("gpt-4o", msgs("q 0"), temperature=0.0)
    assert first.cached and first.text == "reply 0" and first.backend == "openai"
    assert first.cost_usd == 0.0 and first == peek(request)
    assert complete("gpt-4o", msgs("q 0"), sample=1).text == "second sample"
    with pytest.raises(ValueError, match=r"rows\[0\].*source"):
        write_replay_file([{"model": "gpt-4o", "messages": msgs("q")}], path, backend="openai")


def test_opening_a_store_waits_for_another_process_creating_it(tmp_path):
    """While another connection holds a write on a new ``replies.db`` (a second process
    making the tables), switching it to WAL fails at once with "database is locked",
    without SQLite's busy timeout: the open must wait for it, not fail (seen when several
    processes open one fresh cache folder together)."""
    import sqlite3
    import threading

    from workbench.llm import _cache

    folder = tmp_path / "cache"
    folder.mkdir()
    other = sqlite3.connect(folder / _cache.DB_FILE, isolation_level=None,
                            check_same_thread=False)
    other.execute("CREATE TABLE made (x)")  # the file has its header: no empty-file wait
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE held (x)")
    releaser = threading.Timer(0.3, other.execute, ("COMMIT",))
    releaser.start()
    try:
        store = _cache.create(folder)
    finally:
        releaser.join()
        other.close()
    try:
        assert store.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.execute("PRAGMA user_version").fetchone()[0] == 1
    finally:
        store.close()


def test_a_writable_store_moves_its_wal_into_the_file_every_wal_pages(tmp_path):
    """The writers' connection checkpoints every ``WAL_PAGES`` pages (not SQLite's 1,000:
    fewer, larger checkpoints, each page moved once); a read-only one leaves it alone."""
    from workbench.llm import _cache

    store = _cache.open_cache(tmp_path / "c")
    assert store.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == _cache.WAL_PAGES > 1000
    assert store.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_rows_together_are_the_rows_or_none(tmp_path):
    """``Store.rows_together`` (the lookahead's one row per query) finds what ``rows``
    finds, or gives None where its lengths could not split the texts."""
    from workbench.llm import _cache

    store = _cache.open_cache(tmp_path / "together")
    store.set("a", '{"x": "é ✓"}', tag="s1")
    store.set("b", "{}")  # no seal
    store.set("c", "", tag="")
    keys = ["z", "c", "a", "b", "y"]
    assert sorted(store.rows_together(keys)) == sorted(store.rows(keys)) == [
        ("a", '{"x": "é ✓"}', "s1"), ("b", "{}", None), ("c", "", "")]
    assert store.rows_together(["nothing"]) == store.rows_together([]) == []
    store.set("n", "before\x00after", tag="s")  # length() stops at NUL
    assert store.rows_together(["a", "n"]) is None
    store.set("n", b"bytes", tag="s")  # not text
    assert store.rows_together(["n"]) is None
    store.set("n", "text", tag=b"7")
    assert store.rows_together(["a", "n"]) is None and store.rows_together(["a"])
