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


def _level(table: pd.DataFrame, kind: str) -> str:
    """What one unit of the table is: the level of its item-level answers."""
    if kind == "pairwise":
        return "item level"
    return ("item x system level" if table["system"].nunique() > 1 else "item level")


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


def _skip_reason(results: dict, prefix: str) -> str | None:
    skipped = results.get("skipped")
    if skipped is None:
        return None
    hits = skipped[skipped["section"].str.startswith(prefix)]
    return None if hits.empty else str(hits["reason"].iloc[0])


def _on(dim: str) -> str:
    return f" on {dim!r}" if dim else ""


def _ci(low: float, high: float) -> str:
    return f" [{low:.3f}, {high:.3f}]" if np.isfinite(low) and np.isfinite(high) else ""


def _answers(results: dict, kind: str, level: str, width_text: str, by: str | None = None
             ) -> list[str]:
    """The answers, one paragraph each (plain text); each names the dimension, the
    method and the level it is about, or says why the table cannot answer."""
    out = []
    alt = results.get("alt_test")
    if alt is not None and len(alt):
        parts = [f"{r.judge}{_on(getattr(r, 'dimension', ''))}: "
                 f"{'passes' if r.passed else 'does not pass'} (winning rate omega = "
                 f"{r.omega:.2f} over {r.n_raters} annotators, epsilon = {r.epsilon}, "
                 f"{level})" for r in alt.itertuples()]
        out.append("Can the judge stand in for people? Alternative annotator test: "
                   + "; ".join(parts) + ".")
    else:
        why = (_skip_reason(results, "alternative annotator test")
               or "the alternative annotator test was not run")
        out.append(f"Can the judge stand in for people? Not answered: {why}.")
    out += _ceiling_text(results, level)
    out += _agreement_text(results, kind, level, by)
    fails = results.get("weakest")
    if fails is not None and len(fails):
        parts = []
        for (judge, dim, measure), g in fails.groupby(["judge", "dimension", "measure"],
                                                       sort=False):
            parts.append(f"{judge}{_on(dim)} ({measure}, {g['level'].iloc[0]}): " + ", ".join(
                f"{r.scope} {r.estimate:.3f} (n = {r.n})" for r in g.itertuples()))
        out.append("Where does it fail? Weakest: " + "; ".join(parts) + ".")
    out.append("How many human labels would a PPI estimate need? " + width_text)
    return out


def _ceiling_text(results: dict, level: str) -> list[str]:
    ceiling = results.get("ceiling")
    if ceiling is None or not len(ceiling):
        why = _skip_reason(results, "human ceiling")
        return [f"Human ceiling: not answered: {why}."] if why else []
    if "dimension" not in ceiling:
        ceiling = ceiling.assign(dimension="")
    out = []
    for dim, g in ceiling.groupby("dimension", sort=False):
        ceil = g[g["kind"] == "ceiling"].iloc[0]
        judges = g[(g["kind"] == "judge") & g["estimate"].notna()]
        names = ", ".join(f"{r.who} {r.estimate:.3f}{_ci(r.ci_low, r.ci_high)}"
                          for r in judges.itertuples()) or "none scores it"
        out.append(f"Human ceiling{_on(dim)} ({ceil['measure']}, {level}, each of "
                   f"{int(ceil['n_raters'])} annotators against the others): people "
                   f"{ceil['estimate']:.3f}{_ci(ceil['ci_low'], ceil['ci_high'])}; judges "
                   f"against the same annotators: {names}.")
    return out


