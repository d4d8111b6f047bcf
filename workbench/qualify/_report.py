"""The qualification report of a judge table: an HTML page with figures and tables, and CSVs.

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

import numpy as np
import pandas as pd

from workbench.qualify._tables import (
    _validated,
    human_ceiling,
    judge_alt_test,
    judge_correlations,
    judge_ppi,
    judge_selective,
    pairwise_bradley_terry,
    pairwise_leaderboard,
)

__all__ = ["qualification_report", "qualification_tables"]

_STUDY = "qualify"


def _try(skipped: list, what: str, fn, *args, **kwargs):
    """Run a section; a ValueError (the table cannot support it) is recorded, not raised."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        skipped.append({"section": what, "reason": str(exc)})
        return None


def _summary(table: pd.DataFrame, kind: str) -> pd.DataFrame:
    judges = sorted(set(table["judge"]) - {""})
    people = sorted(set(table["annotator"]) - {""})
    rows = [("kind", kind), ("items", table["item_id"].nunique()),
            ("rows", len(table)), ("judges", ", ".join(judges)),
            ("annotators", len(people)),
            ("human label column", "label" in table and table["label"].notna().any())]
    if kind == "pairwise":
        rows += [("orders", ", ".join(map(str, sorted(table["order"].unique())))),
                 ("unparsed verdicts", int(table.loc[table["judge"] != "",
                                                     "verdict"].isna().sum()))]
    else:
        rows += [("systems", table["system"].nunique()),
                 ("dimensions", ", ".join(sorted(set(table["dimension"]) - {""})) or "-"),
                 ("failed scores", int(table.loc[table["judge"] != "", "score"].isna().sum()))]
    if "group" in table:
        rows.append(("groups", table["group"].nunique()))
    return pd.DataFrame(rows, columns=["what", "value"]).astype({"value": str})


def _simulated(table: pd.DataFrame) -> bool:
    return "backend" in table and table["backend"].astype(str).eq("sim").any()


def _figure(frames_dir: Path, name: str, draw, simulated: bool) -> Path | None:
    import matplotlib.pyplot as plt

    from workbench.plots import save_figure, use_style

    use_style()
    ax = draw()
    (path,) = save_figure(ax, _STUDY, name, directory=frames_dir, simulated=simulated)
    plt.close(ax.figure)
    return path


def _answers(kind: str, results: dict, width_text: str) -> list[str]:
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


def _weakest(kind: str, board: pd.DataFrame | None, corr: pd.DataFrame | None,
             by: str | None) -> pd.DataFrame:
    rows = []
    if kind == "pairwise" and board is not None and by:
        measure = "accuracy_both" if board["accuracy_both"].notna().any() else "accuracy_order0"
        for judge, part in board[board[by] != "all"].groupby("judge", sort=False):
            worst = part.nsmallest(min(3, len(part)), measure)
            rows += [{"judge": judge, "scope": f"{by} {w}", "measure": measure, "estimate": v,
                      "n": n} for w, v, n in zip(worst[by], worst[measure], worst["n"],
                                                 strict=True)]
    if kind == "pointwise" and corr is not None and "per_group" in set(corr["level"]):
        part = corr[corr["level"] == "per_group"].dropna(subset=["estimate"])
        for judge, g in part.groupby("judge", sort=False):
            worst = g.nsmallest(min(3, len(g)), "estimate")
            rows += [{"judge": judge, "scope": f"{by} {w}", "measure": g["method"].iloc[0],
                      "estimate": v, "n": n} for w, v, n in zip(worst[by], worst["estimate"],
                                                             worst["n"], strict=True)]
    return pd.DataFrame(rows, columns=["judge", "scope", "measure", "estimate", "n"])


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


