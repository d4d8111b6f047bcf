"""The qualification report of a judge table: an HTML page with figures and tables, and CSVs.

:func:`qualification_report` writes what :func:`workbench.qualify.qualification_tables`
finds, with figures drawn by :mod:`workbench.plots`.

It answers three questions about a judge-vs-human table (pairwise verdicts or pointwise
scores, :mod:`workbench.datasets._long`):

1. **Can this judge stand in for people here?** The alternative annotator test
   (Calderon et al. 2025) when the table has at least two annotators; beside it each
   judge's agreement with the annotators and the human ceiling (leave one rater out);
   always the leaderboard (pairwise) or the correlations (pointwise) against the human
   reference.
2. **Where does it fail?** The groups (pairwise) or systems and groups (pointwise) where
   each judge does worst.
3. **How many human labels would a PPI estimate need?** The smallest simulated number of
   human labels whose prediction-powered interval is as narrow as the classical interval
   with all of the table's human labels (Angelopoulos et al. 2023).

A measure the table cannot support (one annotator, no systems, no confidence ...) is
listed with the reason in the report's "not computed" table, never silently left out.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from workbench.plots import (
    plot_bars,
    plot_correlations,
    plot_estimates,
    save_figure,
    use_style,
)
from workbench.qualify import qualification_tables
from workbench.qualify._tables import _validated

__all__ = ["qualification_report"]

_STUDY = "qualify"


def _simulated(table: pd.DataFrame) -> bool:
    return "backend" in table and table["backend"].astype(str).eq("sim").any()


def _figure(frames_dir: Path, name: str, draw, simulated: bool) -> Path | None:
    use_style()
    ax = draw()
    (path,) = save_figure(ax, _STUDY, name, directory=frames_dir, simulated=simulated)
    plt.close(ax.figure)
    return path


def _answers(results: dict, width_text: str) -> list[str]:
    """The three answers, one paragraph each (plain text)."""
    out = []
    alt = results.get("alt_test")
    ceiling = results.get("ceiling")
    if alt is not None and len(alt):
        parts = [f"{r.judge}{' (' + r.dimension + ')' if getattr(r, 'dimension', '') else ''}: "
                 f"{'passes' if r.passed else 'does not pass'} (winning rate omega = "
                 f"{r.omega:.2f} over {r.n_raters} annotators, epsilon = {r.epsilon})"
                 for r in alt.itertuples()]
        out.append("Can the judge stand in for people? Alternative annotator test: "
                   + "; ".join(parts) + ".")
    else:
        out.append("Can the judge stand in for people? Not testable against people here: the "
                   "alternative annotator test needs at least two annotators per item (see "
                   "'not computed'); the agreement with the human reference below is all "
                   "this table supports.")
    if ceiling is not None and len(ceiling):
        ceil = ceiling[ceiling["kind"] == "ceiling"]["estimate"].mean()
        best = ceiling[ceiling["kind"] == "judge"].groupby("who")["estimate"].mean()
        if len(best):
            out.append(f"Human ceiling ({ceiling['measure'].iloc[0]}): {ceil:.3f}; judges: "
                       + ", ".join(f"{w} {v:.3f}" for w, v in best.items()) + ".")
    fails = results.get("weakest")
    if fails is not None and len(fails):
        out.append("Where does it fail? Weakest: " + "; ".join(
            f"{r.judge}: {r.scope} ({r.measure} {r.estimate:.3f}, n = {r.n})"
            for r in fails.itertuples()) + ".")
    out.append("How many human labels would a PPI estimate need? " + width_text)
    return out


def _ppi_text(needed: pd.DataFrame | None) -> str:
    if needed is None or needed.empty:
        return "not computed (see 'not computed')."
    parts = []
    for judge, g in needed.groupby("judge", sort=False):
        ppi = g.loc[g["method"] == "ppi", "n_labeled"].iloc[0]
        n_pilot = int(g["n_pilot"].iloc[0])
        width = g["width"].iloc[0]
        if np.isfinite(ppi):
            parts.append(f"{judge}: about {int(ppi)} human labels (and the judge on the rest) "
                         f"give a 95% interval as narrow ({width:.3f}) as all {n_pilot} human "
                         f"labels alone: the judge saves {100 * (1 - ppi / n_pilot):.0f}% of "
                         "the labelling")
        else:
            parts.append(f"{judge}: no simulated number of labels below {n_pilot} reaches the "
                         f"width of all {n_pilot} human labels alone ({width:.3f}): the judge "
                         "does not save labelling here")
    return ("; ".join(parts) + " (simulated by resampling this table's labelled units, "
            "Angelopoulos et al. 2023).")


def qualification_report(table: pd.DataFrame, out_dir: str | Path, *,
                         by: str | None = "group", judge: str | Sequence[str] | None = None,
                         method: str = "kendall", n_boot: int = 1000, n_rep: int = 200,
                         epsilon: float = 0.2, rng: int = 0,
                         title: str = "Judge qualification report") -> dict[str, Any]:
    """Write the qualification report of a judge table: ``index.html``, CSVs and figures.

    Parameters
    ----------
    table : DataFrame
        A pairwise or pointwise table (:func:`workbench.datasets.load_pairwise`,
        :func:`~workbench.datasets.load_pointwise`).
    out_dir : path
        Folder written: ``index.html`` (figures embedded), one CSV per table,
        ``figures/*.png``.
    by : str, optional
        Group column (default ``"group"``, used when the table has it).
    judge : str or list, optional
        Judges to report (default all).
    method : str
        Correlation for pointwise tables.
    n_boot, n_rep, epsilon, rng
        Bootstrap resamples (ceiling, correlations), PPI simulation repetitions, the
        alternative annotator test's allowance, and the seed.

    Returns
    -------
    dict
        The tables written (:func:`qualification_tables`), ``answers`` (the three answers
        as text) and ``path`` (``index.html``).
    """
    table, kind = _validated(table)
    results = qualification_tables(table, by=by, judge=judge, method=method, n_boot=n_boot,
                                   n_rep=n_rep, epsilon=epsilon, rng=rng)
    by = by if by and by in table.columns else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    answers = _answers(results, _ppi_text(results.get("ppi_needed")))
    sim = _simulated(table)
    pictures = _figures(kind, results, out / "figures", by, sim)
    for name, frame in results.items():
        frame.to_csv(out / f"{name}.csv", index=False)
    page = _html(title, kind, answers, results, pictures, sim)
    (out / "index.html").write_text(page, encoding="utf-8")
    return {**results, "answers": answers, "path": out / "index.html"}


def _figures(kind: str, results: dict, folder: Path, by: str | None, sim: bool) -> dict:
    pictures = {}
    board = results.get("leaderboard")
    if board is not None and len(board):
        y = by if by else "judge"
        measures = [m for m in ("accuracy_order0", "accuracy_order1", "accuracy_both",
                                "agreement") if board[m].notna().any()]
        if board["judge"].nunique() == 1:  # one judge: its measures side by side
            long = board.melt(id_vars=[y], value_vars=measures, var_name="measure",
                              value_name="estimate")
            pictures["leaderboard"] = _figure(
                folder, "leaderboard",
                lambda: plot_estimates(long, y=y, ci_low=None, ci_high=None, hue="measure",
                                       title=f"{board['judge'].iloc[0]}: per {y} and overall",
                                       xlabel="share of items"), sim)
        else:
            for measure in measures:
                pictures[f"leaderboard_{measure}"] = _figure(
                    folder, f"leaderboard_{measure}",
                    lambda m=measure: plot_estimates(board, y=y, estimate=m, ci_low=None,
                                                     ci_high=None, hue="judge",
                                                     title=m.replace("_", " "), xlabel=m), sim)
    corr = results.get("correlations")
    if corr is not None and len(corr):
        top = corr[corr["level"] != "per_group"].drop_duplicates(["judge", "level"])
        if len(top):
            pictures["correlations"] = _figure(
                folder, "correlations",
                lambda: plot_correlations(top, metric="judge", level="level",
                                          title="correlation with the human reference",
                                          xlabel=f"{top['method'].iloc[0]} correlation"), sim)
    ceiling = results.get("ceiling")
    if ceiling is not None and len(ceiling):
        shown = ceiling.drop_duplicates("who")
        pictures["ceiling"] = _figure(
            folder, "ceiling",
            lambda: plot_estimates(shown, y="who", title="judges beside the human ceiling",
                                   xlabel=shown["measure"].iloc[0]), sim)
    ppi = results.get("ppi_simulation")
    if ppi is not None and len(ppi):
        first = ppi[ppi["judge"] == ppi["judge"].iloc[0]]
        pictures["ppi"] = _figure(
            folder, "ppi",
            lambda: plot_bars(first.assign(n_labeled=first["n_labeled"].astype(str)),
                              x="n_labeled", y="width", hue="method", error=None,
                              title=f"CI width by human labels ({first['judge'].iloc[0]})",
                              ylabel="mean 95% CI width"), sim)
    return pictures


def _html(title: str, kind: str, answers: list[str], tables: dict, pictures: dict,
          sim: bool) -> str:
    esc = html.escape
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;}"
             "table{border-collapse:collapse;font-size:0.85em;margin-bottom:1.5em}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
             "img{max-width:100%}</style></head><body>",
             f"<h1>{esc(title)}</h1>",
             f"<p>A {esc(kind)} table. CSV files beside this page hold every table.</p>"]
    if sim:
        parts.append("<p><b>simulated judges</b>: rows of this table come from the simulated "
                     "backend; they show the pipeline works, not how real judges behave.</p>")
    parts.append("<h2>Answers</h2><ol>" + "".join(f"<li>{esc(a)}</li>" for a in answers)
                 + "</ol>")
    sections = [("summary", "The table"), ("leaderboard", "Leaderboard (per group and overall)"),
                ("correlations", "Correlations with the human reference"),
                ("ceiling", "Judges beside the human ceiling"),
                ("alt_test", "Alternative annotator test"),
                ("weakest", "Where the judges do worst"),
                ("ppi_needed", "Human labels a PPI estimate needs"),
                ("ppi_simulation", "PPI simulation"), ("bradley_terry", "Bradley-Terry"),
                ("selective", "Selective judging"), ("skipped", "Not computed")]
    figure_of = {"leaderboard": sorted(k for k in pictures if k.startswith("leaderboard")),
                 "correlations": ["correlations"], "ceiling": ["ceiling"],
                 "ppi_simulation": ["ppi"]}
    for name, heading in sections:
        frame = tables.get(name)
        if frame is None:
            continue
        parts.append(f"<h2>{esc(heading)}</h2>")
        for key in figure_of.get(name, []):
            path = pictures.get(key)
            if path is not None:
                data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
                parts.append(f"<p><img alt='{esc(key)}' src='data:image/png;base64,{data}'></p>")
        if frame.empty:
            parts.append("<p>(nothing)</p>")
        else:
            parts.append(frame.to_html(index=False, float_format=lambda v: f"{v:.4g}",
                                       na_rep="", escape=True, border=0))
    parts.append("</body></html>")
    return "\n".join(parts)
