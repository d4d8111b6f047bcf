"""What a judge table's header lacks, and the ``-c`` mapping that would fit it.

:func:`column_hint` is the message of ``workbench qualify`` run on a file whose columns
are not the canonical ones: the columns found, the ones missing, and a mapping built from
the file's own column names (a guess to check, never applied silently).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["column_hint"]

# canonical column -> words that often name it in releases (first match wins)
_WORDS = {
    "item_id": ("item_id", "item", "id", "pair", "story", "doc", "question", "prompt",
                "example", "sample", "instance", "idx"),
    "verdict": ("verdict", "winner", "preference", "choice", "decision", "judgment",
                "judgement", "output", "pred"),
    "score": ("score", "rating", "pred", "value", "metric"),
    "judge": ("judge", "evaluator", "metric_name", "scorer"),
    "annotator": ("annotator", "rater", "worker", "annotator_id"),
    "label": ("label", "gold", "human", "truth", "reference"),
    "system": ("system", "model", "generator"),
    "dimension": ("dimension", "aspect", "criterion", "criteria"),
}


def _find(canon: str, header: list[str], taken: set[str]) -> str | None:
    lower = {c.lower(): c for c in header if c not in taken}
    for word in _WORDS[canon]:
        if word in lower:
            return lower[word]
    for word in _WORDS[canon]:
        for low, col in lower.items():
            if word in low.replace("-", "_").split("_") or low.startswith(word):
                return col
    return None


def column_hint(header: Iterable[str], kind: str, mapped: Mapping[str, str] | None = None,
                *, wide: bool = False) -> str | None:
    """None when ``header`` (with ``mapped``) has what the loader needs for a ``kind``
    table (the value column and a judge or annotator; ``wide``: judges or annotators are
    columns); else one line: the columns found, the ones missing (with ``item_id``
    when absent), and a ``-c`` mapping that would fit.

    Examples
    --------
    >>> column_hint(["story_id", "model", "rating", "rater"], "pointwise")  # doctest: +ELLIPSIS
    "found columns story_id, model, rating, rater; a pointwise table needs item_id, score ..."
    """
    header = [str(c) for c in header]
    mapped = dict(mapped or {})
    have = set(header) | set(mapped)
    value = "verdict" if kind == "pairwise" else "score"
    missing = [value] if not wide and value not in have else []
    who_missing = not wide and not ({"judge", "annotator"} & have)
    if not missing and not who_missing:
        return None  # what the loader needs is there (items default to row positions)
    if "item_id" not in have:
        missing.insert(0, "item_id")
    taken = {v for v in mapped.values() if isinstance(v, str)}
    suggestion = []
    for canon in [*missing, *(["judge", "annotator"] if who_missing else []),
                  *[c for c in ("label", "system", "dimension") if c not in have]]:
        column = _find(canon, header, taken)
        if column is not None and column != canon:
            taken.add(column)
            suggestion.append(f"-c '{canon}: {column}'")
    if who_missing and not any(s.startswith(("-c 'judge", "-c 'annotator")) for s in suggestion):
        suggestion.append("--set 'judge: <your judge>'")
    gaps = missing + (["judge or annotator"] if who_missing else [])
    text = (f"found columns {', '.join(header) or '(none)'}; a {kind} table needs item_id, "
            f"{value} and a judge or annotator column; missing: {', '.join(gaps)}")
    if suggestion:
        text += f". A mapping that fits these columns (check it): {' '.join(suggestion)}"
    if kind == "pointwise":
        text += " (or, one column per metric: --judges COL1,COL2)"
    else:
        text += " (scores rather than verdicts? --kind pointwise)"
    return text
