"""Tests of save_figure's figure memo (workbench.memo, kind "figures") and inline display."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from workbench.plots import plot_estimates, plot_heatmap, save_figure  # noqa: E402
from workbench.plots._figure import figure_fingerprint  # noqa: E402

INLINE = "module://matplotlib_inline.backend_inline"


@pytest.fixture(autouse=True)
def _memo(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_MEMO", "1")
    monkeypatch.setenv("WORKBENCH_MEMO_DIR", str(tmp_path / "memo"))
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "out"))
    yield tmp_path / "memo"
    plt.close("all")


@pytest.fixture
def draws(monkeypatch):
    """The number of ``Figure.savefig`` calls (set ``draws.forbid = True`` to make one fail)."""

    class Count:
        n = 0
        forbid = False

    original = Figure.savefig

    def savefig(self, *args, **kwargs):
        if Count.forbid:
            raise AssertionError("the figure was drawn, not read from the memo")
        Count.n += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return Count


def simple_figure(title="scores", values=(1.0, 2.0, 3.0), color="C0"):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1, 2], list(values), color=color, marker="o")
    ax.set_title(title)
    return fig


def study_figure():
    """A figure like the notebooks': constrained layout, heatmap, colour bar, two backends."""
    weakness = pd.DataFrame({"criterion": ["a", "b", "c"] * 2,
                             "answer_model": ["m1"] * 3 + ["m2"] * 3,
                             "met_rate": [0.1, 0.5, 0.9, 0.3, 0.6, 0.2],
                             "backend": ["sim", "openai"] * 3})
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3), layout="constrained")
    plot_heatmap(weakness, index="criterion", columns="answer_model", values="met_rate",
                 vmin=0, vmax=1, ax=ax1, colorbar_label="met-rate", title="重み")
    estimates = pd.DataFrame({"method": ["checklist", "holistic"], "estimate": [0.09, 0.1],
                              "ci_low": [0.07, 0.08], "ci_high": [0.11, 0.12],
                              "backend": "sim"})
    plot_estimates(estimates, y="method", ax=ax2, title="一貫性指標")
    return fig


def study_fingerprint_hex() -> str:
    import hashlib

    with matplotlib.rc_context():  # the same rcParams whatever ran before in this process
        matplotlib.rcdefaults()
        plt.figure()  # another pyplot number and other ids than in the calling process
        return hashlib.sha256(figure_fingerprint(study_figure())).hexdigest()


