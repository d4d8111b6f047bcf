"""Loading data folders: the bundled study sets and a user's own folder.

A folder holds UTF-8 CSV files named after the canonical tables (``items.csv``
required; ``rubric.csv``, ``responses.csv``, ``human_scores.csv``, ``spans.csv``
optional), or — for report sets such as ``s4_reports`` — a ``reports.csv`` metadata
table plus one Markdown file per report in ``reports/<slug>.md``.

Empty tables: ``items.csv`` and ``reports.csv`` with a header but no data rows are a
`DatasetError` naming the file (nothing could be judged). An optional table with only
its header is an empty table, the same as an absent file; a bundled set that needs one
(``s1_medical_ja``: its rubric; ``s5_accounting_ja``: responses and spans) says so.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from workbench import config
from workbench.datasets._release import reading
from workbench.datasets._schema import CANONICAL_COLUMNS, TABLE_FILES, cell_text
from workbench.datasets._spans import validate_spans
from workbench.datasets._validate import (
    _error,
    validate_human_scores,
    validate_items,
    validate_responses,
    validate_rubric,
)
from workbench.errors import DatasetError
from workbench.text import is_missing

__all__ = ["list_datasets", "load_dataset", "load_folder", "read_csv"]

# name -> one-line description (the README.md of each folder has the details)
DATASETS: dict[str, str] = {
    "s1_medical_ja": "S1: Japanese medical consultations with holistic criteria and a "
    "weighted checklist (seed 000)",
    "s2_civil_ja": "S2: Japanese bridge-design QA with hand-listed keywords (seed 001)",
    "s3_hiv_en": "S3: English HIV clinical questions in categories 1-3, with wrong "
    "answers for the cognitive-bias cues (seed 002)",
    "s4_reports": "S4: research reports of varying quality from two pipeline versions, "
    "with padded twins (seed 003)",
    "s5_accounting_ja": "S5: Japanese accounting QA with gist/detail units and human "
    "excess/missing spans (seed 004)",
}

REPORT_COLUMNS = ("slug", "date", "pipeline_version", "track", "title", "topic", "lang")
_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def list_datasets() -> list[str]:
    """Names of the bundled data sets, sorted.

    Examples
    --------
    >>> list_datasets()[:2]
    ['s1_medical_ja', 's2_civil_ja']
    """
    return sorted(DATASETS)


def read_csv(path: str | Path, *, label: str | None = None) -> pd.DataFrame:
    """Read a UTF-8 CSV file with every cell as text (empty cells as ``""``).

    A byte-order mark (as Excel writes) is accepted. An unreadable file raises
    `DatasetError` naming it (``label`` replaces the path in messages).
    """
    path = Path(path)
    name = label or str(path)
    try:
        with reading(name):
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise DatasetError("empty file: no header row", file=name) from None
    except pd.errors.ParserError as exc:
        raise DatasetError(f"malformed CSV: {exc}", file=name) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _empty(table: str) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in CANONICAL_COLUMNS[table]})


def load_folder(
    path: str | Path, *, require_reference: bool = True, label: str | None = None
) -> dict[str, pd.DataFrame]:
    """Load and validate a data folder in the workbench's file format.

    Parameters
    ----------
    path : str or Path
        The folder: ``items.csv`` (required) and optionally ``rubric.csv``,
        ``responses.csv``, ``human_scores.csv``, ``spans.csv``; or a report folder
        with ``reports.csv`` and ``reports/<slug>.md``.
    require_reference : bool
        When False, items may have an empty ``reference`` (always allowed for
        report folders).
    label : str, optional
        Prefix used for file names in error messages (default: the folder path).

    Returns
    -------
    dict of DataFrame
        ``items``, ``rubric``, ``responses``, ``human_scores``, ``spans`` — always
        all five; a table whose file is absent is an empty frame with the canonical
        columns — plus ``reports`` for a report folder. Columns: see
        ``validate_items`` and the other ``validate_*`` functions.

    Raises
    ------
    DatasetError
        Naming the file, the 1-based data row (header not counted) and the column
        of the first problem found.
    """
    folder = Path(path)
    prefix = label if label is not None else str(folder)
    if not folder.is_dir():
        raise DatasetError("data folder not found", file=prefix)

    def where(name: str) -> str:
        return f"{prefix}/{name}"

    if (folder / "reports.csv").exists() and not (folder / "items.csv").exists():
        return _load_reports(folder, where)
    items_file = folder / TABLE_FILES["items"]
    if not items_file.exists():
        raise DatasetError(
            "missing items.csv (every data folder needs one)", file=where("items.csv")
        )
    items = validate_items(
        read_csv(items_file, label=where("items.csv")),
        file=where("items.csv"),
        require_reference=require_reference,
    )
    tables = {"items": items}
    for table, validate in (
        ("rubric", validate_rubric),
        ("responses", validate_responses),
        ("human_scores", validate_human_scores),
        ("spans", validate_spans),
    ):
        file = folder / TABLE_FILES[table]
        if not file.exists():
            tables[table] = _empty(table)
            continue
        # spans are checked against the responses when the folder has a responses file
        given = (folder / TABLE_FILES["responses"]).exists()
        extra = {"responses": tables["responses"] if given else None} if table == "spans" else {}
        tables[table] = validate(
            read_csv(file, label=where(file.name)), items=items, file=where(file.name), **extra
        )
    return tables


def _load_reports(folder: Path, where) -> dict[str, pd.DataFrame]:
    file = where("reports.csv")
    frame = read_csv(folder / "reports.csv", label=file)
    for column in REPORT_COLUMNS:
        if column not in frame.columns:
            raise _error(
                f"missing column {column!r} (reports.csv needs {', '.join(REPORT_COLUMNS)})",
                file=file,
                column=column,
            )
    if frame.empty:
        raise DatasetError("no reports: the table has a header but no data rows", file=file)
    records = []
    slugs = {cell_text(s).strip() for s in frame["slug"]}
    seen: dict[str, int] = {}
    for row, record in enumerate(frame.to_dict("records"), start=1):

        def fail(message: str, column: str, row: int = row) -> DatasetError:
            return _error(message, file=file, row=row, column=column)

        for column in REPORT_COLUMNS:
            if is_missing(record[column], blank=True):
                raise fail("empty required field", column)
        slug = record["slug"].strip()
        if not _SLUG_RE.match(slug):
            raise fail(f"slug {slug!r} must be lower-case letters, digits and '-'", "slug")
        if slug in seen:
            raise fail(f"duplicate slug {slug!r} (first at row {seen[slug]})", "slug")
        seen[slug] = row
        padded_from = cell_text(record.get("padded_from")).strip()
        if padded_from and (padded_from not in slugs or padded_from == slug):
            raise fail(f"padded_from {padded_from!r} is not the slug of another report",
                       "padded_from")
        if not _DATE_RE.match(record["date"].strip()):
            raise fail(f"date {record['date']!r} is not YYYY-MM-DD", "date")
        path = folder / "reports" / f"{slug}.md"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise fail(f"no report file reports/{slug}.md for this slug", "slug") from None
        except UnicodeDecodeError:
            raise DatasetError("not UTF-8 text", file=where(f"reports/{slug}.md")) from None
        if not text.strip():
            raise DatasetError("empty report", file=where(f"reports/{slug}.md"))
        records.append(
            {**{k: cell_text(v).strip() for k, v in record.items()}, "slug": slug, "text": text}
        )
    reports = pd.DataFrame(records)
    for column in ("quality_note", "padded_from"):
        if column not in reports.columns:
            reports[column] = ""
    items = pd.DataFrame(
        {
            "item_id": reports["slug"],
            "lang": reports["lang"],
            "category": reports["track"],
            "question": reports["topic"],
            "reference": "",
            "keywords": "",
            "perturbation": ["padding" if p else "none" for p in reports["padded_from"]],
            "source_item": [
                p or s for p, s in zip(reports["padded_from"], reports["slug"], strict=True)
            ],
            "title": reports["title"],
        }
    )
    # Row numbers of reports.csv carry over: items are built one per report row.
    items = validate_items(items, file=file, require_reference=False)
    responses = validate_responses(
        pd.DataFrame(
            {
                "item_id": reports["slug"],
                "answer_model": "pipeline-" + reports["pipeline_version"],
                "answer_sample": 0,
                "response": reports["text"],
            }
        ),
        items=items,
        file=file,
    )
    meta = reports.drop(columns=["text"])
    meta["n_chars"] = [len(t) for t in reports["text"]]
    meta["n_words"] = [len(t.split()) for t in reports["text"]]
    return {
        "items": items,
        "rubric": _empty("rubric"),
        "responses": responses,
        "human_scores": _empty("human_scores"),
        "spans": _empty("spans"),
        "reports": meta.reset_index(drop=True),
    }


def _check_bundled(name: str, tables: dict[str, pd.DataFrame], prefix: str) -> None:
    """Set-specific rules of the bundled sets (DATAFORMAT: set-specific columns)."""
    items = tables["items"]
    file = f"{prefix}/items.csv"
    if name == "s1_medical_ja":
        if tables["rubric"].empty:
            raise DatasetError(
                "the set needs a non-empty rubric.csv", file=f"{prefix}/{TABLE_FILES['rubric']}"
            )
        for column in ("good_example", "bad_example", "axis"):
            if column not in items.columns:
                raise _error(f"missing column {column!r}", file=file, column=column)
            for row, value in enumerate(items[column], start=1):
                if is_missing(value, blank=True):
                    raise _error("empty required field", file=file, row=row, column=column)
    elif name == "s2_civil_ja":
        for row, (keywords, reference) in enumerate(
            zip(items["keywords"], items["reference"], strict=True), start=1
        ):
            for keyword in keywords:
                if keyword not in reference:
                    raise _error(f"keyword {keyword!r} does not occur in the reference",
                                 file=file, row=row, column="keywords")
    elif name == "s3_hiv_en":
        if "wrong_answer" not in items.columns:
            raise _error("missing column 'wrong_answer'", file=file, column="wrong_answer")
        for row, (category, wrong) in enumerate(
            zip(items["category"], items["wrong_answer"], strict=True), start=1
        ):
            if str(category) not in ("1", "2", "3"):
                raise _error(
                    f"category {category!r} is not 1, 2 or 3", file=file, row=row, column="category"
                )
            if str(category) == "3" and is_missing(wrong, blank=True):
                raise _error("a category-3 item needs a wrong_answer (the bias cues use it)",
                             file=file, row=row, column="wrong_answer")
    elif name == "s5_accounting_ja":
        for table in ("responses", "spans"):
            if tables[table].empty:
                raise DatasetError(
                    f"the set needs a non-empty {table}.csv", file=f"{prefix}/{TABLE_FILES[table]}"
                )


def load_dataset(name: str) -> dict[str, pd.DataFrame]:
    """Load one bundled data set as validated canonical frames.

    Parameters
    ----------
    name : str
        One of `list_datasets`: ``s1_medical_ja``, ``s2_civil_ja``, ``s3_hiv_en``,
        ``s4_reports``, ``s5_accounting_ja``. The folder is
        ``workbench.config.data_dir() / name``.

    Returns
    -------
    dict of DataFrame
        ``items``, ``rubric``, ``responses``, ``human_scores``, ``spans`` (empty
        frames with the canonical columns where a set has no such file) and, for
        ``s4_reports``, ``reports`` (slug, date, pipeline_version, track, title,
        topic, lang, quality_note, padded_from, n_chars, n_words).

    Raises
    ------
    DatasetError
        Unknown name (the message lists the known ones), a missing folder, or the
        first problem in a file (naming file, row and column).

    Examples
    --------
    >>> data = load_dataset("s5_accounting_ja")
    >>> sorted(data)
    ['human_scores', 'items', 'responses', 'rubric', 'spans']
    >>> len(data["items"])
    20
    """
    if name not in DATASETS:
        raise DatasetError(f"unknown data set {name!r}; known: {', '.join(list_datasets())}")
    folder = config.data_dir() / name
    if not folder.is_dir():
        raise DatasetError(
            f"data folder {name}/ not found under the data directory "
            "(set WORKBENCH_ROOT to the project checkout)",
            file=name,
        )
    tables = load_folder(folder, require_reference=name != "s4_reports", label=name)
    _check_bundled(name, tables, name)
    return tables