def qualification_tables(table: pd.DataFrame, *, by: str | None = "group",
                         judge: str | Sequence[str] | None = None, method: str = "kendall",
                         n_boot: int = 1000, n_rep: int = 200, epsilon: float = 0.2,
                         rng: int = 0, sections: Sequence[str] | None = None
                         ) -> dict[str, pd.DataFrame]:
    """Every table of the qualification report, without writing anything.

    ``sections`` limits the work to some of ``agreement`` (leaderboard or
    correlations), ``bradley_terry``, ``selective``, ``ceiling``, ``alt_test``, ``ppi``
    (default: all).

    Returns
    -------
    dict of DataFrame
        ``summary``; pairwise: ``leaderboard``, ``bradley_terry``, ``selective``;
        pointwise: ``correlations``; both: ``ceiling``, ``alt_test``, ``ppi_simulation``,
        ``ppi_needed``, ``weakest``, ``skipped`` (section, reason: what the table could not
        support). A section that could not be computed is absent (and in ``skipped``).
    """
    table, kind = _validated(table)
    by = by if by and by in table.columns else None
    judges = [judge] if isinstance(judge, str) else judge
    names = sorted(set(table["judge"]) - {""}) if judges is None else list(judges)
    skipped: list[dict] = []
    results: dict[str, pd.DataFrame | None] = {"summary": _summary(table, kind)}
    known = {"agreement", "bradley_terry", "selective", "ceiling", "alt_test", "ppi"}
    unknown = set(sections or ()) - known
    if unknown:
        raise ValueError(f"sections: unknown {sorted(unknown)}; known: {sorted(known)}")

    def want(section: str) -> bool:
        return sections is None or section in sections

    if kind == "pairwise":
        if want("agreement"):
            results["leaderboard"] = _try(skipped, "leaderboard", pairwise_leaderboard, table,
                                          by=by, judge=judges)
        if want("bradley_terry"):
            results["bradley_terry"] = _concat([_try(skipped, f"Bradley-Terry ({j})",
                                                     pairwise_bradley_terry, table, judge=j)
                                                for j in names])
        if want("selective"):
            results["selective"] = _concat([_try(skipped, f"selective judging ({j})",
                                                 judge_selective, table, judge=j)
                                            for j in names])
    elif want("agreement"):
        levels = ["pooled"] + (["system"] if table["system"].nunique() >= 3 else [])
        corr = [_try(skipped, "correlations", judge_correlations, table, method=method,
                     level=levels, judge=judges, n_boot=n_boot, rng=rng)]
        if table.groupby("item_id")["system"].nunique().max() >= 3:
            corr.append(_try(skipped, "per-item correlations", judge_correlations, table,
                             method=method, level="per_group_mean", by="item_id", judge=judges,
                             n_boot=n_boot, rng=rng))
        if by:
            corr.append(_try(skipped, f"correlations per {by}", judge_correlations, table,
                             method=method, level="per_group", by=by, judge=judges))
        results["correlations"] = _concat(corr)
    if want("ceiling"):
        results["ceiling"] = _try(skipped, "human ceiling", human_ceiling, table,
                                  n_boot=n_boot, rng=rng)
    if want("alt_test"):
        results["alt_test"] = _try(skipped, "alternative annotator test", judge_alt_test,
                                   table, judge=judges, epsilon=epsilon)
    if want("ppi"):
        ppis = [p for p in (_try(skipped, f"PPI ({j})", judge_ppi, table, judge=j,
                                 n_rep=n_rep, rng=rng) for j in names) if p is not None]
        results["ppi_simulation"] = _concat([p["simulation"] for p in ppis])
        results["ppi_needed"] = _concat([p["needed"] for p in ppis])
    results["weakest"] = _weakest(kind, results.get("leaderboard"), results.get("correlations"),
                                  by)
    results["skipped"] = pd.DataFrame(skipped, columns=["section", "reason"])
    return {k: v for k, v in results.items() if v is not None}


def _concat(frames: list) -> pd.DataFrame | None:
    frames = [f for f in frames if f is not None]
    return pd.concat(frames, ignore_index=True) if frames else None


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
    answers = _answers(kind, results, _ppi_text(results.get("ppi_needed")))
    sim = _simulated(table)
    pictures = _figures(kind, results, out / "figures", by, sim)
    for name, frame in results.items():
        frame.to_csv(out / f"{name}.csv", index=False)
    page = _html(title, kind, answers, results, pictures, sim)
    (out / "index.html").write_text(page, encoding="utf-8")
    return {**results, "answers": answers, "path": out / "index.html"}


def _figures(kind: str, results: dict, folder: Path, by: str | None, sim: bool) -> dict:
    from workbench.plots import plot_bars, plot_correlations, plot_estimates

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
