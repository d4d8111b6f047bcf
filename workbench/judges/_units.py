"""Meaning units of decompose (seed 004): validating given units and reading the
decomposition and detection replies."""

from __future__ import annotations

from typing import Any

from workbench.errors import ParseError
from workbench.judges._parse import parse_fields, shown

#: The two roles of a meaning unit.
ROLES = ("gist", "detail")


def _role(value: Any) -> str:
    """A role as written (stripped, lower case); '' for a value that is not text."""
    return value.strip().lower() if isinstance(value, str) else ""


def _id(value: Any) -> str | None:
    """A unit id as text: a JSON string or number; None for anything else."""
    return str(value) if isinstance(value, str | int | float) else None


def check_units(value: Any) -> list[dict]:
    """Validate meaning units ``[{"id", "role", "text"}]`` (ids default to u1, u2 …)."""
    if not isinstance(value, list) or not value:
        raise ParseError("units must be a non-empty JSON list")
    units, seen = [], set()
    for k, unit in enumerate(value):
        if not isinstance(unit, dict):
            raise ParseError(f"units[{k}] is not an object")
        role = _role(unit.get("role"))
        text = unit.get("text")
        if role not in ROLES:
            raise ParseError(f"units[{k}].role {shown(unit.get('role'))} is not gist or detail")
        if not isinstance(text, str) or not text.strip():
            raise ParseError(f"units[{k}].text is empty")
        uid = _id(unit.get("id") or f"u{k + 1}")
        if uid is None:
            raise ParseError(f"units[{k}].id {shown(unit.get('id'))} is not a string or number")
        if uid in seen:
            raise ParseError(f"units[{k}].id {uid!r} is repeated")
        seen.add(uid)
        units.append({"id": uid, "role": role, "text": text})
    return units


def parse_units(text: str | None) -> list[dict]:
    """The units of a decomposition reply (``{"units": list}``)."""
    fields = parse_fields(text, {"units": list})
    if isinstance(fields["units"], ParseError):
        raise fields["units"]
    return check_units(fields["units"])


def parse_detection(text: str | None, units: list[dict]) -> dict[str, list[dict]]:
    """The excess and missing items of a detection reply, each ``{"text", "role"}``;
    a missing item may name a ``unit_id`` instead (text and role then come from it)."""
    fields = parse_fields(text, {"excess": list, "missing": list})
    by_id = {u["id"]: u for u in units}
    out: dict[str, list[dict]] = {}
    for label in ("excess", "missing"):
        value = fields[label]
        if isinstance(value, ParseError):
            raise value
        items = []
        for k, item in enumerate(value):
            if not isinstance(item, dict):
                raise ParseError(f"{label}[{k}] is not an object")
            unit = by_id.get(_id(item.get("unit_id"))) if label == "missing" else None
            role = _role(item.get("role") or (unit["role"] if unit else ""))
            text_ = item.get("text") or (unit["text"] if unit else None)
            if role not in ROLES:
                raise ParseError(f"{label}[{k}].role {shown(item.get('role'))} is not gist or detail")
            if not isinstance(text_, str) or not text_.strip():
                raise ParseError(f"{label}[{k}] has no text (and no known unit_id)")
            entry = {"text": text_, "role": role}
            if unit is not None:
                entry["unit_id"] = unit["id"]
            items.append(entry)
        out[label] = items
    return out
