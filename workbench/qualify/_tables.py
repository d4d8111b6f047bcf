"""Every judge-vs-human measure from one long table (:mod:`workbench.datasets._long`).

A pairwise table gives :func:`~workbench.qualify._tables_pairwise.pairwise_leaderboard`
(accuracy in each order, in both orders, consistency, kappa; per group and overall) and
:func:`~workbench.qualify._tables_pairwise.pairwise_bradley_terry`; a pointwise table gives :func:`judge_correlations` (pooled, per group, mean of groups and
system level). Both give :func:`human_ceiling`, :func:`judge_alt_test`,
:func:`~workbench.qualify._tables_ppi.judge_ppi` and (with ``confidence``)
:func:`~workbench.qualify._tables_ppi.judge_selective`. Each says plainly
when the table cannot support it (one rater, no labels, one order only).

The human reference of a unit (pairwise: an item; pointwise: an item x system x
dimension) is its ``label`` when the table has one, else the annotators' majority label
(pairwise: a strict majority, else none) or mean score (pointwise).

References
----------
The pairwise measures' references are in :mod:`~workbench.qualify._tables_pairwise`.
Chhun, C., Suchanek, F. M. & Clavel, C. (2024). Do language models enjoy their own
stories? *TACL* 12 (story-level and system-level correlations).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from workbench.datasets._long import validate_pairwise, validate_pointwise
from workbench.qualify._agreement import alt_test, leave_one_out_agreement
from workbench.qualify._system_level import system_level
from workbench.stats import correlate
from workbench.stats._columns import tidy

__all__ = ["human_ceiling", "human_reference", "judge_alt_test", "judge_correlations",
           "spread_over_dimensions", "table_kind"]

_UNIT = {"pairwise": ["item_id"], "pointwise": ["item_id", "system", "dimension"]}
_WIN = {"A": 1.0, "tie": 0.5, "B": 0.0}


def table_kind(table: pd.DataFrame) -> str:
    """``"pairwise"`` or ``"pointwise"`` for a validated table (a table not yet validated:
    pairwise when it has a ``verdict`` column)."""
    kind = table.attrs.get("workbench_table")
    if kind:
        return kind
    return "pairwise" if "verdict" in table.columns else "pointwise"


def _validated(table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    kind = table_kind(table)
    if kind == "pairwise":
        return validate_pairwise(table), kind
    return spread_over_dimensions(validate_pointwise(table)), kind


def spread_over_dimensions(table: pd.DataFrame) -> pd.DataFrame:
    """A pointwise table whose people score dimensions (coherence, fluency ...) and whose
    judge rows name none (``dimension`` ``""``: a metric such as BLEU): each such judge row
    is compared with every human dimension, as if given once per dimension; other tables
    are returned as they are."""
    people = table[(table["annotator"] != "")
                   | (table["label"].notna() if "label" in table else False)]
    dims = list(dict.fromkeys(people["dimension"]))
    blank = (table["judge"] != "") & (table["dimension"] == "")
    if not blank.any() or "" in dims or not dims:
        return table
    spread = [table[blank].assign(dimension=d) for d in dims]
    out = pd.concat([table[~blank], *spread], ignore_index=True)
    out.attrs.update(table.attrs)
    return out


def _judges(table: pd.DataFrame, judge: str | Sequence[str] | None) -> list[str]:
    names = list(dict.fromkeys(table.loc[table["judge"] != "", "judge"]))
    if judge is None:
        if not names:
            raise ValueError("the table has no judge rows (only annotators)")
        return names
    wanted = [judge] if isinstance(judge, str) else list(judge)
    unknown = [j for j in wanted if j not in names]
    if unknown:
        raise ValueError(f"judge {unknown[0]!r} is not in the table (judges: {names})")
    return wanted


def _majority(labels: pd.Series):
    counts = labels.dropna().value_counts()
    if counts.empty or (len(counts) > 1 and counts.iloc[0] == counts.iloc[1]):
        return None
    return counts.index[0]


def human_reference(table: pd.DataFrame) -> pd.DataFrame:
    """The human reference per unit: ``label`` if given, else the annotators' majority
    (pairwise) or mean (pointwise); columns: the unit's, ``human``, ``n_raters``.

    Raises
    ------
    ValueError
        When the table has neither a ``label`` column with a value nor annotator rows.
    """
    table, kind = _validated(table)
    unit = _UNIT[kind]
    value = "verdict" if kind == "pairwise" else "score"
    people = table[table["annotator"] != ""]
    if "label" in table and table["label"].notna().any():
        ref = table.dropna(subset=["label"]).groupby(unit, sort=False)["label"].first()
        out = ref.rename("human").reset_index()
        counts = people.groupby(unit)["annotator"].nunique()
        out["n_raters"] = out.set_index(unit).index.map(counts).fillna(0).astype(int).to_numpy()
        return out
    if people.empty:
        raise ValueError("no human labels: the table has no label column and no annotator rows "
                         "(map one with columns={'label': ...} or add annotator rows)")
    if kind == "pairwise":
        people = people[people["order"] == 0]
        agg = people.groupby(unit, sort=False)[value].agg(_majority)
    else:
        agg = people.groupby(unit, sort=False)[value].mean()
    out = agg.rename("human").reset_index()
    out["n_raters"] = people.groupby(unit, sort=False)["annotator"].nunique().to_numpy()
    return out


# --- pointwise ---------------------------------------------------------------------------

def _scored(table: pd.DataFrame) -> pd.DataFrame:
    """Judge rows with the unit's human reference (``human``)."""
    ref = human_reference(table)
    unit = _UNIT["pointwise"]
    return table[table["judge"] != ""].merge(ref[[*unit, "human"]], on=unit, how="left")


