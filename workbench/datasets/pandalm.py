"""Importer of the PandaLM test set (pairwise with ties, three annotators).

Layout (below the PandaLM checkout): ``data/testset-v1.json`` holds the pairs
``{idx, motivation_app, cmp_key, instruction, input, response1, response2,
annotator1, annotator2, annotator3}`` with each annotator label 0 (tie), 1 or 2;
every other ``data/<judge>-testset-v1.json`` holds one judge's predictions
``{idx, <p>_result, <p>_reason, <p>_reference}`` whose prefix ``<p>`` differs by file:
``gpt-3.5-turbo-testset-v1.json`` uses ``gpt_result`` (strings ``"1"``, ``"2"``,
``"Tie"`` or unparseable text), ``pandalm-7b-testset-v1.json`` uses ``pandalm_result``
(integers 0, 1, 2). The verdict field of a file is the one ``*_result`` key its records
hold.

References
----------
Wang, Y., Yu, Z., Zeng, Z., et al. (2024). PandaLM: An automatic evaluation benchmark
for LLM instruction tuning optimization. ICLR 2024.
https://github.com/WeOpenML/PandaLM
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from workbench.datasets._release import read_json_list, record_error, records, relative
from workbench.errors import DatasetError

__all__ = ["TESTSET_FILE", "load_release", "parse_verdict"]

TESTSET_FILE = "data/testset-v1.json"
_SUFFIX = "-testset-v1.json"
_ANNOTATORS = ("annotator1", "annotator2", "annotator3")
_TIES = {"tie", "0", "draw"}


def parse_verdict(value) -> int | None:
    """A judge's result as 0 (tie), 1, 2, or None when it is none of those.

    Examples
    --------
    >>> [parse_verdict(v) for v in ("1", " 2 ", "Tie", 0, "1 or 2", None, "garbage")]
    [1, 2, 0, 0, None, None, None]
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if value in (0, 1, 2) else None
    if isinstance(value, float):
        return int(value) if value in (0.0, 1.0, 2.0) else None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("1", "2"):
            return int(text)
        if text in _TIES:
            return 0
    return None


def _root(path: Path) -> Path:
    if (path / TESTSET_FILE).exists():
        return path
    if path.name == "data" and (path / "testset-v1.json").exists():
        return path.parent
    raise DatasetError(f"not a PandaLM checkout: {TESTSET_FILE} not found", file=str(path))


def _result_field(records: list, label: str) -> str:
    """The one ``*_result`` key of a judge file's records (``gpt_result``, ``pandalm_result``)."""
    fields = sorted({key for record in records if isinstance(record, dict)
                     for key in record if key.endswith("_result")})
    if len(fields) != 1:
        found = ", ".join(fields) or "none"
        raise DatasetError(
            f"no verdict field: expected exactly one '*_result' key in the records, "
            f"found {found}",
            file=label,
        )
    return fields[0]


def _idx(record: dict, index: int, label: str) -> int:
    value = record.get("idx")
    if isinstance(value, int | str) and not isinstance(value, bool):
        try:
            return int(value)
        except ValueError:
            pass
    raise record_error(index, f"idx {value!r} is not an integer", file=label, column="idx")


def load_release(path: str | Path) -> dict[str, pd.DataFrame]:
    """The PandaLM test set and every judge-prediction file beside it.

    Parameters
    ----------
    path : str or Path
        The PandaLM checkout (the folder holding ``data/``) or its ``data/`` folder.

    Returns
    -------
    dict of DataFrame
        ``items``: ``idx``, ``instruction``, ``input``, ``response1``,
        ``response2``, ``annotator1``, ``annotator2``, ``annotator3`` (0 tie, 1, 2),
        plus ``motivation_app`` and ``cmp_key``.

        ``predictions``: ``idx``, ``judge`` (from the file name, e.g.
        ``gpt-3.5-turbo``), ``verdict`` (0 tie, 1, 2, or None when unparseable —
        never a guess), ``parse_ok``, ``raw_result``, ``reason``, ``file``.

    Raises
    ------
    DatasetError
        A file is missing or malformed, an annotator label is not 0/1/2, an ``idx``
        is not an integer or repeats (naming the file, record index and field); a
        judge file has no single ``*_result`` field, or none of its verdicts parses
        (a judge that cannot be read is an error, never a kappa of 0).
    """
    root = _root(Path(path))
    label = TESTSET_FILE
    data = read_json_list(root / TESTSET_FILE, label=label)
    items, seen = [], {}
    for index, record in records(data, label=label):
        idx = _idx(record, index, label)
        if idx in seen:
            raise record_error(index, f"idx {idx} repeats record {seen[idx]}", file=label,
                               column="idx")
        seen[idx] = index
        row = {"idx": idx}
        for field in ("instruction", "input", "response1", "response2"):
            row[field] = record.get(field)
        for field in _ANNOTATORS:
            value = record.get(field)
            verdict = parse_verdict(value)
            if verdict is None:
                raise record_error(index, f"{field} {value!r} is not 0, 1 or 2", file=label,
                                   column=field)
            row[field] = verdict
        row["motivation_app"] = record.get("motivation_app")
        row["cmp_key"] = record.get("cmp_key")
        items.append(row)
    item_frame = pd.DataFrame(
        items,
        columns=[
            "idx",
            "instruction",
            "input",
            "response1",
            "response2",
            *_ANNOTATORS,
            "motivation_app",
            "cmp_key",
        ],
    )
    predictions = []
    for file in sorted((root / "data").glob(f"*{_SUFFIX}")):
        judge = file.name[: -len(_SUFFIX)]
        if not judge:
            continue
        file_label = relative(file, root)
        judged = read_json_list(file, label=file_label)
        if not judged:
            continue
        field = _result_field(judged, file_label)
        reason = field[: -len("_result")] + "_reason"
        rows = []
        for index, record in records(judged, label=file_label):
            raw = record.get(field)
            verdict = parse_verdict(raw)
            rows.append(
                {
                    "idx": _idx(record, index, file_label),
                    "judge": judge,
                    "verdict": verdict,
                    "parse_ok": verdict is not None,
                    "raw_result": raw,
                    "reason": record.get(reason),
                    "file": file_label,
                }
            )
        if not any(row["parse_ok"] for row in rows):
            raise DatasetError(
                f"all {len(rows)} verdicts in {field!r} are unparsed "
                "(expected 0/1/2 or '1'/'2'/'Tie')",
                file=file_label,
                column=field,
            )
        predictions.extend(rows)
    pred_frame = pd.DataFrame(
        predictions, columns=["idx", "judge", "verdict", "parse_ok", "raw_result", "reason", "file"]
    )
    pred_frame["verdict"] = pd.Series(
        [p["verdict"] for p in predictions], dtype=object, index=pred_frame.index
    )
    pred_frame["parse_ok"] = pred_frame["parse_ok"].astype(bool)
    return {"items": item_frame, "predictions": pred_frame}
