"""Importer of the UniEval reproduction data: Topical-Chat with USR human scores.

Layout (below the UniEval checkout):

- ``reproduce/data/dialogue/topical_chat.json``: a list of responses ``{source,
  context, system_output, system_id, scores: {understandability, naturalness,
  coherence, engagingness, groundedness, overall}}``; each score is the mean of three
  annotators (Mehri & Eskenazi, 2020).
- ``reproduce/unieval_predict/dialogue/topical_chat_result.json``: the same list plus
  ``predict_scores`` with the same keys (a metric's predictions).

The published correlations are turn level: one correlation per dimension pooled over
all responses, which the long frame supports directly (group by ``dimension``).

References
----------
Zhong, M., Liu, Y., Yin, D., Mao, Y., Jiao, Y., Liu, P., Zhu, C., Ji, H. & Han, J.
(2022). Towards a unified multi-dimensional evaluator for text generation. EMNLP 2022.
Mehri, S. & Eskenazi, M. (2020). USR: An unsupervised and reference free evaluation
metric for dialog generation. ACL 2020.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from workbench.datasets._release import read_json_list, record_error, records, relative
from workbench.errors import DatasetError

__all__ = ["DATA_FILE", "PREDICTION_FILE", "load_release"]

DATA_FILE = "reproduce/data/dialogue/topical_chat.json"
PREDICTION_FILE = "reproduce/unieval_predict/dialogue/topical_chat_result.json"
_COLUMNS = ["item_id", "dialogue_id", "system_id", "dimension", "human", "predicted"]


def _root(path: Path) -> Path:
    if (path / "reproduce").is_dir():
        return path
    if path.name == "reproduce":
        return path.parent
    raise DatasetError("not a UniEval checkout: expected a reproduce/ folder", file=str(path))


def _score(value, *, label: str, index: int, field: str) -> float:
    if value is None:
        return float("nan")
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            return number if math.isfinite(number) else float("nan")
    raise record_error(index, f"{field} {value!r} is not a number", file=label, column=field)


def _scores(record: dict, key: str, *, label: str, index: int) -> dict[str, float]:
    scores = record.get(key)
    if not isinstance(scores, dict):
        raise record_error(index, f"{key!r} is missing or not an object", file=label, column=key)
    return {
        str(dim): _score(v, label=label, index=index, field=f"{key}.{dim}")
        for dim, v in scores.items()
    }


def load_release(path: str | Path, *, predictions: bool = True) -> pd.DataFrame:
    """Topical-Chat human scores and metric predictions as one long frame.

    Parameters
    ----------
    path : str or Path
        The UniEval checkout (the folder holding ``reproduce/``).
    predictions : bool
        Read the prediction file too (``predicted`` is NaN when False).

    Returns
    -------
    DataFrame
        One row per response and dimension: ``item_id`` (the response's 0-based
        index in the file, stable across both files), ``dialogue_id`` (0-based index
        of the distinct (source, context) pairs in order of first appearance: the
        responses to one dialogue turn), ``system_id``, ``dimension``, ``human``
        (mean of the annotators), ``predicted`` (NaN where absent).

    Raises
    ------
    DatasetError
        A file is missing or malformed, a score is not a number, or the two files
        disagree on a response (naming the file, record index and field).
    """
    root = _root(Path(path))
    data_path = root / DATA_FILE
    pred_path = root / PREDICTION_FILE
    if not data_path.exists() and not pred_path.exists():
        raise DatasetError("file not found", file=DATA_FILE)
    human_path = data_path if data_path.exists() else pred_path
    human_label = relative(human_path, root)
    human = read_json_list(human_path, label=human_label)
    others = None
    pred_label = relative(pred_path, root)
    if predictions:
        if not pred_path.exists():
            raise DatasetError(
                "file not found (pass predictions=False to read only the human scores)",
                file=PREDICTION_FILE,
            )
        pred = read_json_list(pred_path, label=pred_label)
        if len(pred) != len(human):
            raise DatasetError(
                f"{len(pred)} records, but {human_label} has {len(human)}", file=pred_label
            )
        others = records(pred, label=pred_label)
    dialogues: dict[tuple, int] = {}
    rows = []
    for index, record in records(human, label=human_label):
        turn = (str(record.get("source")), str(record.get("context")))
        dialogue_id = dialogues.setdefault(turn, len(dialogues))
        system_id = record.get("system_id")
        scores = _scores(record, "scores", label=human_label, index=index)
        predicted: dict[str, float] = {}
        if others is not None:
            _, other = next(others)
            for field in ("system_id", "system_output", "source"):
                if other.get(field) != record.get(field):
                    raise record_error(index, f"{field} differs from {human_label}; the files "
                                       "are not aligned", file=pred_label, column=field)
            predicted = _scores(other, "predict_scores", label=pred_label, index=index)
        for dim, value in scores.items():
            rows.append(
                {
                    "item_id": index,
                    "dialogue_id": dialogue_id,
                    "system_id": system_id,
                    "dimension": dim,
                    "human": value,
                    "predicted": predicted.get(dim, float("nan")),
                }
            )
    frame = pd.DataFrame(rows, columns=_COLUMNS)
    for column in ("item_id", "dialogue_id"):
        frame[column] = frame[column].astype(int)
    for column in ("human", "predicted"):
        frame[column] = frame[column].astype(float)
    return frame