def _agreement_text(results: dict, kind: str, level: str, by: str | None) -> list[str]:
    out = []
    corr = results.get("correlations")
    if corr is not None and len(corr):
        for (judge, dim, method), g in corr.groupby(["judge", "dimension", "method"],
                                                     sort=False):
            parts = []
            for r in g[g["level"] == "pooled"].itertuples():
                parts.append(f"{level} {r.estimate:.3f}{_ci(r.ci_low, r.ci_high)} "
                             f"(n = {r.n})")
            for r in g[g["level"] == "system"].itertuples():
                text = (f"system level {r.estimate:.3f} over {r.n} systems, "
                        f"{r.test} p = {r.p_value:.3f}")
                text += (_ci(r.ci_low, r.ci_high) if np.isfinite(r.ci_low)
                         else f", no interval: {r.ci_method.removeprefix('none: ')}")
                parts.append(text)
            if parts:
                out.append(f"Correlation with people: {judge}{_on(dim)} ({method}): "
                           + "; ".join(parts) + ".")
    board = results.get("leaderboard")
    if board is not None and len(board):
        top = board[board[by] == "all"] if by and by in board else board
        for r in top.drop_duplicates("judge").itertuples():
            both = r.accuracy_both
            text = (f"correct in both orders {both:.3f}" if np.isfinite(both)
                    else f"accuracy in order 0 {r.accuracy_order0:.3f}")
            out.append(f"Agreement with people: {r.judge} ({level}): {text} (n = {r.n} "
                       "items).")
    ranking = results.get("system_ranking")
    if ranking is not None and len(ranking):
        for r in ranking.itertuples():
            if np.isfinite(r.ci_low) and r.ci_low < r.ci_high:
                spread = f", items resampled [{r.ci_low:.3f}, {r.ci_high:.3f}]"
            elif np.isfinite(r.ci_low):
                spread = f", every item resample gives {r.ci_low:.3f} for these systems"
            else:
                spread = ""
            winner = (f"names the same winner as people ({r.people_winner})" if r.same_winner
                      else f"names {r.judge_winner} the winner, people {r.people_winner}")
            share = (f", in {r.same_winner_share:.0%} of item resamples"
                     if np.isfinite(r.same_winner_share) else "")
            out.append(f"System ranking: {r.judge} (kendall, system level over "
                       f"{r.n_systems} systems' win rates, {r.n_items} items): tau = "
                       f"{r.tau:.3f}, {r.test} p = {r.p_value:.3f}{spread}; it {winner}"
                       f"{share}.")
    elif kind == "pairwise" and _skip_reason(results, "system ranking"):
        out.append(f"System ranking: not answered: {_skip_reason(results, 'system ranking')}.")
    position = results.get("position")
    if position is not None and len(position):
        for judge, g in position.groupby("judge", sort=False):
            flip, first = (g[g["measure"] == m].iloc[0] for m in ("flip_rate", "first_position"))
            out.append(f"Position: {judge} changes its verdict when the order is swapped on "
                       f"{flip['estimate']:.3f}{_ci(flip['ci_low'], flip['ci_high'])} of "
                       f"{int(flip['n'])} items (Wilson 95%); it picks the response shown "
                       f"first in {first['estimate']:.3f}{_ci(first['ci_low'], first['ci_high'])}"
                       f" of {int(first['n'])} decisive verdicts (0.5 = no preference; "
                       "Wilson 95% on half the verdicts, as each item gives two).")
    elif kind == "pairwise":
        why = _skip_reason(results, "position")
        if why:
            out.append(f"Position: not answered: {why}.")
    return out


def _ppi_text(needed: pd.DataFrame | None, why: str | None = None,
              level: str = "item level") -> str:
    if needed is None or needed.empty:
        return f"not answered: {why}." if why else "not computed (see 'not computed')."
    parts = []
    keys = ["judge", "dimension"] if "dimension" in needed else ["judge"]
    for key, g in needed.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        who = key[0] + (_on(key[1]) if len(key) > 1 else "")
        ppi = g.loc[g["method"] == "ppi", "n_labeled"].iloc[0]
        n_pilot, target = int(g["n_pilot"].iloc[0]), g["target"].iloc[0]
        width, m = g["width"].iloc[0], g["target_labels"].iloc[0]
        alone = (f"; human labels alone need about {int(m)}"
                 if pd.notna(m) and target.startswith("a stated width") else "")
        if np.isfinite(ppi):
            parts.append(f"{who}: target {target} (95% interval width {width:.3f}){alone}; "
                         f"with the judge on the rest of the {n_pilot} units, about {int(ppi)} "
                         "reach it")
        else:
            parts.append(f"{who}: target {target} (95% interval width {width:.3f}){alone}; "
                         f"no simulated number of labels below {n_pilot} reaches it with the "
                         "judge")
    what = "A's win rate" if level == "item level" and "dimension" not in needed else (
        f"the mean human score, {level}")
    return ("; ".join(parts) + f" (the estimate: {what}; simulated by resampling this "
            "table's labelled units, Angelopoulos et al. 2023; set the target with "
            "target_width= or target_labels=).")


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
        The tables written (:func:`qualification_tables`), ``answers`` (the three answers
        as text) and ``path`` (``index.html``).
    """
    table, kind = _validated(table)
    results = qualification_tables(table, by=by, judge=judge, method=method, n_boot=n_boot,
                                   n_rep=n_rep, epsilon=epsilon, rng=rng,
                                   target_width=target_width, target_labels=target_labels)
    by = by if by and by in table.columns else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    level = _level(table, kind)
    answers = _answers(results, kind, level, _ppi_text(results.get("ppi_needed"),
                                                       _skip_reason(results, "PPI"), level), by)
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
