"""The qualification report of a judge table: an HTML page with figures and tables, and CSVs.

:func:`qualification_report` writes what :func:`workbench.qualify.qualification_tables`
finds, with figures drawn by :mod:`workbench.plots`.

It answers these questions about a judge-vs-human table (pairwise verdicts or pointwise
scores, :mod:`workbench.datasets._long`), each answer naming the dimension, the method
and the level (item, item x system, system) it is about:

1. **Can this judge stand in for people here?** The alternative annotator test
   (Calderon et al. 2025) when the table has at least three annotators; beside it each
   judge's agreement with the annotators and the human ceiling (leave one rater out,
   per dimension, with the report's correlation method); the correlations (pointwise,
   item and system level) or the accuracy and position bias (pairwise).
2. **Where does it fail?** The groups (pairwise) or systems and groups (pointwise) where
   each judge does worst, per dimension and method.
3. **How many human labels would a PPI estimate need?** The smallest simulated number of
   human labels whose prediction-powered interval reaches a stated target width (or
   the width of a stated number of human labels alone; Angelopoulos et al. 2023).

A measure the table cannot support (two annotators for the alternative annotator test,
no systems, no confidence ...) is answered with the reason, and listed in the report's
"not computed" table, never silently left out.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from workbench.plots import (
    plot_bars,
    plot_correlations,
    plot_estimates,
    save_figure,
    use_style,
)
from workbench.qualify import qualification_tables
from workbench.qualify._answers import qualification_answers
from workbench.qualify._tables import _validated

__all__ = ["qualification_report"]

_STUDY = "qualify"


def _simulated(table: pd.DataFrame) -> bool:
    return "backend" in table and table["backend"].astype(str).eq("sim").any()


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells draw as typed: ``$`` escaped, so a name such as
    ``$\\undefinedmacro{x}$`` is text in a figure, never mathtext."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(lambda v: v.replace("$", r"\$")
                                          if isinstance(v, str) else v)
    return out


def _figure(frames_dir: Path, name: str, draw, simulated: bool) -> Path | None:
    use_style()
    ax = draw()
    (path,) = save_figure(ax, _STUDY, name, directory=frames_dir, simulated=simulated)
    plt.close(ax.figure)
    return path


def qualification_report(table: pd.DataFrame, out_dir: str | Path, *,
                         by: str | None = "group", judge: str | Sequence[str] | None = None,
                         method: str = "kendall", n_boot: int = 1000, n_rep: int = 200,
                         epsilon: float = 0.2, rng: int = 0,
                         title: str = "Judge qualification report",
                         target_width: float | None = None,
                         target_labels: int | None = None) -> dict[str, Any]:
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
    target_width, target_labels
        The PPI answer's target: a 95% interval width, or the width that many human
        labels alone give (default: half the labelled units).

    Returns
    -------
    dict
        The tables written (:func:`qualification_tables`), ``answers`` (the answers as
        text, :func:`~workbench.qualify._answers.qualification_answers`) and ``path``
        (``index.html``).
    """
    table, kind = _validated(table)
    results = qualification_tables(table, by=by, judge=judge, method=method, n_boot=n_boot,
                                   n_rep=n_rep, epsilon=epsilon, rng=rng,
                                   target_width=target_width, target_labels=target_labels)
    by = by if by and by in table.columns else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    answers = qualification_answers(results, table, kind, by)
    sim = _simulated(table)
    pictures = _figures(kind, {k: _as_text(v) for k, v in results.items()}, out / "figures",
                        by, sim)
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
        # one method (the first), one row per judge and dimension; no interval drawn where
        # there is none (a handful of systems)
        top = corr[(corr["level"] != "per_group") & (corr["method"] == corr["method"].iloc[0])]
        top = _named(top.drop_duplicates(["judge", "dimension", "level"]), "judge")
        if len(top):
            pictures["correlations"] = _figure(
                folder, "correlations",
                lambda: plot_correlations(top, metric="who", level="level",
                                          title="correlation with the human reference",
                                          xlabel=f"{top['method'].iloc[0]} correlation"), sim)
    ceiling = results.get("ceiling")
    if ceiling is not None and len(ceiling):
        shown = _named(ceiling.drop_duplicates(["who", "dimension"] if "dimension" in ceiling
                                               else ["who"]), "who")
        pictures["ceiling"] = _figure(
            folder, "ceiling",
            lambda: plot_estimates(shown, y="who", title="judges beside the human ceiling",
                                   xlabel=shown["measure"].iloc[0]), sim)
    ppi = results.get("ppi_simulation")
    if ppi is not None and len(ppi):
        first = _named(ppi, "judge")
        first = first[first["who"] == first["who"].iloc[0]]
        pictures["ppi"] = _figure(
            folder, "ppi",
            lambda: plot_bars(first.assign(n_labeled=first["n_labeled"].astype(str)),
                              x="n_labeled", y="width", hue="method", error=None,
                              title=f"CI width by human labels ({first['who'].iloc[0]})",
                              ylabel="mean 95% CI width"), sim)
    return pictures


def _named(frame: pd.DataFrame, who: str) -> pd.DataFrame:
    """``who`` as shown in a figure: the name, with its dimension when the table has
    several (``m1 (coherence)``)."""
    if "dimension" not in frame or frame["dimension"].nunique() < 2:
        return frame.assign(who=frame[who])
    return frame.assign(who=[f"{w} ({d})" if d else str(w)
                             for w, d in zip(frame[who], frame["dimension"], strict=True)])


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
                ("position", "Position: flips and first-position preference"),
                ("system_ranking", "System ranking against people's"),
                ("head_to_head", "Head-to-head points per system pair"),
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
