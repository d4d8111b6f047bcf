"""Reply parsing (issue 3 item 3): every binding and failure case of parse_reply and
the verdict / bare-score parsers."""

from __future__ import annotations

import pytest

from workbench.errors import ParseError
from workbench.judges import (
    extract_json_object,
    parse_fields,
    parse_reply,
    parse_score_only,
    parse_verdict,
)

SCHEMA = {"score": (1, 10), "explanation": str}


def test_whole_reply_is_json():
    assert parse_reply('{"explanation": "fine", "score": 7}', SCHEMA) == {"score": 7, "explanation": "fine"}


def test_first_object_after_prose():
    text = 'Here is my evaluation.\n{"explanation": "ok", "score": 6}\nThanks!'
    assert parse_reply(text, SCHEMA)["score"] == 6


def test_json_fence():
    text = 'Sure:\n```json\n{"explanation": "covers the points", "score": 8}\n```'
    assert parse_reply(text, SCHEMA) == {"score": 8, "explanation": "covers the points"}


def test_plain_fence_without_language_tag():
    assert parse_reply('```\n{"explanation": "x", "score": 3}\n```', SCHEMA)["score"] == 3


def test_rationale_quoting_score_before_the_real_object_is_not_matched():
    # a regex search for "score" would bind to 9; the first JSON object says 4
    text = 'My first thought was "score": 9, but no. {"score": 4, "rationale": "the \\"score\\": 9 was too high"}'
    assert parse_reply(text, {"score": (1, 10), "rationale": str}) == {
        "score": 4, "rationale": 'the "score": 9 was too high'}


def test_score_text_inside_the_rationale_of_the_object():
    text = '{"rationale": "someone wrote \\"score\\": 9 here", "score": 2}'
    assert parse_reply(text, {"score": (1, 5), "rationale": str})["score"] == 2


def test_binds_to_the_first_object_not_a_later_one():
    text = '{"explanation": "a", "score": 5} and later {"explanation": "b", "score": 9}'
    assert parse_reply(text, SCHEMA)["score"] == 5


def test_number_as_string_counts_as_number():
    out = parse_reply('{"explanation": "e", "score": "4"}', SCHEMA)
    assert out["score"] == 4 and isinstance(out["score"], int)
    assert parse_reply('{"explanation": "e", "score": " 4.5 "}', SCHEMA)["score"] == 4.5


@pytest.mark.parametrize("value", ['"2-3"', '"four"', '"4/10"', '"4 points"', "null", "true", "[4]", '""'])
def test_non_numbers_fail(value):
    with pytest.raises(ParseError, match="score"):
        parse_reply('{"explanation": "e", "score": ' + value + '}', SCHEMA)


@pytest.mark.parametrize("value", ["0", "11", "-1", "10.5", '"12"'])
def test_out_of_range_fails(value):
    with pytest.raises(ParseError, match="outside"):
        parse_reply('{"explanation": "e", "score": ' + value + '}', SCHEMA)


def test_range_bounds_are_inclusive():
    assert parse_reply('{"explanation": "e", "score": 1}', SCHEMA)["score"] == 1
    assert parse_reply('{"explanation": "e", "score": 10}', SCHEMA)["score"] == 10


def test_missing_key_fails():
    with pytest.raises(ParseError, match="missing field 'score'"):
        parse_reply('{"explanation": "no score given"}', SCHEMA)


@pytest.mark.parametrize("text", ["", "   \n", None])
def test_empty_reply_fails(text):
    with pytest.raises(ParseError, match="empty"):
        parse_reply(text, SCHEMA)


def test_reply_without_json_fails():
    with pytest.raises(ParseError, match="no JSON object"):
        parse_reply("I would give it a score of 8 out of 10.", SCHEMA)


def test_truncated_json_fails():
    with pytest.raises(ParseError, match="does not start a JSON object"):
        parse_reply('{"explanation": "the answer is good', SCHEMA)


def test_bare_json_number_is_not_an_object():
    with pytest.raises(ParseError):
        parse_reply("7", SCHEMA)


def test_explanation_must_be_text():
    with pytest.raises(ParseError, match="explanation"):
        parse_reply('{"explanation": 3, "score": 3}', SCHEMA)


