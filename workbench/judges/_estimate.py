"""The cost of a design before any spend: walk each protocol's stages against the cache.

The estimate walks the same stages as :func:`~workbench.judges.run_judging`
(``_protocols``) with a sender that answers each call from the cache
(:func:`workbench.llm.peek`) as if it had been sent; a call that is not cached is
counted as one to make and answered by its stage's guess, and calls planned from a
guess are counted inexact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench import config, llm, perturb
from workbench.judges._design import Design
from workbench.judges._items import to_records
from workbench.judges._plan import Call
from workbench.judges._protocols import Result, Stage, estimate_tokens, protocol_for, walk
from workbench.judges._spec import JudgeSpec


@dataclass
class PlannedCall:
    """One call an estimate counts; ``key`` is None when its request depends on an
    earlier reply that is not cached yet (then it is counted as a call to make);
    ``cached`` when the cache holds its reply."""

    stage: str
    model: str
    key: str | None
    prompt_tokens: int
    completion_tokens: int
    cached: bool = field(default=False)


def _prompt_tokens(request: llm.Request) -> int:
    return sum(estimate_tokens(str(m.get("content", ""))) + 4 for m in request.messages)


@dataclass(frozen=True)
class _Guess(llm.Completion):
    """A stand-in reply (an estimate's guess) for a call whose reply is not cached."""


class _Peek:
    """A sender that answers from the cache and records a :class:`PlannedCall` per call.

    A call is exact when ``exact`` (its items are not themselves a guess) and none of
    the replies it was planned from is a guess; only exact calls are looked up. A guess
    has the text of :attr:`Stage.guess` and, when log-probabilities were asked for,
    some (G-Eval ``auto`` then adds no samples: they are counted only once a cached
    reply shows the provider returns none).
    """

    def __init__(self, *, exact: bool = True):
        self.exact = exact
        self.planned: list[PlannedCall] = []

    def __call__(self, stage: Stage, calls: list[Call]) -> list[Result]:
        out: list[Result] = []
        for call in calls:
            req = call.request
            exact = self.exact and not any(isinstance(dep, _Guess) for dep in call.depends_on)
            reply = llm.peek(req) if exact else None
            text, completion = stage.guess(call)
            key = llm.cache_key(req)
            self.planned.append(PlannedCall(stage.name, req.model, key if exact else None,
                                            _prompt_tokens(req), completion, cached=reply is not None))
            if reply is None:
                logprobs = [{"token": text, "logprob": 0.0, "top_logprobs": []}] if req.logprobs else None
                reply = _Guess(text=text, model=req.model, usage=llm.Usage(0, 0), cost_usd=0.0,
                               latency_s=0.0, cached=False, key=key, logprobs=logprobs)
            out.append(reply)
        return out


def _walk_planned(items: pd.DataFrame, spec: JudgeSpec, rubric: pd.DataFrame | None, *,
                  exact: bool) -> list[PlannedCall]:
    records = to_records(items)
    if not records:
        return []
    sender = _Peek(exact=exact)
    walk(protocol_for(records, spec, rubric), sender)
    return sender.planned


def plan_requests(items: pd.DataFrame, spec: JudgeSpec, *, rubric: pd.DataFrame | None = None) -> list[PlannedCall]:
    """The calls ``run_judging(items, spec, rubric=rubric)`` would make, as
    :class:`PlannedCall` rows, found by walking the protocol's stages against the cache.
    Calls that depend on an earlier stage (summaries, decompositions, geval auto-mode
    samples) are exact when that stage is cached, else counted with ``key=None`` and a
    token guess."""
    return _walk_planned(items, spec, rubric, exact=True)


def estimate(design: Design, *, deadline: float | None = None, rpm: float | None = None,
             tpm: float | None = None) -> pd.DataFrame:
    """Calls, cache hits, tokens and cost per model of a design, before any spend.

    Parameters
    ----------
    design : Design
        The design (a single run: ``Design(items, spec)``).
    deadline, rpm, tpm
        With ``deadline`` (seconds): the split ``complete_many(..., mode="auto",
        deadline=...)`` would make at a quota of ``rpm`` requests and ``tpm`` tokens per
        minute per model (default: ``WORKBENCH_RPM`` / ``WORKBENCH_TPM``; neither: no
        quota, all online), in three more columns: ``n_online`` (the calls the quota
        answers by the deadline, burst not counted), ``n_batch`` and ``cost_usd_auto``
        (each share at its price).

    Returns
    -------
    DataFrame
        One row per model: ``model``; ``n_calls`` (distinct requests: identical requests are
        sent once); ``n_cached`` (already in the cache, free); ``n_to_call``; ``prompt_tokens``
        and ``completion_tokens`` of the calls to make (estimated: see
        :func:`estimate_tokens`; completion tokens are a per-protocol guess,
        :data:`COMPLETION_TOKENS`); ``cost_usd`` of the calls to make, from litellm's price
        table (:func:`workbench.llm.price`; 0 for ``sim/`` models); ``cost_usd_batch``, the
        same calls sent as provider batch jobs (``complete_many(..., mode="batch")``, priced
        by :func:`workbench.llm.batch_price`: litellm's batch prices, else half the online
        price); ``price_known`` (False
        when litellm has no price for the model); ``exact`` (False when some requests
        depend on replies not cached yet, e.g. judging a summary not made yet: those are
        counted as calls to make).

    Notes
    -----
    The cache is read, never written; in ``refresh`` and ``off`` modes nothing counts as
    cached. The estimate walks the protocols' stages as ``run_judging`` does, answering
    from the cache; ``geval`` in ``auto`` mode is counted as log-probability calls, and
    samples are added only when a cached reply shows the provider returns no
    log-probabilities. LLM perturbations are counted as calls of their model; the judge
    calls on their output are exact only when the perturbation calls are cached.
    """
    planned: list[PlannedCall] = []
    variants = design.spec_variants()
    for name, params in design.perturbations:
        exact = True
        if name in perturb.LLM_OPERATORS:
            requests = perturb.plan_requests(design.items, name, seed=design.seed, **params)
            cached = [llm.peek(req) is not None for req in requests]
            for req, hit in zip(requests, cached, strict=True):
                text_tokens = _prompt_tokens(req)
                planned.append(PlannedCall("perturb", req.model, llm.cache_key(req), text_tokens, text_tokens,
                                           cached=hit))
            if all(cached):
                items = perturb.apply(design.items, name, seed=design.seed, **params)
            else:
                items, exact = design.items, False
        else:
            items = perturb.apply(design.items, name, seed=design.seed, **params)
        for spec in variants:
            planned.extend(_walk_planned(items, spec, design.rubric, exact=exact))
    rows = []
    for model in dict.fromkeys(p.model for p in planned):
        mine = [p for p in planned if p.model == model]
        unique: dict[Any, PlannedCall] = {}
        for k, p in enumerate(mine):
            unique[p.key if p.key is not None else ("?", k)] = p
        to_call = [p for p in unique.values() if not p.cached]
        ptok = sum(p.prompt_tokens for p in to_call)
        ctok = sum(p.completion_tokens for p in to_call)
        cost = llm.price(model, ptok, ctok)
        known = not math.isnan(cost)
        batch_cost = llm.batch_price(model, ptok, ctok) if known else 0.0
        rows.append({"model": model, "n_calls": len(unique), "n_cached": len(unique) - len(to_call),
                     "n_to_call": len(to_call), "prompt_tokens": ptok, "completion_tokens": ctok,
                     "cost_usd": cost if known else 0.0, "cost_usd_batch": batch_cost,
                     "price_known": known,
                     "exact": all(p.key is not None for p in mine)})
    table = pd.DataFrame(rows, columns=["model", "n_calls", "n_cached", "n_to_call",
                                        "prompt_tokens", "completion_tokens", "cost_usd",
                                        "cost_usd_batch", "price_known", "exact"])
    if deadline is not None:
        table = _auto_split(table, deadline, rpm, tpm)
    return table


def _auto_split(table: pd.DataFrame, deadline: float, rpm: float | None,
                tpm: float | None) -> pd.DataFrame:
    """Add ``n_online``, ``n_batch``, ``cost_usd_auto`` (see :func:`estimate`)."""
    if not deadline > 0:
        raise ValueError(f"deadline={deadline!r}: expected a number of seconds > 0")
    rpm = rpm if rpm is not None else config.rate_cap("rpm")
    tpm = tpm if tpm is not None else config.rate_cap("tpm")
    online = []
    for row in table.itertuples():
        n = int(row.n_to_call)
        limits = []
        if rpm:
            limits.append(rpm / 60.0 * deadline)
        if tpm and n:
            per_call = (row.prompt_tokens + row.completion_tokens) / n
            limits.append(tpm / 60.0 * deadline / max(per_call, 1.0))
        online.append(n if not limits or row.model.startswith("sim/")
                      else min(n, math.floor(min(limits))))
    out = table.copy()
    out["n_online"] = online
    out["n_batch"] = out["n_to_call"] - out["n_online"]
    share = (out["n_online"] / out["n_to_call"]).where(out["n_to_call"] > 0, 1.0)
    out["cost_usd_auto"] = out["cost_usd"] * share + out["cost_usd_batch"] * (1 - share)
    return out
