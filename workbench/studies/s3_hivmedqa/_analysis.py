"""S3 analyses on the long scores frame: Table 2, best-model tests, category trends, the
category 3 -> 4 drop, the unsupervised - supervised gap (private)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from workbench import stats
from workbench.studies.s3_hivmedqa._data import DIMENSIONS

#: Dimensions averaged for the category 3 -> 4 drop (seed 002 Fig. 2b: MedGPT 1, 2, 3 and 5).
DROP_DIMENSIONS = ("comprehension", "reasoning", "knowledge_recall", "harm")
SUMMARY_COLUMNS = (
    "answer_model", "answer_role", "dimension", "mean", "sd", "n_iterations", "n_scores",
    "n_failed", "backend",
)
_KEYS = ["answer_model", "answer_role", "backend"]


def _supervised(scores: pd.DataFrame, supervision: str) -> pd.DataFrame:
    if supervision not in ("supervised", "unsupervised"):
        raise ValueError(f"supervision must be 'supervised' or 'unsupervised', got {supervision!r}")
    return scores[scores["supervision"] == supervision]


def _over_iterations(frame: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """Per ``keys``: the mean of ``value`` within each iteration (answer_sample), then the
    mean and sd (ddof=1) of those means over iterations, with counts."""
    per_it = frame.groupby(keys + ["answer_sample"], dropna=False, observed=True).agg(
        _m=(value, "mean"), _n=(value, "count"), _all=(value, "size"))
    out = per_it.groupby(level=keys, dropna=False, observed=True).agg(
        mean=("_m", "mean"), sd=("_m", "std"), n_iterations=("_m", "count"),
        n_scores=("_n", "sum"), _rows=("_all", "sum"))
    out["n_failed"] = out.pop("_rows") - out["n_scores"]
    return out.reset_index()


def model_summary(scores: pd.DataFrame, f1: pd.DataFrame | None = None, *,
                  supervision: str = "supervised") -> pd.DataFrame:
    """Table 2 of seed 002: per answer model and dimension, the mean over questions (all
    categories) in each iteration, then the mean and standard deviation over iterations.

    Parameters
    ----------
    scores : DataFrame
        The long scores frame (``answer_model, answer_role, answer_sample, supervision,
        dimension, score, backend``). Unparsed rows (NaN) are left out of the means and
        counted in ``n_failed``.
    f1 : DataFrame, optional
        Per-answer entity F1 (:func:`entity_f1`); adds rows with dimension ``medsynf1``.
    supervision : {"supervised", "unsupervised"}

    Returns
    -------
    DataFrame
        :data:`SUMMARY_COLUMNS`, one row per model and dimension.
    """
    frame = _over_iterations(_supervised(scores, supervision), _KEYS + ["dimension"], "score")
    if f1 is not None and len(f1):
        extra = _over_iterations(f1.assign(dimension="medsynf1"), _KEYS + ["dimension"], "f1")
        frame = pd.concat([frame, extra], ignore_index=True)
    order = {d: i for i, d in enumerate((*DIMENSIONS, "medsynf1"))}
    frame = frame.sort_values(["answer_model", "dimension"],
                              key=lambda s: s.map(order) if s.name == "dimension" else s)
    return frame[list(SUMMARY_COLUMNS)].reset_index(drop=True)


def iteration_means(scores: pd.DataFrame, f1: pd.DataFrame | None = None, *,
                    supervision: str = "supervised") -> pd.DataFrame:
    """Per model, dimension and iteration: the mean over questions (one row each; with
    ``f1``, also rows of dimension ``medsynf1``). Their mean and sd over iterations are
    :func:`model_summary`; ``plot_bars(..., error="sd")`` draws them as Table 2."""
    keys = _KEYS + ["dimension", "answer_sample"]
    frame = _supervised(scores, supervision).groupby(keys, as_index=False, observed=True)[
        "score"].mean()
    if f1 is not None and len(f1):
        extra = f1.assign(dimension="medsynf1").groupby(keys, as_index=False, observed=True)[
            "f1"].mean().rename(columns={"f1": "score"})
        frame = pd.concat([frame, extra], ignore_index=True)
    return frame


def _cell(mean: float, sd: float, digits: int) -> str:
    if not np.isfinite(mean):
        return ""
    return f"{mean:.{digits}f} ± {sd:.{digits}f}" if np.isfinite(sd) else f"{mean:.{digits}f}"


def format_table2(summary: pd.DataFrame, *, digits: int = 2,
                  index: str | list[str] = "answer_model") -> pd.DataFrame:
    """A wide, printable Table 2: ``mean ± sd`` per model (rows) and dimension (columns);
    ``mean`` alone when there is one iteration, blank when nothing parsed."""
    cells = summary.assign(cell=[_cell(float(m), float(s), digits)
                                 for m, s in zip(summary["mean"], summary["sd"], strict=True)])
    dims = [d for d in (*DIMENSIONS, "medsynf1") if d in set(cells["dimension"])]
    table = cells.pivot(index=index, columns="dimension", values="cell")[dims]
    table.columns.name = None
    return table.fillna("")


def table2_side_by_side(summary: pd.DataFrame, paper: pd.DataFrame, *,
                        label: str | None = None, digits: int = 2) -> pd.DataFrame:
    """The published Table 2 and this run's, as ``mean ± sd`` cells: one row per
    (``source``, ``model``), one column per dimension. ``source`` is ``published (real
    judges)`` for the paper and ``label`` for this run (default ``this run (simulated
    judges)`` for sim results, else ``this run (<backend>)``). When both sides share
    model names (a release, named by the paper's display names) each model's two rows
    are adjacent; otherwise the paper's rows come first."""
    if label is None:
        backends = sorted(set(summary["backend"].dropna()))
        label = ("this run (simulated judges)" if backends == ["sim"]
                 else f"this run ({'+'.join(backends)})")
    published = "published (real judges)"
    rows = pd.concat([
        paper.assign(source=published, model=paper["display_name"]),
        summary.assign(source=label, model=summary["answer_model"]),
    ], ignore_index=True)
    table = format_table2(rows, digits=digits, index=["source", "model"])
    if set(paper["display_name"]) & set(summary["answer_model"]):
        order = sorted(table.index, key=lambda k: (k[1], k[0] != published))
    else:
        order = sorted(table.index, key=lambda k: (k[0] != published, k[1]))
    return table.loc[order]


def best_model(summary: pd.DataFrame, *, dimension: str = "comprehension") -> str:
    """The answer model with the highest mean on ``dimension`` (quality-control upper
    bound excluded; the lower bound competes like any model, as in the paper)."""
    rows = summary[(summary["dimension"] == dimension) & (summary["answer_role"] != "upper_bound")]
    rows = rows[np.isfinite(rows["mean"].to_numpy(dtype=float))]
    if rows.empty:
        raise ValueError(f"no model has a score on dimension {dimension!r}")
    return str(rows.sort_values(["mean", "answer_model"], ascending=[False, True])
               .iloc[0]["answer_model"])


def best_model_tests(scores: pd.DataFrame, *, dimension: str = "comprehension",
                     best: str | None = None, padjust: Sequence[str] = ("bonf", "holm"),
                     alpha: float = 0.05, pairing: str = "question_iteration") -> pd.DataFrame:
    """Paired t tests of the best model against each other model on one dimension.

    The subject is question x iteration (``item_id``, ``answer_sample``;
    ``pairing="question_iteration"``) or the question, each model's iterations averaged
    first (``pairing="question_mean"``); supervised scores only, the upper bound left
    out (seed 002 section 2.5: Gemini 2.5 Pro vs each model on MedGPT1, Bonferroni).
    One family per ``padjust`` method, stacked: the rows of
    :func:`workbench.stats.paired_tests` with its ``padjust`` column saying which, plus
    ``dimension`` and ``backend`` (the judge's).
    """
    subjects = {"question_iteration": ["item_id", "answer_sample"], "question_mean": "item_id"}
    if pairing not in subjects:
        raise ValueError(f"pairing must be one of {sorted(subjects)}, got {pairing!r}")
    data = _supervised(scores, "supervised")
    data = data[(data["dimension"] == dimension) & (data["answer_role"] != "upper_bound")]
    if best is None:
        best = best_model(model_summary(data), dimension=dimension)
    backend = "+".join(sorted(set(data["backend"].dropna())))
    extra = {} if pairing == "question_iteration" else {"aggregate": "mean"}
    parts = [stats.paired_tests(data, dv="score", within="answer_model",
                                subject=subjects[pairing], reference=best,
                                padjust=method, alpha=alpha, **extra).assign(
                                    dimension=dimension, backend=backend)
             for method in padjust]
    return pd.concat(parts, ignore_index=True)


def pairing_comparison(by_answer: pd.DataFrame, by_question: pd.DataFrame) -> pd.DataFrame:
    """The best-model tests under both pairings side by side: per adjustment and compared
    model, ``n``, ``p_adjusted`` and ``significant`` with subject question x iteration
    (``_question_iteration``) and question means (``_question_mean``), and ``differs``
    (True where the two pairings disagree on significance; missing where a test is missing
    under either pairing)."""
    keys = ["padjust", "a", "b"]
    cols = ["n", "estimate", "p_adjusted", "significant"]
    out = by_answer[keys + cols].merge(by_question[keys + cols], on=keys, how="outer",
                                       suffixes=("_question_iteration", "_question_mean"))
    out["differs"] = (out["significant_question_iteration"].astype("boolean")
                      != out["significant_question_mean"].astype("boolean"))
    return out


def _composite(scores: pd.DataFrame, dimensions: Sequence[str], keys: list[str]) -> pd.DataFrame:
    """Mean over ``dimensions`` of each judged answer (NaN when none of them parsed)."""
    part = scores[scores["dimension"].isin(list(dimensions))]
    return part.groupby(keys, dropna=False, observed=True, as_index=False)["score"].mean()


def category_trend(scores: pd.DataFrame, *, dimensions: Sequence[str] = DIMENSIONS,
                   supervision: str = "supervised") -> pd.DataFrame:
    """Mean MedGPT score (average of ``dimensions``) per model and category 1-4, with the
    sd over iterations (seed 002 supplementary Fig. 1)."""
    keys = _KEYS + ["category", "item_id", "answer_sample"]
    comp = _composite(_supervised(scores, supervision), dimensions, keys)
    out = _over_iterations(comp, _KEYS + ["category"], "score")
    out["category"] = out["category"].astype(int)
    return out.sort_values(["answer_model", "category"]).reset_index(drop=True)


def trend_counts(trend: pd.DataFrame) -> pd.DataFrame:
    """How many models (role ``model`` or ``lower_bound``) score lower in the harder
    category: 1 -> 2, 2 -> 3, 1 -> 3 (seed 002 section 2.4: six, seven and nine of ten) and
    3 -> 4."""
    wide = trend[trend["answer_role"] != "upper_bound"].pivot(
        index="answer_model", columns="category", values="mean")
    rows = []
    for a, b in ((1, 2), (2, 3), (1, 3), (3, 4)):
        if a in wide.columns and b in wide.columns:
            pair = wide[[a, b]].dropna()
            rows.append({"from_category": a, "to_category": b, "n_models": len(pair),
                         "n_declining": int((pair[b] < pair[a]).sum())})
    return pd.DataFrame(rows, columns=["from_category", "to_category", "n_models", "n_declining"])


def _paired(data: pd.DataFrame, *, subject, level_a: str, level_b: str,
            ci_level: float) -> pd.DataFrame:
    """``a - b`` per model with :func:`workbench.stats.paired_tests` (several rows of a
    subject and level are averaged first); one row per model."""
    res = stats.paired_tests(data, dv="score", within="condition", subject=subject,
                             reference=level_a, by=_KEYS, aggregate="mean", padjust="none",
                             ci_level=ci_level)
    return res[res["b"] == level_b]


def bias_drop(scores: pd.DataFrame, *, dimensions: Sequence[str] = DROP_DIMENSIONS,
              supervision: str = "supervised", ci_level: float = 0.95,
              per_iteration: bool = False) -> pd.DataFrame:
    """The category 3 -> 4 drop per answer model and bias type (and all types pooled).

    Each answer's score is the mean of ``dimensions`` (seed 002 Fig. 2b: MedGPT 1, 2, 3
    and 5). When the category-4 items name their source vignette (``source_item``, as the
    bias operators record it), the drop is paired by vignette (iterations, and for
    ``all`` the bias types, averaged within a vignette first; ``pairing =
    "source_item"``); otherwise (a release, whose category-4 items are not linked) it is
    paired by iteration: each iteration's mean over the category-3 questions against its
    mean over the category-4 questions (``pairing = "iteration"``). With
    ``per_iteration`` linked items are paired per vignette and iteration (a release: one
    cued version per vignette, answered in the same iterations; ``pairing =
    "source_item_iteration"``). The test is the
    paired t test of :func:`workbench.stats.paired_tests` (t interval of the mean
    difference).

    Returns
    -------
    DataFrame
        ``answer_model, answer_role, backend, bias_type, measure`` (``drop_3_to_4``),
        ``pairing, n, estimate`` (category 3 minus category 4: positive = the bias cue
        lowered the score), ``ci_low, ci_high, p_value, cohen_dz, mean_category3,
        mean_category4``.
    """
    columns = ["answer_model", "answer_role", "backend", "bias_type", "measure", "pairing", "n",
               "estimate", "ci_low", "ci_high", "p_value", "cohen_dz", "mean_category3",
               "mean_category4"]
    keys = _KEYS + ["category", "perturbation", "item_id", "source_item", "answer_sample"]
    comp = _composite(_supervised(scores, supervision), dimensions, keys)
    c3, c4 = comp[comp["category"] == 3], comp[comp["category"] == 4]
    if c3.empty or c4.empty:
        return pd.DataFrame(columns=columns)
    linked = bool(c4["source_item"].isin(set(c3["item_id"])).any())
    groups = [(b, c4[c4["perturbation"] == b]) for b in sorted(c4["perturbation"].unique())]
    if len(groups) > 1:
        groups.append(("all", c4))
    parts = []
    for bias, part in groups:
        if linked:
            base = c3[c3["item_id"].isin(set(part["source_item"]))]
            base_unit, part_unit = base["item_id"], part["source_item"]
            if per_iteration:
                base_unit = base_unit + "|" + base["answer_sample"].astype(str)
                part_unit = part_unit + "|" + part["answer_sample"].astype(str)
            data = pd.concat([base.assign(condition="category3", unit=base_unit),
                              part.assign(condition="category4", unit=part_unit)])
        else:
            data = pd.concat([c3.assign(condition="category3"), part.assign(condition="category4")])
            data = data.assign(unit=data["answer_sample"])
        res = _paired(data, subject="unit", level_a="category3", level_b="category4",
                      ci_level=ci_level)
        parts.append(res.assign(bias_type=bias, measure="drop_3_to_4",
                                pairing=("iteration" if not linked else
                                         "source_item_iteration" if per_iteration
                                         else "source_item"),
                                mean_category3=res["mean_a"], mean_category4=res["mean_b"]))
    return pd.concat(parts, ignore_index=True)[columns]


def supervision_gap(scores: pd.DataFrame, *, dimensions: Sequence[str] = DIMENSIONS,
                    ci_level: float = 0.95) -> pd.DataFrame:
    """Unsupervised minus supervised MedGPT score per answer model (seed 002 supplementary
    Fig. 2: higher for every model, +0.38 to +0.95, mean +0.73).

    Each answer's score is the mean of ``dimensions``; the two settings are paired by
    answer (question x iteration) in a paired t test
    (:func:`workbench.stats.paired_tests`). Models judged in one setting only are left out.
    """
    keys = _KEYS + ["supervision", "item_id", "answer_sample"]
    comp = _composite(scores, dimensions, keys)
    both = comp.groupby(_KEYS)["supervision"].transform("nunique") == 2
    comp = comp[both]
    columns = ["answer_model", "answer_role", "backend", "measure", "n", "estimate", "ci_low",
               "ci_high", "p_value", "cohen_dz", "mean_supervised", "mean_unsupervised"]
    if comp.empty:
        return pd.DataFrame(columns=columns)
    res = _paired(comp.assign(condition=comp["supervision"]),
                  subject=["item_id", "answer_sample"], level_a="unsupervised",
                  level_b="supervised", ci_level=ci_level)
    res = res.assign(measure="unsupervised_minus_supervised", mean_supervised=res["mean_b"],
                     mean_unsupervised=res["mean_a"])
    return res[columns].reset_index(drop=True)


def failure_counts(answers: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Calls and failures per stage and answer model: failed answer calls, and judged
    scores that are missing (failed judge call, unparsed reply or unjudged answer)."""
    ans = answers.assign(_bad=~answers["ok"].astype(bool)).groupby(
        "answer_model", as_index=False).agg(n=("_bad", "size"), n_failed=("_bad", "sum"))
    ans.insert(0, "stage", "answer")
    judged = scores.assign(_bad=~scores["parse_ok"].astype(bool),
                           stage="judge_" + scores["supervision"]).groupby(
        ["stage", "answer_model"], as_index=False).agg(n=("_bad", "size"), n_failed=("_bad", "sum"))
    return pd.concat([ans, judged], ignore_index=True)
