"""workbench.labels.store and .interchange: append-only SQLite, kill -9, concurrent
writers, CSV and Label Studio round trips."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from workbench.labels import (
    LabelStore,
    current,
    export_csv,
    export_label_studio,
    import_csv,
    import_label_studio,
    read_csv_labels,
)

ROOT = Path(__file__).resolve().parents[2]


def _some_labels(store: LabelStore) -> None:
    store.add(study="s", item_id="q1", kind="score", value=4, rationale="明確で正確。")
    store.add(study="s", item_id="q2", kind="pairwise", choice="B", shown_order="BA",
              shown_at="2026-01-01T00:00:00+00:00", given_at="2026-01-01T00:00:12.5+00:00")
    store.add(study="s", item_id="q3", kind="pairwise", choice="tie", shown_order="AB")


def test_labels_are_append_only(tmp_path):
    store = LabelStore(tmp_path, annotator="ann-1")
    first = store.add(study="s", item_id="q1", kind="score", value=2)
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE labels SET value = 5")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM labels")
    conn.close()
    fix = store.add(study="s", item_id="q1", kind="score", value=3, supersedes=first)
    labels = store.labels()
    assert labels["value"].tolist() == [2.0, 3.0]            # both rows kept
    assert current(labels)["label_id"].tolist() == [fix]     # the correction in force


def test_a_label_records_what_was_shown_and_when(tmp_path):
    store = LabelStore(tmp_path, annotator="ann-1")
    _some_labels(store)
    labels = store.labels().set_index("item_id")
    assert labels.loc["q2", "value"] == 0.0 and labels.loc["q2", "shown_order"] == "BA"
    assert labels.loc["q2", "seconds"] == pytest.approx(12.5)
    assert labels.loc["q3", "value"] == 0.5
    assert labels.loc["q1", "rationale"] == "明確で正確。"
    assert set(labels["package_version"]) == {__import__("workbench").__version__}


@pytest.mark.parametrize(("fields", "message"), [
    ({"kind": "score"}, "'value' is missing"),
    ({"kind": "pairwise", "choice": "left", "shown_order": "AB"}, "'choice'"),
    ({"kind": "pairwise", "choice": "A", "shown_order": "XY"}, "'shown_order'"),
    ({"kind": "pairwise", "choice": "A", "shown_order": "AB", "value": 0.0}, "contradicts"),
    ({"kind": "rank", "value": 1}, "'kind'"),
])
def test_bad_labels_are_refused(tmp_path, fields, message):
    store = LabelStore(tmp_path, annotator="ann-1")
    with pytest.raises(ValueError, match=message):
        store.add(study="s", item_id="q1", **fields)
    assert store.labels().empty


_WRITER = textwrap.dedent("""
    import sys
    from workbench.labels import LabelStore
    store = LabelStore(sys.argv[1], annotator=sys.argv[2])
    i = 0
    while True:
        store.add(study="s", item_id=f"q{i}", kind="score", value=1 + i % 5)
        print(i, flush=True)           # printed only after the commit returned
        i += 1
