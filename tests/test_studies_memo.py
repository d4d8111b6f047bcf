"""The memo of study results (``workbench.studies._memo``, ``workbench.memo``): a rerun
with every input unchanged gets exactly what running again would compute; any changed
input — config, a cache entry, code, data, a file a parameter names — runs again."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from workbench import llm, memo
from workbench.llm import Request
from workbench.studies import StudyResults
from workbench.studies import _memo as study_memo

CASES_DIR = Path(__file__).resolve().parent / "notebook_cases"
STUDIES = sorted(p.stem for p in CASES_DIR.glob("*.py") if not p.stem.startswith("00_"))


@pytest.fixture
def memo_on(tmp_path, monkeypatch):
    folder = tmp_path / "derived"
    monkeypatch.setenv("WORKBENCH_MEMO", "1")
    monkeypatch.setenv("WORKBENCH_MEMO_DIR", str(folder))
    return folder


def _small(stem: str) -> dict:
    spec = importlib.util.spec_from_file_location(f"memo_case_{stem}", CASES_DIR / f"{stem}.py")
    case = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(case)
    return dict(case.SMALL)


def _calls(run, config) -> tuple[StudyResults, int]:
    """``run(config)`` and how many distinct cache keys its LLM calls asked for (counted
    at the client's one entry point; not with ``llm.recording``, inside which the memo
    stands aside)."""
    from workbench.llm import _client

    keys: set[str] = set()
    original = _client._run

    def counting(requests, **kwargs):
        requests = list(requests)
        keys.update(llm.cache_key(r) for r in requests)
        return original(requests, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_client, "_run", counting)
        results = run(config)
    return results, len(keys)


def _assert_same(a: StudyResults, b: StudyResults, *, but: tuple[str, ...] = ()) -> None:
    assert list(a) == list(b)
    for name in a:
        pd.testing.assert_frame_equal(a[name].drop(columns=list(but), errors="ignore"),
                                      b[name].drop(columns=list(but), errors="ignore"),
                                      check_exact=True, obj=name)


# --- every study: kept results == what a rerun computes ------------------------------


@pytest.mark.parametrize("stem", STUDIES)
def test_kept_results_equal_a_rerun_of_every_study(stem, memo_on):
    """Cold run (makes the calls, keeps its results), a rerun that recomputes from the
    cache, then a memo hit (no call at all): the hit is the cold run's frames exactly, and
    the recomputed rerun's in every column but ``cached`` (which says whether the run that
    computed a row replayed its call)."""
    study = importlib.import_module(f"workbench.studies.{stem}")
    config = study.Config(**_small(stem))
    cold, n_cold = _calls(study.run, config)
    assert n_cold > 0
    assert list(memo_on.rglob("*.pickle")), "the cold run kept nothing"
    rerun, n_rerun = _calls(study.run.uncached, config)
    kept, n_kept = _calls(study.run, config)
    assert n_rerun == n_cold and n_kept == 0  # the hit sent and replayed nothing
    assert kept.config is config
    _assert_same(kept, cold)
    _assert_same(kept, rerun, but=("cached",))


# --- what invalidates ------------------------------------------------------------------


@dataclasses.dataclass
class Toy:
    """A study-shaped config for a toy run of two judge calls."""

    prompt: str = "Rate 'hello' from 1 to 5."
    path: str = ""
    progress: bool = False
    cache_mode: str = "readwrite"
    seed: int = 0


RUNS = []


@study_memo.memoized("toy")
def toy(config: Toy) -> StudyResults:
    RUNS.append(config)
    replies = llm.complete_many([Request("sim/judge-a", [{"role": "user", "content": config.prompt}],
                                         sample=i) for i in range(2)], progress=False)
    rows = [{"text": getattr(r, "text", None), "cached": getattr(r, "cached", None),
             "failed": isinstance(r, llm.CallFailure)} for r in replies]
    if config.path:
        rows.append({"text": Path(config.path).read_text(), "cached": None, "failed": False})
    return StudyResults({"rows": pd.DataFrame(rows)}, config=config)


def _runs(config: Toy) -> int:
    RUNS.clear()
    toy(config)
    return len(RUNS)


def test_a_rerun_with_nothing_changed_is_kept(memo_on):
    first = toy(Toy())
    assert first["rows"]["cached"].tolist() == [False, False]  # this run's truth
    assert _runs(Toy()) == 0
    again = toy(Toy())
    pd.testing.assert_frame_equal(again["rows"], first["rows"])  # the keeping run's frames


def test_session_fields_do_not_matter_but_every_other_field_does(memo_on):
    toy(Toy())
    assert _runs(Toy(progress=True)) == 0
    assert _runs(Toy(prompt="Rate 'bye' from 1 to 5.")) == 1


def test_a_changed_or_missing_cache_entry_runs_again(memo_on):
    toy(Toy())
    key = llm.cache_key(Request("sim/judge-a", [{"role": "user", "content": Toy().prompt}], sample=1))
    store = llm.open_cache()
    raw = store.get(key)
    entry = json.loads(raw)
    entry["response"]["text"] = entry["response"]["text"] + " "
    from workbench.llm._cache import store as write_entry

    store.delete(key)
    write_entry(store, entry)  # another reply, properly sealed
    assert _runs(Toy()) == 1
    assert _runs(Toy()) == 0
    store.delete(key)
    assert _runs(Toy()) == 1  # sent again


def test_changed_code_or_data_runs_again(memo_on, monkeypatch):
    toy(Toy())
    monkeypatch.setattr(memo, "environment_digest", lambda: "other code")
    assert _runs(Toy()) == 1
    monkeypatch.setattr(memo, "data_digest", lambda: "other data")
    assert _runs(Toy()) == 1
    assert _runs(Toy()) == 0


def test_a_file_a_parameter_names_is_an_input(memo_on, tmp_path):
    path = tmp_path / "extra.txt"
    path.write_text("one")
    config = Toy(path=str(path))
    assert toy(config)["rows"]["text"].iloc[-1] == "one"
    assert _runs(config) == 0
    path.write_text("two")
    assert _runs(config) == 1
    assert toy(config)["rows"]["text"].iloc[-1] == "two"


def test_a_run_with_a_failed_call_keeps_nothing(memo_on, monkeypatch):
    """A corrupt entry that still carries a matching seal: in readonly mode its request
    fails (cache_miss), while every key has a sealed entry — only the failure count can
    stop the run from being kept."""
    from workbench.llm._cache import seal

    toy(Toy())
    key = llm.cache_key(Request("sim/judge-a", [{"role": "user", "content": Toy().prompt}], sample=1))
    llm.open_cache().set(key, "not an entry", tag=seal("not an entry"))
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    before = sorted(memo_on.rglob("*"))
    rows = toy(Toy())["rows"]
    assert rows["failed"].tolist() == [False, True]
    assert _runs(Toy()) == 1
    assert sorted(memo_on.rglob("*")) == before  # nothing kept from the failed runs


def test_an_entry_rewritten_during_the_run_keeps_nothing(memo_on, monkeypatch):
    """Another process rewrites an entry after the run read it: the results were computed
    from the old reply, so they must not be kept under the new entry's seal."""
    from workbench.llm._cache import store as write_entry

    toy(Toy(prompt="warm up"))  # a cache folder exists
    original = study_memo._save

    def rewrite_then_save(study, base, results, calls):
        key = sorted(calls.keys)[0]
        store = llm.open_cache()
        entry = json.loads(store.get(key))
        entry["response"]["text"] += " (rewritten)"
        store.delete(key)
        write_entry(store, entry)
        return original(study, base, results, calls)

    monkeypatch.setattr(study_memo, "_save", rewrite_then_save)
    toy(Toy())
    monkeypatch.setattr(study_memo, "_save", original)
    assert _runs(Toy()) == 1  # nothing was kept: computed again (from the rewritten entry)
    assert _runs(Toy()) == 0