def memo_files(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_same_figure_twice_is_read_from_the_memo(_memo, draws):
    first = save_figure(simple_figure(), "memo", "fig", formats=("png", "svg"), simulated=True)
    before = [p.read_bytes() for p in first]
    assert draws.n == 2
    assert sorted(p.suffix for p in memo_files(_memo)) == [".png", ".svg"]
    for path in first:
        path.unlink()  # the second save must write them again, from the memo
    draws.forbid = True
    second = save_figure(simple_figure(), "memo", "fig", formats=("png", "svg"), simulated=True)
    assert second == first
    assert [p.read_bytes() for p in second] == before
    assert before[1].startswith(b"<?xml") and b"simulated judges" in before[1]


@pytest.mark.parametrize("change", [{"title": "scores!"}, {"values": (1.0, 2.0, 3.5)},
                                    {"color": "C1"}])
def test_a_changed_figure_is_drawn_again(draws, change):
    first = save_figure(simple_figure(), "memo", "base", simulated=False)[0].read_bytes()
    changed = save_figure(simple_figure(**change), "memo", "changed", simulated=False)
    assert draws.n == 2
    assert changed[0].read_bytes() != first


def test_fingerprint_is_the_same_in_another_process():
    here = study_fingerprint_hex()
    code = ("import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('case', sys.argv[1])\n"
            "case = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(case)\n"
            "print(case.study_fingerprint_hex())\n")
    for seed in ("0", "1"):  # also set order: the figure holds the backends {"sim", "openai"}
        env = {**os.environ, "PYTHONHASHSEED": seed, "MPLBACKEND": "Agg"}
        out = subprocess.run([sys.executable, "-c", code, __file__], env=env,
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip() == here
    assert figure_fingerprint(study_figure()) != figure_fingerprint(simple_figure())


def test_memo_off_draws_every_time(_memo, monkeypatch, draws):
    monkeypatch.setenv("WORKBENCH_MEMO", "0")
    first = save_figure(simple_figure(), "memo", "fig", simulated=False)[0].read_bytes()
    second = save_figure(simple_figure(), "memo", "fig", simulated=False)[0].read_bytes()
    assert draws.n == 2
    assert first == second
    assert memo_files(_memo) == []


def test_unpicklable_figure_is_saved_without_memo(_memo, draws):
    def unpicklable():
        fig = simple_figure()
        fig.axes[0].xaxis.set_major_formatter(FuncFormatter(lambda x, pos: f"<{x:g}>"))
        return fig

    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):  # (a local lambda)
        figure_fingerprint(unpicklable())
    paths = save_figure(unpicklable(), "memo", "fig", formats=("png", "svg"), simulated=False)
    save_figure(unpicklable(), "memo", "fig", formats=("png", "svg"), simulated=False)
    assert draws.n == 4
    assert paths[0].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert paths[1].read_bytes().startswith(b"<?xml")
    assert memo_files(_memo) == []


@pytest.mark.parametrize("damage", [lambda b: b"", lambda b: b[: len(b) // 2],
                                    lambda b: b"garbage" + b[7:]],
                         ids=["empty", "truncated", "bad-signature"])
def test_a_damaged_entry_is_drawn_again_and_repaired(_memo, draws, damage):
    paths = save_figure(simple_figure(), "memo", "fig", formats=("png", "svg"), simulated=False)
    good = [p.read_bytes() for p in paths]
    for entry in memo_files(_memo):
        entry.write_bytes(damage(entry.read_bytes()))
    again = save_figure(simple_figure(), "memo", "fig", formats=("png", "svg"), simulated=False)
    assert draws.n == 4
    assert [p.read_bytes() for p in again] == good
    assert sorted(e.read_bytes() for e in memo_files(_memo)) == sorted(good)


def test_inline_backend_shows_the_saved_png_and_closes_the_figure(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    monkeypatch.setattr(matplotlib, "get_backend", lambda: INLINE)
    fig = simple_figure()
    path = save_figure(fig, "memo", "fig", formats=("svg", "png"), simulated=False)[1]
    png = path.read_bytes()
    assert len(shown) == 1 and isinstance(shown[0], IPython.display.Image)
    assert shown[0].data == png
    pixels = int.from_bytes(png[16:20], "big")
    assert shown[0].width == round(pixels * fig.dpi / 150) < pixels
    assert not plt.fignum_exists(fig.number)


def test_other_backends_show_nothing_and_keep_the_figure(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    fig = simple_figure()
    save_figure(fig, "memo", "fig", simulated=False)
    assert "inline" not in matplotlib.get_backend()
    assert shown == []
    assert plt.fignum_exists(fig.number)


def _notebook_formatter(x, pos):  # defined outside the code the memo key covers
    return f"{x:.1f}!"


def test_a_function_from_outside_the_covered_code_is_never_memoised(_memo, draws):
    """A formatter pickles by name only: if its body changed, the old drawing would come
    back. So a figure using one (here: from this test module, as from a notebook) is
    drawn every time and nothing is kept."""
    for _ in range(2):
        fig = simple_figure()
        fig.axes[0].yaxis.set_major_formatter(FuncFormatter(_notebook_formatter))
        save_figure(fig, "memo", "formatted", simulated=False)
    assert draws.n == 2 and memo_files(_memo) == []
    with pytest.raises(TypeError, match="_notebook_formatter"):
        figure_fingerprint(fig)


def test_a_draw_event_callback_is_never_memoised(_memo, draws):
    for _ in range(2):
        fig = simple_figure()
        fig.canvas.mpl_connect("draw_event", lambda event: None)
        save_figure(fig, "memo", "callback", simulated=False)
    assert draws.n == 2 and memo_files(_memo) == []
