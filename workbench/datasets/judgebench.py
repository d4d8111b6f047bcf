"""Importer of the JudgeBench release (pairwise judging of objectively labelled pairs).

Layout relied on (below the JudgeBench checkout):

- ``data/dataset=judgebench,response_model=<model>.jsonl``: one JSON object per line,
  ``{pair_id, original_id, source, question, response_model, response_A, response_B,
  label}`` with ``label`` ``"A>B"`` or ``"B>A"`` (which response is correct);
- ``outputs/dataset=judgebench,response_model=<model>,judge_name=<name>,judge_model=<judge>.jsonl``:
  the same objects plus ``judge_name`` and ``judgments``, a list of one element (a
  single game) or two: the verdict on (A, B), then on (B, A). Each element is ``null``
  when the call failed, else an object whose ``decision`` is ``"A>B"``, ``"B>A"``,
  ``"A=B"`` (a tie) or ``null`` (unparsed). The decision of the second game is in the
  order shown, so it is flipped back to the original numbering here. The ``<judge>``
  part is the model name with ``/`` replaced by ``_``.

Defects of the real files this importer handles: lines are in completion order, not
data order; ``original_id`` is a string in ``data/`` and an integer in ``outputs/``;
``judgments`` elements may be ``null``; blank lines. A line that is not JSON, a pair
without a label, or a ``pair_id`` that repeats within a file raises `DatasetError`
naming the file and line.

`accuracy` scores the verdicts with the release's rule for two games: each game's
verdict counts +1 when it equals the label, −1 when it is the opposite, 0 otherwise
(tie, unparsed, failed; a tie label ``"A=B"``, which the release does not use, has no
opposite: only an equal verdict counts); the pair is correct when the sum is positive, so two
inconsistent verdicts (one right, one wrong) count as not correct. A single game is
correct when its verdict equals the label. Categories follow the paper: ``source``
``mmlu-pro-*`` is knowledge, ``livebench-reasoning`` reasoning, ``livebench-math`` math,
``livecodebench`` coding.

References
----------
Tan, S., Zhuang, S., Montgomery, K., et al. (2025). JudgeBench: A benchmark for
evaluating LLM-based judges. ICLR 2025. https://github.com/ScalerLab/JudgeBench
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from workbench.datasets._release import reading, relative
from workbench.errors import DatasetError

__all__ = ["CATEGORIES", "accuracy", "category_of", "load_release"]

CATEGORIES = ("knowledge", "reasoning", "math", "coding")
"""The paper's four categories, in its order."""

_PREFIXES = (("mmlu-pro", "knowledge"), ("livebench-reasoning", "reasoning"),
             ("livebench-math", "math"), ("livecodebench", "coding"))
_LABELS = {"A>B", "B>A"}
_FLIP = {"A>B": "B>A", "B>A": "A>B"}
_OUTPUT_RE = re.compile(r"^dataset=(?P<dataset>[^,]+),response_model=(?P<response_model>[^,]+),"
                        r"judge_name=(?P<judge_name>[^,]+),judge_model=(?P<judge_model>.+)\.jsonl$")
_PAIR_COLUMNS = ["pair_id", "source", "category", "response_model", "label", "question",
                 "response_A", "response_B", "file"]
_VERDICT_COLUMNS = ["pair_id", "source", "category", "response_model", "label", "judge_name",
                    "judge_model", "game", "decision", "parse_ok", "file"]


def category_of(source: str) -> str:
    """The paper's category of a ``source`` (``"other"`` when it names none of them).

    Examples
    --------
    >>> [category_of(s) for s in ("mmlu-pro-law", "livebench-math", "livecodebench", "x")]
    ['knowledge', 'math', 'coding', 'other']
    """
    for prefix, category in _PREFIXES:
        if str(source).startswith(prefix):
            return category
    return "other"


def _read_jsonl(path: Path, label: str) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line; bad lines raise `DatasetError`."""
    with reading(label):
        text = path.read_text(encoding="utf-8-sig")
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"line {number}: invalid JSON: {exc.msg}", file=label) from None
        if not isinstance(record, dict):
            raise DatasetError(f"line {number}: expected a JSON object", file=label)
        out.append((number, record))
    return out


def _pair(record: dict, number: int, label: str, seen: dict) -> dict:
    def fail(problem: str, column: str) -> DatasetError:
        return DatasetError(f"line {number}: {problem}", file=label, column=column)

    pair_id = record.get("pair_id")
    if not isinstance(pair_id, str) or not pair_id:
        raise fail(f"pair_id {pair_id!r} is not a string", "pair_id")
    if pair_id in seen:
        raise fail(f"pair_id {pair_id} repeats line {seen[pair_id]}", "pair_id")
    seen[pair_id] = number
    if record.get("label") not in _LABELS:
        raise fail(f"label {record.get('label')!r} is not 'A>B' or 'B>A'", "label")
    source = str(record.get("source", ""))
    return {"pair_id": pair_id, "source": source, "category": category_of(source),
            "response_model": record.get("response_model"), "label": record["label"],
            "question": record.get("question"), "response_A": record.get("response_A"),
            "response_B": record.get("response_B"), "file": label}


def _decision(judgment, game: int) -> str | None:
    """A game's verdict in the original numbering (``None``: failed call or unparsed)."""
    if not isinstance(judgment, dict):
        return None
    decision = judgment.get("decision")
    if decision not in ("A>B", "B>A", "A=B"):
        return None
    return _FLIP.get(decision, decision) if game == 1 else decision


