"""The columns of judging results (DESIGN §4 plus the extra columns), and the typed frame.

Every frame returned by :func:`workbench.judges.run_judging` has exactly the columns of
:data:`RESULT_COLUMNS`, in that order: first the core columns of DESIGN §4, then the extra
columns documented in :data:`COLUMN_DOCS`. Names, order and meanings come from the one
vocabulary, :mod:`workbench.columns`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from workbench.columns import RESULT_CORE, RESULT_EXTRA, docs

#: DESIGN §4 core columns, in order (fixed).
CORE_COLUMNS: tuple[str, ...] = RESULT_CORE

#: Extra columns, in order, after the core ones.
EXTRA_COLUMNS: tuple[str, ...] = RESULT_EXTRA

RESULT_COLUMNS: tuple[str, ...] = CORE_COLUMNS + EXTRA_COLUMNS

#: What each column holds (from :data:`workbench.columns.COLUMNS`).
COLUMN_DOCS: dict[str, str] = docs(RESULT_COLUMNS)

_FLOAT_COLUMNS = ("score", "temperature", "cost_usd", "latency_s", "scale_low", "scale_high",
                  "weight", "prep_cost_usd")


_INT_COLUMNS = ("template_version", "geval_n", "geval_n_parsed", "order", "n_units", "n_candidates")
_BOOL_COLUMNS = ("use_reference", "mitigation", "negative_flag", "cached")


def _nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def empty_row() -> dict[str, Any]:
    """A row dict with every result column set to its missing value."""
    row: dict[str, Any] = dict.fromkeys(RESULT_COLUMNS)
    row["score"] = math.nan
    row["parse_ok"] = False
    row["cost_usd"] = 0.0
    row["latency_s"] = math.nan
    row["perturbation"] = "none"
    row["perturbation_params"] = "{}"
    row["answer_sample"] = 0
    return row


def _masked(column: pd.Series, kind: type, dtype: str) -> Any:
    """A nullable ``dtype`` array of ``kind(v)``, missing values (:func:`_nan`) as NA."""
    if not column.notna().any():  # a column no row fills (most of them, per protocol)
        return pd.array([None] * len(column), dtype=dtype)
    return pd.array([None if _nan(v) else kind(v) for v in column], dtype=dtype)


def results_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows (dicts) to a results frame with exactly :data:`RESULT_COLUMNS`, typed."""
    frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    for name in _FLOAT_COLUMNS:
        frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
    frame["parse_ok"] = frame["parse_ok"].fillna(False).astype(bool)
    for name in _INT_COLUMNS:
        frame[name] = _masked(frame[name], int, "Int64")
    for name in _BOOL_COLUMNS:
        frame[name] = _masked(frame[name], bool, "boolean")
    for name in frame.columns:
        if frame[name].dtype == object:
            frame[name] = frame[name].where(frame[name].notna(), None)
    if len(frame):
        frame["trial"] = frame["trial"].astype("int64")
        frame["answer_sample"] = frame["answer_sample"].astype("int64")
    return frame

