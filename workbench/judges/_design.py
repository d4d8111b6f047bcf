"""Factorial designs (judges x protocols x temperatures x trials x perturbations) and the
cost estimate made before any spend."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench import config
from workbench.judges import _interpret as ip
from workbench.judges._items import to_records
from workbench.judges._plan import (
    Call,
    detect_call,
    geval_sample_calls,
    item_units,
    plan_pairwise,
    plan_single,
    plan_summaries,
    plan_units,
)
from workbench.judges._spec import JudgeSpec

#: Completion tokens assumed per call kind when estimating (a rough guess, documented).
COMPLETION_TOKENS = {"score": 100, "multi": 150, "checklist": 80, "geval_lp": 1,
                     "geval_sample": 2, "verdict": 250}


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
        from workbench.perturb import OPERATORS

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
            if name not in OPERATORS:
                raise ValueError(f"Design.perturbations: unknown operator {name!r}; "
                                 f"known: {', '.join(sorted(OPERATORS))}")
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
    :func:`estimate` first to see them).
    """
    from workbench import perturb

    runs = []
    variants = design.spec_variants()
    for name, params in design.perturbations:
        items = perturb.apply(design.items, name, seed=design.seed, progress=progress, **params)
        for spec in variants:
            runs.append(Run(items, spec, name, params, design.rubric))
    return runs


def run_design(design: Design, *, progress: bool = True) -> pd.DataFrame:
    """Run every run of the design; one results frame (rows of all runs, in order)."""
    from workbench.judges._run import run_judging

    frames = [run_judging(run.items, run.spec, rubric=run.rubric, progress=progress)
              for run in expand_design(design, progress=progress)]
    return pd.concat(frames, ignore_index=True)


# --- estimate -----------------------------------------------------------------------------

def estimate_tokens(text: str) -> int:
    """Rough token count: ASCII characters / 4 plus other characters / 1.5 (Japanese and
    Chinese take about one token per 1-1.5 characters in GPT-4-class tokenizers).

    Examples
    --------
    >>> estimate_tokens("abcd" * 10), estimate_tokens("橋梁設計")
    (10, 3)
    """
    n_ascii = sum(1 for c in text if ord(c) < 128)
    return math.ceil(n_ascii / 4 + (len(text) - n_ascii) / 1.5)


def _prompt_tokens(request) -> int:
    return sum(estimate_tokens(str(m.get("content", ""))) + 4 for m in request.messages)


class _CacheView:
    """Read-only view of the LLM cache: which keys are stored, and their replies."""

    def __init__(self) -> None:
        self.cache = None
        if config.cache_mode() in ("readwrite", "readonly") and config.cache_dir().exists():
            from workbench.llm import open_cache

            self.cache = open_cache()
        self._memo: dict[str, dict | None] = {}

    def entry(self, key: str) -> dict | None:
        if self.cache is None:
            return None
        if key not in self._memo:
            try:
                raw = self.cache.get(key)
                entry = json.loads(raw) if raw is not None else None
                if entry is not None and (entry.get("key") != key or not isinstance(entry["response"]["text"], str)):
                    entry = None
            except Exception:  # noqa: BLE001 - a failed read is a miss
                entry = None
            self._memo[key] = entry
        return self._memo[key]

    def text(self, key: str) -> str | None:
        entry = self.entry(key)
        return None if entry is None else entry["response"]["text"]


@dataclass
class PlannedCall:
    """One call an estimate counts; ``key`` is None when its request depends on an
    earlier reply that is not cached yet (then it is counted as a call to make)."""

    stage: str
    model: str
    key: str | None
    prompt_tokens: int
    completion_tokens: int


def _planned(call: Call, stage: str, *, exact: bool = True, completion: int | None = None) -> PlannedCall:
    from workbench.llm import cache_key

    req = call.request
    tokens = completion if completion is not None else COMPLETION_TOKENS.get(call.kind, 100)
    return PlannedCall(stage, req.model, cache_key(req) if exact else None, _prompt_tokens(req), tokens)


