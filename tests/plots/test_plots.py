"""Tests of workbench.plots: the plot_* functions, the CJK font, save_figure's bytes."""

from __future__ import annotations

import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from PIL import Image  # noqa: E402
from scipy import stats  # noqa: E402

from workbench import plots  # noqa: E402
from workbench.plots import (  # noqa: E402
    SIM_LABEL,
    has_sim_label,
    plot_bars,
    plot_correlations,
    plot_cost_cache,
    plot_estimates,
    plot_heatmap,
    plot_scatter_matrix,
    save_figure,
)


@pytest.fixture(autouse=True)
def _outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_OUTPUT_DIR", str(tmp_path / "out"))
    yield
    plt.close("all")


def _estimates(backend="sim"):
    frame = pd.DataFrame(
        {
            "method": ["checklist", "holistic", "simple"] * 2,
            "reading": ["trials"] * 3 + ["trials+judges"] * 3,
            "estimate": [0.085, 0.095, 0.129, 0.10, 0.12, 0.15],
        }
    )
    frame["ci_low"] = frame["estimate"] - 0.02
    frame["ci_high"] = frame["estimate"] + 0.03
    if backend:
        frame["backend"] = backend
    return frame


def _scores(rng, n_units=30):
    rows = []
    for unit in range(n_units):
        level = rng.normal()
        for method, noise in [("holistic", 0.3), ("simple", 0.6), ("checklist", 0.2)]:
            for trial in range(3):
                rows.append((unit, method, trial, level + rng.normal(scale=noise)))
    return pd.DataFrame(rows, columns=["conversation", "method", "trial", "score"])


def _draw_everything(rng):
    """One figure per plot function; returns the list of figures."""
    figs = []
    ax = plot_estimates(_estimates(), y="method", hue="reading", title="一貫性指標")
    figs.append(ax.figure)
    items = [f"項目{i}" for i in range(6)]
    weak = pd.DataFrame(
        [
            (i, m, bool(rng.random() < 0.6))
            for i in items
            for m in ["strong", "weak"]
            for _ in range(4)
        ],
        columns=["criterion_id", "answer_model", "met"],
    ).assign(backend="sim")
    figs.append(
        plot_heatmap(
            weak, index="criterion_id", columns="answer_model", values="met", title="弱点マップ"
        ).figure
    )
    two = _scores(rng, 10).query("method != 'checklist'")
    axes = plot_scatter_matrix(
        two.assign(backend="sim"), unit="conversation", method="method", score="score"
    )
    figs.append(axes[0, 0].figure)
    return figs


# --- the plot functions draw what the frame says ---------------------------------------


def test_plot_estimates_draws_points_and_intervals_in_order():
    frame = _estimates()
    ax = plot_estimates(frame, y="method", hue="reading", reference=0.1)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["checklist", "holistic", "simple"]
    points = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert len(points) == 2  # one series per hue level
    xs = np.concatenate([line.get_xdata() for line in points])
    assert sorted(xs) == sorted(frame["estimate"])
    segments = np.concatenate([c.get_segments() for c in ax.collections])
    lows = sorted(seg[0][0] for seg in segments)
    highs = sorted(seg[1][0] for seg in segments)
    assert lows == pytest.approx(sorted(frame["ci_low"]))
    assert highs == pytest.approx(sorted(frame["ci_high"]))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["trials", "trials+judges"]


def test_plot_estimates_rejects_duplicates_and_missing_columns():
    frame = _estimates()
    with pytest.raises(ValueError, match="several rows for method='checklist'"):
        plot_estimates(frame, y="method")
    with pytest.raises(ValueError, match=r"\['ci_lo'\] not in data"):
        plot_estimates(frame, y="method", hue="reading", ci_low="ci_lo")


def test_plot_estimates_draws_a_point_without_interval_when_ci_is_missing():
    frame = _estimates().query("reading == 'trials'").copy()
    frame.loc[frame.index[0], ["ci_low", "ci_high"]] = np.nan
    ax = plot_estimates(frame, y="method")
    assert sum(len(c.get_segments()) for c in ax.collections) == 2
    assert len(ax.get_lines()[0].get_xdata()) == 3