""")


def _writer(folder: Path, annotator: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", _WRITER, str(folder), annotator],
                            stdout=subprocess.PIPE, text=True, env=env)


@pytest.mark.slow
def test_labels_survive_kill_9_of_the_writer(tmp_path):
    proc = _writer(tmp_path, "ann-1")
    committed = []
    for line in proc.stdout:
        committed.append(int(line))
        if len(committed) >= 40:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    labels = LabelStore(tmp_path).labels()
    # every label whose add() had returned is there (and possibly the one in flight)
    got = {int(i[1:]) for i in labels["item_id"]}
    assert set(committed) <= got
    assert len(got) <= len(committed) + 1
    assert sqlite3.connect(LabelStore(tmp_path, annotator="ann-1").path).execute(
        "PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
def test_two_annotators_at_once_never_overwrite(tmp_path):
    procs = [_writer(tmp_path, name) for name in ("ann-1", "ann-2")]
    counts = {}
    deadline = time.time() + 60
    for name, proc in zip(("ann-1", "ann-2"), procs, strict=True):
        n = 0
        for _ in proc.stdout:
            n += 1
            if n >= 30 or time.time() > deadline:
                break
        counts[name] = n
    for proc in procs:
        proc.kill()
        proc.wait()
    labels = LabelStore(tmp_path).labels()
    for name in ("ann-1", "ann-2"):
        assert (labels["annotator"] == name).sum() >= counts[name]
    assert labels["label_id"].is_unique
    assert len(list(tmp_path.glob("*.sqlite"))) == 2         # one file per writer


def test_two_kernels_of_one_annotator_share_its_file(tmp_path):
    a, b = LabelStore(tmp_path, annotator="ann-1"), LabelStore(tmp_path, annotator="ann-1")
    a.add(study="s", item_id="q1", kind="score", value=1)
    b.add(study="s", item_id="q1", kind="score", value=2)
    a.add(study="s", item_id="q2", kind="score", value=3)
    assert a.path == b.path
    assert LabelStore(tmp_path).labels()["value"].tolist() == [1.0, 2.0, 3.0]


def _items() -> pd.DataFrame:
    return pd.DataFrame({"item_id": ["q1", "q2", "q3"], "question": ["問1", "问2", "Q3"],
                         "answer": ["答え", "回答", "answer"],
                         "answer_a": ["a1", "a2", "a3"], "answer_b": ["b1", "b2", "b3"]})


@pytest.mark.parametrize("score_tag", ["rating", "choices"])
def test_label_studio_round_trip_keeps_every_label(tmp_path, score_tag):
    store = LabelStore(tmp_path / "a", annotator="ann-1")
    _some_labels(store)
    LabelStore(tmp_path / "a", annotator="ann-2").add(study="s", item_id="q1", kind="score",
                                                       value=3.5)
    original = store.labels()
    path = export_label_studio(original, _items(), tmp_path / "ls.json", score_tag=score_tag)
    tasks = json.loads(path.read_text(encoding="utf-8"))
    types = {r["type"] for t in tasks for a in t["annotations"] for r in a["result"]}
    assert {"pairwise", "choices", "textarea"} <= types and score_tag in types
    assert {t["data"]["item_id"]: t["data"]["question"] for t in tasks}["q1"] == "問1"
    target = LabelStore(tmp_path / "b", annotator="importer")
    assert import_label_studio(target, path) == len(original) == 4
    assert target.labels().equals(original)
    assert import_label_studio(target, path) == 0             # importing again adds nothing


def test_annotations_made_in_label_studio_are_read():
    tasks = [{"id": 7, "data": {"item_id": "q9"}, "annotations": [
        {"id": 1, "completed_by": 3, "created_at": "2026-02-01T10:00:00Z", "lead_time": 8.0,
         "result": [{"from_name": "pw", "to_name": "t1", "type": "pairwise",
                     "value": {"selected": "right"}}]},
        {"id": 2, "completed_by": 4, "created_at": "2026-02-01T10:01:00Z", "was_cancelled": True,
         "result": []}]}]
    from workbench.labels import tasks_to_labels
    labels = tasks_to_labels(tasks)
    assert labels[["item_id", "annotator", "choice", "value", "shown_order", "seconds"]
                  ].values.tolist() == [["q9", "3", "B", 0.0, "AB", 8.0]]
    with pytest.raises(ValueError, match="task 1, annotation 1: pairwise 'selected'"):
        tasks_to_labels([{"annotations": [{"created_at": "x", "result": [
            {"type": "pairwise", "value": {"selected": "up"}}]}]}])


def test_csv_round_trip_keeps_every_label(tmp_path):
    store = LabelStore(tmp_path / "a", annotator="ann-1")
    _some_labels(store)
    original = store.labels()
    path = export_csv(original, tmp_path / "labels.csv")
    target = LabelStore(tmp_path / "b", annotator="importer")
    assert import_csv(target, path) == 3
    assert target.labels().equals(original)


def test_a_bad_csv_names_file_row_and_field(tmp_path):
    store = LabelStore(tmp_path / "a", annotator="ann-1")
    _some_labels(store)
    path = export_csv(store.labels(), tmp_path / "labels.csv")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[1, "value"] = "four"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"labels.csv row 3: field 'value' is not a number"):
        read_csv_labels(path)


def test_one_store_written_from_several_threads(tmp_path):
    """A kernel may handle widget messages on more than one thread."""
    from concurrent.futures import ThreadPoolExecutor
    store = LabelStore(tmp_path, annotator="ann-1")
    with ThreadPoolExecutor(4) as pool:
        ids = list(pool.map(lambda i: store.add(study="s", item_id=f"q{i}", kind="score",
                                                value=1 + i % 5), range(40)))
    assert sorted(store.labels()["label_id"]) == sorted(ids)