def plan_requests(items: pd.DataFrame, spec: JudgeSpec, *, rubric: pd.DataFrame | None = None,
                  _view: _CacheView | None = None, _exact: bool = True) -> list[PlannedCall]:
    """The calls ``run_judging(items, spec, rubric=rubric)`` would make, as
    :class:`PlannedCall` rows. Calls that depend on an earlier stage (summaries,
    decompositions, geval auto-mode samples) are exact when that stage is cached, else
    counted with ``key=None`` and a token guess."""
    from workbench.llm import cache_key

    view = _view or _CacheView()
    records = to_records(items)
    if not records:
        return []
    out: list[PlannedCall] = []
    if spec.protocol == "pairwise":
        return [_planned(c, "judge", exact=_exact) for c in plan_pairwise(records, spec)]
    if spec.protocol == "summarize_then":
        judged, inexact, skipped = [], set(), set()
        for i, (rec, call) in enumerate(zip(records, plan_summaries(records, spec), strict=True)):
            resp_tokens = estimate_tokens(str(rec["response"]))
            out.append(_planned(call, "summary", exact=_exact, completion=min(300, resp_tokens // 2 + 10)))
            text = view.text(cache_key(call.request)) if _exact else None
            if text is None:
                inexact.add(i)
                judged.append(dict(rec))
            elif not text.strip():
                skipped.add(i)
                judged.append(dict(rec))
            else:
                judged.append(dict(rec, response=text.strip()))
        inner = spec.inner.replace(study=spec.study)
        for call in plan_single(judged, inner, rubric=rubric):
            rec = call.info["rec"]
            if rec not in skipped:
                out.extend(_single_planned(call, inner, view, exact=_exact and rec not in inexact))
        return out
    if spec.protocol == "decompose":
        unit_calls = plan_units(records, spec)
        for (i, _temp, _trial), call in unit_calls.items():
            ref_tokens = estimate_tokens(str(records[i]["reference"]))
            out.append(_planned(call, "decompose", exact=_exact, completion=int(1.5 * ref_tokens) + 20))
        for i, rec in enumerate(records):
            given = item_units(rec, f"items row {i}")
            for temp in spec.temperatures:
                for trial in range(spec.trials):
                    units, exact = given, _exact
                    if units is None:
                        text = view.text(cache_key(unit_calls[(i, float(temp), trial)].request)) if _exact else None
                        if text is None:
                            units, exact = [{"id": "u1", "role": "gist", "text": str(rec["reference"])}], False
                        else:
                            try:
                                units = ip.parse_units(text)
                            except Exception:  # noqa: BLE001 - run_judging sends no detection then
                                continue
                    call = detect_call(rec, spec, units, temp=temp, trial=trial)
                    out.append(_planned(call, "judge", exact=exact,
                                        completion=estimate_tokens(str(rec["response"])) // 2 + 20))
        return out
    for call in plan_single(records, spec, rubric=rubric):
        out.extend(_single_planned(call, spec, view, exact=_exact))
    return out


def _single_planned(call: Call, spec: JudgeSpec, view: _CacheView, *, exact: bool) -> list[PlannedCall]:
    from workbench.llm import cache_key

    planned = [_planned(call, "judge", exact=exact)]
    if call.kind == "geval_lp" and spec.geval_mode == "auto" and exact:
        entry = view.entry(cache_key(call.request))
        if entry is not None and not entry["response"].get("logprobs"):
            planned += [_planned(c, "judge") for c in geval_sample_calls(call, spec)]
    return planned


def _price(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, bool]:
    if model.startswith("sim/") or not prompt_tokens + completion_tokens:
        return 0.0, True
    import litellm  # workbench.config (imported above) keeps litellm offline

    try:
        p, c = litellm.cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                      completion_tokens=completion_tokens)
        return float(p) + float(c), True
    except Exception:  # noqa: BLE001 - unknown model: price unknown
        return 0.0, False


def estimate(design: Design) -> pd.DataFrame:
    """Calls, cache hits, tokens and cost per model of a design, before any spend.

    Parameters
    ----------
    design : Design
        The design (a single run: ``Design(items, spec)``).

    Returns
    -------
    DataFrame
        One row per model: ``model``; ``n_calls`` (distinct requests: identical requests are
        sent once); ``n_cached`` (already in the cache, free); ``n_to_call``; ``prompt_tokens``
        and ``completion_tokens`` of the calls to make (estimated: see
        :func:`estimate_tokens`; completion tokens are a per-protocol guess,
        :data:`COMPLETION_TOKENS`); ``cost_usd`` of the calls to make, from litellm's price
        table (0 for ``sim/`` models); ``price_known`` (False when litellm has no price for
        the model); ``exact`` (False when some requests depend on replies not cached yet,
        e.g. judging a summary not made yet: those are counted as calls to make).

    Notes
    -----
    The cache is read, never written; in ``refresh`` and ``off`` modes nothing counts as
    cached. ``geval`` in ``auto`` mode is counted as log-probability calls; samples are
    added only when a cached reply shows the provider returns no log-probabilities.
    LLM perturbations are counted as calls of their model; the judge calls on their
    output are exact only when the perturbation calls are cached.
    """
    from workbench import perturb
    from workbench.llm import cache_key

    view = _CacheView()
    planned: list[PlannedCall] = []
    variants = design.spec_variants()
    for name, params in design.perturbations:
        exact = True
        if name in perturb.LLM_OPERATORS:
            requests = perturb.plan_requests(design.items, name, seed=design.seed, **params)
            for req in requests:
                text_tokens = _prompt_tokens(req)
                planned.append(PlannedCall("perturb", req.model, cache_key(req), text_tokens, text_tokens))
            if all(view.entry(cache_key(r)) is not None for r in requests):
                items = perturb.apply(design.items, name, seed=design.seed, **params)
            else:
                items, exact = design.items, False
        else:
            items = perturb.apply(design.items, name, seed=design.seed, **params)
        for spec in variants:
            planned.extend(plan_requests(items, spec, rubric=design.rubric, _view=view, _exact=exact))
    rows = []
    for model in dict.fromkeys(p.model for p in planned):
        mine = [p for p in planned if p.model == model]
        unique: dict[Any, PlannedCall] = {}
        for k, p in enumerate(mine):
            unique[p.key if p.key is not None else ("?", k)] = p
        cached = {k for k, p in unique.items() if p.key is not None and view.entry(p.key) is not None}
        to_call = [p for k, p in unique.items() if k not in cached]
        ptok = sum(p.prompt_tokens for p in to_call)
        ctok = sum(p.completion_tokens for p in to_call)
        cost, known = _price(model, ptok, ctok)
        rows.append({"model": model, "n_calls": len(unique), "n_cached": len(cached),
                     "n_to_call": len(to_call), "prompt_tokens": ptok, "completion_tokens": ctok,
                     "cost_usd": cost, "price_known": known,
                     "exact": all(p.key is not None for p in mine)})
    return pd.DataFrame(rows, columns=["model", "n_calls", "n_cached", "n_to_call", "prompt_tokens",
                                       "completion_tokens", "cost_usd", "price_known", "exact"])

