"""Tables of LLM calls for notebooks: one row per call, and a cost and cache summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: Columns of ``calls_frame``. Latency is left out on purpose: it changes from run to
#: run, and notebooks store their outputs for nbval.
CALL_COLUMNS = (
    "stage",
    "model",
    "backend",
    "ok",
    "cached",
    "error_type",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "cost_known",
    "key",
    "text",
)

#: Columns of ``cost_cache_summary``.
SUMMARY_COLUMNS = (
    "stage",
    "calls",
    "cache_hits",
    "provider_calls",
    "failures",
    "hit_rate",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "saved_usd",
)


def _usage(usage: Any, field: str) -> float:
    if usage is None:
        return np.nan
    value = usage.get(field) if isinstance(usage, Mapping) else getattr(usage, field, None)
    return np.nan if value is None else value


def _row(result: Any, stage: Any, index: int) -> dict[str, Any]:
    if hasattr(result, "error_type"):  # a CallFailure
        return {
            "stage": stage,
            "model": getattr(result, "model", None),
            "backend": getattr(result, "backend", None),
            "ok": False,
            "cached": False,
            "error_type": result.error_type,
            "prompt_tokens": np.nan,
            "completion_tokens": np.nan,
            "cost_usd": np.nan,
            "cost_known": None,
            "key": getattr(result, "key", None),
            "text": None,
        }
    if hasattr(result, "text") and hasattr(result, "cached"):  # a Completion
        known = bool(getattr(result, "cost_known", True))
        return {
            "stage": stage,
            "model": result.model,
            "backend": result.backend,
            "ok": True,
            "cached": bool(result.cached),
            "error_type": None,
            "prompt_tokens": _usage(result.usage, "prompt_tokens"),
            "completion_tokens": _usage(result.usage, "completion_tokens"),
            "cost_usd": result.cost_usd if known else np.nan,
            "cost_known": known,
            "key": result.key,
            "text": result.text,
        }
    raise TypeError(
        f"result {index} of stage {stage!r} is a {type(result).__name__}, "
        "not a Completion or CallFailure"
    )


def calls_frame(
    results: Sequence[Any] | Mapping[str, Sequence[Any]], *, stage: str | None = None
) -> pd.DataFrame:
    """One row per LLM call (``CALL_COLUMNS``), from ``complete``/``complete_many`` results.

    Parameters
    ----------
    results : sequence or mapping
        ``Completion`` and ``CallFailure`` objects, or a mapping from a stage label to
        such a sequence (stages keep the mapping's order).
    stage : str, optional
        Stage label for a plain sequence.

    Returns
    -------
    pandas.DataFrame
        ``stage, model, backend, ok, cached, error_type, prompt_tokens,
        completion_tokens, cost_usd, cost_known, key, text`` (the reply). A failed call is a
        row with ``ok=False``, its ``error_type`` and a missing cost: it is kept, never
        dropped or counted as free. A reply of a model without a price (``cost_known``
        False) has a missing cost too, never the $0 the client records for it.
    """
    groups = results.items() if isinstance(results, Mapping) else [(stage, results)]
    rows = []
    for label, group in groups:
        if not isinstance(group, Sequence) or isinstance(group, str):
            group = [group]  # a single Completion
        rows.extend(_row(result, label, i) for i, result in enumerate(group))
    frame = pd.DataFrame(rows, columns=list(CALL_COLUMNS))
    return frame.astype({"ok": bool, "cached": bool})


def _total(costs: pd.Series) -> float:
    """Sum of the costs; NaN (unknown) when any of them is unknown."""
    return float(costs.sum()) if costs.notna().all() else np.nan


def cost_cache_summary(calls: pd.DataFrame, *, total: bool = True) -> pd.DataFrame:
    """Calls, cache hits, failures, tokens and cost per stage of a ``calls_frame``.

    Parameters
    ----------
    calls : pandas.DataFrame
        Output of ``calls_frame``.
    total : bool
        Append a ``total`` row.

    Returns
    -------
    pandas.DataFrame
        ``SUMMARY_COLUMNS``: ``calls`` (rows), ``cache_hits`` (served from the cache),
        ``provider_calls`` (successful calls that reached the provider), ``failures``,
        ``hit_rate`` (cache_hits / calls); ``prompt_tokens``, ``completion_tokens`` and
        ``cost_usd`` summed over the provider calls (what this run sent and paid; a
        failure's cost is unknown and not counted; NaN, unknown, when a provider call's
        model has no price); ``saved_usd``, the original cost of the replies served from
        the cache (a Completion replayed from the cache keeps the cost of the call that
        made it; NaN when one of them is unknown).

    Examples
    --------
    >>> calls = pd.DataFrame({"stage": ["a", "a", "b"], "ok": [True, True, False],
    ...                       "cached": [False, True, False], "prompt_tokens": [10, 10, None],
    ...                       "completion_tokens": [2, 2, None], "cost_usd": [0.0, 0.0, None]})
    >>> cost_cache_summary(calls)[["stage", "calls", "cache_hits", "failures"]]
       stage  calls  cache_hits  failures
    0      a      2           1         0
    1      b      1           0         1
    2  total      3           1         1
    """
    missing = [c for c in ("stage", "ok", "cached") if c not in calls.columns]
    if missing:
        raise ValueError(f"cost_cache_summary: columns {missing} missing (use calls_frame)")
    frame = calls.assign(
        _hit=calls["ok"] & calls["cached"],
        _call=calls["ok"] & ~calls["cached"],
        _fail=~calls["ok"],
    )
    for column in ("prompt_tokens", "completion_tokens", "cost_usd"):
        if column not in frame.columns:
            frame[column] = np.nan
    parts = [(stage, group) for stage, group in frame.groupby("stage", sort=False, dropna=False)]
    if total:
        parts.append(("total", frame))
    rows = [
        {
            "stage": stage,
            "calls": len(group),
            "cache_hits": int(group["_hit"].sum()),
            "provider_calls": int(group["_call"].sum()),
            "failures": int(group["_fail"].sum()),
            "hit_rate": group["_hit"].mean() if len(group) else np.nan,
            "prompt_tokens": group.loc[group["_call"], "prompt_tokens"].sum(),
            "completion_tokens": group.loc[group["_call"], "completion_tokens"].sum(),
            "cost_usd": _total(group.loc[group["_call"], "cost_usd"]),
            "saved_usd": _total(group.loc[group["_hit"], "cost_usd"]),
        }
        for stage, group in parts
    ]
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