def test_path_parameters_and_unreadable_inputs(memo_on, tmp_path, caplog):
    path = tmp_path / "extra.txt"
    path.write_text("one")
    config = Toy(path=path)  # a pathlib.Path, not a str
    toy(config)
    path.write_text("two")
    assert toy(config)["rows"]["text"].iloc[-1] == "two"
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "gone").symlink_to(tmp_path / "nowhere")  # there, but cannot be read
    with caplog.at_level(logging.WARNING, logger="workbench.studies"):
        assert _runs(Toy(prompt=str(folder))) == 1
        assert _runs(Toy(prompt=str(folder))) == 1  # never kept: an input it cannot see
    assert "memo of derived results not used" in caplog.text


def test_a_result_that_cannot_be_kept_is_still_returned(memo_on, caplog):
    @study_memo.memoized("toy-unpicklable")
    def run(config: Toy) -> StudyResults:
        llm.complete("sim/judge-a", [{"role": "user", "content": config.prompt}])
        return StudyResults({"rows": pd.DataFrame({"f": [lambda: 1]})}, config=config)

    with caplog.at_level(logging.WARNING, logger="workbench.studies"):
        assert len(run(Toy())["rows"]) == 1
    assert "results not kept" in caplog.text and not list(memo_on.rglob("*.pickle"))


