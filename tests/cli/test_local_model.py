"""A real model on the provider path (``make real-local``): SmolLM2 behind llama-cpp-python's
OpenAI-compatible server. Skipped unless that server is reachable at
``WORKBENCH_LOCAL_API_BASE`` (else llama-cpp-python's default port); ``make real-local``
runs this file while its server is up."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from workbench.cli.local_model import MODEL, api_base_from_env, json_response_format, reachable
from workbench.judges import JudgeSpec, run_judging
from workbench.llm import complete, price

API_BASE = api_base_from_env()

pytestmark = [
    pytest.mark.local,
    pytest.mark.skipif(not reachable(API_BASE), reason=f"no SmolLM2 server at {API_BASE}"),
]

MSGS = [{"role": "user", "content": "Rate the answer '2 + 2 = 4' from 1 to 5."}]
SCORE_SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"}},
                "required": ["score"]}


def test_a_real_call_goes_through_complete_and_is_cached():
    first = complete(MODEL, MSGS, api_base=API_BASE, max_tokens=24)
    again = complete(MODEL, MSGS, api_base=API_BASE, max_tokens=24)
    assert first.backend == "openai" and not first.cached and first.latency_s > 0
    assert first.usage.completion_tokens > 0 and isinstance(first.text, str)
    assert again.cached and again.text == first.text and again.key == first.key


def test_an_unpriced_model_costs_zero_and_its_price_says_unknown():
    reply = complete(MODEL, MSGS, api_base=API_BASE, max_tokens=8)
    assert reply.cost_usd == 0.0
    assert math.isnan(price(MODEL, 100, 10))  # the flag: litellm has no price for it


def test_the_schema_form_the_server_accepts_constrains_the_reply():
    reply = complete(MODEL, MSGS, api_base=API_BASE, max_tokens=48,
                     response_format=json_response_format(SCORE_SCHEMA))
    assert isinstance(json.loads(reply.text)["score"], int)


def test_judging_rows_are_real_and_parse_or_say_why_not():
    items = pd.DataFrame({
        "item_id": ["q1", "q2"], "lang": ["en", "en"],
        "question": ["What is 2 + 2?", "Name the capital of France."],
        "response": ["4", "Berlin"], "answer_model": ["human", "human"],
    })
    spec = JudgeSpec(protocol="holistic_simple", judge_model=MODEL, max_tokens=64,
                     params={"api_base": API_BASE})
    rows = run_judging(items, spec, progress=False)
    assert len(rows) == 2 and set(rows["backend"]) == {"openai"}
    assert (rows["cost_usd"] == 0.0).all()
    for row in rows.itertuples():
        if row.parse_ok:
            assert row.scale_low <= row.score <= row.scale_high
        else:  # a parse failure is recorded with the reply, not dropped
            assert isinstance(row.raw_reply, str) and isinstance(row.error, str) and row.error
