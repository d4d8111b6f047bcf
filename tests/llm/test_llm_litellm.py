"""What the workbench relies on from litellm, through its public API only: prices (0 for
simulated models, litellm's own for real ones) and success callbacks a user registers
(for the calls that go through litellm: ``sim/`` models are answered in process)."""

from __future__ import annotations

import asyncio

import pytest

from workbench.llm import Request, _providers, complete, complete_many


def msgs(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def litellm():
    return _providers.get_litellm()


def test_sim_cost_is_zero(litellm):
    reply = complete("sim/judge-a", msgs("litellm: sim cost"))
    assert reply.backend == "sim" and reply.cost_usd == 0.0 and reply.cost_known


def test_sim_server_cost_is_zero(litellm, sim_server):
    reply = complete("openai/sim-judge-a", msgs("litellm: server cost"), api_base=sim_server)
    assert reply.backend == "sim" and reply.cost_usd == 0.0


def test_real_models_are_still_priced_by_litellm(litellm, monkeypatch):
    searched = []
    original = litellm.response_cost_calculator
    monkeypatch.setattr(litellm, "response_cost_calculator",
                        lambda *a, **k: searched.append(k.get("model")) or original(*a, **k))
    # litellm's mock_response: no network, but the full pricing path for gpt-4o
    reply = complete("gpt-4o", msgs("litellm: priced"), api_key="sk-test-not-real",
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
    # litellm's mock_response: no network, the full litellm path (callbacks included)
    complete_many([Request("gpt-4o", msgs(f"litellm: logged {i}"),
                           params={"api_key": "sk-test-not-real", "mock_response": "7"})
                   for i in range(3)], progress=False)

    async def settle():  # litellm logs in background tasks on our loop
        for _ in range(100):
            if len(recorder.models) >= 3:
                return
            await asyncio.sleep(0.02)

    from workbench.llm._loop import run_sync

    run_sync(settle())
    assert recorder.models == ["gpt-4o"] * 3

