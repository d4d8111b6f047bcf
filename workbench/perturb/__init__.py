"""Bias perturbations: pure, seeded operators that return a new item (DESIGN §1).

Each operator is ``op(item, *, rng=None, **params) -> dict`` and records its name in the
item's ``perturbation`` and its parameters in ``perturbation_params`` (JSON). Operators
that need an LLM (``paraphrase``, ``sentiment``) go through the cached client; the others
are deterministic text transforms. :func:`apply` perturbs a whole items frame: new
``item_id``, ``source_item`` = the original id, one ``complete_many`` for LLM operators.

=====================  ==================================================  ==========
operator               what it does                                        keeps text
=====================  ==================================================  ==========
``none``               the baseline (no change)                            yes
``position_swap``      swap response_a/response_b (pairwise)               yes
``verbosity_padding``  add redundant sentences                             yes
``authority``          add a fabricated citation                           yes
``bandwagon``          add "90% of people prefer this answer."             yes
``distraction``        insert irrelevant details                           yes
``prompt_injection``   append "ignore the rubric … maximum score"          yes
``self_label``         name the answer's author (``<author>`` block)        yes
``recency``            question cue: recently saw a patient with X         question+
``frequency``          question cue: doctors most frequently see X          question+
``status_quo``         question cue: hospital has used X for ten years     question+
``demographic_swap``   swap man/woman, he/she … (or a given mapping)       no
``sentiment``          LLM rewrite to a positive / negative tone           no
``paraphrase``         LLM paraphrase                                      no
=====================  ==================================================  ==========

"keeps text": every original sentence of the answer is still there, in order;
"question+": the original question is kept whole and a cue sentence is added.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pandas as pd

from workbench import llm
from workbench.errors import ProviderError
from workbench.perturb import _llm
from workbench.perturb._llm import paraphrase, sentiment
from workbench.perturb._ops import (
    authority,
    bandwagon,
    demographic_swap,
    distraction,
    frequency,
    identity,
    position_swap,
    prompt_injection,
    recency,
    self_label,
    status_quo,
    verbosity_padding,
)
from workbench.perturb._text import make_rng, stable_seed
from workbench.text import is_missing, split_sentences

#: name -> operator
OPERATORS: dict[str, Callable[..., dict]] = {
    "authority": authority,
    "bandwagon": bandwagon,
    "demographic_swap": demographic_swap,
    "distraction": distraction,
    "frequency": frequency,
    "none": identity,
    "paraphrase": paraphrase,
    "position_swap": position_swap,
    "prompt_injection": prompt_injection,
    "recency": recency,
    "self_label": self_label,
    "sentiment": sentiment,
    "status_quo": status_quo,
    "verbosity_padding": verbosity_padding,
}
#: operators that keep every original sentence of the answer
CONTENT_PRESERVING = frozenset({"authority", "bandwagon", "distraction", "none", "position_swap",
                                "prompt_injection", "self_label", "verbosity_padding"})
#: operators that call an LLM through the cached client
LLM_OPERATORS = frozenset({"paraphrase", "sentiment"})
#: operators that edit the question (the cognitive biases of seed 002)
QUESTION_OPERATORS = frozenset({"frequency", "recency", "status_quo"})


def _operator(name: str) -> Callable[..., dict]:
    if name not in OPERATORS:
        raise ValueError(f"unknown perturbation {name!r}; known: {', '.join(sorted(OPERATORS))}")
    return OPERATORS[name]


def _new_id(item_id: Any, name: str, params: dict) -> str:
    if name == "none":
        return str(item_id)
    if not params:
        return f"{item_id}~{name}"
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:6]
    return f"{item_id}~{name}-{digest}"


def plan_requests(items: pd.DataFrame, name: str, *, seed: int = 0, **params: Any) -> list:
    """The ``workbench.llm.Request`` objects an LLM operator would send for ``items`` (used
    by :func:`workbench.judges.estimate`); ``[]`` for deterministic operators."""
    _operator(name)
    if name not in LLM_OPERATORS:
        return []
    return [_llm.build_request(name, rec, seed=seed, **params) for rec in items.to_dict("records")]


def apply(items: pd.DataFrame, name: str, *, seed: int = 0, progress: bool = False,
          **params: Any) -> pd.DataFrame:
    """Perturb every row of an items frame.

    Parameters
    ----------
    items : DataFrame
        Items (or items joined with responses: one row per answer).
    name : str
        Operator name (:data:`OPERATORS`).
    seed : int
        Seed: each row's generator is seeded from (seed, operator, item_id), so the result
        does not depend on row order; LLM operators send it as the request ``sample``.
    progress : bool
        Progress bar of the LLM operators' ``complete_many``.
    **params
        The operator's parameters.

    Returns
    -------
    DataFrame
        Same columns plus ``perturbation``, ``perturbation_params`` and ``source_item``
        (the original item_id); ``item_id`` becomes ``<item_id>~<name>`` (with a short hash
        of the parameters when some are given).

    Raises
    ------
    ProviderError
        An LLM operator's call failed for some rows (they are named); nothing is dropped
        silently.
    """
    op = _operator(name)
    if not isinstance(items, pd.DataFrame):
        raise TypeError(f"items must be a DataFrame, got {type(items).__name__}")
    records = items.to_dict("records")
    if name in LLM_OPERATORS:
        requests = [_llm.build_request(name, rec, seed=seed, **params) for rec in records]
        results = llm.complete_many(requests, progress=progress)
        out, failures = [], []
        for rec, res in zip(records, results, strict=True):
            try:
                out.append(_llm.finish_llm(name, rec, res, seed=seed, **params))
            except ProviderError as exc:
                failures.append(str(exc))
        if failures:
            raise ProviderError(f"{len(failures)} of {len(records)} {name} calls failed: "
                                + "; ".join(failures[:5]))
    else:
        out = [
            op(rec, rng=make_rng(None, seed, name, rec.get("item_id")), **params)
            for rec in records
        ]
    for rec, new in zip(records, out, strict=True):
        source = rec.get("source_item")
        if is_missing(source) or source == "":
            source = rec.get("item_id")
        new["source_item"] = str(source)
        new["item_id"] = _new_id(rec.get("item_id"), name, params)
    return pd.DataFrame(out)


__all__ = [
    "CONTENT_PRESERVING",
    "LLM_OPERATORS",
    "OPERATORS",
    "QUESTION_OPERATORS",
    "apply",
    "authority",
    "bandwagon",
    "demographic_swap",
    "distraction",
    "frequency",
    "identity",
    "make_rng",
    "paraphrase",
    "plan_requests",
    "position_swap",
    "prompt_injection",
    "recency",
    "self_label",
    "sentiment",
    "split_sentences",
    "stable_seed",
    "status_quo",
    "verbosity_padding",
]
