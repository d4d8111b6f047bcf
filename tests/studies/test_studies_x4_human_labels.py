"""Study X4's live mode (workbench.studies.x4_human_labels): people label in the widget,
blinded, under the study's guideline, never twice the same item, scores or pairs; the
answer so far. The simulated study itself runs in tests/notebook (notebook_cases/x4)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.labels import LabelStore
from workbench.labels.widget import blind_ref, guideline_version
from workbench.studies import x4_human_labels as x4

MODELS = ["sim/answer-strong", "sim/answer-mid", "sim/answer-weak", "sim/answer-tiny"]


def _config(tmp_path, **changes) -> x4.Config:
    options = dict(n_items=4, live=True, label_dir=str(tmp_path), annotator="alice",
                   burn_in=3, budget=20, progress=False)
    return x4.Config(**{**options, **changes})


def _shown(widget) -> str:
    """Everything the view is sent."""
    return json.dumps([widget.task, widget.progress, widget.message, widget.error,
                       widget.guide], ensure_ascii=False)


def test_live_scores_are_blinded_and_instructed(tmp_path):
    config = _config(tmp_path)
    widget = x4.label_widget(config)
    key = (tmp_path / "people" / ".blind-key").read_text()
    given = []
    for score in (4, 2, 5):
        item = widget._current["item_id"]
        shown = _shown(widget)
        assert "sim/" not in shown and item.split("|")[0] not in shown     # no id, no model
        assert widget.task["ref"] == blind_ref(key, item)
        given.append(item)
        widget.give(score)
    # the guideline of the study, with every task; its version with every label
    assert widget.guide["text"] == x4.GUIDELINE
    assert widget.guide["anchors"] == {str(k): v for k, v in x4.ANCHORS.items()}
    store = x4.people_labels(config)
    assert store["item_id"].tolist() == given                     # the store keeps real ids
    assert (store["guideline"] == guideline_version(x4.GUIDELINE, x4.ANCHORS, x4.BETTER)).all()
    # what the annotator is asked to look at below the widget names no model, no id
    mine = x4.my_labels(config)
    answer = x4.live_answer(config)
    for table in (mine, answer):
        text = table.to_string()
        assert "sim/" not in text and "s2-" not in text and "judge-" not in text
    assert mine["item"].tolist() == [blind_ref(key, i) for i in given]
    assert mine["score"].tolist() == [4.0, 2.0, 5.0]
    assert answer["quantity"].tolist() == ["mean human score"]
    assert answer["n_labels"].iloc[0] == 3 and answer["annotators"].iloc[0] == 1
    # a colleague on the same folder gets the same key (the same names for the same items)
    bob = x4.label_widget(_config(tmp_path, annotator="bob"))
    assert bob.task["ref"] == blind_ref(key, bob._current["item_id"])


def test_live_never_serves_an_annotator_an_item_twice_across_a_restart(tmp_path):
    """15 labels of a pool of 16 (4 questions x 4 answers) each go to a new item of their
    annotator, in one session and after a restart (a new kernel: a new widget)."""
    config = _config(tmp_path)
    first = x4.label_widget(config)
    for _ in range(6):
        first.give(3)
    first.store.close()
    again = x4.label_widget(_config(tmp_path))                    # the kernel restarted
    assert again.error == "" and again._current is not None
    assert again._current["item_id"] not in set(x4.people_labels(config)["item_id"])
    for _ in range(9):
        again.give(4)
    labels = x4.people_labels(config)
    assert labels["item_id"].is_unique and len(labels) == 15
    assert again.error == "" and again.progress == "alice: 15 labelled, 1 to go"


def test_live_pairwise_gives_the_win_rate_and_the_judges_accuracy(tmp_path):
    config = _config(tmp_path, live_kind="pairwise")
    items, tasks = x4._live.live_pool(config)
    assert len(items) == 4 * 6 and set(items["verdict"]) <= {"A", "B", "tie"}
    assert items["item_id"].is_unique and items["agreement"].between(1 / 3, 1).all()
    widget = x4.label_widget(config)
    assert widget.guide["better"] == x4.BETTER and widget.guide["anchors"] == {}
    verdict = items.set_index("item_id")["verdict"]
    for _ in range(5):
        item = widget._current["item_id"]
        assert "sim/" not in _shown(widget)
        # a person who always prefers the answer the judge preferred (a tie when it saw none)
        left_is_a = widget._current["shown_order"] == "AB"
        side = {"tie": "tie", "A": "left" if left_is_a else "right",
                "B": "right" if left_is_a else "left"}[verdict[item]]
        widget.give(side)
    labels = x4.people_labels(config)
    assert (labels["kind"] == "pairwise").all() and len(labels) == 5
    assert (labels["choice"] == verdict[labels["item_id"]].to_numpy()).all()
    answer = x4.live_answer(config).set_index("quantity")
    assert list(answer.index) == ["win rate (A)", "judge accuracy"]
    assert (answer["n_labels"] == 5).all()
    assert 0 <= answer.loc["win rate (A)", "estimate"] <= 1
    assert answer.loc["judge accuracy", "estimate"] > 0.8        # every person agreed
    assert "sim/" not in answer.to_string()
    assert set(x4.my_labels(config)["side"]) <= {"left", "right", "tie"}


def test_live_pairs_compare_two_answers_to_one_question_a_listed_first(tmp_path):
    config = _config(tmp_path, n_items=2, live_kind="pairwise")
    items, tasks = x4._live.live_pool(config)
    rank = {m: i for i, m in enumerate(MODELS)}
    for pair in items["item_id"]:
        a, b = pair.split("~")
        assert a.split("|")[0] == b.split("|")[0]                    # one question
        assert rank[a.split("|")[1]] < rank[b.split("|")[1]]         # A listed first
    row = tasks.set_index("item_id").iloc[0]
    assert row["answer_a"] != row["answer_b"] and row["question"]


def test_live_answer_is_empty_unless_live_and_the_kind_is_checked(tmp_path):
    assert x4.live_answer(_config(tmp_path, live=False)).empty
    with pytest.raises(ValueError, match="live_kind"):
        _config(tmp_path, live_kind="rank")
    with pytest.raises(ValueError, match="live_kind pairwise needs at least two answer_models"):
        _config(tmp_path, live_kind="pairwise", answer_models=["sim/answer-strong"])
    with pytest.raises(ValueError, match="set live = True, a shared label_dir"):
        x4.label_widget(x4.Config(n_items=2, progress=False))


def test_my_labels_show_the_side_clicked(tmp_path):
    config = _config(tmp_path, live_kind="pairwise")
    store = LabelStore(tmp_path / "people", annotator="alice")
    store.add(study=x4.STUDY, item_id="x~y", kind="pairwise", choice="A", shown_order="BA")
    store.add(study=x4.STUDY, item_id="x~z", kind="pairwise", choice="tie", shown_order="AB")
    LabelStore(tmp_path / "people", annotator="bob").add(
        study=x4.STUDY, item_id="x~y", kind="pairwise", choice="B", shown_order="AB")
    mine = x4.my_labels(config)
    assert mine["side"].tolist() == ["right", "tie"] and np.isnan(mine["score"]).all()
    assert isinstance(mine, pd.DataFrame) and "x~y" not in mine.to_string()


def test_the_simulated_study_is_reproducible_from_its_seed(tmp_path):
    """The simulated loop draws through the label store; its draws depend on the seed
    only, not on the store's host, process or random session token."""
    config = x4.Config(n_items=4, n_studies=4, budget=12, max_labels=12, burn_in=3,
                       overlap=0.25, progress=False)
    first, second = x4.run(config), x4.run(config)
    assert len(first["loop"]) > 3
    pd.testing.assert_frame_equal(first["loop"], second["loop"])
    assert first["labels"]["item_id"].tolist() == second["labels"]["item_id"].tolist()
