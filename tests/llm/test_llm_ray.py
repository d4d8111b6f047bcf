"""``mode="ray"`` (issue 34): a local Ray cluster (CPU) runs judge calls through
``ray.data.llm``'s HTTP processor against sim-servers; the vLLM and SGLang engines are
checked through the configuration and rows their processors receive."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from workbench.llm import (
    CallFailure,
    Completion,
    Request,
    _providers,
    _ray,
    cache_key,
    complete_many,
    temporary_settings,
)

ray = pytest.importorskip("ray")  # in the lock (the `ray` extra); `make test-latest` has none

pytestmark = pytest.mark.slow

#: Ray's own settings: how long a starting node waits (a busy 2-core machine is slow).
AGENT_WAIT = {name: str(value) for name, value in _ray.STARTUP_WAIT.items()}


@pytest.fixture(scope="module")
def cluster():
    """One small local cluster (2 CPUs, no dashboard) for the module; its address. Started
    as mode="ray" starts one (tried again when its node's agent is slow to start)."""
    _ray.start(num_cpus=2)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setenv("WORKBENCH_RAY_BATCH_SIZE", "4")
    monkeypatch.setenv("WORKBENCH_RAY_CONCURRENCY", "1")


def _asks(url: str, n: int, tag: str) -> list[Request]:
    return [Request("openai/sim-judge-a", [{"role": "user", "content": (
        f"<question>\n{tag} question {i}: why?\n</question>\n<response>\nBecause {i}.\n"
        "</response>\nReturn JSON with a score from 1 to 10.")}], temperature=1.0,
        sample=i % 2, max_tokens=None if i % 3 else 64, params={"api_base": url})
        for i in range(n)]


def _stored(folder: Path) -> int:
    db = folder / "replies.db"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=5) as con:
            return con.execute("SELECT count(*) FROM replies").fetchone()[0]
    except sqlite3.Error:
        return 0


def _settled(stats, url: str, *, within: float = 60.0) -> int:
    """The server's request count once nothing is in flight and it has stopped moving."""
    deadline = time.monotonic() + within
    last = None
    while time.monotonic() < deadline:
        now = stats(url)
        if now["in_flight"] == 0 and now["requests"] == last:
            return last
        last = now["requests"]
        time.sleep(1.0)
    raise AssertionError(f"{url}: requests still arriving after {within} s")


# --- on a local cluster -------------------------------------------------------------------

def test_a_judge_design_on_ray_gives_the_online_rows_and_keys(
        cluster, small_batches, sim_server_factory, sim_stats, monkeypatch, tmp_path):
    """run_judging with WORKBENCH_CALL_MODE=ray over two sim-servers (the replicas of
    WORKBENCH_RAY_ENDPOINTS): the same scores, replies and keys as online; each server
    answered some; a rerun replays everything and sends nothing."""
    from workbench.judges import JudgeSpec, run_judging

    one, two = sim_server_factory(latency_ms=5.0), sim_server_factory(latency_ms=6.0)
    items = pd.DataFrame({"item_id": list("abcdef"),
                          "question": [f"Why is {x} so?" for x in "abcdef"],
                          "response": [f"Because of {x}." for x in "abcdef"],
                          "answer_model": ["m"] * 6})
    spec = JudgeSpec("holistic_simple", "openai/sim-judge-a", trials=2,
                     params={"api_base": one})
    before = {url: sim_stats(url)["requests"] for url in (one, two)}
    monkeypatch.setenv("WORKBENCH_CALL_MODE", "ray")
    monkeypatch.setenv("WORKBENCH_RAY_ENDPOINTS", f"{one},{two}")
    on_ray = run_judging(items, spec, progress=False)
    sent = {url: sim_stats(url)["requests"] - before[url] for url in (one, two)}
    assert sent[one] > 0 and sent[two] > 0 and sum(sent.values()) == 12  # 6 items x 2 trials

    again = run_judging(items, spec, progress=False)
    assert sum(sim_stats(url)["requests"] - before[url] for url in (one, two)) == 12
    assert again["cached"].all() and not on_ray["cached"].any()

    monkeypatch.setenv("WORKBENCH_CALL_MODE", "online")
    with temporary_settings(cache_dir=tmp_path / "online"):
        online = run_judging(items, spec, progress=False)
    cols = ["item_id", "trial", "score", "parse_ok", "cache_key", "raw_reply", "backend"]
    assert on_ray["parse_ok"].all()
    pd.testing.assert_frame_equal(on_ray[cols], online[cols])
    pd.testing.assert_frame_equal(again[cols], online[cols])


