"""Factorial designs: judges x protocols x temperatures x trials x perturbations, and
their cost before any spend (:func:`estimate`).

The estimate drives the same protocols as :func:`~workbench.judges.run_judging`
(``_protocols``) with a sender that answers each call from the cache
(:func:`workbench.llm.peek`) as if it had been sent; a call that is not cached is
counted as one to make and answered by its guess (:attr:`Call.guess`), and calls planned
from a guess are counted inexact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench import config, llm, perturb
from workbench.judges._interpret import Result
from workbench.judges._items import to_records
from workbench.judges._plan import Call, estimate_tokens
from workbench.judges._protocols import Sender, drive, protocol_for, run_judging
from workbench.judges._spec import JudgeSpec


@dataclass(frozen=True)
class Run:
    """One ``run_judging`` call of a design: the (perturbed) items and the spec."""

    items: pd.DataFrame = field(repr=False)
    spec: JudgeSpec
    perturbation: str
    perturbation_params: dict = field(default_factory=dict)
    rubric: pd.DataFrame | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Design:
    """A factorial judging design.

    Parameters
    ----------
    items : DataFrame
        The items (one row per judged answer), as for :func:`run_judging`.
    specs : JudgeSpec or tuple of JudgeSpec
        The protocols (with their templates and options).
    judges : tuple of str, optional
        Judge models crossed with every spec (replacing its ``judge_model``).
    temperatures : tuple of float, optional
        When given, replaces every spec's temperatures.
    trials : int, optional
        When given, replaces every spec's trials.
    perturbations : tuple
        Operator names of :mod:`workbench.perturb` or ``(name, params)`` pairs; ``"none"``
        is the unperturbed baseline.
    seed : int
        Seed of the perturbations.
    rubric : DataFrame, optional
        Passed to every run (holistic criteria, checklist items).
    study : str, optional
        Written to every spec's ``study``.
    """

    items: pd.DataFrame = field(repr=False)
    specs: tuple[JudgeSpec, ...]
    judges: tuple[str, ...] = ()
    temperatures: tuple[float, ...] = ()
    trials: int | None = None
    perturbations: tuple = ("none",)
    seed: int = 0
    rubric: pd.DataFrame | None = field(default=None, repr=False)
    study: str | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        specs = (self.specs,) if isinstance(self.specs, JudgeSpec) else tuple(self.specs)
        if not specs or not all(isinstance(s, JudgeSpec) for s in specs):
            raise ValueError("Design.specs: give one or more JudgeSpec")
        set_(self, "specs", specs)
        set_(self, "judges", (self.judges,) if isinstance(self.judges, str) else tuple(self.judges))
        temps = self.temperatures
        set_(self, "temperatures", (temps,) if isinstance(temps, int | float) else tuple(temps))
        entries = []
        for entry in ((self.perturbations,) if isinstance(self.perturbations, str) else self.perturbations):
            name, params = (entry, {}) if isinstance(entry, str) else (entry[0], dict(entry[1]))
            if name not in perturb.OPERATORS:
                raise ValueError(f"Design.perturbations: unknown operator {name!r}; "
                                 f"known: {', '.join(sorted(perturb.OPERATORS))}")
            entries.append((name, params))
        if not entries:
            raise ValueError("Design.perturbations: give at least one (use 'none' for the baseline)")
        set_(self, "perturbations", tuple(entries))
        if not isinstance(self.items, pd.DataFrame):
            raise ValueError("Design.items: expected a DataFrame")

    def spec_variants(self) -> list[JudgeSpec]:
        """Every spec crossed with the judges, with the temperature/trials overrides."""
        out = []
        for spec in self.specs:
            for judge in self.judges or (spec.judge_model,):
                changes: dict[str, Any] = {}
                if judge != spec.judge_model:
                    changes["judge_model"] = judge
                if self.temperatures:
                    changes["temperature"] = tuple(self.temperatures)
                if self.trials is not None:
                    changes["trials"] = self.trials
                if self.study is not None:
                    changes["study"] = self.study
                out.append(spec.replace(**changes) if changes else spec)
        return out


def expand_design(design: Design, *, progress: bool = False) -> list[Run]:
    """The runs of a design: every perturbation x spec x judge.

    Deterministic perturbations are applied here; LLM perturbations (paraphrase,
    sentiment) are applied through the cached client (a call per uncached item: use
    :func:`~workbench.judges.estimate` first to see them).
    """
    runs = []
    variants = design.spec_variants()
    for name, params in design.perturbations:
        items = perturb.apply(design.items, name, seed=design.seed, progress=progress, **params)
        for spec in variants:
            runs.append(Run(items, spec, name, params, design.rubric))
    return runs


def run_design(design: Design, *, progress: bool = True) -> pd.DataFrame:
    """Run every run of the design; one results frame (rows of all runs, in order)."""
    frames = [run_judging(run.items, run.spec, rubric=run.rubric, progress=progress)
              for run in expand_design(design, progress=progress)]
    return pd.concat(frames, ignore_index=True)


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


#: The stage an estimate reports for a call kind (every other kind: ``judge``).
_STAGES = {"summary": "summary", "units": "decompose"}


def _from_cache(planned: list[PlannedCall], *, exact: bool = True) -> Sender:
    """A sender that answers from the cache and appends a :class:`PlannedCall` per call.

    A call is exact when ``exact`` (its items are not themselves a guess) and none of
    the replies it was planned from is a guess; only exact calls are looked up. A guess
    has the text of :attr:`Call.guess` and, when log-probabilities were asked for,
    some (G-Eval ``auto`` then adds no samples: they are counted only once a cached
    reply shows the provider returns none).
    """
    def send(calls: list[Call]) -> list[Result]:
        out: list[Result] = []
        for call in calls:
            req, (text, completion) = call.request, call.guess
            is_exact = exact and not any(isinstance(dep, _Guess) for dep in call.depends_on)
            reply = llm.peek(req) if is_exact else None
            key = llm.cache_key(req)
            planned.append(PlannedCall(_STAGES.get(call.kind, "judge"), req.model, key if is_exact else None,
                                       _prompt_tokens(req), completion, cached=reply is not None))
            if reply is None:
                logprobs = [{"token": text, "logprob": 0.0, "top_logprobs": []}] if req.logprobs else None
                reply = _Guess(text=text, model=req.model, usage=llm.Usage(0, 0), cost_usd=0.0,
                               latency_s=0.0, cached=False, key=key, logprobs=logprobs)
            out.append(reply)
        return out
    return send


def _planned(items: pd.DataFrame, spec: JudgeSpec, rubric: pd.DataFrame | None, *,
             exact: bool) -> list[PlannedCall]:
    records, planned = to_records(items), []
    if records:
        drive(protocol_for(records, spec, rubric), _from_cache(planned, exact=exact))
    return planned


def plan_requests(items: pd.DataFrame, spec: JudgeSpec, *, rubric: pd.DataFrame | None = None) -> list[PlannedCall]:
    """The calls ``run_judging(items, spec, rubric=rubric)`` would make, as
    :class:`PlannedCall` rows (``key=None``: planned from a reply not cached yet)."""
    return _planned(items, spec, rubric, exact=True)


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
    cached. LLM perturbations are counted as calls of their model; the judge calls on
    their output are exact only when the perturbation calls are cached.
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
            planned.extend(_planned(items, spec, design.rubric, exact=exact))
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
