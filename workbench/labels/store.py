"""Human labels as an append-only SQLite store: one row per label, committed as it is given.

A store is a **folder**. Each writer (an annotator on one machine) appends to its own SQLite
file there, ``<annotator>@<host>.sqlite``; reading takes the union of every file in the
folder. So annotators labelling at once from their own kernels, or from machines sharing
the folder, never write to the same file (no lock is shared across machines, nothing can
be overwritten), and two kernels of one annotator on one machine share a file through
SQLite's own locking (WAL, ``busy_timeout``).

A label is never changed: triggers refuse ``UPDATE`` and ``DELETE``; a correction is a new
row whose ``supersedes`` names the label it replaces (:func:`current` keeps the newest of
each chain). Each label is one transaction with ``synchronous=FULL``: once :meth:`LabelStore.add`
returns, a killed kernel or machine keeps it (tests/labels/test_labels_store.py kills a writer with
SIGKILL). Label Studio import and export: :mod:`workbench.labels.interchange`.

Columns (:data:`COLUMNS`): ``label_id`` (uuid4 hex), ``study``, ``item_id``,
``annotator``, ``kind`` (``score`` or ``pairwise``), ``value`` (a score; for ``pairwise``
1 = the pair's answer A preferred, 0 = B, 0.5 = tie), ``choice`` (``A``, ``B``, ``tie``;
empty for scores), ``shown_order`` (``AB`` or ``BA``: which answer was shown on the left;
empty for scores), ``rationale``, ``shown_at`` and ``given_at`` (ISO 8601 UTC),
``seconds`` (time spent), ``package_version``, ``supersedes`` (a ``label_id`` or empty),
``source`` (``widget``, ``sim``, ``csv``, ``label-studio`` ...), ``session`` (the writer's
host and process), ``sampling_prob`` (the probability an active sampler drew the item
with; empty otherwise), ``guideline`` (the version of the guideline the label was given
under, :func:`workbench.labels.widget.guideline_version`; empty otherwise, and in files
written before it existed).
"""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path

import pandas as pd

from workbench.config import __version__

__all__ = ["COLUMNS", "KINDS", "LabelStore", "current", "now"]

#: The columns of a label, in order (the SQLite table, the CSV export, :meth:`LabelStore.labels`).
COLUMNS = ["label_id", "study", "item_id", "annotator", "kind", "value", "choice",
           "shown_order", "rationale", "shown_at", "given_at", "seconds", "package_version",
           "supersedes", "source", "session", "sampling_prob", "guideline"]
KINDS = ("score", "pairwise")
_CHOICE_VALUE = {"A": 1.0, "B": 0.0, "tie": 0.5}
_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]+")
#: The order of :meth:`LabelStore.rows`: ``given_at``, then ``label_id``.
_ORDER = itemgetter(COLUMNS.index("given_at"), COLUMNS.index("label_id"))

_SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (
    row INTEGER PRIMARY KEY AUTOINCREMENT,
    label_id TEXT NOT NULL UNIQUE,
    study TEXT NOT NULL,
    item_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('score', 'pairwise')),
    value REAL NOT NULL,
    choice TEXT NOT NULL DEFAULT '',
    shown_order TEXT NOT NULL DEFAULT '',
    rationale TEXT NOT NULL DEFAULT '',
    shown_at TEXT NOT NULL,
    given_at TEXT NOT NULL,
    seconds REAL,
    package_version TEXT NOT NULL,
    supersedes TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL,
    session TEXT NOT NULL,
    sampling_prob REAL,
    guideline TEXT
);
CREATE TRIGGER IF NOT EXISTS labels_no_update BEFORE UPDATE ON labels
BEGIN SELECT RAISE(ABORT, 'labels are append-only: add a correction instead'); END;
CREATE TRIGGER IF NOT EXISTS labels_no_delete BEFORE DELETE ON labels
BEGIN SELECT RAISE(ABORT, 'labels are append-only: add a correction instead'); END;
"""


def now() -> str:
    """The current time, ISO 8601 UTC with microseconds (the store's timestamps)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _connect(path: Path, *, journal: str) -> sqlite3.Connection:
    # a kernel may handle widget messages on more than one thread: the connection is
    # shared, and every write holds the store's lock
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


class LabelStore:
    """The labels of one folder; writes go to this annotator's own file in it.

    Parameters
    ----------
    folder : str or Path
        The shared folder (created if missing).
    annotator : str
        Who labels through this store ("" to only read).
    journal : str
        SQLite journal mode of the file written: ``wal`` (default: concurrent kernels on one
        machine) or ``delete`` (a folder on a network file system, where WAL's shared memory
        does not work across machines; each machine still writes only its own file).

    Examples
    --------
    >>> import tempfile
    >>> store = LabelStore(tempfile.mkdtemp(), annotator="ann-1")
    >>> first = store.add(study="demo", item_id="q1", kind="score", value=4)
    >>> _ = store.add(study="demo", item_id="q1", kind="score", value=3, supersedes=first)
    >>> len(store.labels()), current(store.labels())["value"].tolist()
    (2, [3.0])
    """

    def __init__(self, folder: str | Path, *, annotator: str = "", journal: str = "wal"):
        if journal not in ("wal", "delete"):
            raise ValueError(f"journal must be 'wal' or 'delete', got {journal!r}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.annotator = annotator
        self.journal = journal
        self.session = f"{socket.gethostname()}:{os.getpid()}"
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        """This writer's file: ``<annotator>@<host>.sqlite`` in the folder."""
        if not self.annotator:
            raise ValueError("LabelStore: give an annotator to write labels")
        name = _NAME_RE.sub("_", f"{self.annotator}@{socket.gethostname()}")
        return self.folder / f"{name}.sqlite"

    def _writer(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = _connect(self.path, journal=self.journal)
            self._conn.executescript(_SCHEMA)
            if "guideline" not in _columns(self._conn):       # a file from before it existed
                self._conn.execute("ALTER TABLE labels ADD COLUMN guideline TEXT")
        return self._conn

    def add(self, *, study: str, item_id: str, kind: str, value: float | None = None,
            choice: str = "", shown_order: str = "", rationale: str = "",
            shown_at: str | None = None, given_at: str | None = None,
            seconds: float | None = None, supersedes: str = "", source: str = "widget",
            annotator: str | None = None, label_id: str | None = None,
            package_version: str | None = None, session: str | None = None,
            sampling_prob: float | None = None, guideline: str | None = None) -> str:
        """Append one label in its own transaction and return its ``label_id``.

        For ``kind="pairwise"`` give ``choice`` (``A``, ``B`` or ``tie``, about the pair's
        own answers, not the sides shown) and ``shown_order`` (``AB``: A was on the left);
        ``value`` follows from ``choice``. ``seconds`` defaults to ``given_at - shown_at``.
        The remaining keywords (``annotator``, ``label_id``, ``package_version``,
        ``session``) keep an imported label's own values.
        """
        row = _validated({
            "label_id": label_id or uuid.uuid4().hex, "study": study, "item_id": str(item_id),
            "annotator": annotator if annotator is not None else self.annotator, "kind": kind,
            "value": value, "choice": choice, "shown_order": shown_order,
            "rationale": rationale or "", "shown_at": shown_at, "given_at": given_at or now(),
            "seconds": seconds, "package_version": package_version or __version__,
            "supersedes": supersedes or "", "source": source,
            "session": session or self.session, "sampling_prob": sampling_prob,
            "guideline": guideline or None})
        with self._lock:
            conn = self._writer()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(f"INSERT INTO labels ({', '.join(COLUMNS)}) VALUES "
                             f"({', '.join('?' for _ in COLUMNS)})", [row[c] for c in COLUMNS])
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return row["label_id"]

    def add_many(self, rows: Iterable[dict], *, skip_existing: bool = True) -> int:
        """Append labels given as dicts of :data:`COLUMNS` (imports); one transaction each.
        Labels whose ``label_id`` is already in the folder are skipped; returns the number
        added."""
        seen = set(self.labels()["label_id"]) if skip_existing else set()
        added = 0
        for row in rows:
            if row.get("label_id") in seen:
                continue
            fields = {k: row.get(k) for k in COLUMNS if k != "label_id"}
            fields = {k: ("" if v is None and k in ("choice", "shown_order", "rationale",
                                                     "supersedes") else v)
                      for k, v in fields.items()}
            self.add(label_id=row.get("label_id"), **fields)
            seen.add(row.get("label_id"))
            added += 1
        return added

    def rows(self, *, study: str | None = None) -> list[tuple]:
        """Every label in the folder (all writers' files) as tuples of :data:`COLUMNS`,
        oldest first (by ``given_at``, then ``label_id``): :meth:`labels` without pandas,
        for callers that read the store after every label (:class:`~workbench.labels.active.ActiveQueue`)."""
        where, args = (" WHERE study = ?", (study,)) if study is not None else ("", ())
        out: list[tuple] = []
        for path in sorted(self.folder.glob("*.sqlite")):
            conn = sqlite3.connect(path, timeout=30.0)
            try:
                conn.execute("PRAGMA busy_timeout=30000")
                has = conn.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                   "AND name='labels'").fetchone()
                if has:
                    have = _columns(conn)                 # older files lack later columns
                    cols = ", ".join(c if c in have else f"NULL AS {c}" for c in COLUMNS)
                    out.extend(conn.execute(f"SELECT {cols} FROM labels{where} ORDER BY row",
                                            args).fetchall())
            finally:
                conn.close()
        out.sort(key=_ORDER)  # stable: one file's labels of one instant keep their order
        return out

    def labels(self, *, study: str | None = None) -> pd.DataFrame:
        """Every label in the folder (all writers' files), oldest first (by ``given_at``)."""
        rows = self.rows()
        out = (pd.DataFrame(rows, columns=COLUMNS) if rows
               else pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS}))
        if study is not None:
            out = out[out["study"] == study].reset_index(drop=True)
        for name in ("value", "seconds", "sampling_prob"):
            out[name] = out[name].astype(float)
        return out

    def close(self) -> None:
        """Close this writer's connection (labels are already committed)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        return f"LabelStore({str(self.folder)!r}, annotator={self.annotator!r})"


def _columns(conn: sqlite3.Connection) -> set[str]:
    return {r[1] for r in conn.execute("PRAGMA table_info(labels)")}


def _validated(row: dict) -> dict:
    """Check one label; ``ValueError`` naming the field."""
    for name in ("study", "item_id", "annotator", "source"):
        if not row[name]:
            raise ValueError(f"label field {name!r} is empty")
    if row["kind"] not in KINDS:
        raise ValueError(f"label field 'kind' must be one of {KINDS}, got {row['kind']!r}")
    if row["kind"] == "pairwise":
        if row["choice"] not in _CHOICE_VALUE:
            raise ValueError(f"label field 'choice' must be A, B or tie, got {row['choice']!r}")
        if row["shown_order"] not in ("AB", "BA"):
            raise ValueError(f"label field 'shown_order' must be AB or BA, got {row['shown_order']!r}")
        expected = _CHOICE_VALUE[row["choice"]]
        if row["value"] is not None and float(row["value"]) != expected:
            raise ValueError(f"label field 'value' {row['value']!r} contradicts choice {row['choice']!r}")
        row["value"] = expected
    else:
        if row["value"] is None or pd.isna(row["value"]):
            raise ValueError("label field 'value' is missing (a score is needed)")
        row["value"] = float(row["value"])
        if row["choice"] or row["shown_order"]:
            raise ValueError("label fields 'choice' and 'shown_order' are for pairwise labels")
    given = row["given_at"]
    row["shown_at"] = row["shown_at"] or given
    for name in ("shown_at", "given_at"):
        try:
            datetime.fromisoformat(row[name])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"label field {name!r} is not an ISO 8601 time: {row[name]!r}") from exc
    if row["seconds"] is None or pd.isna(row["seconds"]):
        delta = datetime.fromisoformat(given) - datetime.fromisoformat(row["shown_at"])
        row["seconds"] = delta.total_seconds()
    row["seconds"] = float(row["seconds"])
    prob = row.get("sampling_prob")
    if prob is None or pd.isna(prob):
        row["sampling_prob"] = None
    elif not 0 < float(prob) <= 1:
        raise ValueError(f"label field 'sampling_prob' must be in (0, 1], got {prob!r}")
    else:
        row["sampling_prob"] = float(prob)
    return row


def current(labels: pd.DataFrame) -> pd.DataFrame:
    """The labels in force: every label that no later label ``supersedes``.

    Examples
    --------
    >>> frame = pd.DataFrame({"label_id": ["a", "b", "c"], "supersedes": ["", "a", ""],
    ...                       "value": [1.0, 2.0, 5.0]})
    >>> current(frame)["label_id"].tolist()
    ['b', 'c']
    """
    replaced = set(labels["supersedes"].fillna("")) - {""}
    return labels[~labels["label_id"].isin(replaced)].reset_index(drop=True)
