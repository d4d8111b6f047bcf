"""Importer of the LLMBar release (pairwise judging in both orders).

Layout: ``Dataset/<set>/…/dataset.json`` holds the pairs ``{input, output_1,
output_2, label}`` (label 1 or 2) and ``Dataset/<set>/…/evaluators/<Judge>/<Strategy>/
result.json`` the same records plus ``results``: one element per run, the **last**
being the run to use, ``{"swap = False": {"completion": [text, finish_reason],
"winner": "1"|"2"|null}, "swap = True": {…}}``. In the ``swap = True`` run the two
outputs were shown in the other order, but its ``winner`` is already mapped back to
the original numbering. ``null`` means the reply could not be parsed.

The ``statistics.json`` files next to each result are ignored on purpose: their
``kappa_*`` fields come from a label-mapping bug in the authors' script, so they are
not a reference to compare with. Compute agreement from the verdicts instead (e.g.
``workbench.stats.position_consistency``).

References
----------
Zeng, Z., Yu, J., Gao, T., Meng, Y., Goyal, T. & Chen, D. (2024). Evaluating large
language models at evaluating instruction following. ICLR 2024.
https://github.com/princeton-nlp/LLMBar
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from workbench.datasets._release import is_ignored_dir, read_json_list, records, relative
from workbench.errors import DatasetError

__all__ = ["load_items", "load_release"]

_ORDERS = (("swap = False", 0), ("swap = True", 1))
_COLUMNS = [
    "subset",
    "item_id",
    "item_index",
    "judge",
    "strategy",
    "order",
    "verdict",
    "label",
    "parse_ok",
    "completion",
    "finish_reason",
    "file",
]


def _files(root: Path, name: str) -> list[Path]:
    if not root.is_dir():
        raise DatasetError("LLMBar release folder not found", file=str(root))
    return sorted(
        p
        for p in root.rglob(name)
        if not any(is_ignored_dir(part) for part in p.relative_to(root).parts[:-1])
    )


def _subset(set_dir: Path, root: Path) -> str:
    parts = set_dir.parts
    if "Dataset" in parts:
        below = parts[len(parts) - parts[::-1].index("Dataset") :]
        if below:
            return "/".join(below)
    rel = relative(set_dir, root)
    return set_dir.name if rel in ("", ".") else rel


def _label(record: dict, index: int, label_file: str) -> int:
    value = record.get("label")
    if value in (1, 2, "1", "2"):
        return int(value)
    raise DatasetError(
        f"record {index} (0-based): label {value!r} is not 1 or 2", file=label_file, column="label"
    )


def _verdict(winner) -> int | None:
    if isinstance(winner, bool):
        return None
    if winner in (1, 2):
        return int(winner)
    if isinstance(winner, str) and winner.strip() in ("1", "2"):
        return int(winner.strip())
    return None


def load_release(path: str | Path) -> pd.DataFrame:
    """Every ``result.json`` under ``path`` as one long frame of verdicts.

    Parameters
    ----------
    path : str or Path
        The LLMBar checkout, its ``Dataset/`` folder or any folder below it.
        Folders of old runs and checkpoints (``old*``, ``*_old``, hidden) are skipped,
        as are ``result.json`` files not under ``evaluators/<Judge>/<Strategy>/``.

    Returns
    -------
    DataFrame
        Two rows per item and judge run: ``subset`` (the folder path below
        ``Dataset/``, e.g. ``LLMBar/Natural``), ``item_id`` (``"<subset>/<index>"``),
        ``item_index`` (0-based position in the file), ``judge``, ``strategy``,
        ``order`` (0 = outputs shown as numbered, 1 = swapped), ``verdict`` (1, 2, or
        None when the judge's reply was not parsed; in the original numbering),
        ``label`` (1 or 2), ``parse_ok``, ``completion`` and ``finish_reason`` of the
        judge, ``file``. An item whose ``results`` list is empty still gives its two
        rows, with verdict None.

    Raises
    ------
    DatasetError
        The folder is missing, a file is not a JSON list of objects, or a label is not
        1 or 2 (naming the file and record index).
    """
    root = Path(path)
    rows = []
    for file in _files(root, "result.json"):
        strategy_dir = file.parent
        judge_dir = strategy_dir.parent
        if judge_dir.parent.name != "evaluators":
            continue
        set_dir = judge_dir.parent.parent
        subset = _subset(set_dir, root)
        label_file = relative(file, root)
        data = read_json_list(file, label=label_file)
        for index, record in records(data, label=label_file):
            label = _label(record, index, label_file)
            results = record.get("results")
            last = results[-1] if isinstance(results, list) and results else {}
            if not isinstance(last, dict):
                last = {}
            for key, order in _ORDERS:
                run = last.get(key) if isinstance(last.get(key), dict) else {}
                completion = run.get("completion")
                text, finish = None, None
                if isinstance(completion, list | tuple):
                    text = completion[0] if len(completion) > 0 else None
                    finish = completion[1] if len(completion) > 1 else None
                elif isinstance(completion, str):
                    text = completion
                verdict = _verdict(run.get("winner"))
                rows.append(
                    {
                        "subset": subset,
                        "item_id": f"{subset}/{index}",
                        "item_index": index,
                        "judge": judge_dir.name,
                        "strategy": strategy_dir.name,
                        "order": order,
                        "verdict": verdict,
                        "label": label,
                        "parse_ok": verdict is not None,
                        "completion": text,
                        "finish_reason": finish,
                        "file": label_file,
                    }
                )
    frame = pd.DataFrame(rows, columns=_COLUMNS)
    # object dtype keeps None for an unparsed verdict (a float column would turn it to NaN)
    frame["verdict"] = pd.Series([r["verdict"] for r in rows], dtype=object, index=frame.index)
    for column in ("item_index", "order", "label"):
        frame[column] = frame[column].astype(int)
    frame["parse_ok"] = frame["parse_ok"].astype(bool)
    return frame


def load_items(path: str | Path) -> pd.DataFrame:
    """Every ``dataset.json`` under ``path``: the pairs to judge, with their labels.

    Returns
    -------
    DataFrame
        ``subset``, ``item_id``, ``item_index``, ``input``, ``output_1``,
        ``output_2``, ``label`` (1 or 2), ``file`` — ``item_id`` as in `load_release`.
    """
    root = Path(path)
    rows = []
    for file in _files(root, "dataset.json"):
        subset = _subset(file.parent, root)
        label_file = relative(file, root)
        data = read_json_list(file, label=label_file)
        for index, record in records(data, label=label_file):
            rows.append(
                {
                    "subset": subset,
                    "item_id": f"{subset}/{index}",
                    "item_index": index,
                    "input": record.get("input"),
                    "output_1": record.get("output_1"),
                    "output_2": record.get("output_2"),
                    "label": _label(record, index, label_file),
                    "file": label_file,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "subset",
            "item_id",
            "item_index",
            "input",
            "output_1",
            "output_2",
            "label",
            "file",
        ],
    )
