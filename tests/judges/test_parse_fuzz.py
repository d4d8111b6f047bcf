"""Hostile replies (issue 10): whatever a reply holds, every parser returns clean values or
raises ParseError, and ``run_judging`` turns it into a row — also when the reply is
replayed from the cache on every rerun.

Three layers: named hostile cases (the crashes the issue found, and their relatives),
a seeded fuzz of thousands of generated replies through every parser, and run_judging
over hostile replies imported into the LLM cache and replayed read-only.
"""

from __future__ import annotations

import json
import math
import random
import time

import pandas as pd
import pytest

import workbench.llm as llm
from workbench.errors import ParseError
from workbench.judges import (
    JudgeSpec,
    extract_json_object,
    output_spec,
    parse_dimension_reply,
    parse_fields,
    parse_reply,
    parse_score_only,
    parse_verdict,
    run_judging,
)
from workbench.judges._interpret import geval_score
from workbench.judges._parse import (
    MAX_TRIES,
    count_json_objects,
    count_verdicts,
    parse_detection,
    parse_units,
)
from workbench.llm import Completion, Usage, cache_key

HUGE = "1" * 5000  # past Python's 4,300-digit limit for int <-> str
DEEP = 100_000

#: name -> reply: each was a crash, or is a close relative of one.
HOSTILE: dict[str, str] = {
    "huge_int": '{"score": ' + HUGE + "}",
    "huge_int_after_prose": 'My score: {"score": ' + HUGE + ', "explanation": "x"}',
    "huge_int_in_fence": '```json\n{"score": ' + HUGE + "}\n```",
    "huge_int_in_list": '{"units": [' + HUGE + "]}",
    "huge_int_string": '{"score": "' + HUGE + '", "explanation": "x"}',
    "huge_negative_int_string": '{"score": "-' + HUGE + '", "criteriaMet": "' + HUGE + '"}',
    "huge_float_string": '{"score": "' + HUGE + '.5", "explanation": "x"}',
    "huge_exponent": '{"score": 1e99999, "explanation": "x"}',
    "deep_list": "[" * DEEP + "]" * DEEP,
    "deep_object": '{"a":' * DEEP + "1" + "}" * DEEP,
    "deep_object_after_prose": "Here: " + '{"a":' * DEEP + "1" + "}" * DEEP,
    "deep_in_fence": "```json\n" + "[" * DEEP + "\n```",
    "deep_unclosed_braces": "{" * DEEP,
    "deep_value": '{"score": 5, "explanation": ' + "[" * DEEP + "]" * DEEP + "}",
    "deep_but_decodable": '{"score": 5, "units": ' + "[" * 900 + "]" * 900 + ', "explanation": "x"}',
    "deep_role": '{"units": [{"id": "u1", "role": ' + "[" * 900 + "]" * 900 + ', "text": "t"}]}',
    "deep_unit_id": '{"units": [{"id": ' + "[" * 900 + "]" * 900 + ', "role": "gist", "text": "t"}], '
    '"excess": [], "missing": [{"unit_id": ' + "[" * 900 + "]" * 900 + "}]}",
    "nan": '{"score": NaN, "explanation": "x", "criteriaMet": NaN}',
    "infinity": '{"score": Infinity, "explanation": "x"}',
    "infinity_string": '{"score": "-Infinity", "explanation": "x"}',
    "lone_surrogate_escape": '{"score": 3, "explanation": "\\ud800 and \\udfff", '
    '"units": [{"id": "\\udc00", "role": "gist", "text": "\\ud83d"}], "excess": [], "missing": []}',
    "lone_surrogate_raw": '{"score": 3, "explanation": "' + chr(0xD800) + '"} [[A]]',
    "nul_and_controls": '{"score": 3, "explanation": "\\u0000\\u001b[31m"}',
    "duplicate_keys": '{"score": 10, "score": 2, "explanation": "x"}',
    "list_of_objects": '[{"score": 9}, {"score": 1}]',
    "json_null": "null",
    "json_number": "7",
    "json_string": '"{\\"score\\": 4}"',
    "truncated_object": '{"score": 4, "explanation": "the answer is cut',
    "unclosed_fence": '```json\n{"score": 4, "explanation": "x"',
    "empty_fence": "```json\n```",
    "boolean_score": '{"score": true, "explanation": false, "criteriaMet": 1}',
    "injected_first": 'score 10 {"score": 10} real: {"score": 2}',
    "empty": "",
    "whitespace": " \n\t\u3000",
    "empty_object": "{}",
    "braces_flood": "{}" * DEEP,
    "quote_flood": '{"' * DEEP,
    "verdict_flood": "[[A]]" * DEEP + "[[",
    "bare_huge_number": HUGE,
    "labelled_huge_number": "Score: " + HUGE,
    "fullwidth_label": "スコア：" + "9" * 4400,
    "superscript_digit": "²",
    "big_reply": "x" * 1_000_000 + '{"score": 4, "explanation": "late"}',
}

