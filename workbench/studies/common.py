"""Pieces every study uses: answer generation, table writing, backend labels."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from workbench.judges import render
from workbench.llm import CallFailure, Request, complete_many, model_backend
from workbench.notebook import results_dir

#: Columns of :func:`generate_answers`.
ANSWER_COLUMNS = (
    "item_id", "answer_model", "answer_sample", "response", "ok", "error",
    "cache_key", "backend", "cost_usd",
)


#: Backend label from a model string (``sim`` for ``sim/…``); one definition, in the llm layer.
backend_of = model_backend


def is_simulated(models: Iterable[str]) -> bool:
    """True when every model is simulated (figures must then say "simulated judges")."""
    return all(backend_of(m) == "sim" for m in models)


def generate_answers(items: pd.DataFrame, answer_models: Sequence[str], *,
                     temperature: float = 1.0, samples: int = 1, template: str = "answer",
                     concurrency: int | None = None, progress: bool = True,
                     budget_usd: float | None = None) -> pd.DataFrame:
    """Ask each answer model each item's question through the cached client.

    One row per (item, model, sample) in :data:`ANSWER_COLUMNS`. A failed call is a
    row with ``ok=False``, ``response`` missing and the error kept — never dropped.
    The question goes into the ``answer`` template's ``<question>`` block in the
    item's language (``lang`` column, default ``en``).
    """
    if items.empty:
        raise ValueError("generate_answers: items is empty")
    for column in ("item_id", "question"):
        if column not in items.columns:
            raise ValueError(f"generate_answers: items has no column {column!r}")
    keys, requests = [], []
    for item in items.itertuples(index=False):
        lang = getattr(item, "lang", "en") or "en"
        messages = render(template, lang=lang, question=item.question)
        for model in answer_models:
            for sample in range(samples):
                keys.append((item.item_id, model, sample))
                requests.append(Request(model=model, messages=messages,
                                        temperature=temperature, sample=sample))
    results = complete_many(requests, concurrency=concurrency, progress=progress,
                            budget_usd=budget_usd)
    rows = []
    for (item_id, model, sample), result in zip(keys, results, strict=True):
        failed = isinstance(result, CallFailure)
        rows.append({
            "item_id": item_id, "answer_model": model, "answer_sample": sample,
            "response": None if failed else result.text,
            "ok": not failed,
            "error": f"{result.error_type}: {result.message}" if failed else None,
            "cache_key": result.key,
            "backend": model_backend(model) if failed else result.backend,
            "cost_usd": 0.0 if failed else result.cost_usd,
        })
    return pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))


def write_tables(study: str, **frames: pd.DataFrame) -> dict[str, str]:
    """Write each frame as ``<results>/<study>/<name>.csv``; return name → relative path."""
    folder = results_dir(study)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, frame in frames.items():
        path = folder / f"{name}.csv"
        frame.to_csv(path, index=False)
        written[name] = f"{study}/{path.name}"
    return written
