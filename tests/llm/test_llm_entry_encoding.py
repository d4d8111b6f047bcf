"""``encode_entry`` writes exactly the text ``json.dumps(ensure_ascii=False,
separators=(",", ":"))`` wrote (its encoder is now built once): stored entries, their
seals and every fixture stay byte-identical."""

from __future__ import annotations

import json

from workbench.llm import Request, _cache
from workbench.llm._types import Usage


def _old(entry):
    ordered = {name: entry[name] for name in _cache._REPLY_FIELDS if name in entry}
    ordered.setdefault("model", entry["request"]["model"])
    ordered.update((name, value) for name, value in entry.items() if name not in ordered)
    raw = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raw = json.dumps(ordered, ensure_ascii=True, separators=(",", ":"))
    return raw


def test_encode_entry_same_text_as_json_dumps():
    request = Request("sim/judge-a", [{"role": "system", "content": "日本語 ✓ é \"q\" \\ \n\t"},
                                      {"role": "user", "content": "Rate \u2028 this."}],
                      temperature=0.7, sample=2, max_tokens=64,
                      params={"api_base": "http://localhost:1/v1", "timeout": 5.5})
    logprobs = [{"token": "7", "logprob": -0.25, "top_logprobs": [
        {"token": "7", "logprob": -0.25}, {"token": "8", "logprob": -1e-300}]}]
    for text, probs, known in (("7", None, True), ("score: 😀 ünïcode", logprobs, False),
                               ("half an emoji \ud83d", None, True)):
        entry = _cache.make_entry("k" * 64, request, text=text, logprobs=probs,
                                  usage=Usage(12, 3), cost_usd=1.5e-7, latency_s=0.0,
                                  backend="sim", finish_reason="stop", provider_model=None,
                                  attempts=2, cost_known=known)
        entry["batch_id"] = "batch-1"
        entry["extra"] = {"nan": float("nan"), "inf": float("-inf"), "big": 2**80,
                          "tuple": (1, 2.0), "nested": [{"a": None, "b": True}]}
        assert _cache.encode_entry(entry) == _old(entry)
    unpaired = {"key": "k", "request": {"model": "m"}, "response": {"text": "\udc80"}}
    assert _cache.encode_entry(unpaired) == _old(unpaired)


def test_entry_timestamp_is_the_utc_second_datetime_writes():
    import datetime as dt

    for _ in range(5):  # (again if a second ended in between)
        before = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        stamp = _cache._now()
        if dt.datetime.now(dt.UTC).isoformat(timespec="seconds") == before:
            assert stamp == before
            return
    raise AssertionError("the clock never held still for a second")


def test_an_entry_in_stored_order_or_not_encodes_the_same():
    request = Request("sim/judge-a", [{"role": "user", "content": "Rate this."}])
    entry = _cache.make_entry("k" * 64, request, text="7", logprobs=None, usage=Usage(3, 1),
                              cost_usd=0.0, latency_s=0.25, backend="sim")
    assert list(entry)[:len(_cache._REPLY_FIELDS)] == list(_cache._REPLY_FIELDS)
    shuffled = {**{name: entry[name] for name in reversed(_cache._REPLY_FIELDS)}, **entry}
    assert list(shuffled) != list(entry)
    assert _cache.encode_entry(entry) == _cache.encode_entry(shuffled) == _old(entry)