def test_failed_replies_are_the_online_failure_rows(cluster, small_batches, sim_server_factory):
    """A 500 and a body that is not JSON come back as rows (not a failed job) and become
    the failure rows online gives (retries off on both sides); nothing of them is stored."""
    broken = sim_server_factory(server_error_rate=1.0)
    garbled = sim_server_factory(malformed_rate=1.0)
    asks = _asks(broken, 3, "broken") + _asks(garbled, 3, "garbled")
    on_ray = complete_many(asks, mode="ray", max_retries=0, progress=False)
    online = complete_many(asks, mode="online", max_retries=0, progress=False)
    assert [type(r) for r in on_ray] == [CallFailure] * 6
    assert [r.error_type for r in on_ray] == [r.error_type for r in online] \
        == ["server_error"] * 3 + ["malformed"] * 3
    assert [r.key for r in on_ray] == [cache_key(a) for a in asks]
    assert all(r.message.startswith("ray: ") for r in on_ray)


_KILLED_RUN = """
import json, sys
from workbench.llm import Request, complete_many
asks = [Request(**json.loads(line)) for line in sys.stdin]
complete_many(asks, mode="ray", progress=False)
"""


def test_a_killed_ray_run_resumes_without_sending_twice(
        cluster, sim_server_factory, sim_stats, tmp_path):
    """A driver killed (SIGKILL) mid-job keeps every reply it recorded; the rerun sends
    exactly the requests not stored (counted at the server) and completes them all."""
    url = sim_server_factory(latency_ms=250.0)
    asks = _asks(url, 40, "killed")
    folder = tmp_path / "cache"
    env = {**os.environ, **AGENT_WAIT, "RAY_ADDRESS": cluster,
           "WORKBENCH_CACHE_DIR": str(folder), "WORKBENCH_RAY_BATCH_SIZE": "2",
           "WORKBENCH_RAY_CONCURRENCY": "1", "MPLBACKEND": "Agg"}
    lines = "".join(json.dumps({"model": a.model, "messages": a.messages,
                                "temperature": a.temperature, "sample": a.sample,
                                "max_tokens": a.max_tokens, "params": dict(a.params)}) + "\n"
                    for a in asks)
    child = subprocess.Popen([sys.executable, "-c", _KILLED_RUN], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                             text=True)
    child.stdin.write(lines)
    child.stdin.close()
    deadline = time.monotonic() + 300
    while _stored(folder) < 4:
        assert child.poll() is None, f"the run ended first: {child.stderr.read()[-2000:]}"
        assert time.monotonic() < deadline, "no reply stored within 300 s"
        time.sleep(0.2)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    child.stderr.close()
    before = _settled(sim_stats, url)  # the dead job's last requests have landed
    stored = _stored(folder)
    assert 4 <= stored < len(asks)

    with temporary_settings(cache_dir=folder):
        resumed = complete_many(asks, mode="ray", progress=False)
    assert all(isinstance(r, Completion) for r in resumed)
    assert sum(r.cached for r in resumed) == stored
    assert sim_stats(url)["requests"] - before == len(asks) - stored
    assert _stored(folder) == len(asks)


# --- what the engines' processors receive (no cluster, no vLLM, no SGLang) ----------------

def _ask(**fields) -> Request:
    return Request("hosted_vllm/Qwen/Qwen2.5-0.5B-Instruct",
                   [{"role": "user", "content": "Score this."}], **fields)


