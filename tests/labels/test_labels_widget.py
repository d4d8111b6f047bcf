"""workbench.labels.widget (the Python side of the labelling widget), .assign and .standing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.labels import ANNOTATORS, LabelStore, annotate
from workbench.labels.assign import assign
from workbench.labels.standing import standing
from workbench.labels.widget import LabelWidget, blind_ref, guideline_version, shown_order

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
    assert labels["item_id"].is_unique and widget.error == ""           # never asked twice
    again = ActiveQueue(LabelStore(tmp_path), judge, spread, study="s", burn_in=5).interval()
    # each draw was among the items not labelled before: those stand in for themselves
    fresh = ActiveSampler(judge.to_numpy(), spread.to_numpy(), burn_in=5)
    earlier: list[int] = []
    for row in labels.itertuples():
        done = (np.array(earlier, dtype=int), truth.iloc[earlier].to_numpy())
        fresh.update(ids.index(row.item_id), row.sampling_prob, row.value, done=done)
        earlier.append(ids.index(row.item_id))
    pd.testing.assert_frame_equal(again, fresh.interval())
    assert again.loc[0, "n_labels"] == 25


SCORES = pd.DataFrame({"item_id": ["q1", "q2", "q3"], "question": ["問"] * 3,
                       "answer": ["a", "b", "c"]})


def test_a_repeated_item_id_in_the_tasks_is_refused(tmp_path):
    """Two rows of one item would show the annotator a pandas Series, not a question."""
    tasks = pd.concat([SCORES, SCORES.head(1)], ignore_index=True)
    with pytest.raises(ValueError, match=r"tasks repeat item_id \['q1'\]: give each item once"):
        LabelWidget(LabelStore(tmp_path, annotator="ann-1"), tasks, study="s")


def test_an_item_served_again_to_its_annotator_is_refused(tmp_path):
    """A queue that serves an item this annotator has labelled is stopped, said in the view
    (by the item's opaque name), and nothing is asked twice; a repeat design says so."""
    store = LabelStore(tmp_path, annotator="ann-1")
    widget = LabelWidget(store, SCORES, study="s", next_item=lambda done: ("q1", 0.5),
                         blind_key="k")
    widget.give(3)
    assert widget.task == {} and widget._current is None
    assert widget.error.startswith("Stopped: the queue served an item you have already labelled")
    assert blind_ref("k", "q1") in widget.error and "q1" not in widget.error
    assert store.labels()["item_id"].tolist() == ["q1"]
    again = LabelWidget(store, SCORES, study="s", next_item=lambda done: "q1", repeats=True)
    assert again.task["repeat"] is True and again._current["item_id"] == "q1"
    other = LabelWidget(LabelStore(tmp_path, annotator="ann-2"), SCORES, study="s",
                        next_item=lambda done: "q1")
    assert other.task["repeat"] is False and other.error == ""      # not labelled by ann-2


def test_the_counter_counts_the_distinct_items_of_this_annotator(tmp_path):
    """Labels beyond one per item (repeats, e.g. imported) are said, not hidden; a
    correction is not a repeat; other annotators' labels do not count."""
    store = LabelStore(tmp_path, annotator="ann-1")
    first = store.add(study="s", item_id="q1", kind="score", value=2)
    store.add(study="s", item_id="q1", kind="score", value=3, supersedes=first)
    LabelStore(tmp_path, annotator="ann-2").add(study="s", item_id="q2", kind="score", value=3)
    widget = LabelWidget(store, SCORES, study="s")
    assert widget.progress == "ann-1: 1 labelled, 2 to go"
    assert widget._current["item_id"] == "q2"
    store.add(study="s", item_id="q1", kind="score", value=4, source="csv")   # a repeat
    store.add(study="s", item_id="q3", kind="score", value=4, source="csv")
    widget.advance()
    assert widget.progress == "ann-1: 2 labelled (3 labels, 1 repeated), 1 to go"


def test_the_guideline_is_shown_with_every_task_and_its_version_stored(tmp_path):
    anchors = {1: "wrong", 3: "partly right", 5: "right and complete"}
    store = LabelStore(tmp_path, annotator="ann-1")
    widget = LabelWidget(store, SCORES, study="s", guideline="Rate correctness.",
                         anchors=anchors, better="never shown for scores")
    assert widget.guide == {"text": "Rate correctness.", "better": "",
                            "anchors": {"1": "wrong", "3": "partly right",
                                        "5": "right and complete"}}
    widget.give(4)
    widget.give(5)
    version = guideline_version("Rate correctness.", anchors, "never shown for scores")
    assert len(version) == 12
    assert store.labels()["guideline"].tolist() == [version, version]
    kept = json.loads((tmp_path / "guidelines" / f"{version}.json").read_text())
    assert kept["guideline"] == "Rate correctness." and kept["anchors"]["5"] == "right and complete"
    # another text is another version; a pair shows what "better" means
    pair = LabelWidget(LabelStore(tmp_path, annotator="ann-2"), PAIRS.head(1), study="s",
                       kind="pairwise", guideline="Compare correctness.",
                       better="more correct", anchors=anchors)
    assert pair.guide == {"text": "Compare correctness.", "better": "more correct", "anchors": {}}
    pair.give("tie")
    row = store.labels().iloc[-1]
    assert row["guideline"] == guideline_version("Compare correctness.", anchors, "more correct")
    assert row["guideline"] != version
    # no guideline: no version (as before)
    plain = LabelWidget(LabelStore(tmp_path, annotator="ann-3"), SCORES, study="t")
    plain.give(2)
    assert pd.isna(store.labels(study="t")["guideline"].iloc[0])


def test_the_view_names_items_only_by_their_opaque_reference(tmp_path):
    tasks = PAIRS.assign(item_id=[f"s2-00{i}|sim/answer-strong|0~s2-00{i}|sim/answer-tiny|0"
                                  for i in range(8)])
    widget = LabelWidget(LabelStore(tmp_path, annotator="ann-1"), tasks, study="s",
                         kind="pairwise", blind_key="secret")
    shown = json.dumps([widget.task, widget.progress, widget.guide], ensure_ascii=False)
    item = widget._current["item_id"]
    assert widget.task["ref"] == blind_ref("secret", item)
    assert "sim/" not in shown and "s2-00" not in shown and "verdict" not in shown
    widget.give("left")
    assert LabelStore(tmp_path).labels()["item_id"].tolist() == [item]    # the real id stored


def test_a_store_written_before_the_guideline_column_still_reads_and_writes(tmp_path):
    import socket
    import sqlite3

    from workbench.labels.store import _SCHEMA
    old_schema = _SCHEMA.replace("    sampling_prob REAL,\n    guideline TEXT\n",
                                 "    sampling_prob REAL\n")
    assert "guideline" not in old_schema
    name = f"ann-1@{socket.gethostname()}".replace(" ", "_")
    conn = sqlite3.connect(tmp_path / f"{name}.sqlite")
    conn.executescript(old_schema)
    cols = "label_id, study, item_id, annotator, kind, value, shown_at, given_at, " \
           "seconds, package_version, source, session"
    conn.execute(f"INSERT INTO labels ({cols}) VALUES ('old', 's', 'q1', 'ann-1', 'score', 4, "
                 "'2026-01-01T00:00:00+00:00', '2026-01-01T00:00:09+00:00', 9, '0.1', "
                 "'widget', 'h:1')")
    conn.commit()
    conn.close()
    store = LabelStore(tmp_path, annotator="ann-1")
    assert store.labels()["label_id"].tolist() == ["old"]
    assert pd.isna(store.labels()["guideline"].iloc[0])
    widget = LabelWidget(store, SCORES, study="s", guideline="Rate.")
    assert widget._current["item_id"] == "q2"                    # the old label counts
    widget.give(5)
    labels = store.labels()
    assert labels["label_id"].iloc[0] == "old" and labels["guideline"].iloc[1] == widget.version


def test_the_guideline_version_survives_csv_and_label_studio(tmp_path):
    from workbench.labels import export_csv, export_label_studio, import_csv, import_label_studio
    store = LabelStore(tmp_path / "a", annotator="ann-1")
    widget = LabelWidget(store, SCORES, study="s", guideline="Rate.")
    widget.give(4)
    store.add(study="s", item_id="q9", kind="score", value=2)                 # no guideline
    labels = store.labels()
    for fmt in ("csv", "ls"):
        back = LabelStore(tmp_path / fmt, annotator="imp")
        if fmt == "csv":
            import_csv(back, export_csv(labels, tmp_path / "l.csv"))
        else:
            import_label_studio(back, export_label_studio(labels, SCORES, tmp_path / "l.json"))
        pd.testing.assert_series_equal(back.labels()["guideline"], labels["guideline"])
    # a CSV written before the column existed still imports
    old = tmp_path / "old.csv"
    labels.drop(columns="guideline").to_csv(old, index=False)
    older = LabelStore(tmp_path / "old", annotator="imp")
    assert import_csv(older, old) == 2 and older.labels()["guideline"].isna().all()
