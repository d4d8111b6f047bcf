"""The columns of every frame that ``workbench.stats`` returns, and the check that keeps them.

pingouin names its p-value ``p_val`` in one function and ``pval`` in another; here every
output column is declared once, in the package's vocabulary :mod:`workbench.columns`
(:data:`COLUMNS` is its part that statistics use, in output order), and
:func:`tidy` (used by every public function) refuses a column that is not declared
(grouping columns named by the caller, such as ``judge_model``, pass through first).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from workbench.columns import STATS_ORDER, docs

#: Output column -> meaning, in the order columns appear in returned frames
#: (from :data:`workbench.columns.COLUMNS`).
COLUMNS: dict[str, str] = docs(STATS_ORDER)

_ORDER = {name: i for i, name in enumerate(COLUMNS)}


def tidy(frame: pd.DataFrame, *, keys: Iterable[str] = ()) -> pd.DataFrame:
    """``frame`` with the caller's grouping columns ``keys`` first (exempt from the
    vocabulary), then its other columns in :data:`COLUMNS` order, and a fresh RangeIndex; a
    column in neither is a ``KeyError`` (a programming error)."""
    keys = [k for k in dict.fromkeys(keys) if k in frame.columns]
    rest = [c for c in frame.columns if c not in keys]
    unknown = [c for c in rest if c not in _ORDER]
    if unknown:
        raise KeyError(f"columns not in the workbench.stats vocabulary: {unknown}")
    rest.sort(key=_ORDER.__getitem__)
    return frame.loc[:, keys + rest].reset_index(drop=True)