def judge_correlations(table: pd.DataFrame, *, method: str = "kendall",
                       level: str | Sequence[str] = ("pooled", "system"),
                       by: str | None = None, judge: str | Sequence[str] | None = None,
                       n_boot: int = 0, rng: np.random.Generator | int | None = None
                       ) -> pd.DataFrame:
    """Correlation of each judge's scores with the human reference, at several levels.

    Parameters
    ----------
    table : DataFrame
        A pointwise table (:func:`workbench.datasets.load_pointwise`).
    method : str
        ``pearson``, ``spearman``, ``kendall`` (tau-b) or ``all``.
    level : str or list
        ``pooled`` (all units), ``per_group`` and ``per_group_mean`` (per ``by`` group,
        then their mean: with ``by="item_id"`` the mean of per-item correlations across
        systems), ``system`` (the correlation of the per-system means over the units
        scored by both; its p-value is a permutation test over the systems' orderings,
        exact for up to 8 systems, and it has an interval only from 10 systems on:
        :func:`~workbench.qualify._system_level.system_level`).
    by : str, optional
        The groups for ``per_group`` / ``per_group_mean``.
    n_boot, rng
        Bootstrap CIs (:func:`workbench.stats.correlate`) of the unit-level rows; the
        system level never gets a bootstrap over its handful of systems.

    Returns
    -------
    DataFrame
        ``judge``, ``dimension``, the ``by`` column, then :func:`workbench.stats.correlate`'s
        columns; ``level`` ``system`` rows have ``n`` = number of systems.

    Examples
    --------
    >>> t = pd.DataFrame({"item_id": [1, 2, 1, 2, 1, 2], "system": list("aabbcc"),
    ...                   "judge": "m", "score": [1, 2, 3, 4, 6, 5],
    ...                   "label": [1, 1, 2, 3, 3, 4]})
    >>> from workbench.datasets import validate_pointwise
    >>> res = judge_correlations(validate_pointwise(t), method="pearson")
    >>> res[["level", "estimate", "n"]].round(3)
        level  estimate  n
    0  pooled     0.883  6
    1  system     0.993  3
    """
    table, kind = _validated(table)
    if kind != "pointwise":
        raise ValueError("judge_correlations needs a pointwise table (scores)")
    levels = [level] if isinstance(level, str) else list(level)
    scored = _scored(table)
    names = _judges(table, judge)
    scored = scored[scored["judge"].isin(names)]
    if scored["human"].notna().sum() == 0:
        raise ValueError("no unit has both a judge score and a human reference")
    plain = [lv for lv in levels if lv != "system"]
    frames = []
    if plain:
        res = correlate(scored, x="score", y="human", method=method, by=by, level=plain,
                        split=["judge", "dimension"], n_boot=n_boot, rng=rng)
        frames.append(res)
    if "system" in levels:
        both = scored.dropna(subset=["score", "human"])
        means = both.groupby(["judge", "dimension", "system"], sort=False)[["score", "human"]
                                                                          ].mean().reset_index()
        if means["system"].nunique() < 3:
            raise ValueError(f"system-level correlation needs at least 3 systems, the table has "
                             f"{means['system'].nunique()} (map a system column)")
        res = correlate(means, x="score", y="human", method=method, level="pooled",
                        split=["judge", "dimension"])
        frames.append(system_level(res, means))
    keys = ["judge", "dimension"] + ([by] if by else [])
    return tidy(pd.concat(frames, ignore_index=True), keys=keys)


# --- both kinds --------------------------------------------------------------------------

