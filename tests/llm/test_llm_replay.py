"""The warm replay path (issue 14, part 3): the direct key text, the bulk reads, the
completions built without the dataclass constructors, the checks on every entry, and an
honest progress report. No test asserts a time."""

from __future__ import annotations

import dataclasses
import gc
import json
import math
from types import SimpleNamespace

import pytest

from workbench.llm import (
    Request,
    _cache,
    _keys,
    cache_key,
    complete_many,
    temporary_settings,
)
from workbench.llm._types import Completion, Usage, build_completion

SIM = "sim/judge-a"


def msgs(text: str) -> list[dict]:
    return [{"role": "system", "content": "Be strict."}, {"role": "user", "content": text}]


def general_key(request) -> str:
    """The key as before the direct text: the fields dict through ``json``."""
    return _keys.hash_fields(_keys.key_fields(request))


# --- the key: the direct text is the general one, byte for byte --------------------------

REQUESTS = [
    Request(SIM, msgs("plain")),
    Request(SIM, msgs("日本語 \u2028 \x00 \x1f \\ \" / \U0001F600 é"), temperature=0.7),
    Request(SIM, msgs("numbers"), temperature=1.0, top_p=0.5, max_tokens=7, seed=-3, sample=4),
    Request(SIM, msgs("tiny and huge"), temperature=1e-7, top_p=1, seed=10**30),
    Request(SIM, msgs("logprobs"), logprobs=True, top_logprobs=3, stop="\n"),
    Request(SIM, msgs("stops"), stop=["a", "\u00e9", "\n\n"]),
    Request(SIM, msgs("format"), response_format={"type": "json_schema", "schema": {
        "b": [1.0, 2.5, None, True], "a": {"maximum": 10.0}}}),
    Request("openai/x", msgs("server"), params={"api_base": "http://u:p@127.0.0.1:9/v1/",
                                                "api_key": "sk-secret", "timeout": 5,
                                                "frequency_penalty": 0.5}),
    Request("openai/x", msgs("secrets only"), params={"api_key": "sk-secret"}),
    Request("openai/x", msgs("nested params"), params={"extra_body": {"b": 1.0, "a": [2.0]},
                                                       "logit_bias": {"5": -1.0}}),
    Request(SIM, [{"role": "user", "content": "named", "name": "alice"}]),
    Request(SIM, [{"content": "keys in the other order", "role": "user"}]),
    Request(SIM, [{"role": "user", "content": [{"type": "text", "text": "parts", "w": 2.0}]}]),
    Request(SIM, [{"role": "assistant", "content": ""}, {"role": "user", "content": "x" * 5000}]),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=range(len(REQUESTS)))
def test_direct_key_text_is_the_general_one(request_):
    try:
        text = _keys._key_text(request_)
    except TypeError:  # content parts: cache_key takes the general path
        assert not isinstance(request_.messages[-1]["content"], str)
    else:
        assert text == _keys._dumps(_keys.key_fields(request_))
    assert cache_key(request_) == general_key(request_)


def test_keys_of_duck_typed_requests_take_the_general_path_when_needed():
    base = dict(model=SIM, messages=msgs("duck"), temperature=1.0, sample=0, max_tokens=None,
                response_format=None, logprobs=False, top_logprobs=None, top_p=None,
                stop=("a", "b"), seed=None, params={})
    for change in ({}, {"sample": 1.0}, {"temperature": True}, {"max_tokens": 3.5},
                   {"messages": [{"role": "user", "content": ("a", 1.0)}]},
                   {"messages": [{"role": "user", "content": "x", 3: "y"}]},
                   {"messages": [{"role": "user", "content": "a lone surrogate \ud83d"}]}):
        duck = SimpleNamespace(**{**base, **change})
        try:
            expected = general_key(duck)
        except (TypeError, ValueError) as exc:
            with pytest.raises(type(exc)):
                cache_key(duck)
        else:
            assert cache_key(duck) == expected, change
    for bad in (math.inf, math.nan):
        with pytest.raises(ValueError, match="non-finite"):
            cache_key(SimpleNamespace(**{**base, "top_p": bad}))


# --- completions built for a replay -------------------------------------------------------

