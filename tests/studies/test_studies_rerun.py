"""A rerun computes from what is there now (issue 20, items 9-12).

A warm rerun replays its LLM calls from the reply cache and computes every statistic and
figure again; nothing derived is kept between runs. Each test changes one input between
two runs of a small S1 study — a cache entry's text, a dependency's code, a data folder
behind a symbolic link, a file planted where derived results used to be kept — and checks
that the rerun's numbers follow the change (until issue 20 a memo of derived results
served the first run's numbers in each case). The tests run in the default environment
of a project folder of their own (``WORKBENCH_ROOT``), with a copy of the S1 data.
"""

from __future__ import annotations

import io
import json
import pickle
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from workbench import llm  # noqa: E402
from workbench.plots import save_figure  # noqa: E402
from workbench.sim import registry  # noqa: E402
from workbench.studies import s1_judge_methods as s1  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "s1_medical_ja"
SMALL = {"item_ids": ["s1-01", "s1-03"], "answer_models": ["sim/answer-strong", "sim/answer-tiny"],
         "judge_models": ["sim/judge-a"], "temperatures": [0.0], "trials": 1, "n_boot": 50}
#: The rubric row that the edits below take away.
DROPPED = ("s1-01", "c03")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder with a copy of the S1 data, in the default environment (nothing
    switched off), writing figures and tables below it."""
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    shutil.copytree(DATA, root / "data" / DATA.name)
    monkeypatch.setenv("WORKBENCH_ROOT", str(root))
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(root / "out"))
    monkeypatch.delenv("WORKBENCH_MEMO", raising=False)  # the default (was: on, issue 20)
    state = registry.snapshot()  # the simulator learns the items of this project's data
    yield root
    registry.restore(state)
    plt.close("all")


def _run() -> s1.StudyResults:
    return s1.run(s1.Config(**SMALL))


def _same(a, b, *, but=("cached",)) -> bool:
    """Whether two study results hold equal frames (every column but ``but``)."""
    if list(a) != list(b):
        return False
    for name in a:
        try:
            pd.testing.assert_frame_equal(a[name].drop(columns=list(but), errors="ignore"),
                                          b[name].drop(columns=list(but), errors="ignore"),
                                          check_exact=True)
        except AssertionError:
            return False
    return True


def _criteria(results) -> set[tuple[str, str]]:
    frame = results["criteria"]
    return set(zip(frame["item_id"], frame["criterion_id"], strict=True))


def _drop_criterion(rubric: Path) -> None:
    lines = rubric.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(",".join(DROPPED) + ",")]
    assert len(kept) == len(lines) - 1
    rubric.write_text("".join(kept), encoding="utf-8")


# --- item 9: a cache entry edited, its seal kept ----------------------------------------


def _edit_keeping_the_seal(key: str) -> str:
    """Append to the reply text of ``key``'s entry, keeping the seal it was written with;
    return the entry's text as it was."""
    store = llm.open_cache()
    raw, tag = store.get(key, tag=True)
    entry = json.loads(raw)
    entry["response"]["text"] += " (edited)"
    store.set(key, json.dumps(entry), tag=tag)
    return raw


def _a_judge_key(results) -> str:
    judgments = results["judgments"]
    return judgments.loc[judgments["protocol"] == "holistic", "cache_key"].iloc[0]


def test_a_readonly_rerun_sees_an_entry_edited_under_its_seal(project, monkeypatch):
    """The edited entry fails its seal, so a readonly rerun cannot replay it: its row is
    a failure (never the first run's score)."""
    first = _run()
    key = _a_judge_key(first)
    _edit_keeping_the_seal(key)
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    rerun = _run()
    rows = rerun["judgments"].loc[rerun["judgments"]["cache_key"] == key]
    assert len(rows) and rows["score"].isna().all() and rows["error"].notna().all()
    before = first["judgments"].loc[first["judgments"]["cache_key"] == key]
    assert before["score"].notna().all() and before["error"].isna().all()
    assert not _same(rerun, first)


def test_a_readwrite_rerun_sends_an_entry_edited_under_its_seal_again(project):
    """In readwrite mode the edited entry is sent again and overwritten: the rerun's
    numbers are the first run's (all but the call's latency), and the cache holds the
    true reply again."""
    first = _run()
    key = _a_judge_key(first)
    original = _edit_keeping_the_seal(key)
    rerun = _run()
    entry = json.loads(llm.open_cache().get(key))
    assert not entry["response"]["text"].endswith(" (edited)")
    assert entry["response"]["text"] == json.loads(original)["response"]["text"]
    assert _same(rerun, first, but=("cached", "latency_s"))


