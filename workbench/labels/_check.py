"""The label folder's check: what :meth:`LabelStore.check` reports."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd

from workbench.labels._rules import correction_error, same_label, select_list, when

_TRIGGERS = ("labels_no_update", "labels_no_delete")


def open_read(path: Path) -> sqlite3.Connection:
    """A read-only connection: ``mode=ro``, or ``immutable=1`` on storage where WAL's
    ``-shm`` file cannot be made (a read-only share, an archive)."""
    uri = path.resolve().as_uri()
    for flags in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(f"{uri}?{flags}", uri=True, timeout=30.0)
        try:
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
            if flags == "immutable=1":
                raise
    raise AssertionError("unreachable")


def _file_problems(path: Path, columns: list[str]) -> tuple[list[str], list[dict]]:
    """(problems of one file, its labels as dicts)."""
    try:
        conn = open_read(path)
    except sqlite3.DatabaseError as exc:
        return [f"not a readable label file: {exc}"], []
    problems: list[str] = []
    try:
        try:
            status = conn.execute("PRAGMA integrity_check").fetchone()[0]
            tables = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
        except sqlite3.DatabaseError as exc:
            return [f"not a readable label file: {exc}"], []
        if status != "ok":
            problems.append(f"integrity check failed: {status}")
        if "labels" not in tables:
            return problems + ["holds no labels table (dropped, or not a label file)"], []
        missing = [t for t in _TRIGGERS if t not in tables]
        if missing:
            problems.append(f"append-only trigger(s) {missing} removed")
        count, top = conn.execute("SELECT count(*), coalesce(max(row), 0) FROM labels").fetchone()
        seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'labels'").fetchone()
        seq = seq[0] if seq else top
        if count != top or seq != top:
            problems.append(f"{max(top, seq) - count} stored label(s) removed or rewritten: "
                            f"{count} rows, numbered up to {max(top, seq)} (INSERT OR REPLACE "
                            "or a DELETE with the triggers off)")
        rows = conn.execute(f"SELECT {select_list(conn, columns)} FROM labels "
                            "ORDER BY row").fetchall()
    except sqlite3.DatabaseError as exc:
        return problems + [f"not a readable label file: {exc}"], []
    finally:
        conn.close()
    return problems, [dict(zip(columns, r, strict=True)) for r in rows]


def check_folder(folder: Path, columns: list[str]) -> pd.DataFrame:
    """Every problem of the label files in ``folder`` (see :meth:`LabelStore.check`)."""
    out: list[dict] = []
    labels: list[tuple[str, dict]] = []
    for path in sorted(Path(folder).glob("*.sqlite")):
        problems, rows = _file_problems(path, columns)
        out += [{"file": path.name, "label_id": "", "problem": p} for p in problems]
        labels += [(path.name, r) for r in rows]
    labels.sort(key=lambda fr: (when(fr[1]["given_at"]), fr[1]["label_id"]))
    known: dict[str, dict] = {}
    where: dict[str, str] = {}
    corrected: set[str] = set()
    for name, row in labels:
        lid = row["label_id"]
        if lid in known:
            diff = same_label(known[lid], row, columns)
            if diff:
                out.append({"file": name, "label_id": lid,
                            "problem": f"label_id also in {where[lid]} with another "
                                       f"{', '.join(diff)}"})
            continue
        problem = correction_error(row, known, corrected)
        if problem:
            out.append({"file": name, "label_id": lid, "problem": problem})
        elif row["supersedes"]:
            corrected.add(row["supersedes"])
        known[lid], where[lid] = row, name
    return pd.DataFrame(out, columns=["file", "label_id", "problem"])