def test_build_completion_sets_every_field_as_the_constructors_do():
    values = {"text": "7", "model": SIM, "cost_usd": 0.25, "latency_s": 1.5, "cached": True,
              "key": "k" * 64, "logprobs": [{"token": "7", "logprob": -0.1}],
              "backend": "sim", "cost_known": False}
    built = build_completion(prompt_tokens=3, completion_tokens=4, **values)
    expected = Completion(usage=Usage(3, 4), **values)
    assert [f.name for f in dataclasses.fields(Completion)] == [
        "text", "model", "usage", "cost_usd", "latency_s", "cached", "key", "logprobs",
        "backend", "cost_known"], "a new field: add it to build_completion"
    for field in dataclasses.fields(Completion):
        assert getattr(built, field.name) == getattr(expected, field.name), field.name
    assert built == expected and built.ok and built.usage.total_tokens == 7
    assert dataclasses.replace(built, text="8").text == "8"
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.text = "8"  # type: ignore[misc]


# --- bulk reads and replays agree with one key at a time -----------------------------------

@pytest.fixture
def stored(_llm_cache, monkeypatch):
    """Keys of 12 cached requests, one kept in a file, one corrupt, and one never stored;
    chunks of 5 keys so that several bulk queries run."""
    monkeypatch.setattr(_cache, "_CHUNK", 5)
    requests = [Request(SIM, msgs(f"bulk {i}"), sample=i % 2) for i in range(10)]
    requests.append(Request(SIM, msgs("y" * 40_000)))  # > 32 KB: a value file
    requests.append(Request(SIM, msgs("to be edited")))
    assert all(r.ok for r in complete_many(requests, progress=False))
    cache = _cache.open_cache()
    edited = cache_key(requests[-1])
    raw, tag = cache.get(edited, tag=True)
    cache.set(edited, raw.replace('"text":"', '"text":"edited ', 1), tag=tag)
    keys = [cache_key(r) for r in requests] + ["f" * 64]
    return cache, keys, edited


def test_rows_agree_with_get(stored):
    cache, keys, _ = stored
    for store in (cache, _cache.open_cache(readonly=True)):
        rows = list(store.rows(keys))
        assert len(rows) == len({key for key, _, _ in rows}) == len(keys) - 1
        assert "f" * 64 not in {key for key, _, _ in rows}
        assert store.get("f" * 64, tag=True) == (None, None)
        for key, value, tag in rows:
            assert store.get(key, tag=True) == (value, tag)


def test_replay_many_checks_every_entry_as_replay_does(stored):
    cache, keys, edited = stored
    for _ in range(2):  # the second time, entries are recognised as checked
        hits, corrupt = _cache.replay_many(cache.rows(keys))
        assert set(corrupt) == {edited} and "seal" in corrupt[edited]
        assert set(hits) == set(keys) - {edited, "f" * 64}
        for key in hits:
            assert hits[key] == _cache.replay(cache, key)
        with pytest.raises(_cache.CorruptEntry):
            _cache.replay(cache, edited)


def test_complete_many_reports_a_corrupt_entry_once_and_sends_it_again(stored, caplog):
    cache, keys, edited = stored
    requests = [Request(SIM, msgs(f"bulk {i}"), sample=i % 2) for i in range(10)]
    requests.append(Request(SIM, msgs("to be edited")))
    with caplog.at_level("WARNING", logger="workbench.llm"):
        out = complete_many(requests + requests, progress=False)
    assert [r.cached for r in out] == ([True] * 10 + [False]) * 2
    assert sum("failed the replay check" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize("enabled", [True, False])
def test_replay_many_leaves_the_garbage_collector_as_it_found_it(stored, enabled):
    cache, keys, _ = stored

    def failing_rows():
        yield from cache.rows(keys[:3])
        raise RuntimeError("the store went away")

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        _cache.replay_many(cache.rows(keys))
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError):
            _cache.replay_many(failing_rows())
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_read_reply_falls_back_for_values_not_in_our_layout():
    entry = _cache.make_entry("k" * 64, Request(SIM, msgs("x")), text="7", logprobs=None,
                              usage=Usage(1, 2), cost_usd=0.0, latency_s=0.5, backend="sim")
    ours = _cache.encode_entry(entry)
    reply = _cache.read_reply(ours)
    for raw in (" " + ours, json.dumps(entry, sort_keys=True), json.dumps(entry, indent=1),
                ours.replace(',"attempts":', ', "attempts":', 1)):
        assert _cache.read_reply(raw)["response"] == reply["response"]
        assert _cache.completion_from_entry(_cache.read_reply(raw)) == \
            _cache.completion_from_entry(reply)