def load_release(path: str | Path) -> dict[str, pd.DataFrame]:
    """The JudgeBench pairs and every judge's verdicts.

    Parameters
    ----------
    path : str or Path
        The JudgeBench checkout (holding ``data/`` and ``outputs/``).

    Returns
    -------
    dict of DataFrame
        ``pairs``: one row per pair and data file (``pair_id``, ``source``,
        ``category``, ``response_model``, ``label``, ``question``, ``response_A``,
        ``response_B``, ``file``). ``verdicts``: one row per output file, pair and game
        (``game`` 0 = original order, 1 = swapped), ``decision`` in the original
        numbering (``"A>B"``, ``"B>A"``, ``"A=B"`` or None), ``parse_ok``, plus the
        pair's ``source``, ``category``, ``label`` and the judge's ``judge_name`` and
        ``judge_model`` (from the file name).

    Raises
    ------
    DatasetError
        No ``data/`` pairs file; a line is not a JSON object; a pair has no valid label
        or its ``pair_id`` repeats within a file; an output file name does not follow
        the pattern (naming the file and line).
    """
    root = Path(path)
    data_files = sorted((root / "data").glob("dataset=*.jsonl"))
    if not data_files:
        raise DatasetError("not a JudgeBench checkout: no data/dataset=*.jsonl", file=str(path))
    pairs = []
    for file in data_files:
        label, seen = relative(file, root), {}
        pairs += [_pair(r, n, label, seen) for n, r in _read_jsonl(file, label)]
    verdicts = []
    for file in sorted((root / "outputs").glob("*.jsonl")):
        label, seen = relative(file, root), {}
        match = _OUTPUT_RE.match(file.name)
        if match is None:
            raise DatasetError("output file name does not follow 'dataset=…,response_model=…,"
                               "judge_name=…,judge_model=….jsonl'", file=label)
        for number, record in _read_jsonl(file, label):
            pair = _pair(record, number, label, seen)
            judgments = record.get("judgments")
            if not isinstance(judgments, list) or not 1 <= len(judgments) <= 2:
                raise DatasetError(f"line {number}: judgments must be a list of 1 or 2 games",
                                   file=label, column="judgments")
            for game, judgment in enumerate(judgments):
                decision = _decision(judgment, game)
                verdicts.append({
                    **{k: pair[k] for k in ("pair_id", "source", "category", "label")},
                    "response_model": match["response_model"],
                    "judge_name": match["judge_name"], "judge_model": match["judge_model"],
                    "game": game, "decision": decision, "parse_ok": decision is not None,
                    "file": label})
    frame = pd.DataFrame(verdicts, columns=_VERDICT_COLUMNS)
    frame["decision"] = pd.Series([v["decision"] for v in verdicts], dtype=object,
                                  index=frame.index)  # None stays None, never NaN
    return {"pairs": pd.DataFrame(pairs, columns=_PAIR_COLUMNS), "verdicts": frame}


def accuracy(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per judge, response model and category (and ``all``), with the release's
    rule for two games (module docstring): ``n`` pairs, ``n_correct``,
    ``n_inconsistent`` (two games whose verdicts differ), ``n_unparsed`` (games without a
    verdict), ``pct_correct`` (100 × n_correct / n, as the paper reports accuracy).

    Examples
    --------
    >>> v = pd.DataFrame({"judge_name": "j", "judge_model": "m", "response_model": "r",
    ...     "category": "math", "pair_id": ["p", "p", "q", "q"], "label": "A>B",
    ...     "game": [0, 1, 0, 1], "decision": ["A>B", "A>B", "A>B", "B>A"]})
    >>> accuracy(v)[["category", "n", "n_correct", "n_inconsistent", "pct_correct"]]
      category  n  n_correct  n_inconsistent  pct_correct
    0      all  2          1               1         50.0
    1     math  2          1               1         50.0
    """
    keys = ["judge_name", "judge_model", "response_model"]
    decided = verdicts["decision"].astype(object).where(verdicts["decision"].notna(), "none")
    frame = verdicts.assign(
        _decision=decided, _unparsed=decided == "none",
        _vote=[1 if d == lab else -1 if d == _FLIP.get(lab) else 0
               for d, lab in zip(decided, verdicts["label"], strict=True)])
    per_pair = frame.groupby(keys + ["category", "pair_id"], as_index=False).agg(
        _sum=("_vote", "sum"), _games=("game", "size"), _distinct=("_decision", "nunique"),
        n_unparsed=("_unparsed", "sum"))
    per_pair["_correct"] = per_pair["_sum"] > 0
    per_pair["_inconsistent"] = (per_pair["_games"] == 2) & (per_pair["_distinct"] > 1)
    columns = keys + ["category", "n", "n_correct", "n_inconsistent", "n_unparsed", "pct_correct"]
    if per_pair.empty:
        return pd.DataFrame(columns=columns)
    parts = []
    for scope in (per_pair.assign(category="all"), per_pair):
        parts.append(scope.groupby(keys + ["category"], as_index=False).agg(
            n=("pair_id", "size"), n_correct=("_correct", "sum"),
            n_inconsistent=("_inconsistent", "sum"), n_unparsed=("n_unparsed", "sum")))
    out = pd.concat(parts, ignore_index=True)
    out["pct_correct"] = 100.0 * out["n_correct"] / out["n"]
    order = {c: i for i, c in enumerate(("all", *CATEGORIES, "other"))}
    out = out.sort_values(keys + ["category"], key=lambda s: s.map(order)
                          if s.name == "category" else s)
    return out[columns].reset_index(drop=True)
