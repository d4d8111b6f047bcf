"""Figures a reader can read without the code (issue 25, point 3): the committed
notebooks' plotting cells, run on small frames, give labelled axes with units and
labelled reference points. Each test runs the cell's own source (with ``save_figure``
caught), so a change to the notebook is what is checked."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from workbench.plots import plot_estimates, plot_heatmap, plot_weakness_map  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _cell(notebook: str, figure: str) -> str:
    """The code cell that saves ``figure``."""
    cells = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]
    (source,) = [src for src in ("".join(c["source"]) for c in cells if c["cell_type"] == "code")
                 if "save_figure(" in src and f'"{figure}"' in src]
    return source


def _run(source: str, **names) -> object:
    saved = {}

    def save_figure(obj, study, name, **kwargs):
        saved[name] = obj
        return {}

    namespace = dict(plt=plt, plot_estimates=plot_estimates, plot_heatmap=plot_heatmap,
                     plot_weakness_map=plot_weakness_map, save_figure=save_figure, pd=pd, np=np, **names)
    exec(compile(source, "<cell>", "exec"), namespace)  # noqa: S102 - the committed cell
    (figure,) = saved.values()
    return figure


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_s4_power_axes_say_what_the_numbers_are():
    power = pd.DataFrame([{"effect": e, "n_items": n, "estimate": min(1.0, e * n / 60)}
                          for e in (1.0, 2.0, 3.0) for n in (5, 20, 80)])
    ax = _run(_cell("s4_report_rubric.ipynb", "power"), power=power, scores=pd.DataFrame())
    assert "points" in ax.get_ylabel() and "6–30" in ax.get_ylabel()
    assert ax.get_xlabel() == "reports per version"
    assert "difference" in ax.get_title()


def test_x3_bradley_terry_labels_the_reference_and_splits_strengths_from_bias_terms():
    rows = []
    for judge in ("sim/judge-a", "sim/judge-d"):
        rows += [{"judge_model": judge, "term": "strength", "a": "mid", "estimate": 0.0,
                  "ci_low": np.nan, "ci_high": np.nan},
                 {"judge_model": judge, "term": "strength", "a": "strong", "estimate": 1.0,
                  "ci_low": 0.5, "ci_high": 1.5},
                 {"judge_model": judge, "term": "position", "a": None, "estimate": 0.3,
                  "ci_low": 0.1, "ci_high": 0.5},
                 {"judge_model": judge, "term": "length_diff", "a": None, "estimate": -0.2,
                  "ci_low": -0.6, "ci_high": 0.2}]
    results = {"lc_win_rate": pd.DataFrame({"x": [1.0]})}
    fig = _run(_cell("x3_judge_qualification.ipynb", "bradley_terry"), bt=pd.DataFrame(rows),
               results=results)
    strengths, biases = fig.axes[:2]
    left = [t.get_text() for t in strengths.get_yticklabels()]
    right = [t.get_text() for t in biases.get_yticklabels()]
    assert "mid (reference, fixed at 0)" in left and "strong" in left
    assert set(right) == {"position", "length_diff"}  # bias terms on their own axis
    assert "log-odds" in strengths.get_xlabel() and "log-odds" in biases.get_xlabel()


def test_s1_weakness_map_rows_carry_the_whole_criterion_text_in_a_capped_height():
    long = "救急受診が必要な危険な兆候を具体的に挙げている 例：突然の今までで最悪の頭痛、手足の麻痺やしびれ"
    weak = pd.DataFrame([{"label": f"s1-01 c{i:02d} (+5)  {long[:20]}…", "answer_model": m,
                          "met_rate": 0.5, "criterion": f"s1-01 c{i:02d} (+5)",
                          "criterion_text": f"{long} {i}"}
                         for i in range(1, 84) for m in ("a", "b")])  # S1's 83 items
    config = type("C", (), {"answer_models": ["a", "b"]})()
    axes = np.atleast_1d(_run(_cell("s1_judge_methods.ipynb", "weakness_map"), weak_first=weak,
                              config=config, first_t=0.0))
    assert axes[0].figure.get_size_inches()[1] <= 12.0
    labels = ["".join(t.get_text().split()) for ax in axes for t in ax.get_yticklabels()]
    assert len(labels) == 83 and all("".join(long.split()) in label for label in labels)
    assert axes[0].get_xlabel() == "answer model" and "checklist item" in axes[0].get_ylabel()


def test_heatmaps_name_their_axes_and_their_scale():
    from workbench.studies import s4_report_rubric as s4

    trend = pd.DataFrame([{"answer_model": m, "category": c, "mean": 3.0}
                          for m in ("a", "b") for c in (1, 2)])
    ax = _run(_cell("s3_hivmedqa.ipynb", "category_trend"), trend=trend, scores=pd.DataFrame())
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("question category", "answer model")
    assert "(0–5)" in ax.figure.axes[-1].get_ylabel()  # the colour bar: MedGPT's scale
    scores = pd.DataFrame([{"judge_model": j, "mitigation": m, "dimension": d, "score": 3.0}
                           for j in ("sim/judge-a",) for m in (False, True) for d in ("x", "y")])
    ax = _run(_cell("s4_report_rubric.ipynb", "dimension_means"), results={"scores": scores}, s4=s4)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("judge | prompt", "rubric dimension")
    assert "(1–5)" in ax.figure.axes[-1].get_ylabel()