def test_our_writer_puts_the_reply_fields_first_for_the_fast_path(monkeypatch):
    """``encode_entry`` writes the reply fields, then ``"attempts"``: ``read_reply`` decodes
    that prefix alone, in one scan. (A second constant of the same name once reordered the
    written fields and sent every replay down the slow path, 1.7x the cost, with every
    other test green: this guards the layout itself.)"""
    entry = _cache.make_entry("k" * 64, Request(SIM, msgs("x")), text="7", logprobs=None,
                              usage=Usage(1, 2), cost_usd=0.0, latency_s=0.5, backend="sim")
    raw = _cache.encode_entry(entry)
    names = list(json.loads(raw))
    reply_fields = ["key", "model", "backend", "cost_usd", "latency_s", "usage", "response"]
    assert names[:len(reply_fields)] == reply_fields and names[len(reply_fields)] == "attempts"
    scans = []
    original = _cache._scan

    def scan(text, index):
        scans.append((len(text), index))
        return original(text, index)

    monkeypatch.setattr(_cache, "_scan", scan)
    assert _cache.read_reply(raw)["response"]["text"] == "7"
    assert scans == [(raw.find(',"attempts":') + 1, 0)]  # one scan, of the prefix alone


# --- progress: a cached run does not show a bar filled at once -----------------------------

def test_a_fully_cached_run_prints_one_line_and_no_bar(capsys):
    requests = [Request(SIM, msgs(f"progress {i}")) for i in range(6)]
    complete_many(requests[:4], progress=False)
    complete_many(requests, progress=True)  # 4 cached, 2 sent: a bar starting at 4
    err = capsys.readouterr().err
    assert "LLM calls (4 cached)" in err and "6/6" in err
    complete_many(requests + requests[:2], progress=True)
    shown = capsys.readouterr()  # news on stdout: Lab shows stderr as an error block
    assert shown.out.strip() == "LLM calls: 8 replayed from cache" and shown.err == ""
    with temporary_settings(cache_mode="readonly"):
        complete_many([*requests, Request(SIM, msgs("never sent"))], progress=True)
    assert capsys.readouterr().out.strip() == (
        "LLM calls: 6 replayed from cache, 1 not in the cache (readonly mode)")
    complete_many(requests, progress=False)
    assert capsys.readouterr() == ("", "")


def test_bench_replay_reports_per_call_times_and_the_progress_line():
    from workbench.cli.bench import bench_replay

    out = bench_replay(40, repeats=2)
    assert out["n"] == 40 and out["ratio"] > 0
    assert out["bare_us"] > 0 and out["replay_us"] > 0 and out["first_replay_us"] > 0
    assert out["progress"] == "LLM calls: 40 replayed from cache"


# --- bounded memory: the keys known to be checked ------------------------------------------

def test_the_checked_keys_are_bounded_and_every_entry_still_checked(stored, monkeypatch):
    cache, keys, edited = stored
    monkeypatch.setattr(_cache, "CHECKED_MAX", 3)
    _cache._checked.clear()
    for _ in range(2):
        hits, corrupt = _cache.replay_many(cache.rows(keys))
        assert len(_cache._checked) <= 3
        assert set(corrupt) == {edited} and "seal" in corrupt[edited]
        assert set(hits) == set(keys) - {edited, "f" * 64}
    remembered = next(iter(_cache._checked))  # a key remembered, then its entry edited
    raw, tag = cache.get(remembered, tag=True)
    cache.set(remembered, raw.replace('"text":"', '"text":"edited ', 1), tag=tag)
    hits, corrupt = _cache.replay_many(cache.rows(keys))
    assert set(corrupt) == {edited, remembered}


# --- Request's constructor: the dataclass's, all fields set at once ------------------------

def test_request_constructor_takes_the_dataclass_fields():
    import inspect

    names = [f.name for f in dataclasses.fields(Request)]
    parameters = list(inspect.signature(Request).parameters.values())
    assert [p.name for p in parameters] == names
    for field, parameter in zip(dataclasses.fields(Request), parameters, strict=True):
        if field.default is not dataclasses.MISSING:
            assert parameter.default == field.default, field.name
    first, second = Request(SIM, msgs("a")), Request(SIM, msgs("a"))
    assert first.params == {} and first == second and first.params is not second.params
    assert Request(SIM, msgs("a"), 0.0, 0, None, None, False, None, None, None, None, {}) == first
    changed = dataclasses.replace(first, sample=2, params={"timeout": 5})
    assert (changed.sample, dict(changed.params)) == (2, {"timeout": 5})
    assert vars(changed).keys() == set(names)
    with pytest.raises(ValueError, match="'params': expected a mapping"):
        Request(SIM, msgs("a"), params=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.model = "x"  # type: ignore[misc]
