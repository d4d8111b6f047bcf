"""The printed answers of a qualification (:func:`workbench.report.qualification_report`):
plain text, each naming the dimension, the method and the level (item, item x system,
system) it is about, or saying why the table cannot answer it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["qualification_answers"]


def qualification_answers(results: dict, table: pd.DataFrame, kind: str,
                          by: str | None = None) -> list[str]:
    """The answers, one paragraph each, from :func:`workbench.qualify.qualification_tables`'
    ``results`` of the validated ``table`` of ``kind``."""
    level = _level(table, kind)
    width_text = _ppi_text(results.get("ppi_needed"), _skip_reason(results, "PPI"), level)
    return _answers(results, kind, level, width_text, by)


def _level(table: pd.DataFrame, kind: str) -> str:
    """What one unit of the table is: the level of its item-level answers."""
    if kind == "pairwise":
        return "item level"
    return ("item x system level" if table["system"].nunique() > 1 else "item level")


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
            if parts and not (g["level"] == "system").any():
                parts.append(f"no system level: {_n_systems(results)} system(s), it needs "
                             "at least 3")
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


def _n_systems(results: dict) -> str:
    summary = results.get("summary")
    if summary is None:
        return "too few"
    found = summary.loc[summary["what"] == "systems", "value"]
    return str(found.iloc[0]) if len(found) else "too few"


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
