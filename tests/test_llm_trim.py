"""The litellm per-call trims of ``workbench.llm._trim`` keep every observable behaviour."""

from __future__ import annotations

import asyncio

import pytest

from workbench.llm import Request, _providers, _trim, complete, complete_many


def msgs(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def litellm():
    return _providers.get_litellm()


def test_trims_are_installed(litellm):
    assert set(_trim.applied()) == {"success_logging", "sim_cost"}
    from litellm.litellm_core_utils.litellm_logging import Logging

    assert getattr(Logging.response_cost_calculator, "_workbench_trim", False)
    assert getattr(litellm.utils._dispatch_success_logging, "_workbench_trim", False)


def test_sim_cost_is_zero_without_the_cost_map_search(litellm, monkeypatch):
    searched = []
    original = litellm.response_cost_calculator
    monkeypatch.setattr(litellm, "response_cost_calculator",
                        lambda *a, **k: searched.append(k.get("model")) or original(*a, **k))
    reply = complete("sim/judge-a", msgs("trim: sim cost"))
    assert reply.backend == "sim" and reply.cost_usd == 0.0
    assert searched == []


def test_sim_server_cost_is_zero_without_the_search(litellm, monkeypatch, sim_server):
    searched = []
    original = litellm.response_cost_calculator
    monkeypatch.setattr(litellm, "response_cost_calculator",
                        lambda *a, **k: searched.append(k.get("model")) or original(*a, **k))
    reply = complete("openai/sim-judge-a", msgs("trim: server cost"), api_base=sim_server)
    assert reply.backend == "sim" and reply.cost_usd == 0.0
    assert searched == []


def test_real_models_are_still_priced_by_litellm(litellm, monkeypatch):
    searched = []
    original = litellm.response_cost_calculator
    monkeypatch.setattr(litellm, "response_cost_calculator",
                        lambda *a, **k: searched.append(k.get("model")) or original(*a, **k))
    # litellm's mock_response: no network, but the full pricing path for gpt-4o
    reply = complete("gpt-4o", msgs("trim: priced"), api_key="sk-test-not-real",
                     mock_response="a reply of several words to be priced")
    assert searched, "litellm's cost calculation was skipped for a real model"
    assert reply.cost_usd > 0


def test_a_registered_callback_still_receives_success_events(litellm, monkeypatch):
    from litellm.integrations.custom_logger import CustomLogger

    class Recorder(CustomLogger):
        def __init__(self):
            super().__init__()
            self.models: list[str] = []

        async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
            self.models.append(kwargs.get("model"))

    recorder = Recorder()
    for name in ("success_callback", "_async_success_callback", "failure_callback",
                 "_async_failure_callback", "input_callback", "service_callback"):
        # litellm copies registered loggers into these lists: undo that after the test
        monkeypatch.setattr(litellm, name, list(getattr(litellm, name)))
    monkeypatch.setattr(litellm, "callbacks", [recorder])
    complete_many([Request("sim/judge-a", msgs(f"trim: logged {i}")) for i in range(3)],
                  progress=False)

    async def settle():  # litellm logs in background tasks on our loop
        for _ in range(100):
            if len(recorder.models) >= 3:
                return
            await asyncio.sleep(0.02)

    from workbench.llm._loop import run_sync

    run_sync(settle())
    assert len(recorder.models) == 3


def test_no_callbacks_means_no_logging_task(litellm, monkeypatch):
    from litellm.litellm_core_utils import litellm_logging

    handled = []
    original = litellm_logging.Logging.async_success_handler

    async def spy(self, *args, **kwargs):
        handled.append(self.model)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(litellm_logging.Logging, "async_success_handler", spy)
    replies = complete_many([Request("sim/judge-a", msgs(f"trim: quiet {i}")) for i in range(3)],
                            progress=False)
    assert all(r.ok for r in replies)
    from workbench.llm._loop import run_sync

    run_sync(asyncio.sleep(0.3))  # litellm would log in background tasks on our loop
    assert handled == []