def test_the_simulators_items_are_an_input(memo_on):
    from workbench.sim import registry

    state = registry.snapshot()
    try:
        toy(Toy())
        assert _runs(Toy()) == 0
        registry.register_items([{"question": "An extra question?", "reference": "Yes."}])
        assert _runs(Toy()) == 1
    finally:
        registry.restore(state)


def test_inside_a_recording_the_memo_stands_aside(memo_on):
    """A kept run makes no call, so an enclosing recording (another kept computation)
    would not see the entries it depends on: inside one, every run computes."""
    toy(Toy())
    with llm.recording() as outer:
        assert _runs(Toy()) == 1
    assert outer.keys


def test_the_memo_folder_under_data_is_not_data(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_ROOT", str(tmp_path))
    (tmp_path / "data" / "set").mkdir(parents=True)
    (tmp_path / "data" / "set" / "items.csv").write_text("x\n")
    monkeypatch.setenv("WORKBENCH_MEMO_DIR", str(tmp_path / "data" / "kept"))
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "data" / "llm"))
    before = memo.data_digest()
    for folder in ("kept", "llm"):
        (tmp_path / "data" / folder).mkdir()
        (tmp_path / "data" / folder / "entry").write_text("grows with every run")
    assert memo.data_digest() == before


@pytest.mark.parametrize("mode", ["refresh", "off"])
def test_refresh_and_off_modes_always_run(memo_on, monkeypatch, mode):
    toy(Toy())
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", mode)
    assert _runs(Toy()) == 1


def test_memo_off_keeps_nothing(memo_on, monkeypatch):
    monkeypatch.setenv("WORKBENCH_MEMO", "0")
    toy(Toy())
    assert _runs(Toy()) == 1
    assert not memo_on.exists()


def test_a_damaged_kept_file_runs_again(memo_on):
    toy(Toy())
    (kept,) = memo_on.rglob("*.pickle")
    kept.write_bytes(kept.read_bytes()[:-10])
    assert _runs(Toy()) == 1
    assert _runs(Toy()) == 0


def test_a_source_change_during_the_process_turns_the_memo_off(memo_on, monkeypatch, tmp_path, caplog):
    package = _package(tmp_path, monkeypatch)
    assert memo.enabled()
    (package / "code.py").write_text("x = 22\n")
    with caplog.at_level(logging.WARNING, logger="workbench.memo"):
        assert not memo.enabled()
        assert not memo.enabled()
    assert sum("modified after this process imported" in r.message for r in caplog.records) == 1


