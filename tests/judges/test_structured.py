"""Structured replies (issue 33): each protocol's reply schema comes from the parse schema
its parser checks, is asked for in the route's form, and is part of the cache key; the
simulated route's requests stay as they were."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from workbench.judges import (
    JudgeSpec,
    parse_reply,
    parse_verdict,
    reply_schema,
    run_judging,
    structured_form,
)
from workbench.judges._items import to_records
from workbench.judges._plan import plan_pairwise, plan_single, plan_units
from workbench.judges._structured import ENV, request_parts
from workbench.llm import cache_key

ITEMS = pd.DataFrame({"item_id": ["q1"], "lang": ["en"], "question": ["What is 2 + 2?"],
                      "reference": ["2 + 2 is 4."], "response": ["4"], "answer_model": ["human"]})
PAIR = ITEMS.assign(response_a="4", response_b="5")


def _valid(schema: dict):
    """A value the JSON schema allows (at its lower bound, first enum value, ...)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: _valid(v) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_valid(schema["items"])] if schema.get("items") else []
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return "text"


def _invalid_score(schema: dict) -> dict:
    reply = _valid(schema)
    for name, rule in schema["properties"].items():
        if rule.get("type") in ("integer", "number"):
            reply[name] = rule["maximum"] + 1
    return reply


@pytest.mark.parametrize("protocol", ["holistic", "holistic_simple", "checklist", "dimensions"])
def test_each_protocol_declares_the_schema_its_parser_checks(protocol):
    spec = JudgeSpec(protocol=protocol, judge_model="openai/judge", structured="json_schema")
    rubric = pd.DataFrame({"item_id": ["q1", "q1"], "criterion_id": ["c1", "c2"],
                           "text": ["says 4", "is short"], "weight": [1.0, 1.0],
                           "kind": ["item", "must"]})
    calls = plan_single(to_records(ITEMS), spec, rubric=rubric)
    assert calls
    for call in calls:
        schema = reply_schema(call.out)
        assert list(schema["properties"]) == list(call.out.schema) == schema["required"]
        assert schema["additionalProperties"] is False
        # a reply the schema allows is a reply the parser accepts, field by field
        assert set(parse_reply(json.dumps(_valid(schema)), call.out.schema)) == set(call.out.schema)
        for name, rule in call.out.schema.items():
            if isinstance(rule, tuple):  # the range is the parser's range
                assert (schema["properties"][name]["minimum"], schema["properties"][name]["maximum"]) == rule
        if call.out.numeric:  # and a value past the schema's maximum is refused by both
            with pytest.raises(Exception, match="outside"):
                parse_reply(json.dumps(_invalid_score(schema)), call.out.schema)
        form = call.request.response_format
        assert form["type"] == "json_schema" and form["json_schema"]["strict"] is True
        assert form["json_schema"]["schema"] == schema


def test_pairwise_and_decomposition_schemas_follow_their_parsers():
    from workbench.judges import parse_units

    spec = JudgeSpec(protocol="pairwise", judge_model="openai/judge", structured="json_object")
    call = plan_pairwise(to_records(PAIR), spec)[0]
    schema = call.request.response_format["schema"]
    assert schema["properties"]["verdict"] == {"type": "string", "enum": ["A", "B", "C"]}
    assert parse_verdict(json.dumps(_valid(schema))) == "A"
    spec = JudgeSpec(protocol="decompose", judge_model="openai/judge", structured="guided_json")
    unit_call = next(iter(plan_units(to_records(ITEMS), spec).values()))
    guided = unit_call.request.params["extra_body"]["guided_json"]
    assert unit_call.request.response_format is None
    assert parse_units(json.dumps(_valid(guided))) == [{"id": "text", "role": "gist", "text": "text"}]


def test_a_structured_verdict_parses_and_a_bad_one_does_not():
    from workbench.errors import ParseError

    assert parse_verdict('{"verdict": "B"}') == "B"
    assert parse_verdict('x [[A]] {"verdict": "B"}') == "A"  # a bracketed verdict still wins
    for bad in ('{"verdict": "D"}', '{"winner": "A"}', '{"verdict": "A"'):
        with pytest.raises(ParseError):
            parse_verdict(bad)


def test_sim_requests_are_unchanged_and_the_schema_is_in_the_key(monkeypatch):
    records = to_records(ITEMS)
    monkeypatch.setenv(ENV, "json_schema")  # a declared form does not reach sim/ models
    sim = plan_single(records, JudgeSpec(protocol="holistic_simple", judge_model="sim/judge-a"))[0].request
    off = plan_single(records, JudgeSpec(protocol="holistic_simple", judge_model="sim/judge-a",
                                         structured="off"))[0].request
    assert sim.response_format is None and "extra_body" not in sim.params
    assert cache_key(sim) == cache_key(off)  # replies cached before stay valid
    keys = set()
    for form in ("off", "json_schema", "json_object", "guided_json"):
        spec = JudgeSpec(protocol="holistic_simple", judge_model="openai/judge", structured=form)
        keys.add(cache_key(plan_single(records, spec)[0].request))
    assert len(keys) == 4


