"""Cache maintenance (stats, export, import, explain, clear) and the ``workbench cache`` CLI."""

from __future__ import annotations

import json

import diskcache
import pytest
import typer
from typer.testing import CliRunner

from workbench import llm_cli
from workbench.errors import CacheMiss
from workbench.llm import (
    Request,
    cache_key,
    cache_stats,
    clear_cache,
    complete,
    complete_many,
    explain,
    export_cache,
    import_cache,
)

SIM = "sim/judge-a"


def msgs(text: str, system: str | None = None) -> list[dict]:
    out = [{"role": "system", "content": system}] if system else []
    return out + [{"role": "user", "content": text}]


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    llm_cli.register(app)
    return app


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
    cache = diskcache.Cache(str(folder))
    return {k: json.loads(cache.get(k)) for k in cache.iterkeys()}


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
    assert import_cache(dump) == {"read": 6, "imported": 6, "skipped": 0}
    assert _raw_entries(empty) == original
    assert import_cache(dump) == {"read": 6, "imported": 0, "skipped": 6}
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
    from workbench.llm import _cache

    cache = _cache.open_cache()
    big = Request(SIM, msgs("x" * 40_000))  # > 32 KB: diskcache keeps the value in a file
    complete(SIM, big.messages)
    cache.set("0" * 64, "corrupt value")
    keys = [cache_key(r) for r in filled] + [cache_key(big), "f" * 64, "0" * 64]
    bulk = _cache.bulk_read(cache, keys)
    assert bulk is not None
    assert cache_key(big) not in bulk  # left to diskcache's own reader
    assert bulk["f" * 64] is None
    for key, value in bulk.items():
        assert value == cache.get(key)
    # the replay path gives the same completions either way
    for key in keys:
        assert _cache.lookup(cache, key, bulk.get(key, False)) == _cache.lookup(cache, key)
    replay = complete_many([*filled, big], progress=False)
    assert all(r.cached for r in replay)


def test_read_reply_handles_foreign_key_order():
    from workbench.llm import _cache

    request = Request(SIM, msgs("order"))
    entry = _cache.make_entry(cache_key(request), request, text="5", logprobs=None,
                              usage=_cache.Usage(1, 1), cost_usd=0.5, latency_s=0.25,
                              backend="sim")
    for raw in (_cache.encode_entry(entry), json.dumps(entry, sort_keys=True),
                json.dumps(entry, indent=2)):
        reply = _cache.read_reply(raw)
        assert _cache.completion_from_entry(reply) == _cache.completion_from_entry(entry)