def test_a_rerun_follows_an_entry_rewritten_with_a_new_seal(project):
    """An entry rewritten through the cache (a new reply, sealed): the rerun scores it."""
    from workbench.llm._cache import store as write_entry

    first = _run()
    key = _a_judge_key(first)
    store = llm.open_cache()
    entry = json.loads(store.get(key))
    entry["response"]["text"] = entry["response"]["text"] + " (rewritten)"
    store.execute("DELETE FROM replies WHERE key = ?", (key,))
    write_entry(store, entry)
    rerun = _run()
    raw = rerun["judgments"].loc[rerun["judgments"]["cache_key"] == key, "raw_reply"]
    assert len(raw) and raw.str.endswith(" (rewritten)").all()


# --- item 10: a dependency's code changed without a version change ----------------------


def test_numbers_follow_a_dependencys_code_patched_and_unpatched(project, monkeypatch):
    """pandas' CSV reader patched in place (as an editable install, a local patch or a
    ``.pth`` hook would, with no version change) to drop a rubric row: the run while it
    is patched lacks that criterion, the run after the patch is undone has it again, and
    patched once more the numbers are those of the first patched run."""
    original = pd.read_csv

    def patched(*args, **kwargs):
        frame = original(*args, **kwargs)
        if {"item_id", "criterion_id"} <= set(frame.columns):
            frame = frame.loc[~((frame["item_id"] == DROPPED[0])
                                & (frame["criterion_id"] == DROPPED[1]))].reset_index(drop=True)
        return frame

    monkeypatch.setattr(pd, "read_csv", patched)
    while_patched = _run()
    assert DROPPED not in _criteria(while_patched)
    monkeypatch.setattr(pd, "read_csv", original)
    after = _run()
    assert DROPPED in _criteria(after)
    assert len(after["criteria"]) > len(while_patched["criteria"])
    monkeypatch.setattr(pd, "read_csv", patched)
    assert _same(_run(), while_patched)


# --- item 11: a data folder behind a symbolic link --------------------------------------


def test_an_edit_inside_a_symlinked_data_folder_is_seen(project):
    folder = project / "data" / DATA.name
    elsewhere = project.parent / "elsewhere" / DATA.name
    elsewhere.parent.mkdir()
    shutil.move(folder, elsewhere)
    folder.symlink_to(elsewhere, target_is_directory=True)
    first = _run()
    assert DROPPED in _criteria(first)
    _drop_criterion(elsewhere / "rubric.csv")
    rerun = _run()
    assert DROPPED not in _criteria(rerun)
    assert len(rerun["criteria"]) < len(first["criteria"])


# --- item 12: nothing derived is read back from disk ------------------------------------


class _Planted:
    """A pickle that, when loaded, writes a file (stands for any code it could run)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "ran"))


def test_a_rerun_never_unpickles_and_runs_no_planted_code(project, monkeypatch, tmp_path):
    """Whatever pickle lies below the project's data folder (here: every one a run left,
    replaced by one that runs code, with its checksum updated), a rerun loads none: no
    code runs, nothing crashes, the numbers are the first run's."""
    import hashlib

    first = _run()
    marker = tmp_path / "planted-code-ran"
    payload = pickle.dumps(_Planted(marker))
    for kept in (project / "data").rglob("*.pickle"):
        kept.write_bytes(payload)
        for record in kept.parent.parent.rglob("*.json"):
            text = json.loads(record.read_text())
            if isinstance(text, dict) and "sha256" in text:
                text["sha256"] = hashlib.sha256(payload).hexdigest()
                record.write_text(json.dumps(text))
    loads = []
    for name in ("load", "loads"):
        real = getattr(pickle, name)
        monkeypatch.setattr(pickle, name, lambda *a, _real=real, **k: loads.append(1) or _real(*a, **k))
    rerun = _run()
    assert not marker.exists()
    assert loads == []
    assert _same(rerun, first)
    assert list(project.rglob("*.pickle")) == []


def _figure(values=(1.0, 2.0, 3.0)):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], list(values), marker="o")
    return fig


def test_a_figure_is_drawn_again_not_read_back(project):
    """Every PNG a first save left below the project's data folder swapped for another
    figure's: the second save of the same figure still writes its own drawing."""
    first = save_figure(_figure(), "rerun", "fig", simulated=False)[0].read_bytes()
    other = io.BytesIO()
    _figure((3.0, 1.0, 2.0)).savefig(other, format="png")
    for kept in (project / "data").rglob("*.png"):
        kept.write_bytes(other.getvalue())
    again = save_figure(_figure(), "rerun", "fig", simulated=False)[0].read_bytes()
    assert again == first
