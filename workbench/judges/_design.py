"""Factorial designs: judges x protocols x temperatures x trials x perturbations
(their cost before any spend is :func:`~workbench.judges.estimate`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench import perturb
from workbench.judges._run import run_judging
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