def test_plot_correlations_spans_minus_one_to_one():
    frame = pd.DataFrame(
        {
            "metric": ["bleu", "geval"] * 2,
            "level": ["pooled"] * 2 + ["mean"] * 2,
            "estimate": [0.2, 0.5, 0.1, 0.4],
            "ci_low": [0.0, 0.3, -0.1, 0.2],
            "ci_high": [0.4, 0.7, 0.3, 0.6],
        }
    )
    ax = plot_correlations(frame)
    assert ax.get_xlim() == pytest.approx((-1.05, 1.05))
    assert not has_sim_label(ax)  # no backend column: nothing claimed


def test_plot_heatmap_shows_met_rates(rng):
    frame = pd.DataFrame(
        {
            "criterion_id": ["c1"] * 4 + ["c2"] * 4,
            "answer_model": ["a", "a", "b", "b"] * 2,
            "met": [True, False, True, True, False, False, True, np.nan],
        }
    )
    ax = plot_heatmap(frame, index="criterion_id", columns="answer_model", values="met")
    matrix = np.ma.filled(ax.collections[0].get_array(), np.nan).reshape(2, 2)
    assert matrix.tolist() == [[0.5, 1.0], [0.0, 1.0]]  # NaN verdicts are not counted
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == ["0.00", "0.50", "1.00", "1.00"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c1", "c2"]  # first row on top


def test_plot_heatmap_annotations_stay_readable_on_dark_and_pale_cells():
    # with a reversed map the small rate is pale and the large one nearly black: the
    # annotation must be dark on the first and light on the second (S5's class_rates)
    frame = pd.DataFrame({"row": ["r", "r"], "col": ["low", "high"], "rate": [0.05, 0.95]})
    ax = plot_heatmap(frame, index="row", columns="col", values="rate", vmin=0, vmax=1,
                      cmap="magma_r")
    colour = {t.get_text(): mcolors.to_rgb(t.get_color()) for t in ax.texts}
    assert sum(colour["0.05"]) < 0.5 and sum(colour["0.95"]) > 2.5


def test_plot_scatter_matrix_reports_pearson_r(rng):
    frame = _scores(rng)
    axes = plot_scatter_matrix(frame, unit="conversation", method="method", score="score")
    assert axes.shape == (3, 3)
    means = frame.groupby(["conversation", "method"])["score"].mean().unstack()
    expected = stats.pearsonr(means["holistic"], means["simple"]).statistic
    shown = [t.get_text() for t in axes[1, 0].texts]  # row simple, column holistic
    assert shown == [f"r = {expected:.2f}"]
    with pytest.raises(ValueError, match="at least two"):
        plot_scatter_matrix(
            frame.query("method == 'simple'"), unit="conversation", method="method", score="score"
        )


def test_plot_bars_heights_are_means_and_errors_are_sd():
    frame = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "score": [1.0, 2.0, 6.0, 4.0, 4.0, 4.0]})
    ax = plot_bars(frame, x="model", y="score")
    heights = [patch.get_height() for patch in ax.patches]
    assert heights == pytest.approx([3.0, 4.0])
    lengths = sorted(np.nanmax(line.get_ydata()) - np.nanmin(line.get_ydata())
                     for line in ax.lines)  # one error bar (with its caps) per bar
    assert lengths == pytest.approx(sorted([2 * np.std([1, 2, 6], ddof=1), 0.0]))
    with pytest.raises(ValueError, match="error='ci'"):
        plot_bars(frame, x="model", y="score", error="ci")


def test_plot_cost_cache_counts_hits_calls_and_failures():
    calls = pd.DataFrame(
        {
            "stage": ["first", "again", "batch", "batch", "batch"],
            "ok": [True, True, True, True, False],
            "cached": [False, True, False, True, False],
            "cost_usd": [0.5, 0.5, 0.25, 0.125, np.nan],  # hits keep their original cost
        }
    )
    ax = plot_cost_cache(calls)
    widths = {}
    for container, label in zip(
        ax.containers, ["from cache", "provider calls", "failed"], strict=True
    ):
        widths[label] = [bar.get_width() for bar in container]
    assert widths == {"from cache": [0, 1, 1], "provider calls": [1, 0, 1], "failed": [0, 0, 1]}
    notes = [t.get_text().strip() for t in ax.texts]
    assert notes == [
        "0/1 from cache, 0.5000 USD",
        "1/1 from cache, 0.0000 USD",
        "1/3 from cache, 0.2500 USD",
    ]


# --- Japanese text ---------------------------------------------------------------------


