"""``complete_iter`` (issue 34): any iterable, read lazily a window at a time, results as
they come; and ``run_judging(..., parts=...)`` writing its frame in Parquet parts."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.llm import (
    CallFailure,
    Completion,
    Request,
    complete_iter,
    complete_many,
    temporary_settings,
)


def _ask(i: int) -> Request:
    return Request("sim/judge-a", [{"role": "user", "content": (
        f"<question>\nQuestion {i}?\n</question>\n<response>\nAnswer {i}.\n</response>\n"
        "Return JSON with a score from 1 to 10.")}], temperature=1.0, sample=i % 3)


def test_complete_iter_gives_complete_many_results_in_order():
    asks = [_ask(i) for i in range(23)]
    streamed = list(complete_iter(iter(asks), window=5, progress=False))
    assert [i for i, _ in streamed] == list(range(23))
    with temporary_settings(cache_mode="off"):
        direct = complete_many(asks, progress=False)
    assert [r.text for _, r in streamed] == [r.text for r in direct]
    assert [r.key for _, r in streamed] == [r.key for r in direct]
    again = list(complete_iter(asks, window=7, progress=False))  # a list works too
    assert all(r.cached for _, r in again)


def test_complete_iter_reads_its_requests_a_window_at_a_time():
    """A generator is asked for at most two windows ahead of what has been yielded (the
    next one is read, and looked up, while this one is used)."""
    planned: list[int] = []

    def plan():
        for i in range(40):
            planned.append(i)
            yield _ask(i)

    seen = 0
    for index, result in complete_iter(plan(), window=8, progress=False):
        assert isinstance(result, Completion)
        seen += 1
        assert len(planned) <= (index // 8 + 2) * 8  # this result's window and the next
        assert len(planned) - seen < 16
    assert seen == 40


def test_complete_iter_keeps_failure_rows_and_checks_its_arguments():
    dead = Request("openai/sim-judge-a", [{"role": "user", "content": "hi"}],
                   params={"api_base": "http://127.0.0.1:9/v1", "num_retries": 0})
    asks = [_ask(0), dead]  # nothing listens on the discard port
    got = dict(complete_iter(asks, window=1, progress=False))
    assert isinstance(got[0], Completion)
    assert isinstance(got[1], CallFailure) and got[1].error_type == "connection_error"
    with pytest.raises(ValueError, match="window=0"):
        list(complete_iter(asks, window=0, progress=False))
    with pytest.raises(ValueError, match="'auto'|mode='auto'"):
        complete_iter(asks, mode="auto")  # checked at the call, before iterating
    with pytest.raises(ValueError, match="cannot stop a batch job"):
        complete_iter(asks, mode="batch", budget_usd=1.0)


def test_complete_iter_in_readonly_mode_gives_cache_miss_rows(caplog):
    with temporary_settings(cache_mode="readonly"):
        got = list(complete_iter((_ask(i) for i in range(3)), window=2, progress=False))
    assert [r.error_type for _, r in got] == ["cache_miss"] * 3
    assert "3 request(s) not in the cache" in caplog.text


def test_run_judging_writes_its_frame_in_parquet_parts(tmp_path):
    from workbench.judges import JudgeSpec, run_judging

    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(5)],
                          "question": [f"Why {k}?" for k in range(5)],
                          "response": [f"Because {k}." for k in range(5)],
                          "answer_model": ["m"] * 5})
    spec = JudgeSpec("holistic_simple", "sim/judge-a", trials=2)
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "part-00009.parquet").write_bytes(b"stale")  # an earlier run's
    empty = run_judging(items, spec, progress=False, parts=tmp_path / "parts", part_items=2)
    assert empty.empty and list(empty.columns) == list(run_judging(items.iloc[:0], spec).columns)
    files = sorted(p.name for p in (tmp_path / "parts").iterdir())
    assert files == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    read = pd.read_parquet(tmp_path / "parts")
    whole = run_judging(items, spec, progress=False)
    cols = ["item_id", "trial", "score", "parse_ok", "cache_key", "raw_reply"]
    pd.testing.assert_frame_equal(read[cols].reset_index(drop=True), whole[cols])
    with pytest.raises(ValueError, match="part_items=0"):
        run_judging(items, spec, parts=tmp_path / "p", part_items=0)


def test_bench_scale_prints_a_row_per_size(app):
    """``workbench bench scale`` at a tiny size: cold and warm in processes of their own,
    the warm run replays every call, memory and cache size are measured."""
    from typer.testing import CliRunner

    from workbench.cli.bench_scale import run_scale_bench

    rows = run_scale_bench([300], window=64, echo=lambda line: None)
    (row,) = rows
    assert row["cold"]["n"] == row["warm"]["n"] == 300
    assert row["cold"]["cached"] == 0 and row["warm"]["cached"] == 300
    assert row["cold"]["failed"] == row["warm"]["failed"] == 0
    assert row["cold"]["peak_rss_mb"] > 0 and row["cache_mb"] > 0
    shown = CliRunner().invoke(app, ["bench", "scale", "--calls", "0"])
    assert shown.exit_code == 1 and "--calls and --window must be >= 1" in shown.output


@pytest.mark.parametrize("enabled", [True, False])
def test_complete_iter_pauses_the_collector_while_planning_only(enabled):
    """The cyclic garbage collector is off while a window is planned, as it was while its
    results are used, and as it was after a failed plan."""
    import gc

    planning: list[bool] = []

    def asks(fail: bool):
        for i in range(6):
            planning.append(gc.isenabled())
            if fail and i == 4:
                raise RuntimeError("planning failed")
            yield _ask(i)

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        using = [gc.isenabled() for _ in complete_iter(asks(False), window=2, progress=False)]
        assert planning == [False] * 6 and using == [enabled] * 6
        with pytest.raises(RuntimeError, match="planning failed"):
            for _ in complete_iter(asks(True), window=2, progress=False):
                pass
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def _lookahead_threads() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name.startswith("workbench-lookahead")]


def test_complete_iter_sends_a_request_repeated_in_the_next_window_once(monkeypatch):
    """The next window is looked up while this one is sent: a miss found then is looked
    up again, so a request of both windows is sent once, then replayed."""
    from workbench.llm import _transports

    answered: list[str] = []
    answer = _transports.SIM.answer
    monkeypatch.setattr(_transports.SIM, "answer",
                        lambda request: answered.append(request.messages[0]["content"])
                        or answer(request))
    asks = [_ask(i) for i in range(6)]
    order = asks[:4] + asks[2:6] + asks[:4]  # windows of 4: the second repeats two
    got = list(complete_iter(iter(order), window=4, progress=False))
    assert len(answered) == len(set(answered)) == 6
    assert [r.cached for _, r in got] == [False] * 4 + [True, True, False, False] + [True] * 4
    assert [r.key for _, r in got[4:6]] == [r.key for _, r in got[2:4]]
    assert not _lookahead_threads()


def test_complete_iter_replays_what_was_looked_up_ahead_and_looks_up_the_rest(tmp_path):
    """Warm: each window's rows come from the lookahead; a readonly miss is a miss."""
    asks = [_ask(i) for i in range(10)]
    first = list(complete_iter(asks[:7], window=3, progress=False))
    again = list(complete_iter(iter(asks[:7]), window=3, progress=False))
    assert all(r.cached for _, r in again)
    assert [r.text for _, r in again] == [r.text for _, r in first]
    with temporary_settings(cache_mode="readonly"):
        got = [r for _, r in complete_iter(iter(asks), window=3, progress=False)]
    assert all(isinstance(r, Completion) and r.cached for r in got[:7])
    assert [r.error_type for r in got[7:]] == ["cache_miss"] * 3
    for mode in ("off", "refresh"):
        with temporary_settings(cache_mode=mode):
            got = [r for _, r in complete_iter(iter(asks[:4]), window=3, progress=False)]
        assert not any(r.cached for r in got)
    assert not _lookahead_threads()