def test_the_vllm_processor_receives_the_model_and_every_sampling_field(monkeypatch):
    monkeypatch.setenv("WORKBENCH_RAY_BATCH_SIZE", "8")
    monkeypatch.setenv("WORKBENCH_RAY_CONCURRENCY", "3")
    ask = _ask(temperature=0.7, max_tokens=32, top_p=0.9, stop="END", seed=5, logprobs=True,
               top_logprobs=4)
    config = _ray.processor_config("vllm", model=_ray.model_source(ask), timeout=30,
                                   max_retries=0, backoff=1.0)
    from ray.data.llm import vLLMEngineProcessorConfig

    assert isinstance(config, vLLMEngineProcessorConfig)
    assert (config.model_source, config.batch_size, config.concurrency) == \
        ("Qwen/Qwen2.5-0.5B-Instruct", 8, 3)
    assert config.should_continue_on_error  # a failed row is a failure row, not a dead job
    assert _ray.sampling_params(ask, "vllm") == {
        "temperature": 0.7, "max_tokens": 32, "top_p": 0.9, "stop": ["END"], "seed": 5,
        "logprobs": 4}
    # every field present, unset ones None: the rows of a block share one schema
    assert _ray.sampling_params(_ask(), "vllm") == {
        "temperature": 0.0, "max_tokens": None, "top_p": 1.0, "stop": None, "seed": None,
        "logprobs": None}


def test_the_sglang_processor_receives_its_own_field_names():
    from ray.data.llm import SGLangEngineProcessorConfig

    ask = _ask(max_tokens=16, seed=3)
    config = _ray.processor_config("sglang", model=_ray.model_source(ask), timeout=30,
                                   max_retries=0, backoff=1.0)
    assert isinstance(config, SGLangEngineProcessorConfig)
    assert config.model_source == "Qwen/Qwen2.5-0.5B-Instruct"
    assert _ray.sampling_params(ask, "sglang") == {
        "temperature": 0.0, "max_new_tokens": 16, "top_p": 1.0, "stop": None,
        "sampling_seed": 3}


def test_engine_rows_are_recorded_or_failure_rows(tmp_path):
    """What an engine's postprocess makes of its output row, then the record stage: a
    reply is stored under the request's key; an ``__inference_error__`` row is a
    failure row; a key the job never answered is a failure row too."""
    from workbench.llm import _cache, peek
    from workbench.llm._pipeline import _Sender

    asks = [_ask(sample=i) for i in range(3)]
    keys = [cache_key(a) for a in asks]
    _, _, engine_reply = _ray.udfs()
    out = engine_reply({"key": keys[0], "generated_text": '{"score": 4}',
                        "num_input_tokens": 11, "num_generated_tokens": 5, "prompt": "x"})
    assert out == {"key": keys[0], "status": 200, "text": '{"score": 4}', "prompt_tokens": 11,
                   "completion_tokens": 5}
    with temporary_settings(cache_dir=tmp_path):
        routes = {key: _providers.Route(a.model, "hosted_vllm", "hosted_vllm", False)
                  for key, a in zip(keys, asks, strict=True)}
        sender = _Sender({_providers.route_id(a): routes[k] for k, a in zip(keys, asks,
                                                                            strict=True)},
                         slots=dict.fromkeys(keys, 1), cache=_cache.open_cache(), claims=False,
                         bar=_NoBar(), concurrency=1, budget_usd=None, rpm=None, timeout=5,
                         max_retries=0, deadline=None)
        run = _ray.RayRun(dict(zip(keys, asks, strict=True)), routes, record=sender._record,
                          done=sender._done, timeout=5, max_retries=0, backoff=1.0)
        run._finish(keys[0], run._result(keys[0], out))
        run._finish(keys[1], run._result(keys[1], {"key": keys[1], "__inference_error__":
                                                   "CUDA out of memory"}))
        got = run.results
        assert isinstance(got[keys[0]], Completion) and got[keys[0]].text == '{"score": 4}'
        assert got[keys[0]].usage.prompt_tokens == 11
        assert peek(asks[0]).text == '{"score": 4}' and peek(asks[1]) is None
        assert isinstance(got[keys[1]], CallFailure)
        assert "CUDA out of memory" in got[keys[1]].message


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def set_postfix(self, **fields) -> None:
        pass


