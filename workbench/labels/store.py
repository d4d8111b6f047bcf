"""Human labels as an append-only SQLite store: one row per label, committed as it is given.

A store is a **folder**. Each writer (an annotator on one machine) appends to its own SQLite
file there, ``<annotator>@<host>.sqlite``; reading takes the union of every file in the
folder. So annotators labelling at once from their own kernels, or from machines sharing
the folder, never write to the same file (no lock is shared across machines, nothing can
be overwritten), and two kernels of one annotator on one machine share a file through
SQLite's own locking (WAL, ``busy_timeout``).

A label is never changed: triggers refuse ``UPDATE``, ``DELETE`` and an ``INSERT`` on an
existing ``label_id`` or row (``INSERT OR REPLACE`` deletes without firing a ``DELETE``
trigger unless recursive triggers are on), and :meth:`LabelStore.check` reports a file
whose rows were removed or rewritten anyway. A correction is a new row whose
``supersedes`` names an earlier label of the same study, item, kind and annotator, not yet
corrected (:func:`current` keeps the newest of each chain). Imports
(:meth:`LabelStore.add_many`) are checked whole, then written in one transaction or not
at all; a ``label_id`` met twice with different content is refused, naming both rows.

Reading takes every sound file of the folder; an unreadable one (junk, a truncated or
half-synced copy) is left out with a warning naming it, and reported by the check. Files
are opened read-only (``mode=ro``; ``immutable=1`` where read-only storage cannot hold
WAL's ``-shm`` file), so an archived folder reads. Each label is one transaction with ``synchronous=FULL``: once :meth:`LabelStore.add`
returns, a killed kernel or machine keeps it (tests/labels/test_labels_store.py kills a writer with
SIGKILL). Label Studio import and export: :mod:`workbench.labels.interchange`.

Columns (:data:`COLUMNS`): ``label_id`` (uuid4 hex), ``study``, ``item_id``,
``annotator``, ``kind`` (``score`` or ``pairwise``), ``value`` (a score; for ``pairwise``
1 = the pair's answer A preferred, 0 = B, 0.5 = tie), ``choice`` (``A``, ``B``, ``tie``;
empty for scores), ``shown_order`` (``AB`` or ``BA``: which answer was shown on the left;
empty for scores), ``rationale``, ``shown_at`` and ``given_at`` (ISO 8601 UTC),
``seconds`` (time spent), ``package_version``, ``supersedes`` (a ``label_id`` or empty),
``source`` (``widget``, ``sim``, ``csv``, ``label-studio`` ...), ``session`` (the writer's
host, process and a random token per :class:`LabelStore`: ``host:pid:token``), ``sampling_prob`` (the probability an active sampler drew the item
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
import warnings
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from workbench.config import __version__
from workbench.labels._check import check_folder, open_read
from workbench.labels._rules import (
    KINDS,
    correction_error,
    current,
    same_label,
    select_list,
    table_columns,
    validated,
    when,
)

__all__ = ["COLUMNS", "KINDS", "LabelStore", "current", "now"]

#: The columns of a label, in order (the SQLite table, the CSV export, :meth:`LabelStore.labels`).
COLUMNS = ["label_id", "study", "item_id", "annotator", "kind", "value", "choice",
           "shown_order", "rationale", "shown_at", "given_at", "seconds", "package_version",
           "supersedes", "source", "session", "sampling_prob", "guideline"]
_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]+")
_GIVEN, _LABEL_ID = COLUMNS.index("given_at"), COLUMNS.index("label_id")
_TEXT = ("choice", "shown_order", "rationale", "supersedes")
_TRIGGERS = {"labels_no_update", "labels_no_delete"}

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
CREATE TRIGGER IF NOT EXISTS labels_no_replace BEFORE INSERT ON labels
WHEN EXISTS (SELECT 1 FROM labels WHERE label_id = NEW.label_id OR row = NEW.row)
BEGIN SELECT RAISE(ABORT, 'labels are append-only: a stored label is never replaced'); END;
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
    conn.execute("PRAGMA recursive_triggers=ON")     # a REPLACE fires the DELETE trigger
    return conn


def _read_file(path: Path, study: str | None) -> list[tuple]:
    conn = open_read(path)
    try:
        if not conn.execute("SELECT name FROM sqlite_master WHERE type='table' "
                            "AND name='labels'").fetchone():
            return []
        query = f"SELECT {select_list(conn, COLUMNS)} FROM labels"
        args: tuple = ()
        if study is not None:
            query, args = query + " WHERE study = ?", (study,)
        return conn.execute(query + " ORDER BY row", args).fetchall()
    finally:
        conn.close()


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
        if not self.folder.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
        self.annotator = annotator
        self.journal = journal
        # a fresh token per store object: a restarted kernel is a new session even when
        # its process id is the old one's (containers), and the queue's draws key on it
        self.session = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
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
            if "guideline" not in table_columns(self._conn):   # a file from before it existed
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
        ``value`` follows from ``choice``. ``seconds`` defaults to ``given_at - shown_at``
        (none if the clock stepped back). ``supersedes``: an earlier label of the same
        study, item, kind and annotator, not yet corrected. The remaining keywords
        (``annotator``, ``label_id``, ``package_version``, ``session``) keep an imported
        label's own values. ``ValueError`` names the field.
        """
        row = {"label_id": label_id or uuid.uuid4().hex, "study": study,
               "item_id": str(item_id),
               "annotator": annotator if annotator is not None else self.annotator,
               "kind": kind, "value": value, "choice": choice, "shown_order": shown_order,
               "rationale": rationale or "", "shown_at": shown_at, "given_at": given_at or now(),
               "seconds": seconds, "package_version": package_version or __version__,
               "supersedes": supersedes or "", "source": source,
               "session": session or self.session, "sampling_prob": sampling_prob,
               "guideline": guideline}
        try:
            row = validated(row)
        except ValueError as exc:
            raise ValueError(f"label {exc}") from None
        with self._lock:
            known = self._known() if (label_id or row["supersedes"]) else {}
            if label_id and label_id in known:
                raise ValueError(f"label field 'label_id': {label_id} is already in the store")
            problem = correction_error(row, known, self._corrected(known))
            if problem:
                raise ValueError(f"label {problem}")
            self._insert([row])
        return row["label_id"]

    def _known(self) -> dict[str, dict]:
        return {r[_LABEL_ID]: dict(zip(COLUMNS, r, strict=True)) for r in self.rows()}

    @staticmethod
    def _corrected(known: dict[str, dict]) -> set[str]:
        return {r["supersedes"] for r in known.values() if r["supersedes"]}

    def _insert(self, rows: list[dict]) -> None:
        """Write ``rows`` in one transaction (all or none); the caller holds the lock."""
        conn = self._writer()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(f"INSERT INTO labels ({', '.join(COLUMNS)}) VALUES "
                             f"({', '.join('?' for _ in COLUMNS)})",
                             [[row[c] for c in COLUMNS] for row in rows])
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def add_many(self, rows: Iterable[dict], *, where: list[str] | None = None) -> int:
        """Append imported labels (dicts of :data:`COLUMNS`) all at once or not at all;
        return the number added.

        Every row is checked first (``ValueError`` naming ``where[i]``, e.g. the file and
        row, and the field): a label already in the folder with the same content is
        skipped, with other content refused, as is a ``label_id`` met twice with
        different content; corrections follow the rules of :meth:`add` (their target
        earlier in the folder or the import)."""
        rows = list(rows)
        where = where or [f"row {i + 1}" for i in range(len(rows))]
        with self._lock:
            known = self._known()
            corrected = self._corrected(known)
            fresh: dict[str, tuple[str, dict]] = {}
            out = []
            for place, raw in zip(where, rows, strict=True):
                row = {k: raw.get(k) for k in COLUMNS}
                row.update({k: row[k] or "" for k in _TEXT})
                row["item_id"] = "" if row["item_id"] is None else str(row["item_id"])
                try:
                    row = validated(row)
                except ValueError as exc:
                    raise ValueError(f"{place}: {exc}") from None
                lid = row["label_id"]
                if lid in fresh:
                    other, first = fresh[lid]
                    diff = same_label(first, row, COLUMNS)
                    if not diff:
                        continue
                    raise ValueError(f"{place}: label_id {lid} is also {other}, with another "
                                     f"{', '.join(diff)}; keep one (or give one a new label_id)")
                if lid in known:
                    diff = same_label(known[lid], row, COLUMNS)
                    if not diff:
                        continue
                    raise ValueError(f"{place}: label_id {lid} is already in the store with "
                                     f"another {', '.join(diff)}")
                problem = correction_error(row, known, corrected)
                if problem:
                    raise ValueError(f"{place}: {problem}")
                known[lid] = row
                corrected.add(row["supersedes"])
                fresh[lid] = (place, row)
                out.append(row)
            if out:
                self._insert(out)
        return len(out)

    def rows(self, *, study: str | None = None) -> list[tuple]:
        """Every label in the folder (all sound files) as tuples of :data:`COLUMNS`, oldest
        first (by ``given_at`` as a time, then ``label_id``): :meth:`labels` without
        pandas, for callers that read the store after every label (the active queue).
        An unreadable file is left out with a warning naming it."""
        out: list[tuple] = []
        for path in sorted(self.folder.glob("*.sqlite")):
            try:
                out.extend(_read_file(path, study))
            except sqlite3.DatabaseError as exc:
                warnings.warn(f"{path}: not a readable label file ({exc}); its labels are "
                              "left out (LabelStore.check lists it)", stacklevel=2)
        out.sort(key=lambda r: (when(r[_GIVEN]), r[_LABEL_ID]))   # stable within an instant
        return out

    def labels(self, *, study: str | None = None) -> pd.DataFrame:
        """Every label in the folder (all sound files), oldest first (by ``given_at``)."""
        rows = self.rows(study=study)
        out = (pd.DataFrame(rows, columns=COLUMNS) if rows
               else pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS}))
        for name in ("value", "seconds", "sampling_prob"):
            out[name] = out[name].astype(float)
        return out

    def check(self) -> pd.DataFrame:
        """Problems of the folder, one row each (``file``, ``label_id``, ``problem``; empty
        when sound): unreadable files, failed integrity checks, missing append-only
        triggers, rows removed or rewritten (the row numbers have gaps: ``INSERT OR
        REPLACE`` or a ``DELETE`` behind the triggers' back), one ``label_id`` with two
        contents, and corrections that break the rules of :meth:`add`."""
        return check_folder(self.folder, COLUMNS)

    def close(self) -> None:
        """Close this writer's connection (labels are already committed)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        return f"LabelStore({str(self.folder)!r}, annotator={self.annotator!r})"
