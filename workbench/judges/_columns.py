"""The one column vocabulary of judging results (DESIGN §4 plus the extra columns).

Every frame returned by :func:`workbench.judges.run_judging` has exactly the columns of
:data:`RESULT_COLUMNS`, in that order: first the core columns of DESIGN §4, then the extra
columns documented in :data:`COLUMN_DOCS`. Nothing else in the package invents a column
name for judge results.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

#: DESIGN §4 core columns, in order (fixed).
CORE_COLUMNS: tuple[str, ...] = (
    "study",
    "item_id",
    "answer_model",
    "answer_sample",
    "judge_model",
    "protocol",
    "template",
    "dimension",
    "trial",
    "temperature",
    "perturbation",
    "score",
    "verdict",
    "parse_ok",
    "explanation",
    "cache_key",
    "backend",
    "cost_usd",
    "latency_s",
)

#: Extra columns, in order, after the core ones.
EXTRA_COLUMNS: tuple[str, ...] = (
    "source_item",
    "perturbation_params",
    "lang",
    "template_version",
    "use_reference",
    "system_prompt",
    "mitigation",
    "scale_low",
    "scale_high",
    "criterion_id",
    "weight",
    "negative_flag",
    "geval_mode",
    "geval_n",
    "geval_n_parsed",
    "order",
    "verdict_shown",
    "model_a",
    "model_b",
    "inner_protocol",
    "n_units",
    "prep_model",
    "prep_key",
    "prep_text",
    "prep_cost_usd",
    "cached",
    "raw_reply",
    "error",
)

RESULT_COLUMNS: tuple[str, ...] = CORE_COLUMNS + EXTRA_COLUMNS

#: What each column holds.
COLUMN_DOCS: dict[str, str] = {
    "study": "study label from JudgeSpec.study ('' when not given)",
    "item_id": "item identifier (after perturbation: the perturbed item's id)",
    "answer_model": "model (or person) that wrote the judged answer; pairwise: 'model_a vs model_b'",
    "answer_sample": "repeat index of the judged answer (0 when the items have none)",
    "judge_model": "model string of the judge (litellm form, e.g. 'sim/judge-a', 'gpt-4o')",
    "protocol": "holistic | holistic_simple | checklist | dimensions | geval | summarize_then | pairwise | decompose",
    "template": "id of the judging prompt template",
    "dimension": "what the score is about: 'overall'; a dimension name; a checklist criterion_id "
    "or 'total'; decompose: excess_gist | excess_detail | missing_gist | missing_detail",
    "trial": "repeat index of the judge call (sent as Request.sample, so trials are distinct cache entries)",
    "temperature": "judge sampling temperature",
    "perturbation": "perturbation applied to the item ('none' for the original)",
    "score": "numeric score; NaN when the call failed or the reply did not parse (never 0 for a failure). "
    "checklist criterion rows: 1.0 met / 0.0 not met; checklist 'total': sum of weights of met items / "
    "sum of positive weights; pairwise: 1.0 A better, 0.0 B better, 0.5 tie; decompose: flagged "
    "units of the class / reference units of that role",
    "verdict": "categorical outcome: pairwise 'A' | 'B' | 'tie' in the items' original numbering; "
    "checklist criterion rows: True / False (criteriaMet); None otherwise or when unparsed",
    "parse_ok": "True when the call succeeded and the reply parsed into an allowed value",
    "explanation": "the judge's explanation / rationale / reason text; decompose: JSON list of the "
    "flagged items of the row's class",
    "cache_key": "workbench.llm cache key of the judge call (None for aggregate rows)",
    "backend": "'sim' or the real provider that answered",
    "cost_usd": "cost of the judge call in USD (0 for sim and for aggregate rows). A call that "
    "yields several rows (dimensions in one reply, the four decompose classes) carries its cost on "
    "its first row and 0 on the others; geval samples mode: the sum over the n samples",
    "latency_s": "latency of the call in seconds (as recorded by the client; 0 for aggregate rows)",
    "source_item": "item_id of the unperturbed item the row's item was made from",
    "perturbation_params": "JSON of the perturbation operators' parameters ('{}' for none)",
    "lang": "language of the prompt template used (ja | en)",
    "template_version": "version of the judging template (front matter 'version')",
    "use_reference": "whether the reference answer was shown to the judge (supervised)",
    "system_prompt": "system prompt used: template id@version, 'literal:<sha8>' or None",
    "mitigation": "whether the bias-mitigation system prompt (seed 003) was used",
    "scale_low": "lowest allowed score of the judging scale",
    "scale_high": "highest allowed score of the judging scale",
    "criterion_id": "checklist: rubric criterion id (None on other rows)",
    "weight": "checklist: criterion weight (negative for dangerous-advice items)",
    "negative_flag": "checklist: True when a negative-weight item is met (on criterion rows and, "
    "for any such item, on the 'total' row); None elsewhere",
    "geval_mode": "geval: 'logprobs' (sum of p(s)*s from token log-probabilities) or 'samples' "
    "(mean over n sampled replies)",
    "geval_n": "geval samples mode: number of sampled replies; logprobs mode: 1",
    "geval_n_parsed": "geval: number of replies / score distributions that parsed",
    "order": "pairwise: 0 = response_a shown first, 1 = response_b shown first",
    "verdict_shown": "pairwise: the raw verdict letter in shown order ('A' | 'B' | 'C')",
    "model_a": "pairwise: model of response_a",
    "model_b": "pairwise: model of response_b",
    "inner_protocol": "summarize_then: the protocol applied to the summary",
    "n_units": "decompose: number of reference units with the row's role",
    "prep_model": "model of the preparatory call (summariser or decomposer; 'items' when the "
    "units came with the items)",
    "prep_key": "cache key of the preparatory call (summary or decomposition)",
    "prep_text": "output of the preparatory call: the summary, or the units as JSON",
    "prep_cost_usd": "cost of the preparatory call, on the first row that used it (0 on the others), "
    "so cost_usd + prep_cost_usd summed over a frame is what the run spent",
    "cached": "True when the judge reply came from the cache",
    "raw_reply": "the judge's reply text, kept verbatim (also when it did not parse)",
    "error": "why the row has no score: '<error_type>: <message>' of a failed call or the parse error",
}

_FLOAT_COLUMNS = ("score", "temperature", "cost_usd", "latency_s", "scale_low", "scale_high",
                  "weight", "prep_cost_usd")


_INT_COLUMNS = ("template_version", "geval_n", "geval_n_parsed", "order", "n_units")
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


assert set(COLUMN_DOCS) == set(RESULT_COLUMNS), "every result column must be documented"
