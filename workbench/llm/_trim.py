"""Per-call work litellm does that the workbench never uses, skipped (for every provider).

Profiling ``litellm.acompletion`` (litellm 1.x) shows two pieces of per-call work whose
results the workbench throws away, together about a third of litellm's CPU per call:

* **Success logging.** After every call litellm schedules an async task that builds its
  "standard logging payload" (message copies, timing, a second cost pass) for the
  success callbacks. The workbench registers none and keeps its own records (the
  cache entry). The task is skipped only while no callback of any kind is registered,
  globally or on the call; a callback added later (``litellm.callbacks = [...]``,
  ``success_callback``, ``callbacks=`` on a call) makes it run again.
* **Cost of simulated models.** litellm prices every reply (a cost-map search with
  fallbacks). For ``sim/`` models and sim-server models (``openai/sim-*`` with an
  ``api_base``, registered by :func:`mark_zero_cost`) the price is 0 by definition, so
  0.0 is returned without the search. Real models are priced by litellm as before.

Nothing on the call path itself changes: the request still goes through
``litellm.acompletion`` with its parameter mapping, provider routing, HTTP client and
error mapping. ``WORKBENCH_LITELLM_TRIM=0`` turns both off. If a litellm version lacks
one of the patched names, that trim is skipped (``applied()`` says which are active).
"""

from __future__ import annotations

import os
from typing import Any

_ZERO_COST_MODELS: set[str] = set()
_SIM_PROVIDER = "sim"
_applied: list[str] = []
_CALLBACK_LISTS = ("callbacks", "success_callback", "_async_success_callback", "input_callback",
                   "service_callback")


def enabled() -> bool:
    """Whether trimming is on (``WORKBENCH_LITELLM_TRIM``, default on)."""
    return os.environ.get("WORKBENCH_LITELLM_TRIM", "1").strip().lower() not in ("0", "false", "no")


def applied() -> list[str]:
    """Names of the trims installed in this process (``success_logging``, ``sim_cost``)."""
    return list(_applied)


def mark_zero_cost(model: str) -> None:
    """Price ``model`` (as litellm names it after routing, e.g. ``sim-judge-a``) at 0."""
    _ZERO_COST_MODELS.add(model)
    if "/" in model:
        _ZERO_COST_MODELS.add(model.split("/", 1)[1])


def _no_callbacks(litellm: Any, logging_obj: Any) -> bool:
    for name in _CALLBACK_LISTS:
        if getattr(litellm, name, None):
            return False
    for name in ("dynamic_success_callbacks", "dynamic_async_success_callbacks"):
        if getattr(logging_obj, name, None):
            return False
    return True


def install(litellm: Any) -> None:
    """Install the trims once (idempotent; nothing when :func:`enabled` is false)."""
    if _applied or not enabled():
        return
    utils = getattr(litellm, "utils", None)
    dispatch = getattr(utils, "_dispatch_success_logging", None)
    if callable(dispatch) and not getattr(dispatch, "_workbench_trim", False):

        def _dispatch_success_logging(*args: Any, **kwargs: Any) -> None:
            logging_obj = kwargs["logging_obj"] if "logging_obj" in kwargs else args[0]
            if _no_callbacks(litellm, logging_obj):
                return
            dispatch(*args, **kwargs)

        _dispatch_success_logging._workbench_trim = True  # type: ignore[attr-defined]
        utils._dispatch_success_logging = _dispatch_success_logging
        _applied.append("success_logging")

    try:
        from litellm.litellm_core_utils.litellm_logging import Logging
    except ImportError:
        Logging = None  # noqa: N806
    calculator = getattr(Logging, "response_cost_calculator", None)
    if calculator is not None and not getattr(calculator, "_workbench_trim", False):

        def response_cost_calculator(self: Any, *args: Any, **kwargs: Any) -> float | None:
            details = getattr(self, "model_call_details", None) or {}
            if (details.get("custom_llm_provider") == _SIM_PROVIDER
                    or getattr(self, "model", None) in _ZERO_COST_MODELS):
                return 0.0
            return calculator(self, *args, **kwargs)

        response_cost_calculator._workbench_trim = True  # type: ignore[attr-defined]
        response_cost_calculator.__wrapped__ = calculator  # type: ignore[attr-defined]
        Logging.response_cost_calculator = response_cost_calculator
        _applied.append("sim_cost")
