"""workbench.labels._queue (ActiveQueue): the live queue never serves an item its annotator labelled (also
after a kernel restart), draws fresh per annotator and session and reproducibly from the
store, counts corrections, refuses impossible probabilities; the estimate for draws
without repeats is unbiased (exact enumeration)."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.labels import ActiveQueue, ActiveSampler, LabelStore

FIXTURE = Path(__file__).resolve().parent / "data" / "store-2026-11"


def _pool(n: int = 50, seed: int = 0) -> tuple[pd.Series, pd.Series]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i:03d}" for i in range(n)]
    return (pd.Series(rng.uniform(1, 5, n), index=ids), pd.Series(rng.uniform(0, 1, n), index=ids))


def _session(folder, annotator: str, n: int, *, seed=0, value=3.0) -> list[str]:
    """One kernel: a store and a queue, ``n`` labels given as the widget gives them."""
    store = LabelStore(folder, annotator=annotator)
    pred, unc = _pool()
    queue = ActiveQueue(store, pred, unc, study="s", rng=seed, burn_in=5)
    items = []
    for _ in range(n):
        labelled = set(store.labels(study="s").query("annotator == @annotator")["item_id"])
        item, prob = queue.next_item(labelled)
        store.add(study="s", item_id=item, kind="score", value=value, sampling_prob=prob)
        items.append(item)
    store.close()
    return items


def test_a_restarted_kernel_never_serves_an_item_its_annotator_labelled(tmp_path):
    """Issue 35: after a restart the queue served the labelled items again, in the same
    order; within one session 40 labels covered 37 items."""
    first = _session(tmp_path, "ann-1", 40)
    assert len(set(first)) == 40
    again = _session(tmp_path, "ann-1", 6)                   # a restarted kernel
    assert not set(again) & set(first) and len(set(again)) == 6


def test_every_item_labelled_means_nothing_left(tmp_path):
    _session(tmp_path, "ann-1", 50)
    store = LabelStore(tmp_path, annotator="ann-1")
    pred, unc = _pool()
    queue = ActiveQueue(store, pred, unc, study="s")
    assert queue.next_item(set(pred.index)) is None
    assert queue.next_item() is None                          # from the store alone
    assert queue.interval()["n_labels"].iloc[0] == 50


def test_two_annotators_and_two_sessions_with_one_seed_draw_differently(tmp_path):
    """Issue 30, item 8: ``rng=seed`` restarted its generator in every kernel, so two
    annotators (and every restart) drew the same items."""
    a = _session(tmp_path / "a", "ann-1", 8)
    b = _session(tmp_path / "b", "ann-2", 8)
    c = _session(tmp_path / "c", "ann-1", 8)                # same annotator, new session
    assert a != b and a != c


def test_the_draws_are_reproduced_from_the_store(tmp_path):
    """Each draw's random number comes from (seed, annotator, session, draw number), all
    in the store: replaying the store gives every item and probability again, across two
    annotators and a restart."""
    _session(tmp_path, "ann-1", 12)
    _session(tmp_path, "ann-2", 7)
    _session(tmp_path, "ann-1", 9)
    store = LabelStore(tmp_path)
    pred, unc = _pool()
    replay = ActiveQueue(store, pred, unc, study="s", rng=0, burn_in=5).replay()
    assert len(replay) == 28 and replay["same"].all(), replay[~replay["same"]]
    other_seed = ActiveQueue(store, pred, unc, study="s", rng=1, burn_in=5).replay()
    assert not other_seed["same"].all()


def test_the_stored_probability_is_the_renormalised_one(tmp_path):
    """The probability stored is the one the draw used: the sampler's, renormalised over
    the items the annotator has not labelled."""
    store = LabelStore(tmp_path, annotator="ann-1")
    pred, unc = _pool()
    queue = ActiveQueue(store, pred, unc, study="s", rng=0)
    for item in ("q000", "q001", "q002", "q003", "q004"):
        store.add(study="s", item_id=item, kind="score", value=2.0)
    item, prob = queue.next_item()
    assert prob == pytest.approx(1 / 45) and item not in {"q000", "q001", "q002", "q003", "q004"}


def test_draws_without_repeats_keep_the_estimate_unbiased():
    """Exact enumeration on a pool of 5 with fixed labels: after labels of items 0 and 3, a
    draw among the other items with the renormalised probabilities, and the des Raj term
    for the labelled ones, has expectation mean(y) exactly; without that term it would not."""
    y = np.array([1.0, 4.0, 2.0, 5.0, 3.0])
    f = np.array([1.5, 3.0, 2.5, 4.0, 2.0])
    u = np.array([0.1, 0.9, 0.4, 0.2, 0.7])
    sampler = ActiveSampler(f, u, rule="direct", floor=0.3)
    sampler.update(0, 0.2, y[0])
    sampler.update(3, 0.25, y[3], done=(np.array([0]), y[[0]]))
    q = sampler.probabilities()[0].copy()
    q[[0, 3]] = 0
    q /= q.sum()
    expected, plain = 0.0, 0.0
    for i in (1, 2, 4):
        twin = copy.deepcopy(sampler)
        twin.update(i, q[i], y[i], done=(np.array([0, 3]), y[[0, 3]]))
        expected += q[i] * twin.history[-1]["z"]
        bare = copy.deepcopy(sampler)
        bare.update(i, q[i], y[i])
        plain += q[i] * bare.history[-1]["z"]
    assert expected == pytest.approx(y.mean(), abs=1e-12)
    assert abs(plain - y.mean()) > 0.05


def test_a_correction_changes_the_estimate(tmp_path):
    """Issue 30, item 7: a corrected label counts with its corrected value (the draw, and
    its probability, are the original label's)."""
    _session(tmp_path, "ann-1", 10)
    pred, unc = _pool()
    store = LabelStore(tmp_path, annotator="ann-1")
    queue = ActiveQueue(store, pred, unc, study="s", burn_in=5)
    before = queue.interval().iloc[0]
    first = store.labels(study="s").iloc[0]
    store.add(study="s", item_id=first["item_id"], kind="score", value=5.0,
              supersedes=first["label_id"])
    after = queue.interval().iloc[0]
    assert after["n_labels"] == before["n_labels"] == 10
    assert after["estimate"] > before["estimate"]
    # the same as a sampler fed the corrected value from the start
    fresh = ActiveQueue(LabelStore(tmp_path), pred, unc, study="s", burn_in=5).interval()
    assert fresh["estimate"].iloc[0] == pytest.approx(after["estimate"], abs=1e-12)


def test_a_probability_the_design_cannot_have_produced_is_refused(tmp_path):
    """Issue 30, item 9: 1e-300 from a file gave an estimate of 1e299 on a 1-5 scale."""
    pred, unc = _pool()
    store = LabelStore(tmp_path, annotator="ann-1")
    bad = store.add(study="s", item_id="q007", kind="score", value=4, sampling_prob=1e-300)
    with pytest.raises(ValueError, match=rf"label {bad} \(item q007\): sampling_prob 1e-300"):
        ActiveQueue(store, pred, unc, study="s").interval()


def test_a_store_of_2026_11_still_reads_in_the_queue(tmp_path):
    """The fixture's draws were made from the whole pool: they are read as such."""
    folder = tmp_path / "store"
    shutil.copytree(FIXTURE, folder)
    ids = ["q1", "q2", "q3"]
    queue = ActiveQueue(LabelStore(folder), pd.Series([3.0, 4.0, 2.0], index=ids),
                        pd.Series([0.1, 0.5, 0.9], index=ids), study="x4", floor=0.01)
    draws = queue.draws()
    assert [d["item"] for d in draws] == [0, 1]              # the score labels with a prob
    assert draws[0]["value"] == 3.0                           # its correction in force
    assert queue.interval()["n_labels"].iloc[0] == 2


def test_through_the_widget_as_x4_wires_it_a_restart_serves_no_labelled_item(tmp_path):
    """X4's live mode: the queue reads the folder (no annotator of its own), the widget
    writes through the annotator's store and passes the items it labelled. Issue 35: the
    store held 12 rows for 6 items after a restart."""
    from workbench.labels.widget import LabelWidget
    pred, unc = _pool()
    tasks = pd.DataFrame({"item_id": pred.index, "question": "q", "answer": "a"})
    given = []
    for _kernel in range(2):
        queue = ActiveQueue(LabelStore(tmp_path), pred, unc, study="s", rng=0, burn_in=5)
        store = LabelStore(tmp_path, annotator="ann-1")
        widget = LabelWidget(store, tasks, study="s", next_item=queue.next_item)
        for _ in range(6):
            given.append(widget._current["item_id"])
            widget.give(3)
        store.close()
    labels = LabelStore(tmp_path).labels()
    assert len(labels) == 12 and labels["item_id"].nunique() == 12
    assert sorted(given) == sorted(labels["item_id"])
