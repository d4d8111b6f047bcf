"""``Request``'s fast path for the usual request (``_types._plain``) sets the same values,
and leaves every other request to the field-by-field checks (the same errors)."""

from __future__ import annotations

import math
from types import MappingProxyType

import pytest

from workbench.llm import Request, _types

MSGS = [{"role": "system", "content": "Be strict."}, {"role": "user", "content": "Rate it."}]


def _general(monkeypatch, *args, **kwargs):
    monkeypatch.setattr(_types, "_plain", lambda request: False)
    try:
        return Request(*args, **kwargs)
    finally:
        monkeypatch.undo()


def _outcome(make):
    try:
        request = make()
    except ValueError as exc:
        return ("error", str(exc))
    return ("ok", request.to_dict(), type(request.params), type(request.messages),
            [type(m) for m in request.messages])


CASES = [
    ({}, True),
    ({"temperature": 1}, True),
    ({"temperature": 0.7, "sample": 3, "max_tokens": 64}, True),
    ({"params": {"api_base": "http://x/v1", "timeout": 5}}, True),
    ({"temperature": True}, False), ({"temperature": -1}, False),
    ({"temperature": math.nan}, False), ({"temperature": math.inf}, False),
    ({"sample": True}, False), ({"sample": -1}, False), ({"sample": 1.0}, False),
    ({"max_tokens": 0}, False), ({"max_tokens": True}, False),
    ({"logprobs": True, "top_logprobs": 3}, False), ({"top_logprobs": 3}, False),
    ({"logprobs": 0}, False), ({"stop": ("a", "b")}, False), ({"seed": 7}, False),
    ({"top_p": 0.5}, False), ({"response_format": {"type": "json_object"}}, False),
    ({"params": {"n": 2}}, False), ({"params": {"stream": True}}, False),
    ({"params": {1: 2}}, False), ({"params": {"api_base": 3}}, False),
    ({"params": MappingProxyType({"timeout": 5})}, False), ({"params": []}, False),
]


@pytest.mark.parametrize(("options", "plain"), CASES)
def test_fast_path_same_as_general(monkeypatch, options, plain):
    for model, messages in (("sim/judge-a", MSGS), ("sim/judge-a", tuple(MSGS)),
                            (" ", MSGS), ("sim/judge-a", []),
                            ("sim/judge-a", [{"role": "tool", "content": "x"}]),
                            ("sim/judge-a", [{"role": "user", "content": None}]),
                            ("sim/judge-a", [{"role": "user", "content": [{"type": "text"}]}]),
                            ("sim/judge-a", [{"role": "user", "content": "x", "name": "n"}])):
        fast = _outcome(lambda: Request(model, messages, **options))  # noqa: B023
        slow = _outcome(lambda: _general(monkeypatch, model, messages, **options))  # noqa: B023
        assert fast == slow, (model, messages, options)


def test_fast_path_taken_and_copies(monkeypatch):
    taken = []
    real = _types._plain
    monkeypatch.setattr(_types, "_plain", lambda r: taken.append(real(r)) or taken[-1])
    for options, plain in CASES:
        taken.clear()
        try:
            Request("sim/judge-a", MSGS, **options)
        except ValueError:
            pass
        assert taken == [plain], options
    monkeypatch.undo()
    request = Request("sim/judge-a", MSGS, params={"timeout": 5})
    assert request.messages == MSGS and request.messages[0] is not MSGS[0]
    assert isinstance(request.params, MappingProxyType) and dict(request.params) == {"timeout": 5}