def test_a_source_change_after_the_import_but_before_the_first_use_turns_it_off(
        memo_on, monkeypatch, tmp_path):
    """Edited after the package was imported, before any memo use: the code in memory may
    be the old one, so nothing may be kept under the new code's digest."""
    package = _package(tmp_path, monkeypatch)
    (package / "code.py").write_text("x = 333\n")
    assert not memo.enabled()


def _package(tmp_path, monkeypatch):
    """A stand-in package folder, imported (``IMPORTED_NS``) after it was written."""
    import time

    from workbench import config

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "code.py").write_text("x = 1\n")
    time.sleep(0.01)
    monkeypatch.setattr(config, "IMPORTED_NS", time.time_ns())
    time.sleep(0.01)
    monkeypatch.setattr(memo, "_PACKAGE", package)
    monkeypatch.setattr(memo, "_code", {})
    monkeypatch.setattr(memo, "_warned", set())
    return package


# --- pieces ------------------------------------------------------------------------------


def test_digests_follow_content_not_time(tmp_path):
    folder = tmp_path / "tree"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.csv").write_text("a\n1\n")
    first = memo.path_digest(folder)
    (folder / "sub" / "a.csv").write_text("a\n1\n")  # rewritten, same bytes
    assert memo.path_digest(folder) == first
    (folder / "sub" / "a.csv").write_text("a\n2\n")
    assert memo.path_digest(folder) != first
    assert memo.path_digest(tmp_path / "absent") is None
    assert memo.path_digest(folder / "sub" / "a.csv").startswith("file:")


def test_data_digest_covers_the_bundled_data_only(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_ROOT", str(tmp_path))
    (tmp_path / "data" / "set").mkdir(parents=True)
    (tmp_path / "data" / "set" / "items.csv").write_text("x\n")
    before = memo.data_digest()
    for working in ("cache", "runs", "results"):
        (tmp_path / "data" / working).mkdir()
        (tmp_path / "data" / working / "f").write_text("anything")
    assert memo.data_digest() == before
    (tmp_path / "data" / "set" / "items.csv").write_text("y\n")
    assert memo.data_digest() != before


def test_seals_of_sealed_unsealed_and_missing_entries():
    replies = llm.complete_many([Request("sim/judge-a", [{"role": "user", "content": f"q{i}"}])
                                 for i in range(3)], progress=False)
    keys = [r.key for r in replies]
    store = llm.open_cache()
    raw = store.get(keys[0])
    store.set(keys[0], raw, tag=None)  # written without a seal (an older workbench)
    store.set(keys[1], store.get(keys[1]), tag="sha256:stored")  # the stored seal is what counts
    found = llm.seals([*keys, "0" * 64])
    from workbench.llm._cache import seal

    assert set(found) == set(keys)
    assert found[keys[0]] == seal(raw) and found[keys[1]] == "sha256:stored"
    assert found[keys[2]] == seal(store.get(keys[2]))


def test_recording_counts_keys_failures_and_raises(monkeypatch):
    request = Request("sim/judge-a", [{"role": "user", "content": "q"}])
    with llm.recording() as rec:
        llm.complete_many([request, request], progress=False)
    assert rec.keys == {llm.cache_key(request)} and rec.complete
    monkeypatch.setenv("WORKBENCH_CACHE_MODE", "readonly")
    other = Request("sim/judge-a", [{"role": "user", "content": "not cached"}])
    with llm.recording() as rec:
        llm.complete_many([other], progress=False)
    assert rec.failures == 1 and not rec.complete
    from workbench.llm import _client

    def broken(*args, **kwargs):
        raise RuntimeError("store gone")

    monkeypatch.setattr(_client, "_run_keyed", broken)
    with llm.recording() as rec, pytest.raises(RuntimeError):
        llm.complete_many([request], progress=False)
    assert rec.raised and not rec.complete