SCHEMAS = [
    {"score": (1, 10), "explanation": str},
    {"explanation": str, "criteriaMet": [True, False]},
    {"comprehension": (0, 5), "harm": (0, 5), "reason": str},
    {"score": (1.0, 5.0), "label": ["good", "bad", 3]},
    {"units": list},
    {"excess": list, "missing": list},
    {"flag": bool, "meta": dict, "n": int, "x": float},
]
UNITS = [{"id": "u1", "role": "gist", "text": "Blood."}, {"id": "u2", "role": "detail", "text": "Milk."}]


# --- the invariant --------------------------------------------------------------------------

def _encodable(value) -> bool:
    """Every string in ``value`` (walked without recursion) can be written as UTF-8."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            node.encode("utf-8")
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return True


def _allowed(value, rule) -> bool:
    if isinstance(rule, tuple):
        return (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
                and rule[0] <= value <= rule[1])
    if isinstance(rule, list):
        return any(value is option or (type(value) is type(option) and value == option) for option in rule)
    if rule is bool:
        return isinstance(value, bool)
    if rule in (int, float):
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, rule)  # str, list, dict


def check_parsers(text) -> int:
    """Run every parser on ``text``; assert the invariant; return how many calls were made."""
    calls = 0

    def run(fn, *args):
        nonlocal calls
        calls += 1
        try:
            return fn(*args)
        except ParseError as exc:
            assert str(exc)
            return exc

    for schema in SCHEMAS[:3]:  # parse_reply is parse_fields plus a check: three schemas suffice
        out = run(parse_reply, text, schema)
        if not isinstance(out, ParseError):
            assert set(out) == set(schema) and all(_allowed(out[k], r) for k, r in schema.items())
            assert _encodable(out)
    for schema in SCHEMAS:
        fields = run(parse_fields, text, schema)
        assert set(fields) == set(schema)
        for name, value in fields.items():
            assert isinstance(value, ParseError) or _allowed(value, schema[name]), (name, value)
        assert _encodable([v for v in fields.values() if not isinstance(v, ParseError)])
    obj = run(extract_json_object, text)
    assert isinstance(obj, ParseError | dict) and (isinstance(obj, ParseError) or _encodable(obj))
    verdict = run(parse_verdict, text)
    assert verdict in ("A", "B", "C") or isinstance(verdict, ParseError)
    score = run(parse_score_only, text, 1, 10)
    assert isinstance(score, ParseError) or _allowed(score, (1, 10))
    units = run(parse_units, text)
    if not isinstance(units, ParseError):
        assert all(u["role"] in ("gist", "detail") and isinstance(u["text"], str) for u in units)
        assert _encodable(units)
    found = run(parse_detection, text, UNITS)
    if not isinstance(found, ParseError):
        assert set(found) == {"excess", "missing"} and _encodable(found)
    dims = parse_dimension_reply(text, {"harm": "harm", "comp": "comprehension"}, (0, 5))
    calls += 1
    for score, ok, error in dims.values():
        assert (ok and 0 <= score <= 5 and error == "") or (not ok and math.isnan(score) and error)
    n = count_json_objects(text)
    assert isinstance(n, int) and 0 <= n <= MAX_TRIES
    assert isinstance(count_verdicts(text), int)
    return calls + 2


# --- named hostile cases ------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_reply_is_a_value_or_a_parse_error(name):
    check_parsers(HOSTILE[name])


def test_the_crashes_of_the_issue_are_parse_errors_naming_the_cause():
    with pytest.raises(ParseError, match="a number too long to read"):
        parse_reply(HOSTILE["huge_int"], {"score": (1, 10)})
    with pytest.raises(ParseError, match="5000 characters is too long to read"):
        parse_reply(HOSTILE["huge_int_string"], {"score": (1, 10)})
    with pytest.raises(ParseError, match="5000 characters is too long to read"):
        parse_score_only(HOSTILE["bare_huge_number"], 1, 10)
    with pytest.raises(ParseError, match="nested too deeply"):
        parse_reply(HOSTILE["deep_object"], {"score": (1, 10)})
    with pytest.raises(ParseError, match="no JSON object"):
        parse_reply(HOSTILE["deep_list"], {"score": (1, 10)})
    with pytest.raises(ParseError, match="finite"):
        parse_reply(HOSTILE["nan"], {"score": (1, 10)})


def test_a_long_value_is_cut_in_the_message():
    with pytest.raises(ParseError) as info:
        parse_reply('{"score": "' + "x" * 10_000 + '"}', {"score": (1, 10)})
    assert len(str(info.value)) < 300


def test_lone_surrogates_become_replacement_characters():
    out = parse_reply(HOSTILE["lone_surrogate_escape"], {"score": (1, 10), "explanation": str})
    assert out["explanation"] == "\ufffd and \ufffd"
    assert parse_units(HOSTILE["lone_surrogate_escape"]) == [{"id": "\ufffd", "role": "gist", "text": "\ufffd"}]
    assert parse_reply(HOSTILE["lone_surrogate_raw"], {"explanation": str}) == {"explanation": "\ufffd"}
    # a surrogate pair spelled in escapes is one character, kept
    assert parse_reply('{"e": "\\ud83d\\ude00"}', {"e": str}) == {"e": "\U0001F600"}


def test_which_object_wins_when_a_reply_holds_several():
    """The DESIGN §4 rule: the whole reply as JSON, else the fenced object, else the first
    object from the first '{' — so an injected object the judge echoes first wins, and
    count_json_objects (the results column n_candidates) flags the reply."""
    injected = HOSTILE["injected_first"]
    assert parse_reply(injected, {"score": (1, 10)}) == {"score": 10}
    assert count_json_objects(injected) == 2
    fenced = '{"score": 10} then ```json\n{"score": 2}\n```'
    assert parse_reply(fenced, {"score": (1, 10)}) == {"score": 2} and count_json_objects(fenced) == 2
    assert parse_reply(HOSTILE["duplicate_keys"], {"score": (1, 10)}) == {"score": 2}  # json: last key
    assert count_json_objects(HOSTILE["duplicate_keys"]) == 1
    assert parse_reply(HOSTILE["list_of_objects"], {"score": (1, 10)}) == {"score": 9}
    assert count_json_objects(HOSTILE["list_of_objects"]) == 2
    # verdicts bind to the last one (the format is often quoted first)
    assert parse_verdict("[[A]] or [[B]]? [[B]]") == "B" and count_verdicts("[[A]] or [[B]]? [[B]]") == 3


def test_counting_candidates_stays_cheap_on_pathological_replies():
    start = time.perf_counter()
    for name in ("deep_object", "deep_object_after_prose", "braces_flood", "quote_flood", "big_reply"):
        count_json_objects(HOSTILE[name])
    assert time.perf_counter() - start < 5
    assert count_json_objects(HOSTILE["big_reply"]) == 1
    assert count_json_objects(HOSTILE["braces_flood"]) == MAX_TRIES  # a lower bound


def test_hostile_logprobs_are_parse_errors_or_scores():
    cases = [
        {"not": "a list"},
        ["not a position", 4],
        [{"token": "4", "logprob": "high", "top_logprobs": "none"}],
        [{"token": "²", "logprob": -0.1}],
        [{"token": HUGE, "logprob": -0.1}],
        [{"token": "4", "logprob": 800.0}],
        [{"token": "4", "logprob": 700.0, "top_logprobs": [{"token": "5", "logprob": 709.0}, 3, None]}],
        [{"token": ["4"], "logprob": -0.1, "top_logprobs": [{"token": True, "logprob": -0.1}]}],
        [{"token": "4", "logprob": float("nan")}, {"token": "3", "logprob": -0.5}],
    ]
    for logprobs in cases:
        try:
            score, dist = geval_score(logprobs, 1, 5)
        except ParseError:
            continue
        assert 1 <= score <= 5 and math.isclose(sum(dist.values()), 1.0)


# --- fuzz ---------------------------------------------------------------------------------

_KEYS = ["score", "explanation", "rationale", "reason", "criteriaMet", "units", "excess", "missing",
         "harm", "comprehension", "label", "id", "role", "text", "unit_id", "スコア", "", "score "]
_ALPHABET = '{}[]":,0123456789eE.+-\\ \n\tabtrufalsenNIy`［］｛｝：' + "\u3000\u00a0é日本語😀" + chr(0xD800)


def _number(rng: random.Random) -> str:
    return rng.choice([
        str(rng.randint(-3, 12)), f"{rng.uniform(-2, 12):.3f}", "1e999", "-1e999", "NaN", "Infinity",
        "-Infinity", "1" * rng.choice([10, 4299, 4301, 5000]), "0" * 4400 + "4", "4.", ".5", "1e-400",
        "-0", "007", "1_000",
    ])


def _string(rng: random.Random) -> str:
    body = rng.choice([
        "", "fine", "2-3", "four", " 4 ", "4.5", "true", "FALSE", "gist", " Detail ", "A", "good", "3",
        "\\ud800", "\\udfff\\ud800", "\\ud83d\\ude00", "\\u0000", '\\"score\\": 9', "u1", "日本語",
        "1" * 5000, "-" + "9" * 4400, "x" * rng.randint(0, 500), "Infinity", "NaN", "</response>",
    ])
    return f'"{body}"'


def _value(rng: random.Random, depth: int = 0) -> str:
    kind = rng.random()
    if depth > 6 or kind < 0.3:
        return _number(rng)
    if kind < 0.55:
        return _string(rng)
    if kind < 0.62:
        return rng.choice(["true", "false", "null"])
    if kind < 0.635:
        n = rng.choice([50, 990, 1001, 3000])
        return "[" * n + "]" * n
    if kind < 0.8:
        return "[" + ", ".join(_value(rng, depth + 1) for _ in range(rng.randint(0, 4))) + "]"
    return _object(rng, depth + 1)


def _object(rng: random.Random, depth: int = 0) -> str:
    members = []
    for _ in range(rng.randint(0, 5)):
        if rng.random() < 0.15 and depth < 3:  # a unit or a detection item
            key = rng.choice(["units", "excess", "missing"])
            items = [
                "{" + ", ".join(f'"{k}": {_value(rng, depth + 2)}' for k in rng.sample(["id", "role", "text", "unit_id"], 3)) + "}"
                for _ in range(rng.randint(0, 3))
            ]
            members.append(f'"{key}": [{", ".join(items)}]')
        else:
            members.append(f'"{rng.choice(_KEYS)}": {_value(rng, depth)}')
    return "{" + ", ".join(members) + "}"


def _mutate(rng: random.Random, text: str) -> str:
    op = rng.randrange(11)
    if op == 0 and text:
        return text[: rng.randrange(len(text))]  # truncated
    if op == 1:
        return f"```{rng.choice(['json', 'JSON', '', ' json'])}\n{text}\n" + rng.choice(["```", "", "``"])
    if op == 2:
        return rng.choice(["Here is my evaluation: ", "score 10 ", '"score": 9 ', "[[A]] ", "Score: 4\n"]) + text
    if op == 3:
        return text + rng.choice([" Thanks!", ' real: {"score": 2}', " [[B]]", "}", " Score: 7.", "。"])
    if op == 4 and text:
        chars = list(text)
        for _ in range(rng.randint(1, 5)):
            chars[rng.randrange(len(chars))] = rng.choice(_ALPHABET)
        return "".join(chars)
    if op == 5:
        return text + " " + _object(rng)  # two candidates
    if op == 6:
        return rng.choice(["[", "{", '{"a":']) * rng.choice([10, 1000, 5000]) + text
    if op == 7:
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 200)))  # noise
    if op == 8:
        return rng.choice(["[", "null", "7", '"s"', "true"]) + text[1:] if text else text
    if op == 9:
        return rng.choice(["Score: ", "- Relevance: ", "スコア：", ""]) + _number(rng) + rng.choice(["", ".", "。"])
    return text


def _plausible(rng: random.Random) -> str:
    """A reply a judge could well give (it parses for its own schema)."""
    explanation = rng.choice(["fine", "Covers blood and milk.", "網羅的で正確。", 'It says "score": 9.'])
    return rng.choice([
        json.dumps({"explanation": explanation, "score": rng.randint(1, 10)}, ensure_ascii=rng.random() < 0.5),
        json.dumps({"explanation": explanation, "criteriaMet": rng.choice([True, False, "true", "false"])}),
        json.dumps({"comprehension": rng.randint(0, 5), "harm": str(rng.randint(0, 5)), "reason": explanation}),
        json.dumps({"units": [{"id": "u1", "role": "gist", "text": "Blood."}]}),
        json.dumps({"excess": [{"text": "air", "role": "detail"}], "missing": [{"unit_id": "u2"}]}),
    ])


def fuzz_replies(n: int, seed: int = 10):
    """``n`` generated replies: JSON-ish objects with huge numbers, NaN, deep nesting, duplicate
    keys, escapes and unicode, or plausible replies; then truncated, fenced, prefixed,
    corrupted or doubled."""
    rng = random.Random(seed)
    for _ in range(n):
        draw = rng.random()
        text = _plausible(rng) if draw < 0.3 else _object(rng) if draw < 0.9 else _value(rng)
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            text = _mutate(rng, text)
        yield text


N_FUZZ = 3000


@pytest.mark.slow
def test_fuzzed_replies_end_as_values_or_parse_errors():
    start = time.perf_counter()
    calls = sum(check_parsers(text) for text in fuzz_replies(N_FUZZ))
    elapsed = time.perf_counter() - start
    print(f"fuzzed {N_FUZZ} replies, {calls} parser calls, in {elapsed:.1f} s")
    assert calls == 18 * N_FUZZ


@pytest.mark.slow
def test_the_fuzz_reaches_the_hostile_shapes():
    """The generator really produces what it claims (so the fuzz test is not vacuous)."""
    replies = list(fuzz_replies(N_FUZZ))
    assert sum("1" * 4400 in r for r in replies) > 50
    assert sum("[" * 1001 in r or "{" * 1000 in r or '{"a":' * 1000 in r for r in replies) > 50
    assert sum("NaN" in r or "Infinity" in r for r in replies) > 100
    assert sum("```" in r for r in replies) > 100
    assert sum(count_json_objects(r) > 1 for r in replies) > 100
    def parses(reply: str) -> bool:
        fields = (parse_fields(reply, schema) for schema in SCHEMAS)
        return any(not any(isinstance(v, ParseError) for v in f.values()) for f in fields)

    assert sum(map(parses, replies)) > 300  # not only failures


# --- run_judging over hostile replies replayed from the cache ------------------------------

@pytest.fixture
def items() -> pd.DataFrame:
    rows = []
    for k in range(32):
        rows.append(dict(item_id=f"q{k}", lang="en" if k % 2 else "ja", question=f"Question {k}?",
                         reference=f"Reference answer {k}. It has two sentences.",
                         response=f"Answer {k}.", response_other=f"Other answer {k}.",
                         answer_model=f"m{k % 2}"))
    return pd.DataFrame(rows)


@pytest.fixture
def rubric(items) -> pd.DataFrame:
    return pd.DataFrame([dict(item_id=i, criterion_id=f"c{j}", text=f"Criterion {j}", weight=w, kind="item")
                         for i in items["item_id"] for j, w in ((1, 5), (2, -3))])


def _good(req: llm.Request) -> str:
    """A well-formed reply to ``req``, read from its output format."""
    out = output_spec(req.messages)
    if out.form == "verdict":
        return "Both are fine, the first is better. [[A]]"
    if out.form == "score_only":
        return str(int(out.scale[0]) + 1)
    if out.form == "text":
        return "A short summary."
    obj = {}
    for name, rule in out.schema.items():
        if isinstance(rule, tuple):
            obj[name] = int(rule[0]) + 1
        elif isinstance(rule, list):  # allowed values (the type `list` is not one)
            obj[name] = rule[0]
        elif name == "units":
            obj[name] = [{"id": "u1", "role": "gist", "text": "Reference answer"}]
        elif rule is list:
            obj[name] = []
        else:
            obj[name] = "fine"
    return json.dumps(obj)


SPECS = {
    "holistic_simple": JudgeSpec("holistic_simple", "x/hostile-judge", trials=2),
    "checklist": JudgeSpec("checklist", "x/hostile-judge"),
    "dimensions": JudgeSpec("dimensions", "x/hostile-judge", trials=2),
    "dimensions_per_call": JudgeSpec("dimensions", "x/hostile-judge", per_call=True, dimensions=("coherence", "novelty")),
    "geval_samples": JudgeSpec("geval", "x/hostile-judge", geval_mode="samples", geval_samples=3, temperature=1.0),
    "summarize_then": JudgeSpec("summarize_then", inner=JudgeSpec("holistic_simple", "x/hostile-judge", trials=2),
                                summarizer_model="x/hostile-summarizer"),
    "pairwise": JudgeSpec("pairwise", "x/hostile-judge"),
    "decompose": JudgeSpec("decompose", "x/hostile-judge", trials=2),
}


def _replies_script(monkeypatch, pool: list[str], every: int = 2):
    """Script complete_many: of each ``every`` requests, the first gets a well-formed reply
    and the others the hostile replies of ``pool`` in turn. Returns ``{cache key: (request,
    reply)}``."""
    sent: dict[str, tuple[llm.Request, str]] = {}

    def fake(requests, **_):
        out = []
        for req in requests:
            key = cache_key(req)
            if key not in sent:
                n = len(sent)
                hostile = pool[(n - 1 - n // every) % len(pool)]
                sent[key] = (req, hostile if n % every else _good(req))
            out.append(Completion(text=sent[key][1], model=req.model, usage=Usage(1, 1), cost_usd=0.0,
                                  latency_s=0.0, cached=False, key=key, backend="test"))
        return out

    monkeypatch.setattr(llm, "complete_many", fake)
    return sent


_POOL = [text for name, text in sorted(HOSTILE.items()) if name not in ("lone_surrogate_raw", "big_reply")]


@pytest.mark.parametrize("protocol", sorted(SPECS))
def test_run_judging_over_cached_hostile_replies(monkeypatch, tmp_path, items, rubric, protocol):
    spec = SPECS[protocol]
    with monkeypatch.context() as patch:
        # geval: the row's cache key is its first sample's; with 3 samples, alternate
        sent = _replies_script(patch, _POOL, every=2 if protocol == "geval_samples" else 3)
        scripted = run_judging(items, spec, rubric=rubric, progress=False)
    assert {text for _, text in sent.values()} >= set(_POOL)  # every hostile reply, in every protocol
    # the same replies, now in the cache, replayed read-only (as every rerun would)
    file = tmp_path / "hostile.jsonl"
    file.write_text("".join(json.dumps(llm.replay_entry(req, text, backend="test", source="issue 10")) + "\n"
                            for req, text in sent.values()), encoding="utf-8")
    assert llm.import_cache(file)["imported"] == len(sent)
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    first = run_judging(items, spec, rubric=rubric, progress=False)
    again = run_judging(items, spec, rubric=rubric, progress=False)

    assert len(first) == len(scripted) and len(first) > 0
    assert not first["error"].fillna("").str.contains("cache_miss").any()
    same = ["item_id", "dimension", "trial", "score", "parse_ok", "verdict", "n_candidates"]
    pd.testing.assert_frame_equal(first[same], scripted[same])
    pd.testing.assert_frame_equal(first, again)
    first.to_csv(tmp_path / "results.csv", index=False)  # every value can be written as UTF-8

    hostile = {key for key, (_, text) in sent.items() if text in _POOL}
    from_hostile = first["cache_key"].isin(hostile) | first["prep_key"].isin(hostile)
    assert from_hostile.any() and (~from_hostile).any()
    bad = first[~first["parse_ok"]]
    assert bad["score"].isna().all() and bad["error"].notna().all()
    good = first[first["parse_ok"]]
    assert good["score"].notna().all() or protocol == "decompose"
    if protocol != "summarize_then":  # there an answer's rows follow its summary reply
        direct = first[~from_hostile & (first["dimension"] != "total")]
        assert direct["parse_ok"].all(), direct["error"].unique()


def test_a_batch_with_the_issues_replies_keeps_its_other_rows(monkeypatch, tmp_path, items):
    """The three crashes of the issue, cached, among good replies: three ParseError rows."""
    crashes = [HOSTILE["huge_int"], HOSTILE["huge_int_string"], HOSTILE["deep_list"]]
    spec = JudgeSpec("holistic_simple", "x/hostile-judge")
    with monkeypatch.context() as patch:
        sent = _replies_script(patch, crashes)
        run_judging(items.iloc[:6], spec, progress=False)
    file = tmp_path / "hostile.jsonl"
    file.write_text("".join(json.dumps(llm.replay_entry(req, text, backend="test", source="issue 10")) + "\n"
                            for req, text in sent.values()), encoding="utf-8")
    llm.import_cache(file)
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    df = run_judging(items.iloc[:6], spec, progress=False)
    assert len(df) == 6 and df["cached"].all()
    assert df["parse_ok"].tolist() == [True, False] * 3
    assert df.loc[~df["parse_ok"], "error"].str.startswith("parse: ").all()
    assert df.loc[df["parse_ok"], "score"].tolist() == [2.0, 2.0, 2.0]


def test_replies_with_no_text_or_surrogates_are_rows(monkeypatch, items):
    """A Completion whose text is None (content: null) or holds a lone surrogate is a row,
    and the surrogate never reaches a later request (summary -> judge) or the results."""
    replies = iter([None, "Sum" + chr(0xDC00) + "mary.", "Fine summary.",
                    '{"score": 4, "explanation": "a' + chr(0xD800) + '"}'])
    seen = []

    def fake(requests, **_):
        out = []
        for req in requests:
            seen.append(req)
            text = next(replies, '{"score": 5, "explanation": "ok"}')
            out.append(Completion(text=text, model=req.model, usage=Usage(1, 1), cost_usd=0.0, latency_s=0.0,
                                  cached=False, key=cache_key(req), backend="test"))
        return out

    monkeypatch.setattr(llm, "complete_many", fake)
    spec = JudgeSpec("summarize_then", inner=JudgeSpec("holistic_simple", "x/j"), summarizer_model="x/s")
    df = run_judging(items.iloc[:3], spec, progress=False)
    assert df["error"].iloc[0].startswith("not_run: summary failed: empty summary")
    assert "Sum\ufffdmary." in seen[3].messages[-1]["content"]
    assert df["prep_text"].iloc[1] == "Sum\ufffdmary."
    assert df["parse_ok"].tolist() == [False, True, True]
    assert df["explanation"].tolist()[1:] == ["a\ufffd", "ok"]
    assert df["raw_reply"].iloc[1].endswith('a\ufffd"}')