def _wide(table: pd.DataFrame, kind: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(humans, judges): one row per unit, one column per annotator / judge (pairwise:
    order 0 only, as people see one order)."""
    value = "verdict" if kind == "pairwise" else "score"
    rows = table[table["order"] == 0] if kind == "pairwise" else table
    unit = _UNIT[kind]
    people = rows[rows["annotator"] != ""].pivot_table(index=unit, columns="annotator",
                                                        values=value, aggfunc="first")
    judges = rows[rows["judge"] != ""].pivot_table(index=unit, columns="judge", values=value,
                                                    aggfunc="first")
    judges = judges.reindex(people.index)
    return people, judges


def _two_raters(people: pd.DataFrame, what: str) -> None:
    if people.shape[1] < 2:
        raise ValueError(f"{what} needs at least two annotators (annotator rows); the table has "
                         f"{people.shape[1]}: with one rater, or only a label column, there is "
                         "no human ceiling to compare with")


def _by_dimension(table: pd.DataFrame, kind: str, what: str, least: int = 2
                  ) -> Iterator[tuple[str, pd.DataFrame, pd.DataFrame, pd.DataFrame]]:
    """Per dimension (pairwise: one, ``""``): the dimension, its rows, and its humans and
    judges wide (:func:`_wide`), with at least ``least`` annotators for ``what``."""
    dims = [""] if kind == "pairwise" else list(dict.fromkeys(table["dimension"]))
    for dim in dims:
        part = table if kind == "pairwise" else table[table["dimension"] == dim]
        people, judges = _wide(part, kind)
        if part["annotator"].eq("").all():
            continue  # a dimension only judges score: nothing to compare with
        _two_raters(people, what)
        if people.shape[1] < least:
            raise ValueError(f"{what} needs at least {least} annotators; the table has "
                             f"{people.shape[1]}{' on ' + repr(dim) if dim else ''}: leaving "
                             "one of two out leaves one, so a judge can only win (1) or lose "
                             "(0) against each: no verdict")
        yield dim, part, people, judges


def human_ceiling(table: pd.DataFrame, *, measure: str | None = None, n_boot: int = 1000,
                  rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Each judge's agreement with the annotators beside the annotators' own (leave one
    rater out, :func:`leave_one_out_agreement`); per dimension for pointwise tables.

    ``measure`` defaults to ``cohen_kappa`` (pairwise) or ``pearson`` (pointwise); the
    report passes its correlation method (``kendall`` ...), so one method runs through it.

    Raises
    ------
    ValueError
        With fewer than two annotators.
    """
    table, kind = _validated(table)
    measure = measure or ("cohen_kappa" if kind == "pairwise" else "pearson")
    frames = []
    for dim, _part, people, judges in _by_dimension(table, kind, "the human ceiling"):
        out = leave_one_out_agreement(people, judges, measure=measure, n_boot=n_boot, rng=rng)
        frames.append(out.assign(dimension=dim) if kind == "pointwise" else out)
    if not frames:
        raise ValueError("the human ceiling needs annotator rows (people's own labels, at "
                         "least 2 annotators); a label column alone has none")
    return pd.concat(frames, ignore_index=True)


def judge_alt_test(table: pd.DataFrame, *, judge: str | Sequence[str] | None = None,
                   epsilon: float = 0.2, alpha: float = 0.05, min_items: int = 30,
                   standardize: bool = True) -> pd.DataFrame:
    """The alternative annotator test (:func:`alt_test`) of each judge: can it replace one
    of the annotators? Pairwise tables use ``accuracy``, pointwise ``neg_rmse``.

    With ``standardize`` (pointwise), every annotator and every judge is first turned into
    z-scores over the units it scored, as the test's authors advise for scores on
    different scales (a metric in [0, 1] against ratings 1-5): the test then compares
    where each scorer places a unit relative to its own mean and spread.

    Returns
    -------
    DataFrame
        One row per judge (and dimension): ``judge``, ``omega``, ``passed``,
        ``advantage``, ``n_raters``, ``epsilon``, ``alpha``.

    Raises
    ------
    ValueError
        With fewer than three annotators (with two, leaving one out leaves one other, so
        each annotator's winning rate is only 0 or 1), or when no annotator labelled
        ``min_items`` items that another annotator also labelled.
    """
    table, kind = _validated(table)
    metric = "accuracy" if kind == "pairwise" else "neg_rmse"
    rows = []
    for dim, part, people, judges in _by_dimension(table, kind, "the alternative annotator test",
                                                   least=3):
        if standardize and kind == "pointwise":
            people, judges = _zscores(people), _zscores(judges)
        for name in [n for n in _judges(table, judge) if n in set(part["judge"])]:
            per, summary = alt_test(people, judges[name].to_numpy(), epsilon=epsilon,
                                    alpha=alpha, metric=metric, min_items=min_items)
            if not len(per):
                raise ValueError(f"alternative annotator test: no annotator has {min_items} "
                                 "items that another annotator also labelled (lower min_items "
                                 "only knowingly: the paper asks for at least 30)")
            rows.append({"judge": name, **({"dimension": dim} if kind == "pointwise" else {}),
                         **summary})
    if not rows:
        raise ValueError("the alternative annotator test needs annotator rows (people's own "
                         "labels, at least 3 annotators); a label column alone has none")
    return pd.DataFrame(rows)


def _zscores(wide: pd.DataFrame) -> pd.DataFrame:
    """Each column as z-scores over its present values (a constant column: 0)."""
    sd = wide.std(ddof=0).replace(0, 1)
    return (wide - wide.mean()) / sd
