"""Each structured-reply form reaches the server as docs/real-models.md says (issue 33):
a judge run against a recording 127.0.0.1 server, one form at a time, and the request
body it received. json_schema: OpenAI, SGLang, Ollama and hosted providers; json_object:
llama.cpp / llama-cpp-python; guided_json: vLLM; off: the prompt alone."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from workbench.judges import JudgeSpec, run_judging

ITEMS = pd.DataFrame({"item_id": ["q1"], "lang": ["en"], "question": ["What is 2 + 2?"],
                      "response": ["4"], "answer_model": ["human"]})
SCORE = {"type": "integer", "minimum": 1, "maximum": 10, "enum": list(range(1, 11))}


class _Recorder(BaseHTTPRequestHandler):
    bodies: list[dict] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _reply(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # /models: owned by nobody in particular
        self._reply(200, {"object": "list", "data": [{"id": "judge", "owned_by": "recorder"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        text = json.dumps({"explanation": "correct", "score": 9})
        self._reply(200, {"id": "r", "object": "chat.completion", "created": 0, "model": "judge",
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": text}}],
                          "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


@pytest.fixture
def recorder():
    _Recorder.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", _Recorder.bodies
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("form", ["json_schema", "json_object", "guided_json", "off"])
def test_each_form_reaches_the_server_in_its_shape(form, recorder, monkeypatch):
    url, bodies = recorder
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    spec = JudgeSpec(protocol="holistic_simple", judge_model="openai/judge", structured=form,
                     params={"api_base": url})
    rows = run_judging(ITEMS, spec, progress=False)
    assert rows["parse_ok"].tolist() == [True] and rows["score"].tolist() == [9]
    (body,) = bodies
    if form == "off":
        assert "response_format" not in body and "guided_json" not in body
        return
    schema = (body["response_format"]["json_schema"]["schema"] if form == "json_schema"
              else body["response_format"]["schema"] if form == "json_object"
              else body["guided_json"])
    assert schema["properties"]["score"] == SCORE and schema["required"] == ["explanation", "score"]
    if form == "json_schema":
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["strict"] is True
        assert body["response_format"]["json_schema"]["name"] == "holistic_simple"
    elif form == "json_object":
        assert body["response_format"] == {"type": "json_object", "schema": schema}
    else:
        assert "response_format" not in body


def test_the_environment_declares_a_form_for_a_model_litellm_does_not_know(recorder, monkeypatch):
    url, bodies = recorder
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("WORKBENCH_STRUCTURED", "openai/judge=guided_json")
    spec = JudgeSpec(protocol="holistic_simple", judge_model="openai/judge", params={"api_base": url})
    run_judging(ITEMS, spec, progress=False)
    assert bodies[0]["guided_json"]["properties"]["score"] == SCORE