def test_japanese_labels_render_without_missing_glyphs(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)"
        fig = _draw_everything(np.random.default_rng(0))[1]
        fig.axes[0].set_xlabel("回答モデル（必須・加点・減点）")
        save_figure(fig, "demo", "japanese", formats=("png", "svg"))
    path = font_manager.findfont(
        font_manager.FontProperties(family=plots.CJK_FONT), fallback_to_default=False
    )
    assert path.endswith("ipaexg.ttf")
    assert plots.CJK_FONT in matplotlib.rcParams["font.family"]


# --- the simulated-judges mark ---------------------------------------------------------


def test_sim_rows_put_the_label_on_the_figure_and_in_the_file(tmp_path):
    ax = plot_estimates(_estimates(), y="method", hue="reading")
    assert has_sim_label(ax)
    assert [t.get_text() for t in ax.figure.texts] == [SIM_LABEL]
    png, svg = save_figure(ax, "demo", "sim", formats=("png", "svg"))
    assert Image.open(png).text.get("Description") == SIM_LABEL
    text = svg.read_text(encoding="utf-8")
    assert "<!-- simulated judges -->" in text and "<dc:description>simulated judges" in text
    assert len(ax.figure.texts) == 1  # saving again does not stack labels
    save_figure(ax, "demo", "sim")
    assert len(ax.figure.texts) == 1


def test_save_figure_needs_to_know_whether_results_are_simulated():
    ax = plot_estimates(_estimates(backend=None), y="method", hue="reading")
    with pytest.raises(ValueError, match="cannot tell whether"):
        save_figure(ax, "demo", "unknown")
    (png,) = save_figure(ax, "demo", "real", simulated=False)
    assert "Description" not in Image.open(png).text and not has_sim_label(ax)
    save_figure(ax, "demo", "flagged", simulated=_estimates(backend="sim"))
    assert has_sim_label(ax)


def test_save_figure_refuses_to_hide_sim_rows():
    ax = plot_estimates(_estimates(), y="method", hue="reading")
    with pytest.raises(ValueError, match="simulated=False"):
        save_figure(ax, "demo", "x", simulated=False)


def test_mixed_backends_still_say_simulated():
    ax = plot_estimates(_estimates(backend="openai"), y="method", hue="reading")
    assert not has_sim_label(ax)
    frame = _estimates().assign(estimate=lambda d: d["estimate"] + 0.01)
    plot_estimates(frame, y="method", hue="reading", ax=ax)
    assert has_sim_label(ax)


# --- deterministic bytes ---------------------------------------------------------------


@pytest.mark.slow
def test_save_figure_writes_identical_bytes_twice(tmp_path):
    first = []
    for fig in _draw_everything(np.random.default_rng(3)):
        first += save_figure(
            fig, "demo", f"fig{len(first)}", formats=("png", "svg"), directory=tmp_path / "a"
        )
    plt.close("all")
    second = []
    for fig in _draw_everything(np.random.default_rng(3)):
        second += save_figure(
            fig, "demo", f"fig{len(second)}", formats=("png", "svg"), directory=tmp_path / "b"
        )
    assert len(first) == 6
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    for path in first:
        content = path.read_bytes()
        assert b"Software" not in content and b"<dc:date>" not in content


def test_save_figure_twice_from_one_figure_is_stable(tmp_path):
    ax = plot_estimates(_estimates(), y="method", hue="reading")
    paths = save_figure(ax, "demo", "same", formats=("svg", "png"))
    before = [p.read_bytes() for p in paths]
    ax.figure.canvas.draw()  # e.g. shown inline between two saves
    save_figure(ax, "demo", "same", formats=("svg", "png"))
    assert [p.read_bytes() for p in paths] == before
    ids = re.findall(rb'id="[a-z]([0-9a-f]{10})"', before[0])
    assert ids and sorted(int(i, 16) for i in ids) == list(range(len(ids)))  # renumbered


def test_save_figure_goes_to_figures_study_and_checks_names(tmp_path):
    ax = plot_estimates(_estimates(), y="method", hue="reading")
    (path,) = save_figure(ax, "s9_demo", "indices")
    assert path == tmp_path / "out" / "figures" / "s9_demo" / "indices.png"
    with pytest.raises(ValueError, match="not a plain name"):
        save_figure(ax, "s9_demo", "../escape")
    with pytest.raises(ValueError, match="not supported"):
        save_figure(ax, "s9_demo", "x", formats=("jpg",))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
