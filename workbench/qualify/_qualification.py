"""The tables of a judge table's qualification (the report's content, without writing).

:func:`qualification_tables` runs every measure of :mod:`workbench.qualify._tables` that
the table supports and records the others with the reason (``skipped``);
:func:`workbench.report.qualification_report` writes them as an HTML page and CSVs.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from workbench.qualify._tables import (
    _validated,
    human_ceiling,
    judge_alt_test,
    judge_correlations,
)
from workbench.qualify._tables_pairwise import (
    pairwise_bradley_terry,
    pairwise_leaderboard,
    pairwise_position,
)
from workbench.qualify._tables_ppi import judge_ppi, judge_selective
from workbench.qualify._tables_systems import pairwise_systems

__all__ = ["qualification_tables", "summary_of"]


def _try(skipped: list, what: str, fn, *args, **kwargs):
    """Run a section; a ValueError (the table cannot support it) is recorded, not raised."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        skipped.append({"section": what, "reason": str(exc)})
        return None


def summary_of(table: pd.DataFrame, kind: str) -> pd.DataFrame:
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


def _weakest(kind: str, board: pd.DataFrame | None, corr: pd.DataFrame | None,
             by: str | None) -> pd.DataFrame:
    """Per judge (pointwise: and dimension and method), the three groups where it does
    worst; ``level`` names what one estimate is over."""
    rows = []
    if kind == "pairwise" and board is not None and by:
        measure = "accuracy_both" if board["accuracy_both"].notna().any() else "accuracy_order0"
        for judge, part in board[board[by] != "all"].groupby("judge", sort=False):
            worst = part.nsmallest(min(3, len(part)), measure)
            rows += [{"judge": judge, "dimension": "", "scope": f"{by} {w}", "measure": measure,
                      "level": f"items of one {by}", "estimate": v, "n": n}
                     for w, v, n in zip(worst[by], worst[measure], worst["n"], strict=True)]
    if kind == "pointwise" and corr is not None and "per_group" in set(corr["level"]):
        part = corr[corr["level"] == "per_group"].dropna(subset=["estimate"])
        part = part[part[by].notna()] if by in part else part.iloc[0:0]
        for (judge, dim, method), g in part.groupby(["judge", "dimension", "method"],
                                                    sort=False):
            worst = g.nsmallest(min(3, len(g)), "estimate")
            rows += [{"judge": judge, "dimension": dim, "scope": f"{by} {w}", "measure": method,
                      "level": f"units of one {by}", "estimate": v, "n": n}
                     for w, v, n in zip(worst[by], worst["estimate"], worst["n"], strict=True)]
    return pd.DataFrame(rows, columns=["judge", "dimension", "scope", "measure", "level",
                                       "estimate", "n"])


def _ppi_runs(table: pd.DataFrame, kind: str, names: list[str], skipped: list, **kwargs
              ) -> list[dict]:
    """:func:`judge_ppi` per judge (pointwise: and each dimension it scores)."""
    out = []
    for j in names:
        dims = ([None] if kind == "pairwise" else
                list(dict.fromkeys(table.loc[table["judge"] == j, "dimension"])))
        for d in dims:
            what = f"PPI ({j}{'' if d in (None, '') else ', ' + d})"
            res = _try(skipped, what, judge_ppi, table, judge=j, dimension=d, **kwargs)
            if res is not None:
                out.append(res)
    return out


def qualification_tables(table: pd.DataFrame, *, by: str | None = "group",
                         judge: str | Sequence[str] | None = None, method: str = "kendall",
                         n_boot: int = 1000, n_rep: int = 200, epsilon: float = 0.2,
                         rng: int = 0, sections: Sequence[str] | None = None,
                         target_width: float | None = None,
                         target_labels: int | None = None) -> dict[str, pd.DataFrame]:
    """Every table of the qualification report, without writing anything.

    ``sections`` limits the work to some of ``agreement`` (leaderboard or
    correlations), ``bradley_terry``, ``selective``, ``ceiling``, ``alt_test``, ``ppi``
    (default: all). ``target_width`` / ``target_labels``: the PPI target
    (:func:`judge_ppi`); the human ceiling uses ``method`` (``pearson`` when ``all``).

    Returns
    -------
    dict of DataFrame
        ``summary``; pairwise: ``leaderboard``, ``position`` (flip rate and first-position
        preference), ``system_ranking`` and ``head_to_head`` (with ``system_a``/``_b``),
        ``bradley_terry``, ``selective``;
        pointwise: ``correlations``; both: ``ceiling``, ``alt_test``, ``ppi_simulation``,
        ``ppi_needed``, ``weakest``, ``skipped`` (section, reason: what the table could not
        support). A section that could not be computed is absent (and in ``skipped``).
    """
    table, kind = _validated(table)
    by = by if by and by in table.columns else None
    judges = [judge] if isinstance(judge, str) else judge
    names = sorted(set(table["judge"]) - {""}) if judges is None else list(judges)
    skipped: list[dict] = []
    results: dict[str, pd.DataFrame | None] = {"summary": summary_of(table, kind)}
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
        if want("agreement"):
            results["position"] = _try(skipped, "position", pairwise_position, table,
                                       judge=judges)
        if want("agreement") and {"system_a", "system_b"} <= set(table.columns):
            systems = _try(skipped, "system ranking", pairwise_systems, table, judge=judges,
                           n_boot=n_boot, rng=rng)
            if systems is not None:
                results["system_ranking"] = systems["ranking"]
                results["head_to_head"] = systems["head_to_head"]
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
        # where it fails: per group, else per system (each system's items)
        where = by or ("system" if table["system"].nunique() > 1 else None)
        if where:
            corr.append(_try(skipped, f"correlations per {where}", judge_correlations, table,
                             method=method, level="per_group", by=where, judge=judges))
        results["correlations"] = _concat(corr)
    if want("ceiling"):
        measure = None if kind == "pairwise" else ("pearson" if method == "all" else method)
        results["ceiling"] = _try(skipped, "human ceiling", human_ceiling, table,
                                  measure=measure, n_boot=n_boot, rng=rng)
    if want("alt_test"):
        results["alt_test"] = _try(skipped, "alternative annotator test", judge_alt_test,
                                   table, judge=judges, epsilon=epsilon)
    if want("ppi"):
        ppis = _ppi_runs(table, kind, names, skipped, n_rep=n_rep, rng=rng, width=target_width,
                         target_labels=target_labels)
        results["ppi_simulation"] = _concat([p["simulation"] for p in ppis])
        results["ppi_needed"] = _concat([p["needed"] for p in ppis])
    weak_by = by if kind == "pairwise" or by else (
        "system" if table["system"].nunique() > 1 else None)
    results["weakest"] = _weakest(kind, results.get("leaderboard"), results.get("correlations"),
                                  weak_by)
    results["skipped"] = pd.DataFrame(skipped, columns=["section", "reason"])
    return {k: v for k, v in results.items() if v is not None}


def _concat(frames: list) -> pd.DataFrame | None:
    frames = [f for f in frames if f is not None]
    return pd.concat(frames, ignore_index=True) if frames else None