def test_the_route_form_comes_from_the_setting_the_environment_or_litellm(monkeypatch):
    import litellm

    monkeypatch.delenv(ENV, raising=False)
    assert structured_form("auto", "sim/judge-a") == "off"
    assert structured_form("off", "gpt-4o") == "off"
    assert structured_form("json_object", "sim/judge-a") == "json_object"  # asked explicitly
    calls = []

    def knows(model, custom_llm_provider=None):
        calls.append(model)
        return model == "known/model"

    monkeypatch.setattr(litellm, "supports_response_schema", knows)
    from workbench.llm._providers import supports_response_schema

    supports_response_schema.cache_clear()
    assert structured_form("auto", "known/model") == "json_schema"
    assert structured_form("auto", "openai/smollm2") == "off"
    assert calls == ["known/model", "openai/smollm2"]
    monkeypatch.setenv(ENV, "openai/smollm2=json_object, hosted_vllm/qwen=guided_json")
    assert structured_form("auto", "openai/smollm2") == "json_object"
    assert structured_form("auto", "hosted_vllm/qwen") == "guided_json"
    assert structured_form("auto", "known/model") == "json_schema"  # not named: litellm says
    monkeypatch.setenv(ENV, "off")
    assert structured_form("auto", "known/model") == "off"
    monkeypatch.setenv(ENV, "grammar")
    with pytest.raises(ValueError, match="WORKBENCH_STRUCTURED"):
        structured_form("auto", "known/model")
    supports_response_schema.cache_clear()


def test_a_bare_score_takes_a_schema_only_where_the_route_takes_a_non_object():
    schema = {"type": "integer", "minimum": 1, "maximum": 5}
    assert request_parts("json_schema", schema, "geval") == (None, None)  # OpenAI: objects only
    assert request_parts("json_object", schema, "geval")[0] == {"type": "json_object", "schema": schema}
    assert request_parts("off", schema, "geval") == (None, None)


def test_the_spec_setting_is_checked():
    with pytest.raises(ValueError, match="JudgeSpec.structured"):
        JudgeSpec(protocol="holistic", judge_model="sim/judge-a", structured="grammar")


def test_sim_judges_answer_as_before_with_structured_replies_asked():
    plain = run_judging(ITEMS, JudgeSpec(protocol="holistic_simple", judge_model="sim/judge-a"), progress=False)
    asked = run_judging(ITEMS, JudgeSpec(protocol="holistic_simple", judge_model="sim/judge-a",
                                         structured="json_schema"), progress=False)
    assert asked["parse_ok"].all() and asked["score"].tolist() == plain["score"].tolist()


def test_grammar_forms_bound_text_and_lists_openai_form_does_not(monkeypatch):
    from workbench.judges._structured import ITEM_SCHEMAS

    schema = {"type": "object", "properties": {"why": {"type": "string"},
                                               "units": {"type": "array", "items": ITEM_SCHEMAS["units"]}}}
    strict = request_parts("json_schema", schema, "x")[0]["json_schema"]["schema"]
    assert strict == schema  # OpenAI's strict form: the schema as the parser defines it
    grammar = request_parts("json_object", schema, "x")[0]["schema"]
    assert grammar["properties"]["why"]["maxLength"] == 200
    assert grammar["properties"]["units"]["maxItems"] == 8
    assert grammar["properties"]["units"]["items"]["properties"]["text"]["maxLength"] == 200
    assert "maxLength" not in grammar["properties"]["units"]["items"]["properties"]["role"]  # an enum
    monkeypatch.setenv("WORKBENCH_STRUCTURED_MAX_TEXT", "100")
    monkeypatch.setenv("WORKBENCH_STRUCTURED_MAX_ITEMS", "3")
    guided = request_parts("guided_json", schema, "x")[1]["guided_json"]
    assert guided["properties"]["why"]["maxLength"] == 100 and guided["properties"]["units"]["maxItems"] == 3
    # every reply the bounded schema allows still parses
    assert parse_reply(json.dumps({"why": "x" * 100, "units": []}), {"why": str, "units": list})


def test_a_raw_control_character_inside_a_string_does_not_fail_the_reply():
    """llama-cpp-python's grammar let SmolLM2 write a raw tab/newline inside the rationale
    of an S4 reply (seen in make real-local); JSON's strict mode refused the whole reply."""
    for text in ('{ "score": 2, "rationale": "To repeat\tthe point"}',
                 'Here: {"score": 2, "rationale": "line one\nline two"} done'):
        assert parse_reply(text, {"score": (1, 5), "rationale": str})["score"] == 2
