"""A judge table's PPI answer (how many human labels, for a stated target) and selective
judging (:mod:`workbench.qualify._tables`' units and human reference)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from workbench.qualify._ppi import labels_needed, ppi_mean, ppi_simulation
from workbench.qualify._selective import selective_report
from workbench.qualify._tables import _UNIT, _WIN, _judges, _validated, human_reference

__all__ = ["judge_ppi", "judge_selective"]


def _numeric_pairs(table: pd.DataFrame, kind: str, judge: str, dimension: str | None = None
                   ) -> pd.DataFrame:
    """Per unit (of ``dimension``): ``y`` (human, numeric; pairwise: A=1, tie=0.5, B=0) and
    ``yhat``."""
    if dimension is not None and kind == "pointwise":
        table = table[table["dimension"] == dimension]
    ref = human_reference(table)
    unit = _UNIT[kind]
    rows = table[table["judge"] == judge]
    if kind == "pairwise":
        rows = rows[rows["order"] == 0]
        yhat = rows.set_index(unit)["verdict"].map(_WIN)
        y = ref.set_index(unit)["human"].map(_WIN)
    else:
        yhat = rows.set_index(unit)["score"]
        y = ref.set_index(unit)["human"]
    return pd.DataFrame({"yhat": yhat}).join(y.rename("y"), how="left").dropna(subset=["yhat"])


def judge_ppi(table: pd.DataFrame, *, judge: str, dimension: str | None = None,
              sizes: Sequence[int] | None = None, width: float | None = None,
              target_labels: int | None = None, n_rep: int = 200, alpha: float = 0.05,
              rng: np.random.Generator | int | None = 0) -> dict[str, pd.DataFrame]:
    """How many human labels a prediction-powered estimate of the mean human label needs
    to reach a stated target width.

    The units with both the judge's and a human label are the pilot
    (:func:`ppi_simulation` resamples it); units with only the judge's label make the
    PPI estimate itself (:func:`ppi_mean`) when there are any. Pairwise verdicts count
    A = 1, tie = 0.5, B = 0 (the mean is A's win rate); pairwise uses order 0. A
    pointwise table with several dimensions needs ``dimension`` (the mean of one).

    Parameters
    ----------
    sizes : list of int, optional
        Numbers of human labels to simulate (default: 10 sizes from 10 to the pilot's).
    width : float, optional
        The target: a 95% (``1 - alpha``) interval width the researcher states.
    target_labels : int, optional
        The target: the width that many human labels alone give (the normal interval
        with the pilot's standard deviation). Default, when neither is given: half the
        pilot. (The width of *all* the pilot's labels is no target: no judge that is not
        perfect reaches it with fewer labels.)

    Returns
    -------
    dict
        ``simulation`` (:func:`ppi_simulation`), ``needed`` (:func:`labels_needed`, the
        smallest simulated size reaching the target, with ``target`` saying which,
        ``target_labels`` and ``dimension``), ``estimate`` (:func:`ppi_mean`; empty
        without unlabelled units).

    Raises
    ------
    ValueError
        When fewer than 10 units have both labels, or several dimensions and none named.
    """
    table, kind = _validated(table)
    name = _judges(table, judge)[0]
    if kind == "pointwise" and dimension is None:
        dims = set(table.loc[table["judge"] == name, "dimension"])
        if len(dims) > 1:
            raise ValueError(f"judge {name!r} scores {len(dims)} dimensions: give dimension= "
                             "(a mean over dimensions is no one's label)")
        dimension = dims.pop()
    pairs = _numeric_pairs(table, kind, name, dimension)
    pilot = pairs.dropna()
    if len(pilot) < 10:
        raise ValueError(f"PPI needs at least 10 units with both a judge and a human label; "
                         f"judge {judge!r} has {len(pilot)}")
    y, yhat = pilot["y"].to_numpy(float), pilot["yhat"].to_numpy(float)
    if sizes is None:
        sizes = sorted({int(round(v)) for v in np.geomspace(10, len(pilot) - 1, 10)})
    sim = ppi_simulation(y, yhat, list(sizes), n_rep=n_rep, alpha=alpha, rng=rng)
    z = float(sps.norm.ppf(1 - alpha / 2))
    sd = float(np.std(y, ddof=1))
    if width is not None:
        target = f"a stated width of {width:.4g}"
        target_labels = int(np.ceil((2 * z * sd / width) ** 2)) if width > 0 else None
    else:
        stated = target_labels is not None
        target_labels = int(target_labels or max(len(pilot) // 2, 2))
        width = float(2 * z * sd / np.sqrt(target_labels))
        target = (f"the width of {target_labels} human labels alone"
                  + ("" if stated else " (default: half the table's labelled units)"))
    unlabeled = pairs.loc[pairs["y"].isna(), "yhat"].to_numpy(float)
    estimate = ppi_mean(y, yhat, unlabeled, alpha=alpha) if len(unlabeled) else pd.DataFrame()
    extra = {"dimension": dimension} if kind == "pointwise" else {}
    needed = labels_needed(sim, width).assign(judge=name, **extra, n_pilot=len(pilot),
                                              target=target, target_labels=target_labels)
    return {"simulation": sim.assign(judge=name, **extra), "needed": needed,
            "estimate": estimate.assign(judge=name, **extra)}


def judge_selective(table: pd.DataFrame, *, judge: str, alpha: float = 0.1,
                    delta: float = 0.1, calibration: float = 0.5,
                    rng: np.random.Generator | int | None = 0) -> pd.DataFrame:
    """Selective judging (:func:`selective_report`): abstain below a confidence threshold
    calibrated on a random ``calibration`` share of the labelled items, report on the rest.

    Raises
    ------
    ValueError
        On a pointwise table, without a ``confidence`` column, or without labels.
    """
    table, kind = _validated(table)
    if kind != "pairwise":
        raise ValueError("selective judging needs verdicts to be right or wrong: a pairwise table")
    if "confidence" not in table or table["confidence"].isna().all():
        raise ValueError("selective judging needs the judge's confidence: map a confidence column")
    ref = human_reference(table)[["item_id", "human"]]
    rows = table[(table["judge"] == _judges(table, judge)[0]) & (table["order"] == 0)]
    rows = rows.merge(ref, on="item_id").dropna(subset=["human", "confidence"])
    correct = (rows["verdict"] == rows["human"]).to_numpy()
    gen = np.random.default_rng(rng)
    cal = gen.random(len(rows)) < calibration
    return selective_report(rows["confidence"].to_numpy(float), correct, cal, alpha=alpha,
                            delta=delta).assign(judge=judge)
