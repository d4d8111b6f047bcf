"""The ``sim`` provider: litellm glue for ``sim/<profile>`` models, a ``CustomLLM`` over
:mod:`workbench.sim.engine`.

Registered by :func:`workbench.llm._providers.get_litellm` (through
``litellm.custom_provider_map``) when litellm is first needed, so ``sim/`` calls take
exactly the path of real ones: cache, retries, timeouts, budget, parsing. The repeat
index arrives as the ``workbench_sample`` call argument. It lives here, not in
:mod:`workbench.sim`, because only :mod:`workbench.llm` imports litellm.
"""

from __future__ import annotations

import time
from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import ChoiceLogprobs, ModelResponse, Usage

from workbench.sim import engine

PROVIDER = "sim"


def _reply(model: str, messages: list, optional_params: dict,
           model_response: ModelResponse) -> ModelResponse:
    params = optional_params or {}
    logprobs = bool(params.get("logprobs", False))
    try:
        reply = engine.respond(
            model,
            list(messages),
            temperature=float(params.get("temperature", 0.0) or 0.0),
            sample=int(params.get("workbench_sample", 0) or 0),
            logprobs=logprobs,
            top_logprobs=params.get("top_logprobs"),
            max_tokens=params.get("max_tokens"),
        )
    except ValueError as exc:
        if model not in engine.profiles():
            raise litellm.NotFoundError(message=f"unknown sim profile {model!r}", model=model,
                                        llm_provider=PROVIDER) from None
        raise litellm.BadRequestError(message=str(exc), model=model,
                                      llm_provider=PROVIDER) from None
    choice = model_response.choices[0]
    choice.message.content = reply.text
    choice.finish_reason = "stop"
    if logprobs and reply.logprobs is not None:
        choice.logprobs = ChoiceLogprobs(content=reply.logprobs)
    model_response.model = f"{PROVIDER}/{model}"
    model_response.created = int(time.time())
    model_response.usage = Usage(  # type: ignore[attr-defined]
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        total_tokens=reply.prompt_tokens + reply.completion_tokens,
    )
    return model_response


class SimProvider(CustomLLM):
    """The simulated judges, answerers and helpers as a litellm provider."""

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                   model_response: ModelResponse, print_verbose: Any, encoding: Any,
                   api_key: Any, logging_obj: Any, optional_params: dict, *args: Any,
                   **kwargs: Any) -> ModelResponse:
        return _reply(model, messages, optional_params, model_response)

    async def acompletion(self, model: str, messages: list, api_base: str,
                          custom_prompt_dict: dict, model_response: ModelResponse,
                          print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any,
                          optional_params: dict, *args: Any, **kwargs: Any) -> ModelResponse:
        return _reply(model, messages, optional_params, model_response)


_handler = SimProvider()


def register() -> None:
    """Add the ``sim`` provider to litellm (idempotent)."""
    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": _handler})
    litellm.utils.custom_llm_setup()
