"""Input checks shared by the metric functions (private)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd

from workbench.text import is_missing

LANGS = ("ja", "zh", "en")


def check_lang(lang: str) -> str:
    """Return ``lang`` if it is a supported language code, else raise ``ValueError``."""
    if lang not in LANGS:
        raise ValueError(f"lang={lang!r}: expected one of {', '.join(LANGS)}")
    return lang


def string_list(values: str | Iterable[Any], *, name: str) -> tuple[list[str], bool]:
    """``values`` as a list of strings and whether it was one string; a value that is
    not a string raises ``TypeError`` naming ``name[position]``."""
    single = isinstance(values, str)
    items = [values] if single else list(values)
    for position, value in enumerate(items):
        if not isinstance(value, str):
            raise TypeError(f"{name}[{position}] is {type(value).__name__}; expected a string")
    return items, single


def as_texts(values: str | Iterable[Any], *, name: str) -> tuple[list[str | None], pd.Index | None]:
    """A list of texts (``None`` for a missing one) and the index of a Series input.

    A single string is one text. Anything that is neither a string nor missing raises
    ``TypeError`` naming the argument and the position.
    """
    index = values.index if isinstance(values, pd.Series) else None
    if isinstance(values, str):
        items: Sequence[Any] = [values]
    else:
        items = list(values)
    texts: list[str | None] = []
    for position, value in enumerate(items):
        if is_missing(value):
            texts.append(None)
        elif isinstance(value, str):
            texts.append(value)
        else:
            raise TypeError(
                f"{name}[{position}] is {type(value).__name__} ({value!r:.60}); expected a string"
            )
    return texts, index


def as_pairs(
    references: str | Iterable[Any], hypotheses: str | Iterable[Any]
) -> tuple[list[str | None], list[str | None], pd.Index | None]:
    """Aligned reference and hypothesis lists, checked to have equal length.

    The index of the result frame is the hypotheses' Series index if there is one, else
    the references', else a RangeIndex.
    """
    refs, ref_index = as_texts(references, name="references")
    hyps, hyp_index = as_texts(hypotheses, name="hypotheses")
    if len(refs) != len(hyps):
        raise ValueError(
            f"references has {len(refs)} entries but hypotheses has {len(hyps)}; "
            "they are compared pair by pair and must have the same length"
        )
    index = hyp_index if hyp_index is not None else ref_index
    return refs, hyps, index


def per_pair(
    references: str | Iterable[Any],
    hypotheses: str | Iterable[Any],
    columns: Sequence[str],
    score: Callable[[str, str], dict[str, float]],
) -> pd.DataFrame:
    """One row of ``columns`` per aligned pair (:func:`as_pairs`): ``score(ref, hyp)``, or
    ``NaN`` everywhere when either text is missing (a failed call is never scored 0)."""
    refs, hyps, index = as_pairs(references, hypotheses)
    rows = [
        dict.fromkeys(columns, float("nan")) if ref is None or hyp is None else score(ref, hyp)
        for ref, hyp in zip(refs, hyps, strict=True)
    ]
    return frame(rows, columns, index)


def frame(rows: list[dict[str, float]], columns: Sequence[str], index: pd.Index | None):
    """A float DataFrame with the given columns (also when there are no rows)."""
    out = pd.DataFrame(rows, columns=list(columns), dtype=float)
    if index is not None:
        out.index = index
    return out
