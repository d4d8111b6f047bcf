"""Which annotator labels which item: a share of items to two (or more) people, the rest
spread for coverage.

Items with several labels give inter-rater reliability, the human ceiling and the
alternative annotator test (:mod:`workbench.labels.standing`); the others cover the pool.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["assign"]


def assign(items: Sequence[str], annotators: Sequence[str], *, overlap: float = 0.2,
           per_overlap: int = 2, rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Assign items to annotators.

    A share ``overlap`` of the items (rounded, drawn at random) goes to ``per_overlap``
    different annotators each; every other item to one annotator. Annotators are filled
    in turn, always the least loaded first (ties broken at random), so loads differ by at
    most one label.

    Returns
    -------
    DataFrame
        ``item_id``, ``annotator``, ``overlap`` (the item is in the overlap set), ``order``
        (position in the annotator's queue; the overlap items are interleaved at random).

    Examples
    --------
    >>> plan = assign([f"q{i}" for i in range(10)], ["ann-1", "ann-2", "ann-3"], overlap=0.3, rng=0)
    >>> int(plan.groupby("item_id").size().max()), len(plan), int(plan["overlap"].sum())
    (2, 13, 6)
    """
    items, annotators = list(items), list(annotators)
    if not 0 <= overlap <= 1:
        raise ValueError(f"assign: overlap must be in [0, 1], got {overlap}")
    if per_overlap > len(annotators) and overlap > 0:
        raise ValueError(f"assign: {per_overlap} annotators per overlap item, but only "
                         f"{len(annotators)} annotators")
    gen = np.random.default_rng(rng)
    order = gen.permutation(len(items))
    n_overlap = int(round(overlap * len(items)))
    load = np.zeros(len(annotators))
    rows = []
    for rank, i in enumerate(order):
        k = per_overlap if rank < n_overlap else 1
        noise = gen.random(len(annotators))
        chosen = np.lexsort((noise, load))[:k]
        for a in chosen:
            rows.append({"item_id": items[i], "annotator": annotators[a], "overlap": k > 1})
            load[a] += 1
    plan = pd.DataFrame(rows)
    plan["order"] = 0
    for _, part in plan.groupby("annotator", sort=False):
        plan.loc[part.index, "order"] = gen.permutation(len(part))
    return plan.sort_values(["annotator", "order"]).reset_index(drop=True)
