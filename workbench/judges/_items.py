"""Checking and normalising the ``items`` frame (and the rubric) for ``run_judging``."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from workbench.text import detect_lang, is_missing, parse_list

_KIND_ALIASES = {
    "must": "must", "必須": "must", "必須項目": "must",
    "bonus": "bonus", "加点": "bonus", "加点項目": "bonus",
    "penalty": "penalty", "減点": "penalty", "減点項目": "penalty",
}
HOLISTIC_KINDS = ("must", "bonus", "penalty")


def where(index: int, rec: Mapping[str, Any]) -> str:
    """How an error names record ``index`` (0-based): ``items row <index + 1> (item_id 'x')``,
    counting rows from 1 like a reader does."""
    return f"items row {index + 1} (item_id {rec.get('item_id')!r})"


def to_records(items: pd.DataFrame | Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Items as a list of dicts with NaN replaced by None."""
    if isinstance(items, pd.DataFrame):
        records = items.to_dict("records")
    elif isinstance(items, Mapping):
        raise TypeError("items must be a DataFrame or a list of dicts, not one dict")
    else:
        records = [dict(r) for r in items]
    return [{k: (None if is_missing(v) else v) for k, v in rec.items()} for rec in records]


def require(records: list[dict], fields: Iterable[str], *, what: str) -> None:
    """Every record has a non-empty value for each field, else a ValueError naming it."""
    fields = list(fields)
    for i, rec in enumerate(records):
        for name in fields:
            if name not in rec:
                raise ValueError(f"items: column {name!r} is required for {what}")
            if is_missing(rec[name], blank=True):
                raise ValueError(f"{where(i, rec)}: field {name!r} is empty (required for {what})")


def holistic_criteria(records: list[dict], rubric: pd.DataFrame | None) -> dict[int, list[dict]]:
    """Per record index, the holistic evaluation points ``[{kind, text}]``.

    Taken from the items' ``criteria`` column (list of ``{kind, text}`` or JSON) or from
    the rubric rows of kind ``must`` / ``bonus`` / ``penalty`` (Japanese labels 必須項目 /
    加点項目 / 減点項目 are accepted).
    """
    by_item = _rubric_groups(rubric, kinds=HOLISTIC_KINDS)
    out: dict[int, list[dict]] = {}
    for i, rec in enumerate(records):
        at = where(i, rec)
        raw = rec.get("criteria")
        if not is_missing(raw, blank=True):
            crits = []
            for j, c in enumerate(parse_list(raw, where=at, field="criteria")):
                if not isinstance(c, Mapping) or is_missing(c.get("text"), blank=True):
                    raise ValueError(f"{at}: criteria[{j}] needs a 'text'")
                kind = _KIND_ALIASES.get(str(c.get("kind", "")).strip())
                if kind is None:
                    raise ValueError(f"{at}: criteria[{j}] kind {c.get('kind')!r} is not must, bonus or penalty")
                crits.append({"kind": kind, "text": " ".join(str(c["text"]).split())})
        else:
            crits = [{"kind": r["kind"], "text": r["text"]} for r in _lookup(by_item, rec)]
        if not crits:
            raise ValueError(
                f"{at}: no evaluation points for the holistic protocol (give a 'criteria' "
                "column or a rubric with kind must/bonus/penalty rows)"
            )
        out[i] = crits
    return out


def checklist_items(records: list[dict], rubric: pd.DataFrame | None) -> dict[int, list[dict]]:
    """Per record index, the checklist items ``[{criterion_id, text, weight}]``.

    From the items' ``rubric`` column (list of dicts or JSON) or the rubric frame rows of
    kind ``item`` (all rows when it has no ``kind`` column). The sum of positive weights
    must be > 0 (it is the denominator of the score).
    """
    by_item = _rubric_groups(rubric, kinds=("item",))
    out: dict[int, list[dict]] = {}
    for i, rec in enumerate(records):
        at = where(i, rec)
        raw = rec.get("rubric")
        if not is_missing(raw, blank=True):
            rows = [dict(r) for r in parse_list(raw, where=at, field="rubric")]
            for j, r in enumerate(rows):
                r.setdefault("criterion_id", f"c{j + 1}")
        else:
            rows = _lookup(by_item, rec)
        items = []
        for j, r in enumerate(rows):
            text = r.get("text")
            if is_missing(text, blank=True):
                raise ValueError(f"{at}: rubric item {j + 1} ({r.get('criterion_id')!r}) has no text")
            weight = r.get("weight")
            try:
                weight = float(weight)
            except (TypeError, ValueError):
                weight = math.nan
            if not math.isfinite(weight):
                raise ValueError(
                    f"{at}: rubric item {r.get('criterion_id')!r} has no numeric weight "
                    f"(got {r.get('weight')!r})"
                )
            items.append({"criterion_id": str(r["criterion_id"]), "text": str(text), "weight": weight})
        if not items:
            raise ValueError(
                f"{at}: no checklist items (give run_judging(..., rubric=frame) with kind "
                "'item' rows for this item_id, or a 'rubric' column)"
            )
        if sum(w["weight"] for w in items if w["weight"] > 0) <= 0:
            raise ValueError(f"{at}: the checklist has no positive weight (the score's denominator)")
        out[i] = items
    return out


def _lookup(groups: dict[str, list[dict]], rec: Mapping[str, Any]) -> list[dict]:
    """Rubric rows of a record: by its item_id, else by its source_item (a perturbed item
    keeps the rubric of the item it was made from)."""
    rows = groups.get(str(rec["item_id"]))
    if rows is None and not is_missing(rec.get("source_item"), blank=True):
        rows = groups.get(str(rec["source_item"]))
    return rows or []


def _rubric_groups(rubric: pd.DataFrame | None, *, kinds: tuple[str, ...]) -> dict[str, list[dict]]:
    if rubric is None:
        return {}
    if not isinstance(rubric, pd.DataFrame):
        raise TypeError("rubric must be a DataFrame (item_id, criterion_id, text, weight, kind)")
    for col in ("item_id", "criterion_id", "text"):
        if col not in rubric.columns:
            raise ValueError(f"rubric: column {col!r} is required")
    groups: dict[str, list[dict]] = {}
    for i, row in enumerate(rubric.to_dict("records")):
        kind = row.get("kind")
        if "kind" in rubric.columns:
            kind = _KIND_ALIASES.get(str(kind).strip(), str(kind).strip())
            if kind not in kinds:
                continue
        if is_missing(row.get("text"), blank=True):
            raise ValueError(f"rubric row {i + 1} (item_id {row.get('item_id')!r}): field 'text' is empty")
        groups.setdefault(str(row["item_id"]), []).append(
            {"criterion_id": row["criterion_id"], "text": " ".join(str(row["text"]).split()),
             "weight": row.get("weight"), "kind": kind}
        )
    return groups


def record_lang(rec: Mapping[str, Any], forced: str | None) -> str:
    """The prompt language of a record: forced, else its ``lang``, else detected."""
    if forced:
        return forced
    lang = rec.get("lang")
    if not is_missing(lang, blank=True):
        return str(lang)
    return detect_lang(str(rec.get("question") or rec.get("response") or ""))


def keywords_of(rec: Mapping[str, Any]) -> list[str]:
    """The record's keywords as a list (``|``-joined text or a list)."""
    raw = rec.get("keywords")
    if is_missing(raw, blank=True):
        return []
    if isinstance(raw, str):
        return [k.strip() for k in raw.split("|") if k.strip()]
    return [str(k) for k in raw]