@pytest.mark.parametrize("raw, expected", [("true", True), ("false", False), ('"true"', True),
                                           ('"False"', False), ('" TRUE "', True)])
def test_booleans(raw, expected):
    out = parse_reply('{"explanation": "e", "criteriaMet": ' + raw + '}',
                      {"explanation": str, "criteriaMet": [True, False]})
    assert out["criteriaMet"] is expected


@pytest.mark.parametrize("raw", ["1", "0", '"yes"', "null"])
def test_boolean_rejects_other_values(raw):
    with pytest.raises(ParseError, match="criteriaMet"):
        parse_reply('{"criteriaMet": ' + raw + '}', {"criteriaMet": [True, False]})


def test_allowed_set_of_labels_and_numbers():
    assert parse_reply('{"v": "tie"}', {"v": {"A", "B", "tie"}}) == {"v": "tie"}
    assert parse_reply('{"v": "2"}', {"v": [0, 1, 2]}) == {"v": 2}
    with pytest.raises(ParseError, match="not one of"):
        parse_reply('{"v": "C"}', {"v": ["A", "B", "tie"]})
    with pytest.raises(ParseError):
        parse_reply('{"v": true}', {"v": [0, 1]})  # True is not 1


def test_extra_keys_are_ignored_and_only_schema_fields_returned():
    out = parse_reply('{"score": 3, "explanation": "e", "extra": 1}', SCHEMA)
    assert set(out) == {"score", "explanation"}


def test_japanese_reply_in_fence():
    text = '評価です。\n```json\n{"explanation": "必須項目を満たしている", "score": 8}\n```'
    assert parse_reply(text, SCHEMA)["explanation"] == "必須項目を満たしている"


def test_parse_error_keeps_the_text():
    with pytest.raises(ParseError) as info:
        parse_reply("no json here", SCHEMA)
    assert info.value.text == "no json here"


def test_parse_fields_costs_only_the_bad_field():
    text = '{"comprehension": 4, "reasoning": "2-3", "harm": 9, "reason": "r"}'
    out = parse_fields(text, {"comprehension": (0, 5), "reasoning": (0, 5), "harm": (0, 5),
                              "knowledge_recall": (0, 5), "reason": str})
    assert out["comprehension"] == 4 and out["reason"] == "r"
    for bad in ("reasoning", "harm", "knowledge_recall"):
        assert isinstance(out[bad], ParseError)


def test_parse_fields_without_json_fails_every_field():
    out = parse_fields("nothing", {"a": (0, 5), "b": str})
    assert all(isinstance(v, ParseError) for v in out.values())


def test_extract_json_object_prefers_the_fence():
    text = 'Format {like this}.\n```json\n{"score": 2}\n```'
    assert extract_json_object(text) == {"score": 2}


def test_unknown_schema_rule_is_a_programming_error():
    with pytest.raises(ValueError, match="unsupported rule"):
        parse_reply('{"a": 1}', {"a": object})


# --- MT-Bench verdicts: bind to the LAST verdict ------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Answer A is clearer. [[A]]", "A"),
    ("Both fine. Final verdict: [[C]]", "C"),
    ("Output [[A]] if A is better or [[B]] if B is better. After comparing: [[B]]", "B"),
    ("[[ A ]]", "A"),
])
def test_verdict_binds_to_the_last(text, expected):
    assert parse_verdict(text) == expected


@pytest.mark.parametrize("text", ["", "A is better", "[A]", "[[D]]", None])
def test_verdict_failures(text):
    with pytest.raises(ParseError):
        parse_verdict(text)


# --- G-Eval bare scores ---------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [("4", 4), (" 3\n", 3), ("- Relevance: 5", 5),
                                            ("スコア：2", 2), ("3.5", 3.5), ("4.", 4)])
def test_score_only(text, expected):
    assert parse_score_only(text, 1, 5) == expected


@pytest.mark.parametrize("text", ["", "2-3", "four", "4 or 5", "6", "0", "Score: 3 (out of 5)"])
def test_score_only_failures(text):
    with pytest.raises(ParseError):
        parse_score_only(text, 1, 5)
