"""workbench.labels.widget (the Python side of the labelling widget), .assign and .standing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.labels import ANNOTATORS, LabelStore, annotate
from workbench.labels.assign import assign
from workbench.labels.standing import standing
from workbench.labels.widget import LabelWidget, shown_order

PAIRS = pd.DataFrame({"item_id": [f"p{i}" for i in range(8)],
                      "question": ["東京タワーの高さは？"] * 8,
                      "answer_a": [f"A{i}" for i in range(8)],
                      "answer_b": [f"B{i}" for i in range(8)],
                      "model_a": ["sim/answer-strong"] * 8, "verdict": ["A"] * 8})


def test_the_view_is_blinded_and_the_shown_order_logged(tmp_path):
    store = LabelStore(tmp_path, annotator="ann-1")
    widget = LabelWidget(store, PAIRS, study="s", kind="pairwise")
    seen = set()
    while widget.task:
        task = dict(widget.task)
        text = json.dumps(task, ensure_ascii=False)
        assert "sim/answer" not in text and "verdict" not in text
        order = shown_order(0, "ann-1", widget._current["item_id"])
        left = task["left"]
        assert left.startswith("A" if order == "AB" else "B")
        seen.add(order)
        widget.receive({"type": "label", "token": task["token"], "value": "left"})
    labels = store.labels().set_index("item_id")
    assert len(labels) == 8 and seen == {"AB", "BA"}
    # "left" means the answer shown on the left: A when shown AB, B when shown BA
    for item, row in labels.iterrows():
        assert row["choice"] == ("A" if row["shown_order"] == "AB" else "B"), item
    assert widget.message.startswith("Nothing left")


def test_a_stale_click_is_ignored_and_a_tie_recorded(tmp_path):
    store = LabelStore(tmp_path, annotator="ann-1")
    widget = LabelWidget(store, PAIRS.head(2), study="s", kind="pairwise")
    token = widget.task["token"]
    widget.receive({"type": "label", "token": token, "value": "tie"})
    widget.receive({"type": "label", "token": token, "value": "right"})   # the same task again
    labels = store.labels()
    assert labels["choice"].tolist() == ["tie"] and labels["value"].tolist() == [0.5]


def test_a_restarted_kernel_resumes_where_it_stopped(tmp_path):
    tasks = pd.DataFrame({"item_id": ["q1", "q2", "q3"], "question": ["問"] * 3,
                          "answer": ["长的中文回答" * 50, "b", "c"]})
    first = LabelWidget(LabelStore(tmp_path, annotator="ann-1"), tasks, study="s")
    first.give(4, rationale="正確")
    first.store.close()
    del first                                                    # the kernel dies
    again = LabelWidget(LabelStore(tmp_path, annotator="ann-1"), tasks, study="s")
    assert again._current["item_id"] == "q2"
    with pytest.raises(ValueError, match="outside"):
        again.give(7)
    other = LabelWidget(LabelStore(tmp_path, annotator="ann-2"), tasks, study="s")
    assert other._current["item_id"] == "q1"                     # each annotator their own queue


def test_assignment_overlap_and_balance():
    items = [f"q{i}" for i in range(40)]
    plan = assign(items, ["a", "b", "c", "d"], overlap=0.25, per_overlap=3, rng=0)
    per_item = plan.groupby("item_id")["annotator"].nunique()
    assert (per_item == 3).sum() == 10 and (per_item == 1).sum() == 30
    loads = plan.groupby("annotator").size()
    assert loads.max() - loads.min() <= 1
    assert set(plan["item_id"]) == set(items)
    with pytest.raises(ValueError, match="only 2 annotators"):
        assign(items, ["a", "b"], overlap=0.5, per_overlap=3)


def test_standing_from_the_store(tmp_path):
    rng = np.random.default_rng(0)
    latent = rng.uniform(1, 5, 30)
    for k, ann in enumerate(ANNOTATORS):
        store = LabelStore(tmp_path, annotator=ann.name)
        labels = annotate(latent, ANNOTATORS, np.full(30, k), rng)
        for i, y in enumerate(labels):
            store.add(study="s", item_id=f"q{i}", kind="score", value=y)
    judge = pd.Series(latent + rng.normal(0, 0.8, 30), index=[f"q{i}" for i in range(30)])
    out = standing(LabelStore(tmp_path).labels(), judge=judge, n_boot=50, rng=0)
    rel = out["reliability"].set_index("measure")
    assert rel.loc["krippendorff_alpha", "estimate"] > 0.7
    assert rel.loc["fleiss_kappa", "n_raters"] == 4
    assert len(out["pairs"]) == 6
    ceiling = out["ceiling"].set_index("who")
    assert ceiling.loc["judge", "estimate"] < ceiling.loc["human ceiling", "estimate"]
    # 30 items with four labels: the alternative annotator test runs, per annotator
    alt = out["alt_test"]
    assert sorted(alt["rater"]) == [a.name for a in ANNOTATORS]
    assert alt["omega"].between(0, 1).all() and (alt["n_items"] == 30).all()
    assert standing(LabelStore(tmp_path).labels(), judge=judge, min_items=31, n_boot=0,
                    rng=0)["alt_test"].empty


def test_a_label_that_cannot_be_stored_is_said_and_the_task_stays(tmp_path):
    store = LabelStore(tmp_path, annotator="ann-1")
    widget = LabelWidget(store, PAIRS.head(2), study="s", kind="pairwise")
    token = widget.task["token"]
    with pytest.raises(ValueError):
        widget._on_msg(widget, {"type": "label", "token": token, "value": "up"}, [])
    assert widget.error.startswith("Label NOT saved") and widget.task["token"] == token
    widget._on_msg(widget, {"type": "label", "token": token, "value": "left"}, [])
    assert widget.error == "" and len(store.labels()) == 1


def test_active_queue_through_the_widget_survives_a_restart(tmp_path):
    """The widget labels the items an ActiveQueue draws; each label keeps its sampling
    probability; a new queue (a restarted kernel) rebuilds the same answer from the store,
    equal to an in-memory sampler fed the same draws."""
    from workbench.labels import ActiveQueue, ActiveSampler
    rng = np.random.default_rng(0)
    ids = [f"q{i}" for i in range(60)]
    truth = pd.Series(rng.integers(1, 6, 60).astype(float), index=ids)
    judge = truth + rng.normal(0, 0.7, 60)
    spread = pd.Series(rng.uniform(0, 1, 60), index=ids)
    tasks = pd.DataFrame({"item_id": ids, "question": ["問"] * 60, "answer": ["答"] * 60})
    store = LabelStore(tmp_path, annotator="ann-1")
    queue = ActiveQueue(store, judge, spread, study="s", rng=1, burn_in=5)
    widget = LabelWidget(store, tasks, study="s", next_item=queue.next_item)
    for _ in range(25):
        widget.give(truth[widget._current["item_id"]])
    labels = store.labels()
    assert len(labels) == 25 and labels["sampling_prob"].between(0, 1).all()
    again = ActiveQueue(LabelStore(tmp_path), judge, spread, study="s", burn_in=5).interval()
    fresh = ActiveSampler(judge.to_numpy(), spread.to_numpy(), burn_in=5)
    done: list[int] = []
    for row in labels.itertuples():          # each draw among the items not yet labelled
        fresh.update(ids.index(row.item_id), row.sampling_prob, row.value,
                     done=(np.array(done, dtype=int), truth.to_numpy()[done]))
        done.append(ids.index(row.item_id))
    assert labels["item_id"].is_unique
    pd.testing.assert_frame_equal(again, fresh.interval())
    assert again.loc[0, "n_labels"] == 25
