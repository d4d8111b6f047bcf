"""Figures a reader can read (issue 35.10): the width-ratio chart from 0, one legend
vocabulary for S2 and X2, a weakness map of capped height with every criterion's whole
text, and a "simulated judges" mark that is seen."""

from __future__ import annotations

import logging

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402

from workbench.datasets import load_dataset  # noqa: E402
from workbench.plots import (  # noqa: E402
    add_sim_label,
    plot_correlations,
    plot_weakness_map,
    plot_width_ratio,
    use_style,
    wrap_label,
)
from workbench.plots._figure import SIM_GID  # noqa: E402
from workbench.plots._rows import text_width  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_the_simulated_judges_mark_is_big_and_dark_and_draws_without_a_warning(caplog):
    use_style()
    fig, ax = plt.subplots()
    mark = add_sim_label(ax)
    with caplog.at_level(logging.WARNING, logger="matplotlib.font_manager"):
        fig.canvas.draw()
    assert not caplog.records  # e.g. "findfont: Failed to find font weight bold" on stderr
    assert mark.get_fontsize() >= 9
    red, green, blue = mcolors.to_rgb(mark.get_color())
    assert max(red, green, blue) <= 0.2 and mark.get_alpha() in (None, 1.0)


def _simulation() -> pd.DataFrame:
    rows = []
    for i, scenario in enumerate(["G-Eval judge, jury spread", "order flips, noise 0.1, scores"]):
        for method, ratio in (("active", 0.86 + i / 20), ("oracle rule", 0.8), ("uniform", 1.0)):
            rows.append({"scenario": scenario, "method": method, "width_ratio": ratio,
                         "width_ratio_se": 0.01, "ceiling": 0.7})
    return pd.DataFrame(rows)


def test_width_ratios_are_points_with_intervals_on_an_axis_from_zero():
    ax = plot_width_ratio(_simulation())
    assert ax.get_xlim()[0] <= 0 < 1 < ax.get_xlim()[1]
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 2 and not [p for p in ax.patches if p.get_width() > 0.05]  # no bars
    active = bars[0].lines[0]
    assert active.get_marker() == "o" and list(active.get_xdata()) == [0.86, 0.91]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "active (± 2 s.e.)" in labels and "ceiling (any rule)" in labels


def _legend(frame: pd.DataFrame, level: str) -> tuple[str, list[str]]:
    ax = plot_correlations(frame, metric="metric", level=level)
    legend = ax.get_legend()
    return legend.get_title().get_text(), [t.get_text() for t in legend.get_texts()]


def test_s2_and_x2_name_the_same_levels_alike():
    s2 = pd.DataFrame({"metric": ["geval_adapted/judge-a"] * 2, "level": ["pooled", "per_group_mean"],
                       "estimate": [0.8, 0.4], "ci_low": [0.7, 0.2], "ci_high": [0.9, 0.6]})
    x2 = s2.assign(metric="judge-a").rename(columns={"level": "scope"})
    x2["scope"] = ["pooled", "per model (mean)"]  # X2's own words for the same levels
    assert _legend(s2, "level") == _legend(x2, "scope") == ("level", ["pooled", "per model (mean)"])


@pytest.fixture(scope="module")
def weakness() -> pd.DataFrame:
    """The S1 checklist's 83 items (Japanese, up to 85 characters) x 6 answer models."""
    rubric = load_dataset("s1_medical_ja")["rubric"].query("kind == 'item'")
    rng = np.random.default_rng(0)
    models = [f"sim/answer-{m}" for m in ("strong", "mid", "weak", "tiny", "concise", "verbose")]
    return pd.DataFrame([
        {"criterion": f"{r.item_id} {r.criterion_id} ({r.weight:+g})", "criterion_text": r.text,
         "answer_model": m, "met_rate": rng.random(), "backend": "sim"}
        for r in rubric.itertuples() for m in models])


def test_the_weakness_map_is_capped_in_height_and_shows_every_text_whole(weakness):
    axes = plot_weakness_map(weakness, max_height=12.0, title="Which checklist items\n(+w, -w)")
    fig = axes[0].figure
    assert fig.get_size_inches()[1] <= 12.0 and len(axes) >= 2  # rows spread over panels
    shown = [t.get_text() for ax in axes for t in ax.get_yticklabels()]
    whole = (weakness.drop_duplicates("criterion")["criterion"] + "  "
             + weakness.drop_duplicates("criterion")["criterion_text"]).tolist()
    assert ["".join(s.split()) for s in shown] == ["".join(w.split()) for w in whole]
    assert all(text_width(line) <= 60 + 2 for s in shown for line in s.splitlines())  # + a 、
    fig.canvas.draw()
    page = fig.bbox
    for ax in axes:
        boxes = [t.get_window_extent() for t in ax.get_yticklabels()]
        for box in boxes:  # inside the figure: nothing clipped
            assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1
            assert page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1
        for upper, lower in zip(boxes, boxes[1:], strict=False):  # rows do not overlap
            assert lower.y1 <= upper.y0 + 1
    texts = [t for t in fig.texts if t.get_gid() != SIM_GID]
    for text in [*texts, *(ax.title for ax in axes)]:
        box = text.get_window_extent()
        assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1 and box.y1 <= page.y1 + 1


def test_wrapped_labels_keep_every_character_and_no_line_starts_with_a_comma():
    text = "救急受診が必要な危険な兆候を具体的に挙げている、例：突然の頭痛、手足の麻痺 and more words"
    lines = wrap_label(text, 20)
    assert "".join("".join(lines).split()) == "".join(text.split())
    assert not [line for line in lines if line[0] in "、。）"]
