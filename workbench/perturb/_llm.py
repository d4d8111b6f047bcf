"""Perturbation operators that need an LLM (paraphrase, sentiment rewrite).

They build a prompt from the workbench templates (``paraphrase``, ``rewrite_sentiment``)
and call the cached client, so reruns replay from the cache. A batch of items goes
through ONE ``complete_many`` (see :func:`workbench.perturb.apply`).
"""

from __future__ import annotations

from typing import Any

from workbench import llm
from workbench.errors import ProviderError
from workbench.perturb._ops import _lang, _record, finish, target_field
from workbench.prompts import POLARITY_HINT, render

DEFAULT_MODEL = "sim/paraphraser"


def build_request(name: str, item: Any, *, seed: int = 0, model: str = DEFAULT_MODEL,
                  field: str | None = None, polarity: str = "positive", temperature: float = 0.0,
                  params: dict | None = None) -> llm.Request:
    """The ``workbench.llm.Request`` of an LLM operator for one item (``sample = seed``)."""
    rec = _record(item)
    text = rec[target_field(rec, field)]
    lang = _lang(rec)
    if name == "paraphrase":
        messages = render("paraphrase", lang=lang, text=text)
    elif name == "sentiment":
        if polarity not in ("positive", "negative"):
            raise ValueError(f"sentiment: polarity must be 'positive' or 'negative', got {polarity!r}")
        messages = render("rewrite_sentiment", lang=lang, text=text, polarity=polarity,
                          polarity_hint=POLARITY_HINT[(lang, polarity)])
    else:
        raise ValueError(f"{name!r} is not an LLM operator")
    return llm.Request(model=model, messages=messages, temperature=float(temperature), sample=int(seed),
                   params=dict(params or {}))


def finish_llm(name: str, item: Any, result: llm.Completion | llm.CallFailure, *, seed: int = 0, model: str = DEFAULT_MODEL,
               field: str | None = None, polarity: str = "positive", temperature: float = 0.0,
               params: dict | None = None) -> dict:
    """The perturbed item from the operator's completion; a failed or empty reply raises."""
    rec = _record(item)
    name_field = target_field(rec, field)
    if not isinstance(result, llm.Completion):
        raise ProviderError(f"{name} of item {rec.get('item_id')!r} failed: "
                            f"{result.error_type}: {result.message}")
    text = result.text.strip()
    if not text:
        raise ProviderError(f"{name} of item {rec.get('item_id')!r}: the model returned an empty text")
    rec[name_field] = text
    recorded = {"model": model, "seed": seed, "field": field, "temperature": temperature}
    if name == "sentiment":
        recorded["polarity"] = polarity
    return finish(rec, name, recorded)


def _one(name: str, item: Any, **options: Any) -> dict:
    """One item through ``complete_many`` (``apply`` sends a whole frame in one call)."""
    (result,) = llm.complete_many([build_request(name, item, **options)], progress=False)
    return finish_llm(name, item, result, **options)


def paraphrase(item: Any, *, rng=None, seed: int = 0, model: str = DEFAULT_MODEL,
               field: str | None = None, temperature: float = 0.0, params: dict | None = None) -> dict:
    """Paraphrase the answer with an LLM (content kept, wording changed) through the
    cached client; ``seed`` is sent as the request's ``sample``."""
    return _one("paraphrase", item, seed=seed, model=model, field=field,
                temperature=temperature, params=params)


def sentiment(item: Any, *, rng=None, polarity: str = "positive", seed: int = 0,
              model: str = DEFAULT_MODEL, field: str | None = None, temperature: float = 0.0,
              params: dict | None = None) -> dict:
    """Rewrite the answer's tone (``positive`` / ``negative``) with an LLM, content kept
    (sentiment bias, Ye et al. 2024), through the cached client."""
    return _one("sentiment", item, seed=seed, model=model, field=field, polarity=polarity,
                temperature=temperature, params=params)
