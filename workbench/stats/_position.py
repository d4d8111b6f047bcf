"""Position consistency of pairwise verdicts judged in both orders."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from workbench.stats._agreement import kappa_from_labels
from workbench.stats._columns import tidy
from workbench.stats._util import Columns, as_list, check_frame, check_unique, group_items

#: The value an unparsed (missing) verdict takes: a category of its own.
UNPARSED = "<unparsed>"


def _verdicts(series: pd.Series) -> pd.Series:
    return series.astype(object).where(series.notna(), UNPARSED)


def position_consistency(
    data: pd.DataFrame,
    *,
    item: Columns,
    order: str,
    verdict: str,
    label: str | None = None,
    by: Columns | None = None,
    orders: tuple | None = None,
    swap: Mapping | None = None,
    overall: bool = False,
) -> pd.DataFrame:
    """Accuracy and agreement of pairwise verdicts given in both presentation orders.

    Parameters
    ----------
    data : DataFrame
        Long format, one row per item and order (and ``by`` group, e.g. judge and
        strategy).
    item : str or list of str
        Item columns.
    order : str
        Presentation-order column with exactly two values (e.g. 0/1, "AB"/"BA").
    verdict : str
        Verdict column, expressed in the numbering of the *first* order (LLMBar's
        ``swap = True`` winner is already mapped back); any hashable values (1/2,
        "A"/"B"/"tie"). A missing verdict (None/NaN: unparsed) is a value of its own.
    label : str, optional
        Gold label column (same vocabulary as the verdicts). Without it only the
        agreement is computed.
    by : str or list of str, optional
        One row per group.
    orders : tuple of two values, optional
        Which order value is "order0" and which "order1" (default: sorted values).
    swap : mapping, optional
        Applied to second-order verdicts that are still positional, e.g.
        ``{"A": "B", "B": "A"}``; values not in the mapping (e.g. "tie") are kept.
        Forgetting it on positional verdicts gives a meaningless ``agreement``: the
        long tables of :func:`workbench.datasets.load_pairwise` make the choice explicit.
    overall : bool, default False
        With ``by``, add one row over all groups (its ``by`` columns hold ``"all"``),
        as leaderboards report beside their groups.

    Returns
    -------
    DataFrame
        One row per group: ``by`` columns, ``n`` (items with both orders),
        ``n_incomplete`` (items lacking one order, left out), ``n_unparsed``
        (unparsed verdicts among the items used), ``accuracy_order0``,
        ``accuracy_order1``, ``accuracy`` (their mean), ``accuracy_both`` (share of
        items whose two verdicts both equal the label), ``agreement``,
        ``kappa_order0``, ``kappa_order1`` (the accuracy and kappa columns only with
        ``label``).

    Notes
    -----
    ``accuracy_order{o}`` is the share of items whose order-o verdict equals the
    label (an unparsed verdict is wrong); ``agreement`` is the share of items whose
    two verdicts are equal, with "unparsed" as a value of its own (two unparsed
    verdicts agree; an unparsed and a parsed one do not); ``kappa_order{o}`` is
    Cohen's kappa of the order-o verdicts against the labels over the categories
    seen, "unparsed" included. These are the measures of LLMBar (Zeng et al. 2024)
    and of the position-bias analysis of Zheng et al. (2023).

    References
    ----------
    .. [1] Zeng, Z., Yu, J., Gao, T., Meng, Y., Goyal, T., & Chen, D. (2024).
       Evaluating large language models at evaluating instruction following. *ICLR*.
    .. [2] Zheng, L., Chiang, W.-L., Sheng, Y., et al. (2023). Judging LLM-as-a-judge
       with MT-Bench and Chatbot Arena. *NeurIPS Datasets and Benchmarks*.
    .. [3] Cohen, J. (1960). A coefficient of agreement for nominal scales.
       *Educational and Psychological Measurement*, 20(1), 37-46.

    Examples
    --------
    >>> import pandas as pd
    >>> from workbench.stats import position_consistency
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 4, 4],
    ...                    "order": [0, 1] * 4,
    ...                    "verdict": [1, 1, 2, 1, 2, 2, None, 1],
    ...                    "label": [1, 1, 2, 2, 2, 2, 1, 1]})
    >>> res = position_consistency(df, item="item", order="order", verdict="verdict",
    ...                            label="label")
    >>> res[["n", "accuracy_order0", "accuracy_order1", "accuracy", "agreement"]]
       n  accuracy_order0  accuracy_order1  accuracy  agreement
    0  4             0.75             0.75      0.75        0.5
    """
    item_cols, by_cols = as_list(item), as_list(by)
    check_frame(data, [*item_cols, order, verdict, *by_cols, *as_list(label)])
    check_unique(data, by_cols + item_cols + [order], why="one verdict per item and order")
    if data[order].isna().any():
        row = data.index[data[order].isna().to_numpy()][0]
        raise ValueError(f"column {order!r} is missing at row {row!r}")
    if orders is None:
        seen = sorted(pd.unique(data[order]))
        if len(seen) != 2:
            raise ValueError(f"column {order!r} must hold exactly two orders, found {seen}")
        orders = tuple(seen)
    o0, o1 = orders
    if label is not None and data[label].isna().any():
        row = data.index[data[label].isna().to_numpy()][0]
        raise ValueError(f"label column {label!r} is missing at row {row!r}")

    frame = data.assign(_v=_verdicts(data[verdict]))
    if swap is not None:
        second = frame[order] == o1
        frame.loc[second, "_v"] = frame.loc[second, "_v"].map(
            lambda v: swap.get(v, v) if v != UNPARSED else v
        )
    if label is not None:
        _warn_if_disjoint(frame.loc[frame["_v"] != UNPARSED, "_v"], frame[label])

    groups = [(key, part, item_cols) for key, part in group_items(frame, by_cols)]
    if overall and by_cols:  # items are told apart by their group too
        groups.append(({c: "all" for c in by_cols}, frame, item_cols + by_cols))
    rows = []
    for key, part, index in groups:
        v0 = part.loc[part[order] == o0].set_index(index)
        v1 = part.loc[part[order] == o1].set_index(index)
        both = v0.index.intersection(v1.index)
        n_incomplete = len(v0.index.union(v1.index)) - len(both)
        a, b = v0.loc[both, "_v"].tolist(), v1.loc[both, "_v"].tolist()
        n = len(both)
        row = {
            **key,
            "n": n,
            "n_incomplete": n_incomplete,
            "n_unparsed": int(sum(v == UNPARSED for v in a + b)),
            "agreement": float(np.mean([x == y for x, y in zip(a, b, strict=True)]))
            if n
            else np.nan,
        }
        if label is not None:
            lab0, lab1 = v0.loc[both, label], v1.loc[both, label]
            differ = (lab0 != lab1).to_numpy()
            if differ.any():
                raise ValueError(
                    f"item {both[np.flatnonzero(differ)[0]]!r} has different "
                    f"{label!r} values in its two orders"
                )
            gold = lab0.tolist()
            acc0 = float(np.mean([x == g for x, g in zip(a, gold, strict=True)])) if n else np.nan
            acc1 = float(np.mean([x == g for x, g in zip(b, gold, strict=True)])) if n else np.nan
            cats = list(dict.fromkeys(a + b + gold))
            row.update(
                accuracy_order0=acc0,
                accuracy_order1=acc1,
                accuracy=(acc0 + acc1) / 2,
                accuracy_both=float(np.mean([x == g and y == g for x, y, g in
                                             zip(a, b, gold, strict=True)])) if n else np.nan,
                kappa_order0=kappa_from_labels(a, gold, categories=cats)["estimate"],
                kappa_order1=kappa_from_labels(b, gold, categories=cats)["estimate"],
            )
        rows.append(row)
    return tidy(pd.DataFrame(rows), keys=by_cols)


def _warn_if_disjoint(verdicts: pd.Series, labels: pd.Series) -> None:
    v, g = set(verdicts.tolist()), set(labels.tolist())
    if v and g and not (v & g):
        warnings.warn(
            f"no verdict equals any label (verdicts {sorted(map(repr, v))[:4]}, labels "
            f"{sorted(map(repr, g))[:4]}): check that they use one vocabulary and type "
            "(e.g. '1' vs 1)",
            stacklevel=3,
        )