def _store_files() -> int:
    """How many files of the cache's SQLite store this process holds open."""
    from pathlib import Path

    fds = Path("/proc/self/fd")
    return sum("replies.db" in str(fd.readlink()) for fd in fds.iterdir() if fd.exists())


def test_complete_iter_leaves_no_thread_when_stopped_early():
    """A consumer that breaks early, a failing generator, a request that is not one: no
    thread left, nor a connection of its."""
    asks = [_ask(i) for i in range(20)]
    list(complete_iter(asks, window=4, progress=False))  # stored: the lookups find them
    files = _store_files()
    for _ in range(3):
        results = complete_iter(iter(asks), window=4, progress=False)
        for index, _ in results:
            if index == 5:
                break
        results.close()
        assert not _lookahead_threads()
        assert _store_files() == files

    def failing():
        yield from asks[:6]
        raise KeyError("planning failed")

    seen = []
    with pytest.raises(KeyError, match="planning failed"):
        for index, _ in complete_iter(failing(), window=4, progress=False):
            seen.append(index)
    assert seen == [0, 1, 2, 3]  # the window read whole, as before the lookahead
    assert not _lookahead_threads()

    def interrupted():
        yield from asks[:6]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        list(complete_iter(interrupted(), window=4, progress=False))
    assert not _lookahead_threads()
    with pytest.raises(ValueError, match=r"requests\[1\]"):
        list(complete_iter(iter([*asks[:4], asks[4], "not a request"]), window=4,
                           progress=False))
    assert not _lookahead_threads()
