"""What a label must be: one label's fields, a correction's target, the labels in force.

Every refusal is a ``ValueError`` naming the field (callers prefix the file and row).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pandas as pd

KINDS = ("score", "pairwise")
CHOICE_VALUE = {"A": 1.0, "B": 0.0, "tie": 0.5}
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def when(text) -> datetime:
    """An ISO 8601 time as an aware UTC datetime (a time without offset is read as UTC):
    the store sorts by it, never by the text, so offsets compare right."""
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        return _EARLIEST
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _number(row: dict, name: str) -> float | None:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return finite(value, name)


def finite(value, name: str) -> float:
    """``value`` as a finite float, or a ValueError naming the field."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"field {name!r} is not a number: {value!r:.60}") from None
    if not math.isfinite(out):
        raise ValueError(f"field {name!r} is not a finite number: {value!r}")
    return out


def table_columns(conn) -> set[str]:
    """The columns of a file's ``labels`` table."""
    return {r[1] for r in conn.execute("PRAGMA table_info(labels)")}


def select_list(conn, columns: list[str]) -> str:
    """``columns`` to select from a file's ``labels``: ``NULL`` for those a file written
    before they existed lacks (``guideline``)."""
    have = table_columns(conn)
    return ", ".join(c if c in have else f"NULL AS {c}" for c in columns)


def validated(row: dict) -> dict:
    """Check one label (a dict of the store's columns); fill ``value`` of a pair and
    ``seconds``; ``ValueError`` naming the field."""
    for name in ("label_id", "study", "item_id", "annotator", "source"):
        if not row.get(name):
            raise ValueError(f"field {name!r} is empty")
    if row["kind"] not in KINDS:
        raise ValueError(f"field 'kind' must be one of {KINDS}, got {row['kind']!r}")
    value = _number(row, "value")
    if row["kind"] == "pairwise":
        if row["choice"] not in CHOICE_VALUE:
            raise ValueError(f"field 'choice' must be A, B or tie, got {row['choice']!r}")
        if row["shown_order"] not in ("AB", "BA"):
            raise ValueError(f"field 'shown_order' must be AB or BA, got {row['shown_order']!r}")
        expected = CHOICE_VALUE[row["choice"]]
        if value is not None and value != expected:
            raise ValueError(f"field 'value' {row['value']!r} contradicts choice {row['choice']!r}")
        row["value"] = expected
    else:
        if value is None:
            raise ValueError("field 'value' is missing (a score is needed)")
        row["value"] = value
        if row["choice"] or row["shown_order"]:
            raise ValueError("fields 'choice' and 'shown_order' are for pairwise labels")
    row["shown_at"] = row["shown_at"] or row["given_at"]
    for name in ("shown_at", "given_at"):
        try:
            datetime.fromisoformat(row[name])
        except (TypeError, ValueError):
            raise ValueError(f"field {name!r} is not an ISO 8601 time: {row[name]!r}") from None
    seconds = _number(row, "seconds")
    if seconds is None:
        # a clock stepped back between showing and answering gives no time, not a negative one
        seconds = (when(row["given_at"]) - when(row["shown_at"])).total_seconds()
        seconds = seconds if seconds >= 0 else None
    elif seconds < 0:
        raise ValueError(f"field 'seconds' is negative: {row['seconds']!r}")
    row["seconds"] = seconds
    prob = _number(row, "sampling_prob")
    if prob is not None and not 0 < prob <= 1:
        raise ValueError(f"field 'sampling_prob' must be in (0, 1], got {row['sampling_prob']!r}")
    row["sampling_prob"] = prob
    row["guideline"] = row.get("guideline") or None
    return row


def correction_error(row: dict, known: dict[str, dict], corrected: set[str]) -> str | None:
    """Why ``row`` may not supersede what it names (``None`` if it may): a correction
    replaces an existing label (``known``: label_id to label, all earlier) of the same
    study, item, kind and annotator, not yet corrected (``corrected``)."""
    target = row.get("supersedes") or ""
    if not target:
        return None
    old = known.get(target)
    if old is None:
        return f"field 'supersedes' names {target}, which is not a label in the store"
    for name in ("study", "item_id", "kind", "annotator"):
        if str(old[name]) != str(row[name]):
            return (f"field 'supersedes': {target} is another {name}'s label "
                    f"({old[name]!r}, not {row[name]!r}); a correction replaces a label of "
                    "the same study, item, kind and annotator")
    if target in corrected:
        return f"field 'supersedes': {target} is already corrected; correct its correction"
    return None


def same_label(a: dict, b: dict, columns: list[str]) -> list[str]:
    """The columns in which two labels differ (numbers compared as numbers)."""
    out = []
    for name in columns:
        x, y = a.get(name), b.get(name)
        nx = x is None or (isinstance(x, float) and math.isnan(x)) or x == ""
        ny = y is None or (isinstance(y, float) and math.isnan(y)) or y == ""
        if nx and ny:
            continue
        if nx != ny:
            out.append(name)
        elif isinstance(x, (int, float)) or isinstance(y, (int, float)):
            try:
                if float(x) != float(y):
                    out.append(name)
            except (TypeError, ValueError):
                out.append(name)
        elif str(x) != str(y):
            out.append(name)
    return out


def current(labels: pd.DataFrame) -> pd.DataFrame:
    """The labels in force: every label that no valid correction ``supersedes``.

    A correction counts only if it names a label of the frame with the same study, item,
    kind and annotator (where the frame has those columns) and is not part of a cycle: a
    forged ``supersedes`` (another annotator's or another item's label) hides nothing, and
    labels that name each other (merged imports) both stay in force.

    Examples
    --------
    >>> frame = pd.DataFrame({"label_id": ["a", "b", "c"], "supersedes": ["", "a", ""],
    ...                       "value": [1.0, 2.0, 5.0]})
    >>> current(frame)["label_id"].tolist()
    ['b', 'c']
    >>> cycle = pd.DataFrame({"label_id": ["x", "y"], "supersedes": ["y", "x"]})
    >>> current(cycle)["label_id"].tolist()
    ['x', 'y']
    """
    keys = [c for c in ("study", "item_id", "kind", "annotator") if c in labels.columns]
    records = labels.to_dict("records")
    group = {r["label_id"]: tuple(str(r[k]) for k in keys) for r in records}
    names = {}                                   # a valid correction: label -> what it replaces
    for r in records:
        target = r.get("supersedes")
        if isinstance(target, str) and target in group and target != r["label_id"] \
                and group[target] == group[r["label_id"]]:
            names[r["label_id"]] = target
    replaced: set[str] = set()
    for lid, target in names.items():
        seen, node = {lid}, target
        while node in names and node not in seen:     # walk down: a cycle comes back
            seen.add(node)
            node = names[node]
        if node not in seen:
            replaced.add(target)
    return labels[~labels["label_id"].isin(replaced)].reset_index(drop=True)
