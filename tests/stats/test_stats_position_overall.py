"""position_consistency: correct in both orders, and an overall row beside the groups."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.stats import position_consistency


def _frame():
    # item ids repeat across groups: the overall row must tell them apart by group
    rows = []
    for group, verdicts in (("x", [("A", "A", "A"), ("A", "B", "A"), ("B", "B", "A")]),
                            ("y", [("B", "B", "B"), ("A", "A", "B")])):
        for i, (v0, v1, label) in enumerate(verdicts):
            rows += [{"g": group, "item": i, "order": 0, "verdict": v0, "label": label},
                     {"g": group, "item": i, "order": 1, "verdict": v1, "label": label}]
    return pd.DataFrame(rows)


def test_accuracy_both_and_the_overall_row():
    res = position_consistency(_frame(), item="item", order="order", verdict="verdict",
                               label="label", by="g", overall=True).set_index("g")
    assert list(res.index) == ["x", "y", "all"]
    # x: item 0 right twice, item 1 right then wrong, item 2 wrong twice
    assert res.loc["x", "accuracy_both"] == pytest.approx(1 / 3)
    assert res.loc["x", "agreement"] == pytest.approx(2 / 3)
    assert res.loc["y", "accuracy_both"] == pytest.approx(1 / 2)
    assert res.loc["all", "n"] == 5
    assert res.loc["all", "accuracy_both"] == pytest.approx(2 / 5)
    assert res.loc["all", "accuracy_order0"] == pytest.approx(3 / 5)
    assert res.loc["all", "accuracy_order1"] == pytest.approx(2 / 5)
    assert res.loc["all", "agreement"] == pytest.approx(4 / 5)
    # the overall row equals a run over all items with unique ids
    whole = _frame().assign(item=lambda d: d["g"] + d["item"].astype(str))
    pooled = position_consistency(whole, item="item", order="order", verdict="verdict",
                                  label="label").iloc[0]
    for col in ("n", "accuracy_order0", "accuracy_order1", "accuracy_both", "agreement",
                "kappa_order0", "kappa_order1"):
        assert res.loc["all", col] == pytest.approx(pooled[col]), col


def test_no_overall_row_unless_asked():
    res = position_consistency(_frame(), item="item", order="order", verdict="verdict",
                               label="label", by="g")
    assert list(res["g"]) == ["x", "y"]
