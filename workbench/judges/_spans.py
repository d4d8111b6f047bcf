"""Turn decompose results into span tables (seed 004): the reference's units and the
flagged excess / missing texts, located by ``str.find`` in the original strings."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from workbench.judges._items import to_records

UNIT_COLUMNS = ["item_id", "judge_model", "temperature", "trial", "unit_id", "role", "text",
                "start", "end", "found"]
SPAN_COLUMNS = ["item_id", "answer_model", "answer_sample", "judge_model", "temperature", "trial",
                "label", "role", "unit_id", "text", "text_source", "start", "end", "found"]


def _locate(haystack: Any, needle: str, after: int = 0) -> tuple[float, float, bool]:
    if not isinstance(haystack, str) or not needle:
        return float("nan"), float("nan"), False
    pos = haystack.find(needle, after)
    if pos < 0:
        pos = haystack.find(needle)
    if pos < 0:
        return float("nan"), float("nan"), False
    return float(pos), float(pos + len(needle)), True


def _references(items: pd.DataFrame | None) -> dict[str, str]:
    if items is None:
        return {}
    return {str(r["item_id"]): r.get("reference") for r in to_records(items)}


def units_table(results: pd.DataFrame, items: pd.DataFrame | None = None) -> pd.DataFrame:
    """The gist/detail units used by each decompose run, one row per unit.

    Parameters
    ----------
    results : DataFrame
        ``run_judging`` rows of the ``decompose`` protocol.
    items : DataFrame, optional
        The items; when given, each unit is located in the item's reference with
        ``str.find`` (``start``, ``end`` character offsets, ``found``).

    Returns
    -------
    DataFrame
        Columns ``item_id, judge_model, temperature, trial, unit_id, role, text, start,
        end, found`` (one set of units per item, judge, temperature and trial).
    """
    refs = _references(items)
    rows, seen = [], set()
    dec = results[(results["protocol"] == "decompose") & results["prep_text"].notna()]
    for rec in dec.to_dict("records"):
        key = (rec["item_id"], rec["judge_model"], rec["temperature"], rec["trial"])
        if key in seen:
            continue
        seen.add(key)
        try:
            units = json.loads(rec["prep_text"])
        except ValueError:
            continue
        if not isinstance(units, list):
            continue
        cursor = 0
        for unit in units:
            start, end, found = _locate(refs.get(rec["item_id"]), unit.get("text", ""), cursor)
            if found:
                cursor = int(end)
            rows.append({"item_id": rec["item_id"], "judge_model": rec["judge_model"],
                         "temperature": rec["temperature"], "trial": rec["trial"],
                         "unit_id": unit.get("id"), "role": unit.get("role"), "text": unit.get("text"),
                         "start": start, "end": end, "found": found})
    return pd.DataFrame(rows, columns=UNIT_COLUMNS)


def detection_spans(results: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """The flagged excess / missing texts of decompose results, located as spans.

    Excess texts are located in the judged answer (``text_source`` = its answer model),
    missing texts in the reference (``text_source = 'reference'``), by ``str.find``; a text
    the judge did not copy verbatim has ``found=False`` and NaN offsets.

    Parameters
    ----------
    results : DataFrame
        ``run_judging`` rows of the ``decompose`` protocol.
    items : DataFrame
        The judged items (``item_id, answer_model, answer_sample, reference, response``).

    Returns
    -------
    DataFrame
        Columns ``item_id, answer_model, answer_sample, judge_model, temperature, trial,
        label (excess | missing), role (gist | detail), unit_id, text, text_source, start,
        end, found`` — the layout of the canonical ``spans`` table plus the judge keys.
    """
    answers: dict[tuple, dict] = {}
    for rec in to_records(items):
        sample = 0 if rec.get("answer_sample") is None else int(rec["answer_sample"])
        answers[(str(rec["item_id"]), rec.get("answer_model"), sample)] = rec
    rows = []
    dec = results[(results["protocol"] == "decompose") & results["parse_ok"]]
    for rec in dec.to_dict("records"):
        label, role = str(rec["dimension"]).split("_", 1)
        item = answers.get((rec["item_id"], rec["answer_model"], int(rec["answer_sample"])), {})
        haystack = item.get("response") if label == "excess" else item.get("reference")
        source = rec["answer_model"] if label == "excess" else "reference"
        for flagged in json.loads(rec["explanation"] or "[]"):
            start, end, found = _locate(haystack, flagged.get("text", ""))
            rows.append({"item_id": rec["item_id"], "answer_model": rec["answer_model"],
                         "answer_sample": rec["answer_sample"], "judge_model": rec["judge_model"],
                         "temperature": rec["temperature"], "trial": rec["trial"], "label": label,
                         "role": role, "unit_id": flagged.get("unit_id"), "text": flagged.get("text"),
                         "text_source": source, "start": start, "end": end, "found": found})
    return pd.DataFrame(rows, columns=SPAN_COLUMNS)
