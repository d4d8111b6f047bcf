"""span_match: seed 004 section 7.1, on hand-worked examples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.stats import SpanMatch, span_match

CLASSES = ["excess_gist", "excess_detail", "missing_gist", "missing_detail"]


def _spans(rows):
    return pd.DataFrame(rows, columns=["item_id", "class", "unit_id", "start", "end"])


def test_seed_figure_two():
    """Gold A, B, C vs predicted 1, 2: A=1 exactly; B and C overlap 2; B wins; C unpaired."""
    gold = _spans([(1, "gist", "A", 0, 10), (1, "gist", "B", 20, 30), (1, "gist", "C", 32, 40)])
    pred = _spans([(1, "gist", "1", 0, 10), (1, "gist", "2", 18, 34)])
    res = span_match(pred, gold, classes=["gist"])
    assert isinstance(res, SpanMatch)
    pairs = res.pairs.set_index("gold_unit")
    assert pairs.loc["A", "pred_unit"] == "1"
    assert (pairs.loc["A", "recall"], pairs.loc["A", "precision"]) == (1.0, 1.0)
    # B-2: overlap 20..30 = 10 chars; |B| = 10, |2| = 16;  C-2 overlap 32..34 = 2 chars
    assert pairs.loc["B", "pred_unit"] == "2"
    assert pairs.loc["B", "recall"] == 1.0 and pairs.loc["B", "precision"] == 10 / 16
    assert pd.isna(pairs.loc["C", "pred_unit"])
    assert pairs.loc["C", "recall"] == 0.0 and np.isnan(pairs.loc["C", "precision"])
    item = res.items.iloc[0]
    assert item["gold_chars"] == 28 and item["pred_chars"] == 26 and item["overlap_chars"] == 20
    assert item["recall"] == pytest.approx(20 / 28) and item["precision"] == pytest.approx(20 / 26)
    s = res.summary.iloc[0]
    r, p = 20 / 28, 20 / 26
    assert s["f1"] == pytest.approx(2 * p * r / (p + r))


def test_undefined_values_macro_averages_and_both_empty_counts():
    gold = _spans(
        [
            (1, "missing_gist", "g1", 0, 10),  # item 1: gold 10 chars, pred covers 5
            (2, "missing_gist", "g2", 0, 4),  # item 2: gold only -> precision undefined
            (1, "excess_detail", "g3", 5, 9),  # item 1: exact match
        ]
    )
    pred = _spans(
        [
            (1, "missing_gist", "p1", 5, 15),  # overlap 5 of 10 chars each
            (3, "missing_gist", "p3", 0, 6),  # item 3: pred only -> recall undefined
            (1, "excess_detail", "p4", 5, 9),
        ]
    )
    res = span_match(pred, gold, classes=CLASSES, items=[1, 2, 3, 4])
    items = res.items.set_index(["item_id", "class"])
    assert items.loc[(1, "missing_gist"), "recall"] == 0.5
    assert np.isnan(items.loc[(2, "missing_gist"), "precision"])
    assert items.loc[(2, "missing_gist"), "recall"] == 0.0
    assert np.isnan(items.loc[(3, "missing_gist"), "recall"])
    assert items.loc[(3, "missing_gist"), "precision"] == 0.0
    summary = res.summary.set_index("class")
    mg = summary.loc["missing_gist"]
    # recall over items 1, 2: (0.5 + 0) / 2; precision over items 1, 3: (0.5 + 0) / 2
    assert mg["recall"] == 0.25 and mg["precision"] == 0.25
    assert mg["f1"] == pytest.approx(0.25)  # F of the averages, not the mean of F
    assert mg["n_items_recall"] == 2 and mg["n_items_precision"] == 2
    assert mg["n_items_both_empty"] == 1 and mg["n_items"] == 4  # item 4
    ed = summary.loc["excess_detail"]
    assert ed["recall"] == 1.0 and ed["f1"] == 1.0 and ed["n_items_both_empty"] == 3
    eg = summary.loc["excess_gist"]
    assert np.isnan(eg["recall"]) and np.isnan(eg["f1"]) and eg["n_items_both_empty"] == 4


def test_f_of_averages_differs_from_average_of_f():
    gold = _spans([(1, "c", "g", 0, 10), (2, "c", "g", 0, 10)])
    pred = _spans([(1, "c", "p", 0, 10), (2, "c", "p", 0, 40)])
    s = span_match(pred, gold, classes=["c"]).summary.iloc[0]
    # item 1: R=P=1; item 2: R=1, P=10/40 -> P avg 0.625, R avg 1
    assert s["precision"] == 0.625 and s["recall"] == 1.0
    assert s["f1"] == pytest.approx(2 * 0.625 / 1.625)
    mean_of_f = (1 + 2 * 0.25 / 1.25) / 2
    assert s["f1"] != pytest.approx(mean_of_f)


def test_greedy_pairing_versus_optimal_assignment():
    # g1 overlaps p1 a lot and p2 a little; g2 overlaps only p1. Greedy takes g1-p1 first.
    gold = _spans([(1, "c", "g1", 0, 10), (1, "c", "g2", 10, 14)])
    pred = _spans([(1, "c", "p1", 2, 14), (1, "c", "p2", 0, 2)])
    greedy = span_match(pred, gold, classes=["c"]).pairs.set_index("gold_unit")
    assert greedy.loc["g1", "pred_unit"] == "p1" and pd.isna(greedy.loc["g2", "pred_unit"])
    optimal = span_match(pred, gold, classes=["c"], pairing="optimal").pairs
    paired = optimal.dropna(subset=["gold_unit", "pred_unit"]).set_index("gold_unit")
    assert paired.loc["g1", "pred_unit"] == "p2" and paired.loc["g2", "pred_unit"] == "p1"
    assert paired["pair_score"].sum() > greedy["pair_score"].sum()


def test_units_from_several_rows_and_rows_as_units():
    gold = _spans([(1, "c", "u", 0, 5), (1, "c", "u", 10, 15)])  # one discontinuous unit
    pred = pd.DataFrame(
        {"item_id": [1, 1], "class": ["c", "c"], "start": [0, 10], "end": [5, 15]}
    )  # no unit_id: two units
    res = span_match(pred, gold, classes=["c"])
    item = res.items.iloc[0]
    assert item["n_gold_units"] == 1 and item["n_pred_units"] == 2 and item["n_pairs"] == 1
    assert item["recall"] == 0.5 and item["precision"] == 0.5
    unit_avg = span_match(pred, gold, classes=["c"], average="unit").summary.iloc[0]
    assert unit_avg["recall"] == 0.5 and unit_avg["precision"] == 0.5  # (1 + 0) / 2


def test_bad_spans_name_the_row_and_stray_items_are_errors():
    gold = _spans([(1, "c", "g", 5, 5)])
    with pytest.raises(ValueError, match=r"gold: row 0 has span \[5, 5\)"):
        span_match(gold.iloc[:0], gold, classes=["c"])
    ok = _spans([(1, "c", "g", 0, 5)])
    with pytest.raises(ValueError, match="item 1 has spans but is not in items="):
        span_match(ok, ok, classes=["c"], items=[2])
    with pytest.raises(ValueError, match="no column"):
        span_match(ok.drop(columns="start"), ok, classes=["c"])
