"""The sim-server's checks of a chat request body, answered as OpenAI's API answers them:
HTTP 400 with ``{"error": {"message", "type": "invalid_request_error", "param", "code"}}``
(https://platform.openai.com/docs/guides/error-codes and
https://platform.openai.com/docs/api-reference/chat/create for the fields' types and
ranges).
"""

from __future__ import annotations

import json
from typing import Any

_ROLES = ("system", "user", "assistant")
_JSON = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
         int: "an integer", float: "a number", type(None): "null"}


class BadRequest(ValueError):
    """A request OpenAI would answer with a 400: ``message``, ``param``, ``code``."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.param, self.code = param, code


def parse(text: str | bytes) -> Any:
    """The JSON body, or :class:`BadRequest` (not JSON, or nested deeper than Python's
    parser goes: it raises ``RecursionError``, which was an HTTP 500)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise BadRequest("We could not parse the JSON body of your request.", None,
                         "invalid_json") from None


def _kind(value: Any) -> str:
    return _JSON.get(type(value), type(value).__name__)


def _wrong_type(param: str, value: Any, expected: str) -> BadRequest:
    return BadRequest(f"Invalid type for '{param}': expected {expected}, but got "
                      f"{_kind(value)} instead.", param, "invalid_type")


def _integer(body: dict, param: str, low: int, high: int | None = None) -> None:
    value = body.get(param)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(param, value, "an integer")
    if value < low:
        raise BadRequest(f"Invalid '{param}': integer below minimum value. Expected a value "
                         f">= {low}, but got {value} instead.", param, "integer_below_min_value")
    if high is not None and value > high:
        raise BadRequest(f"Invalid '{param}': integer above maximum value. Expected a value "
                         f"<= {high}, but got {value} instead.", param, "integer_above_max_value")


def _number(body: dict, param: str, low: float, high: float) -> None:
    value = body.get(param)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong_type(param, value, "a number")
    if not low <= value <= high:
        raise BadRequest(f"Invalid '{param}': expected a number in [{low:g}, {high:g}], but "
                         f"got {value} instead.", param, "invalid_value")


def _content(i: int, content: Any) -> None:
    param = f"messages[{i}].content"
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _wrong_type(param, content, "one of a string or an array of objects")
    for j, part in enumerate(content):
        where = f"{param}[{j}]"
        if not isinstance(part, dict):
            raise _wrong_type(where, part, "an object")
        if part.get("type") != "text":
            raise BadRequest(f"Invalid value for '{where}.type': the sim-server reads text "
                             f"parts only (got {part.get('type')!r}).", f"{where}.type",
                             "invalid_value")
        if not isinstance(part.get("text"), str):
            raise _wrong_type(f"{where}.text", part.get("text"), "a string")


def check(body: Any) -> None:
    """Raise :class:`BadRequest` where OpenAI's chat completions API answers 400."""
    if not isinstance(body, dict):
        raise BadRequest(f"the request body must be a JSON object, not {_kind(body)}", None,
                         "invalid_type")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("you must provide a model parameter", "model",
                         "missing_required_parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty array", "messages", "invalid_value")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _wrong_type(f"messages[{i}]", message, "an object")
        if message.get("role") not in _ROLES:
            raise BadRequest(f"Invalid value for 'messages[{i}].role': expected one of "
                             f"{', '.join(_ROLES)}.", f"messages[{i}].role", "invalid_value")
        _content(i, message.get("content"))
    _number(body, "temperature", 0, 2)
    _number(body, "top_p", 0, 1)
    for param in ("max_tokens", "max_completion_tokens"):
        _integer(body, param, 1)
    _integer(body, "top_logprobs", 0, 20)
    _integer(body, "seed", -2**63, 2**63 - 1)
    _integer(body, "workbench_sample", 0)
    for param in ("logprobs", "stream"):
        if body.get(param) is not None and not isinstance(body[param], bool):
            raise _wrong_type(param, body[param], "a boolean")
    stop = body.get("stop")
    if stop is not None and not isinstance(stop, str) and not (
            isinstance(stop, list) and len(stop) <= 4 and all(isinstance(s, str) for s in stop)):
        raise _wrong_type("stop", stop, "a string or an array of up to 4 strings")
    form = body.get("response_format")
    if form is not None and not (isinstance(form, dict) and form.get("type") in (
            "text", "json_object", "json_schema")):
        raise BadRequest("Invalid value for 'response_format': expected an object whose "
                         "'type' is text, json_object or json_schema.", "response_format",
                         "invalid_value")
    if body.get("stream"):
        raise BadRequest("streaming is not supported by the sim-server", "stream",
                         "unsupported_parameter")
    if body.get("n") not in (None, 1):
        raise BadRequest("only n=1 is supported by the sim-server", "n", "unsupported_parameter")