def test_http_rows_carry_no_credential():
    """The API key goes in the processor's headers, never in a row (nor its body)."""
    ask = Request("openai/my-model", [{"role": "user", "content": "hi"}],
                  params={"api_base": "http://127.0.0.1:9/v1", "api_key": "sk-secret-123"})
    route = _providers.route(ask)
    base, headers, body = _ray.http_target(ask, route, timeout=10)
    assert base == "http://127.0.0.1:9/v1" and headers["Authorization"] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in json.dumps(body) and body["model"] == "my-model"


def test_in_process_sim_models_are_answered_online_in_ray_mode(monkeypatch):
    """``sim/`` models have no endpoint: no Ray job is built for them."""
    def no_job(*args, **kwargs):
        raise AssertionError("a Ray job was built")

    monkeypatch.setattr(_ray, "RayRun", no_job)
    ask = Request("sim/judge-a", [{"role": "user", "content": "Score: <response>ok</response>"}])
    (got,) = complete_many([ask], mode="ray", progress=False)
    assert isinstance(got, Completion) and got.backend == "sim" and not got.cached


def test_a_local_cluster_that_will_not_start_is_one_line_after_its_tries(monkeypatch):
    from workbench.errors import ProviderError

    tries = []

    def slow_node(**options):
        tries.append(options)
        raise Exception("The current node timed out during startup.")  # as Ray says it

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", slow_node)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    with pytest.raises(ProviderError, match=r"could not start a local Ray cluster in 4 tries "
                       r"\(The current node timed out during startup.\); start one"):
        _ray.start(num_cpus=1)
    assert len(tries) == _ray.STARTS == 4 and tries[0]["num_cpus"] == 1
    assert tries[0]["include_dashboard"] is False


def test_a_request_with_no_endpoint_is_refused_before_ray_starts(monkeypatch):
    from workbench.errors import ProviderError

    monkeypatch.setattr(_ray, "start", lambda **options: pytest.fail("Ray was started"))
    ask = Request("anthropic/claude-3-5-haiku-latest", [{"role": "user", "content": "hi"}],
                  params={"api_key": "sk-ant-test"})
    with pytest.raises(ProviderError, match="needs an OpenAI-compatible endpoint"):
        complete_many([ask], mode="ray", progress=False)


def test_ray_mode_is_checked_before_any_call(monkeypatch):
    ask = Request("openai/x", [{"role": "user", "content": "hi"}], params={"api_base": "http://h/v1"})
    with pytest.raises(ValueError, match="cannot stop a Ray job"):
        complete_many([ask], mode="ray", budget_usd=1.0)
    monkeypatch.setenv("WORKBENCH_RAY_ENGINE", "tpu")
    with pytest.raises(ValueError, match="WORKBENCH_RAY_ENGINE='tpu'"):
        _ray.engine()
    monkeypatch.setenv("WORKBENCH_RAY_BATCH_SIZE", "zero")
    with pytest.raises(ValueError, match="WORKBENCH_RAY_BATCH_SIZE"):
        _ray.processor_config("vllm", model="m", timeout=1, max_retries=0, backoff=1)


# --- a real engine, where a GPU is -------------------------------------------------------

def _gpu_engine() -> str | None:
    """Why the gpu test cannot run here, or None."""
    import importlib.util
    import shutil

    if shutil.which("nvidia-smi") is None:
        return "no GPU (nvidia-smi not found)"
    if importlib.util.find_spec("vllm") is None:
        return "vLLM is not installed"
    if not os.environ.get("WORKBENCH_GPU_MODEL"):
        return "WORKBENCH_GPU_MODEL (a local model folder or hub id) is not set"
    return None


@pytest.mark.gpu
@pytest.mark.skipif(_gpu_engine() is not None, reason=str(_gpu_engine()))
def test_a_real_vllm_engine_answers_and_replays(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_RAY_ENGINE", "vllm")
    model = "hosted_vllm/" + os.environ["WORKBENCH_GPU_MODEL"]
    asks = [Request(model, [{"role": "user", "content": f"Say {i}."}], max_tokens=8,
                    params={"api_base": "http://127.0.0.1:9/v1"}) for i in range(4)]
    got = complete_many(asks, mode="ray", progress=False)
    assert all(isinstance(r, Completion) and r.text for r in got)
    again = complete_many(asks, mode="ray", progress=False)
    assert all(r.cached for r in again)
