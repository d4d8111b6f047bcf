"""Issue 30: human labels are never lost, forged or miscounted by the store, the CSV and
Label Studio interchange, and a folder with one bad file or on read-only storage still
reads. One test (or a few) per numbered case; each failed on the code before the fix."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
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
    tasks_to_labels,
)

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def _store(folder, annotator="ann-1") -> LabelStore:
    return LabelStore(folder, annotator=annotator)


def _csv(tmp_path, rows: list[dict]) -> Path:
    """A label CSV of ``rows`` (fields not given take a valid score label's)."""
    base = {"study": "s", "item_id": "q1", "annotator": "ann-1", "kind": "score", "value": "4",
            "choice": "", "shown_order": "", "rationale": "", "shown_at": "",
            "given_at": "2026-01-01T00:00:00+00:00", "seconds": "", "package_version": "0.1.0",
            "supersedes": "", "source": "csv", "session": "x", "sampling_prob": ""}
    frame = pd.DataFrame([{**base, "label_id": f"l{i}", **row} for i, row in enumerate(rows)])
    path = tmp_path / "labels.csv"
    frame.to_csv(path, index=False)
    return path


# --- 1. corrections -------------------------------------------------------------------------

def test_a_correction_must_name_a_label_of_the_same_item_kind_and_annotator(tmp_path):
    mine = _store(tmp_path, "ann-1")
    theirs = _store(tmp_path, "ann-2")
    other = theirs.add(study="s", item_id="q2", kind="score", value=5)
    own = mine.add(study="s", item_id="q1", kind="score", value=2)
    with pytest.raises(ValueError, match="'supersedes': .* another annotator's label"):
        mine.add(study="s", item_id="q2", kind="score", value=1, supersedes=other)
    with pytest.raises(ValueError, match="'supersedes': .* another item_id's label"):
        mine.add(study="s", item_id="q3", kind="score", value=1, supersedes=own)
    with pytest.raises(ValueError, match="'supersedes' names nope, which is not a label"):
        mine.add(study="s", item_id="q1", kind="score", value=1, supersedes="nope")
    fix = mine.add(study="s", item_id="q1", kind="score", value=3, supersedes=own)
    with pytest.raises(ValueError, match="already corrected; correct its correction"):
        mine.add(study="s", item_id="q1", kind="score", value=4, supersedes=own)
    assert sorted(current(mine.labels())["label_id"]) == sorted([other, fix])


def test_a_correction_cycle_from_merged_imports_is_refused(tmp_path):
    path = _csv(tmp_path, [{"label_id": "x", "supersedes": "y"},
                           {"label_id": "y", "supersedes": "x",
                            "given_at": "2026-01-01T00:01:00+00:00"}])
    with pytest.raises(ValueError, match=r"labels.csv row 2: field 'supersedes' names y"):
        import_csv(_store(tmp_path / "s"), path)


def test_current_ignores_forged_corrections_in_an_old_store():
    """A store written before the rule may hold them: they hide nothing (b names another
    item's and annotator's label; x and y name each other: both stay in force)."""
    frame = pd.DataFrame({"label_id": ["a", "b", "x", "y"], "item_id": ["q1", "q2", "q3", "q3"],
                          "annotator": ["ann-1", "ann-2", "ann-1", "ann-1"],
                          "supersedes": ["", "a", "y", "x"]})
    assert current(frame)["label_id"].tolist() == ["a", "b", "x", "y"]


# --- 2. append-only for real ----------------------------------------------------------------

def test_insert_or_replace_cannot_rewrite_a_stored_label(tmp_path):
    store = _store(tmp_path)
    lid = store.add(study="s", item_id="q1", kind="score", value=2)
    store.close()
    conn = sqlite3.connect(store.path)
    row = conn.execute("SELECT * FROM labels").fetchone()
    for sql in ("INSERT OR REPLACE", "REPLACE"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(f"{sql} INTO labels VALUES ({', '.join('?' * len(row))})",
                         (None, lid, *row[2:6], 5.0, *row[7:]))
    conn.close()
    assert store.labels()["value"].tolist() == [2.0]
    assert store.check().empty


def test_the_check_reports_a_label_rewritten_in_a_store_of_the_old_format(tmp_path):
    """Files written before the REPLACE trigger: a REPLACE gets through, the check says so."""
    folder = tmp_path / "old"
    shutil.copytree(DATA / "store-2026-11", folder)
    path = folder / "ann-1_lab-host.sqlite"
    conn = sqlite3.connect(path)
    lid = conn.execute("SELECT label_id FROM labels WHERE row = 1").fetchone()[0]
    cols = "label_id, study, item_id, annotator, kind, value, shown_at, given_at, " \
           "package_version, source, session"
    conn.execute(f"INSERT OR REPLACE INTO labels ({cols}) VALUES (?, 'x4', 'q1', 'ann-1', "
                 "'score', 1.0, '2026-11-20T10:00:00+00:00', '2026-11-20T10:00:00+00:00', "
                 "'0.1.0', 'widget', 'evil')", (lid,))
    conn.commit()
    conn.close()
    problems = LabelStore(folder).check()
    assert problems["file"].tolist() == ["ann-1_lab-host.sqlite"]
    assert "1 stored label(s) removed or rewritten" in problems["problem"].iloc[0]
    conn = sqlite3.connect(folder / "ann-2_lab-host.sqlite")
    conn.execute("DROP TABLE labels")
    conn.close()
    problems = LabelStore(folder).check().set_index("file")["problem"]
    assert "holds no labels table" in problems["ann-2_lab-host.sqlite"]


# --- 3, 4. imports: nothing dropped, all or nothing, the row named ----------------------------

def test_two_csv_rows_with_one_label_id_and_different_content_are_refused(tmp_path):
    path = _csv(tmp_path, [{"label_id": "dup", "value": "4"}, {"label_id": "dup", "value": "2"}])
    store = _store(tmp_path / "s")
    with pytest.raises(ValueError, match=r"labels.csv row 3: label_id dup is also labels.csv "
                                         r"row 2, with another value"):
        import_csv(store, path)
    assert store.labels().empty
    same = _csv(tmp_path, [{"label_id": "dup"}, {"label_id": "dup"}])  # a repeated row
    assert import_csv(store, same) == 1


def test_a_label_already_stored_with_other_content_is_refused(tmp_path):
    store = _store(tmp_path / "s")
    assert import_csv(store, _csv(tmp_path, [{"label_id": "a", "value": "4"}])) == 1
    with pytest.raises(ValueError, match="row 2: label_id a is already in the store with "
                                         "another value"):
        import_csv(store, _csv(tmp_path, [{"label_id": "a", "value": "3"}]))


def test_label_studio_tasks_sharing_an_id_without_item_id_are_refused(tmp_path):
    ann = {"id": 1, "completed_by": 1, "created_at": "2026-02-01T10:00:00Z",
           "result": [{"type": "rating", "value": {"rating": 4}}]}
    tasks = [{"id": 5, "data": {"text": "a"}, "annotations": [ann]},
             {"id": 5, "data": {"text": "b"}, "annotations": [{**ann, "result": [
                 {"type": "rating", "value": {"rating": 2}}]}]}]
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(tasks))
    with pytest.raises(ValueError, match="merged.json: tasks 1 and 2 share the id 5"):
        import_label_studio(_store(tmp_path / "s"), path)


def test_a_failed_import_writes_nothing_and_names_the_row_and_field(tmp_path):
    path = _csv(tmp_path, [{}, {"kind": "pairwise", "choice": "left", "shown_order": "AB"}])
    store = _store(tmp_path / "s")
    with pytest.raises(ValueError, match=r"labels.csv row 3: field 'choice'"):
        import_csv(store, path)
    assert store.labels().empty


# --- 5. numbers --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["inf", "1e999", "nan", "-inf"])
def test_non_finite_values_are_refused_naming_file_row_and_field(tmp_path, text):
    path = _csv(tmp_path, [{}, {"value": text}])
    with pytest.raises(ValueError, match=r"labels.csv row 3: field 'value' is not a finite"):
        read_csv_labels(path)
    with pytest.raises(ValueError, match=r"labels.csv row 2: field 'seconds' is not a finite"):
        read_csv_labels(_csv(tmp_path, [{"seconds": text}]))
    with pytest.raises(ValueError, match="'value' is not a finite number"):
        _store(tmp_path / "s").add(study="s", item_id="q1", kind="score", value=float(text))
    tasks = [{"id": 1, "data": {"item_id": "q1"}, "annotations": [
        {"completed_by": 1, "created_at": "2026-02-01T10:00:00Z",
         "result": [{"type": "rating", "value": {"rating": float(text)}}]}]}]
    with pytest.raises(ValueError, match="task 1, annotation 1: field 'rating' is not a finite"):
        tasks_to_labels(tasks)


# --- 6. an annotation edited in Label Studio ---------------------------------------------------

def test_a_rating_edited_in_label_studio_comes_back_as_edited(tmp_path):
    store = _store(tmp_path / "a")
    lid = store.add(study="s", item_id="q1", kind="score", value=4)
    path = export_label_studio(store.labels(), pd.DataFrame({"item_id": ["q1"]}),
                               tmp_path / "ls.json")
    tasks = json.loads(path.read_text())
    tasks[0]["annotations"][0]["result"][0]["value"]["rating"] = 2
    tasks[0]["annotations"][0]["updated_at"] = "2099-01-01T00:00:00+00:00"
    path.write_text(json.dumps(tasks))
    with pytest.warns(UserWarning, match="task 1, annotation 1: edited in Label Studio"):
        assert import_label_studio(store, path) == 1           # a correction of the label
    labels = store.labels()
    assert current(labels)["value"].tolist() == [2.0]
    assert labels["supersedes"].tolist() == ["", lid]
    with pytest.warns(UserWarning):
        assert import_label_studio(store, path) == 0            # and only once


# --- 10. smaller cases -------------------------------------------------------------------------

def test_label_studio_textarea_text_given_as_a_string_is_kept_whole():
    tasks = [{"id": 1, "data": {"item_id": "q1"}, "annotations": [
        {"completed_by": 1, "created_at": "2026-02-01T10:00:00Z", "result": [
            {"type": "rating", "value": {"rating": 4}},
            {"type": "textarea", "value": {"text": "clear and right"}}]}]}]
    assert tasks_to_labels(tasks)["rationale"].tolist() == ["clear and right"]


def test_a_clock_stepped_back_stores_no_seconds_not_negative_ones(tmp_path):
    store = _store(tmp_path)
    store.add(study="s", item_id="q1", kind="score", value=3,
              shown_at="2026-01-01T00:00:10+00:00", given_at="2026-01-01T00:00:04+00:00")
    assert store.labels()["seconds"].isna().all()
    with pytest.raises(ValueError, match="'seconds' is negative"):
        store.add(study="s", item_id="q1", kind="score", value=3, seconds=-2.0)


def test_labels_given_with_different_utc_offsets_sort_by_time(tmp_path):
    store = _store(tmp_path)
    store.add(study="s", item_id="tokyo", kind="score", value=3,
              given_at="2026-01-01T10:00:00+09:00")              # 01:00 UTC
    store.add(study="s", item_id="london", kind="score", value=3,
              given_at="2026-01-01T02:00:00+00:00")
    assert store.labels()["item_id"].tolist() == ["tokyo", "london"]


# --- 11, 12. reading survives one bad file; read-only folders read ------------------------------

@pytest.mark.parametrize("damage", ["junk", "truncated"])
def test_one_unreadable_file_leaves_the_others_readable_and_is_named(tmp_path, damage):
    _store(tmp_path, "ann-1").add(study="s", item_id="q1", kind="score", value=3)
    other = _store(tmp_path, "ann-2")
    for i in range(200):
        other.add(study="s", item_id=f"q{i}", kind="score", value=2, rationale="x" * 200)
    other.close()
    if damage == "junk":
        other.path.write_bytes(b"this is not a database" * 100)
    else:
        data = other.path.read_bytes()
        other.path.write_bytes(data[: len(data) // 3])
    with pytest.warns(UserWarning, match=rf"{other.path.name}: not a readable label file"):
        labels = LabelStore(tmp_path).labels()
    assert labels["annotator"].tolist() == ["ann-1"]
    problems = LabelStore(tmp_path).check()
    assert other.path.name in problems["file"].tolist()


_UNSHARE = shutil.which("unshare")


def _read_only_mount_works() -> bool:
    if _UNSHARE is None:
        return False
    done = subprocess.run([_UNSHARE, "-rm", "sh", "-c", "mount --bind -o ro /tmp /tmp"],
                          capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(not _read_only_mount_works(),
                    reason="needs unshare -rm and a bind mount to make read-only storage")
def test_a_label_folder_on_read_only_storage_reads(tmp_path):
    """The folder (WAL files, no -shm) bind-mounted read-only: even root cannot write there."""
    folder = tmp_path / "archive"
    shutil.copytree(DATA / "store-2026-11", folder)
    code = ("import sys; from workbench.labels import LabelStore; "
            "s = LabelStore(sys.argv[1]); print(len(s.labels()), len(s.check()))")
    done = subprocess.run(
        [_UNSHARE, "-rm", "sh", "-c", f'mount --bind -o ro "$1" "$1" && "{sys.executable}" '
         f'-c "{code}" "$1"', "sh", str(folder)],
        capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["4", "0"]


def test_a_store_of_2026_11_still_reads(tmp_path):
    folder = tmp_path / "store"
    shutil.copytree(DATA / "store-2026-11", folder)
    want = pd.read_csv(DATA / "store-2026-11.csv", dtype=str, keep_default_na=False)
    got = LabelStore(folder).labels()
    assert got["guideline"].isna().all()                 # a column added after 2026-11
    got = got[list(want.columns)]
    assert got.astype(object).where(got.notna(), "").astype(str).values.tolist() == \
        want.values.tolist()
    assert LabelStore(folder).check().empty
    assert current(got)["value"].tolist() == [3.0, 0.0, 5.0]


# --- 13. odd Label Studio input ----------------------------------------------------------------

def test_label_studio_input_of_the_wrong_shape_is_named(tmp_path):
    with pytest.raises(ValueError, match="tasks: task 2 is not an object"):
        tasks_to_labels([{"id": 1}, "task"])
    with pytest.raises(ValueError, match="task 1, annotation 1: a rating region without 'rating'"):
        tasks_to_labels([{"annotations": [{"created_at": "2026-01-01T00:00:00Z",
                                           "result": [{"type": "rating", "value": {}}]}]}])
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="deep.json: JSON nested too deeply"):
        import_label_studio(_store(tmp_path / "s"), path)


# --- 14. exports safe to open --------------------------------------------------------------------

def test_csv_export_neutralises_formulas_and_the_import_undoes_it(tmp_path):
    store = _store(tmp_path / "a")
    store.add(study="s", item_id='=HYPERLINK("http://x","y")', kind="score", value=4,
              rationale="=cmd|' /C calc'!A0")
    store.add(study="s", item_id="q2", kind="score", value=2, rationale="'quoted', @home, -5")
    store.add(study="s", item_id="q3", kind="score", value=3, rationale="+1\tthen\rmore")
    original = store.labels()
    path = export_csv(original, tmp_path / "labels.csv")
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    for cell in (*raw["item_id"], *raw["rationale"]):
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    target = _store(tmp_path / "b", "importer")
    assert import_csv(target, path) == 3
    assert target.labels().equals(original)


def test_standing_keeps_each_annotators_newest_label_by_time_not_text():
    """Two labels of one annotator and item given at 01:00 UTC (written +09:00) and 02:00
    UTC: the standing uses the later one."""
    from workbench.labels.standing import standing
    rows = []
    for ann, base in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
        for i in range(4):
            rows.append({"label_id": f"{ann}{i}", "item_id": f"q{i}", "annotator": ann,
                         "kind": "score", "value": base + i, "supersedes": "",
                         "given_at": "2026-01-01T00:00:00+00:00"})
    rows.append({"label_id": "late", "item_id": "q0", "annotator": "a", "kind": "score",
                 "value": 5.0, "supersedes": "", "given_at": "2026-01-01T02:00:00+00:00"})
    rows.append({"label_id": "early", "item_id": "q0", "annotator": "a", "kind": "score",
                 "value": 1.0, "supersedes": "", "given_at": "2026-01-01T10:00:00+09:00"})
    got = standing(pd.DataFrame(rows), n_boot=20, rng=0)["pairs"]
    later = [r for r in rows if r["label_id"] not in ("a0", "early")]
    earlier = [r for r in rows if r["label_id"] not in ("a0", "late")]
    want = standing(pd.DataFrame(later), n_boot=20, rng=0)["pairs"]
    wrong = standing(pd.DataFrame(earlier), n_boot=20, rng=0)["pairs"]
    assert got["estimate"].tolist() == want["estimate"].tolist() != wrong["estimate"].tolist()
