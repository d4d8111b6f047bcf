"""``check_items``: every problem of an items table for one protocol, before any call.

``run_judging`` stops at the first malformed record; a file being prepared by hand
needs the whole list at once. :func:`check_items` plans each record alone (the same
planning ``run_judging`` does, with no call sent) and collects what each one raises, and
refuses records that the results could not tell apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from workbench.judges._items import to_records, where
from workbench.judges._protocols import drive, protocol_for
from workbench.judges._spec import JudgeSpec
from workbench.llm import CallFailure, cache_key
from workbench.text import is_missing

#: Columns that, beside ``item_id``, tell a record's result rows apart when present.
KEY_COLUMNS = ("item_id", "answer_model", "answer_sample", "perturbation")


@dataclass(frozen=True)
class ItemProblem:
    """One problem of an items table.

    Attributes
    ----------
    row : int or None
        0-based position of the record, or None for a problem of the whole table (a
        missing column, a bad rubric or spec).
    message : str
        What is wrong; for a record, without the ``items row N (item_id ...)`` prefix.
    other : int or None
        For a repeated key, the 0-based position of the record it repeats (named in
        ``message`` as ``row <other + 1>``).
    """

    row: int | None
    message: str
    other: int | None = None


def _not_sent(calls):
    return [CallFailure(cache_key(c.request), "not_run", "check only", 0, c.request.model) for c in calls]


def _duplicates(records: list[dict]) -> list[ItemProblem]:
    """Records whose key (item_id and the present :data:`KEY_COLUMNS`) repeats an earlier one."""
    columns = [c for c in KEY_COLUMNS if any(c in rec for rec in records)]
    if "item_id" not in columns:
        return []  # no item_id column: reported by the planning check
    first: dict[tuple, int] = {}
    out = []
    for i, rec in enumerate(records):
        key = tuple(None if is_missing(rec.get(c)) else str(rec.get(c)) for c in columns)
        if key[0] is None:
            continue  # an empty item_id is reported by the planning check
        j = first.setdefault(key, i)
        if j == i:
            continue
        named = ", ".join(f"{c} {v!r}" for c, v in zip(columns, key, strict=True) if v is not None)
        differ = sorted(c for c in set(rec) | set(records[j])
                        if c not in columns and str(rec.get(c)) != str(records[j].get(c)))
        how = (f"with a different {', '.join(differ)}" if differ else "as an exact copy")
        out.append(ItemProblem(i, f"{named} is already on row {j + 1} ({how}); its results could "
                                  f"not be told apart: give each answer its own item_id "
                                  f"(or an answer_model / answer_sample column)", j))
    return out


def check_items(items: pd.DataFrame, spec: JudgeSpec, *, rubric: pd.DataFrame | None = None,
                unique: bool = True) -> list[ItemProblem]:
    """Every problem ``run_judging(items, spec, rubric=rubric)`` would stop at, and more.

    Parameters
    ----------
    items, spec, rubric
        As for :func:`~workbench.judges.run_judging`.
    unique : bool
        Also report records whose ``item_id`` (with ``answer_model``, ``answer_sample``
        and ``perturbation`` where present) repeats an earlier record's: their result
        rows could not be told apart.

    Returns
    -------
    list of ItemProblem
        In row order; a problem of the whole table (missing column, rubric, spec) comes
        alone, first, since every record would repeat it. Empty when the table is fine.

    Examples
    --------
    >>> import pandas as pd
    >>> items = pd.DataFrame({"item_id": ["q1", "q1", "q2"], "question": ["a?", "b?", ""],
    ...                       "response": ["x", "y", "z"]})
    >>> for p in check_items(items, JudgeSpec("holistic_simple", "sim/judge-a")):
    ...     print(p.row, p.message.split(";")[0])
    1 item_id 'q1' is already on row 1 (with a different question, response)
    2 field 'question' is empty (required for protocol 'holistic_simple')
    """
    records = to_records(items)
    problems: list[ItemProblem] = _duplicates(records) if unique else []
    for i, rec in enumerate(records):
        try:
            drive(protocol_for([rec], spec, rubric), _not_sent)
        except ValueError as exc:
            message, prefix = str(exc), where(0, rec) + ": "
            if not message.startswith(prefix):  # not about this record: the same for all
                return [ItemProblem(None, message)]
            problems.append(ItemProblem(i, message[len(prefix):]))
    return sorted(problems, key=lambda p: p.row)
