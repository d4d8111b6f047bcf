"""Character-level matching of annotated spans (seed 004, section 7.1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.stats._columns import tidy
from workbench.stats._util import check_frame

PAIRINGS = ("greedy", "optimal")
AVERAGES = ("item", "unit")

_SEED004 = (
    "Iida, S., Hayashi, Y., & Shishido, R. (Yayoi Co., Ltd.). QA タスク回答中の趣旨・"
    "補足に対する不適・不足検出への LLM 適用 [Applying LLMs to detecting excess and "
    "missing content in the gist and detail of QA answers], section 7.1."
)


@dataclass(frozen=True)
class SpanMatch:
    """Result of :func:`span_match`: three tidy frames.

    Attributes
    ----------
    summary : DataFrame
        One row per class (macro averages, F, counts).
    items : DataFrame
        One row per item and class (character counts, recall, precision).
    pairs : DataFrame
        One row per gold or predicted unit: its partner (if any), overlap and scores.
    """

    summary: pd.DataFrame
    items: pd.DataFrame
    pairs: pd.DataFrame


def _units(
    frame: pd.DataFrame,
    *,
    name: str,
    item: str,
    cls: str,
    start: str,
    end: str,
    unit: str,
    classes: set,
) -> dict:
    """{(item, class): [(unit_id, frozenset_of_positions), ...]} in first-seen order."""
    check_frame(frame, [item, cls, start, end], name=name)
    has_unit = unit in frame.columns
    rows = frame.loc[frame[cls].isin(classes)]
    out: dict = {}
    for idx, r in zip(rows.index, rows.itertuples(index=False), strict=True):
        rec = dict(zip(rows.columns, r, strict=True))
        for col in (item, start, end):
            if pd.isna(rec[col]):
                raise ValueError(f"{name}: column {col!r} is missing at row {idx!r}")
        s, e = rec[start], rec[end]
        if not (float(s).is_integer() and float(e).is_integer()) or s < 0 or e <= s:
            raise ValueError(
                f"{name}: row {idx!r} has span [{s!r}, {e!r}); start and end must be "
                "integers with 0 <= start < end (end exclusive)"
            )
        uid = rec[unit] if has_unit and not pd.isna(rec[unit]) else idx
        units = out.setdefault((rec[item], rec[cls]), {})
        units.setdefault(uid, set()).update(range(int(s), int(e)))
    return {k: [(u, frozenset(p)) for u, p in v.items()] for k, v in out.items()}


def _pair(gold: list, pred: list, pairing: str) -> list[tuple[int, int]]:
    """One-to-one pairs (gold index, pred index) of overlapping units."""
    if not gold or not pred:
        return []
    ov = np.array([[len(g & p) for _, p in pred] for _, g in gold], dtype=float)
    size_g = np.array([len(g) for _, g in gold], dtype=float)[:, None]
    size_p = np.array([len(p) for _, p in pred], dtype=float)[None, :]
    score = 2 * ov / (size_g + size_p)
    if pairing == "optimal":
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(-score)
        return [(int(i), int(j)) for i, j in zip(rows, cols, strict=True) if ov[i, j] > 0]
    cand = [(-score[i, j], -ov[i, j], i, j) for i, j in zip(*np.nonzero(ov > 0), strict=True)]
    used_g, used_p, pairs = set(), set(), []
    for _, _, i, j in sorted(cand):
        if i not in used_g and j not in used_p:
            used_g.add(i)
            used_p.add(j)
            pairs.append((int(i), int(j)))
    return pairs


def _pair_row(gold: tuple | None, pred: tuple | None) -> dict:
    """A row of ``pairs``: a gold unit and the predicted unit paired with it, or one of them
    alone (each ``(unit_id, character positions)`` or None)."""
    gid, gpos = gold or (np.nan, frozenset())
    pid, ppos = pred or (np.nan, frozenset())
    ov = len(gpos & ppos)
    return {
        "gold_unit": gid,
        "pred_unit": pid,
        "gold_chars": len(gpos),
        "pred_chars": len(ppos),
        "overlap_chars": ov,
        "recall": (ov / len(gpos) if pred else 0.0) if gold else np.nan,
        "precision": (ov / len(ppos) if gold else 0.0) if pred else np.nan,
        "pair_score": 2 * ov / (len(gpos) + len(ppos)) if gold and pred else 0.0,
    }


def span_match(
    pred: pd.DataFrame,
    gold: pd.DataFrame,
    *,
    classes: Sequence,
    items: Sequence | None = None,
    item: str = "item_id",
    cls: str = "class",
    start: str = "start",
    end: str = "end",
    unit: str = "unit_id",
    pairing: str = "greedy",
    average: str = "item",
) -> SpanMatch:
    """Match predicted spans with gold spans at the character level, per class.

    Parameters
    ----------
    pred, gold : DataFrame
        Long frames of spans, one row per span: ``item``, ``cls``, ``start``, ``end``
        (character offsets, end exclusive) and optionally ``unit`` (rows sharing a
        unit id form one, possibly discontinuous, unit; without the column each row
        is a unit). ``gold`` is the human annotation, ``pred`` the LLM's.
    classes : sequence
        The classes to evaluate (e.g. ``["excess_gist", "excess_detail",
        "missing_gist", "missing_detail"]``); rows of other classes are ignored.
    items : sequence, optional
        Every evaluated item id. Default: the ids appearing in either frame; pass the
        full list so that items where neither side flags anything are counted.
    item, cls, start, end, unit : str
        Column names.
    pairing : {"greedy", "optimal"}, default "greedy"
        ``greedy``: the seed's rule, pairs taken by descending score, each unit used
        once; ``optimal``: the assignment maximising the total score.
    average : {"item", "unit"}, default "item"
        Macro-average over items (per-item character-level values) or over units
        (per-unit values: a gold unit's recall, a predicted unit's precision).

    Returns
    -------
    SpanMatch
        ``summary``: one row per class with ``class``, ``average``, ``recall``,
        ``precision``,
        ``f1``, ``n_items``, ``n_items_recall``, ``n_items_precision``,
        ``n_items_both_empty``, ``n_gold_units``, ``n_pred_units``, ``n_pairs``.
        ``items``: one row per item and class with the item column, ``class``,
        ``n_gold_units``, ``n_pred_units``, ``n_pairs``, ``gold_chars``,
        ``pred_chars``, ``overlap_chars``, ``recall``, ``precision`` (NaN where
        undefined). ``pairs``: one row per unit with the item column, ``class``,
        ``gold_unit``, ``pred_unit`` (NaN when unpaired), ``gold_chars``,
        ``pred_chars``, ``overlap_chars``, ``recall``, ``precision``, ``pair_score``.

    Notes
    -----
    Seed 004, section 7.1, for each item and class:

    1. *Pairing.* For every gold unit :math:`g` and predicted unit :math:`p` that
       overlap, recall :math:`|g\\cap p|/|g|`, precision :math:`|g\\cap p|/|p|` and
       their harmonic mean, the pair score :math:`2|g\\cap p|/(|g|+|p|)`. When several
       units overlap one unit, the pair with the higher score is kept: pairs are taken
       greedily by descending score (ties: larger overlap, then first-listed units),
       each unit at most once.
    2. *Unpaired units.* A gold unit without a partner has recall 0 and no precision
       (its denominator is 0); a predicted unit without a partner has precision 0 and
       no recall.
    3. *Character level.* With ``average="item"``: recall = (characters shared by
       pairs) / (characters of the gold units), precision = (the same) / (characters
       of the predicted units). Recall is undefined when the item has no gold unit of
       the class, precision when it has no predicted unit.
    4. *Macro averages and F.* Recall and precision are averaged over the items (or
       units) where they are defined, and F is computed from the two averages,
       :math:`F = 2PR/(P+R)`.
    5. Items where neither side has a unit of the class are counted separately
       (``n_items_both_empty``: the seed's table 1) and excluded.

    References
    ----------
    .. [1] {seed}

    Examples
    --------
    The seed's figure 2: gold gist units A, B, C, predicted units 1, 2. A and 1
    coincide; B and C both overlap 2, B more, so B-2 is kept and C stays unpaired.

    >>> import pandas as pd
    >>> from workbench.stats import span_match
    >>> gold = pd.DataFrame({"item_id": 1, "class": "gist", "unit_id": ["A", "B", "C"],
    ...                      "start": [0, 20, 32], "end": [10, 30, 40]})
    >>> pred = pd.DataFrame({"item_id": 1, "class": "gist", "unit_id": ["1", "2"],
    ...                      "start": [0, 18], "end": [10, 34]})
    >>> res = span_match(pred, gold, classes=["gist"])
    >>> res.pairs[["gold_unit", "pred_unit", "recall", "precision"]].round(3)
      gold_unit pred_unit  recall  precision
    0         A         1     1.0      1.000
    1         B         2     1.0      0.625
    2         C       NaN     0.0        NaN
    >>> res.summary[["class", "recall", "precision", "f1"]].round(3)
      class  recall  precision     f1
    0  gist   0.714      0.769  0.741
    """
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing must be one of {PAIRINGS}, got {pairing!r}")
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    classes = list(classes)
    opts = {
        "item": item,
        "cls": cls,
        "start": start,
        "end": end,
        "unit": unit,
        "classes": set(classes),
    }
    g_units = _units(gold, name="gold", **opts)
    p_units = _units(pred, name="pred", **opts)
    if items is None:
        items = list(dict.fromkeys([*gold[item].tolist(), *pred[item].tolist()]))
    items = list(items)
    known = set(items)
    stray = [k[0] for k in [*g_units, *p_units] if k[0] not in known]
    if stray:
        raise ValueError(f"item {stray[0]!r} has spans but is not in items=")

    item_rows, pair_rows = [], []
    for c in classes:
        for it in items:
            gl, pl = g_units.get((it, c), []), p_units.get((it, c), [])
            pairs = _pair(gl, pl, pairing)
            paired_g = {i: j for i, j in pairs}
            paired_p = {j for _, j in pairs}
            overlap = sum(len(gl[i][1] & pl[j][1]) for i, j in pairs)
            gchars = sum(len(p) for _, p in gl)
            pchars = sum(len(p) for _, p in pl)
            item_rows.append(
                {
                    item: it,
                    "class": c,
                    "n_gold_units": len(gl),
                    "n_pred_units": len(pl),
                    "n_pairs": len(pairs),
                    "gold_chars": gchars,
                    "pred_chars": pchars,
                    "overlap_chars": overlap,
                    "recall": overlap / gchars if gl else np.nan,
                    "precision": overlap / pchars if pl else np.nan,
                }
            )
            for i, g_unit in enumerate(gl):
                j = paired_g.get(i)
                p_unit = pl[j] if j is not None else None
                pair_rows.append({item: it, "class": c, **_pair_row(g_unit, p_unit)})
            for j, p_unit in enumerate(pl):
                if j not in paired_p:
                    pair_rows.append({item: it, "class": c, **_pair_row(None, p_unit)})

    item_cols = [item, "class", "n_gold_units", "n_pred_units", "n_pairs", "gold_chars",
                 "pred_chars", "overlap_chars", "recall", "precision"]
    pair_cols = [item, "class", "gold_unit", "pred_unit", "gold_chars", "pred_chars",
                 "overlap_chars", "recall", "precision", "pair_score"]
    per_item = pd.DataFrame(item_rows, columns=item_cols)
    per_pair = pd.DataFrame(pair_rows, columns=pair_cols)

    summary = []
    for c in classes:
        ic = per_item.loc[per_item["class"] == c]
        pc = per_pair.loc[per_pair["class"] == c]
        src = ic if average == "item" else pc
        r = float(src["recall"].mean()) if src["recall"].notna().any() else np.nan
        p = float(src["precision"].mean()) if src["precision"].notna().any() else np.nan
        f = (
            2 * p * r / (p + r)
            if np.isfinite(p) and np.isfinite(r) and p + r > 0
            else (0.0 if p == 0 and r == 0 else np.nan)
        )
        summary.append(
            {
                "class": c,
                "average": average,
                "recall": r,
                "precision": p,
                "f1": f,
                "n_items": len(ic),
                "n_items_recall": int(ic["recall"].notna().sum()),
                "n_items_precision": int(ic["precision"].notna().sum()),
                "n_items_both_empty": int(
                    ((ic["n_gold_units"] == 0) & (ic["n_pred_units"] == 0)).sum()
                ),
                "n_gold_units": int(ic["n_gold_units"].sum()),
                "n_pred_units": int(ic["n_pred_units"].sum()),
                "n_pairs": int(ic["n_pairs"].sum()),
            }
        )
    return SpanMatch(
        summary=tidy(pd.DataFrame(summary)),
        items=tidy(per_item, keys=[item]),
        pairs=tidy(per_pair, keys=[item]),
    )


span_match.__doc__ = span_match.__doc__.replace("{seed}", _SEED004)
