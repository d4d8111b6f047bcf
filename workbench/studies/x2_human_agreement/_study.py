"""Study X2: configuration, reliability, correlations and the run (private)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.datasets import load_table
from workbench.judges import JudgeSpec
from workbench.qualify import qualification_tables
from workbench.stats import correlate, fleiss_kappa, icc, krippendorff_alpha
from workbench.studies._contract import StudyResults, in_range, listed
from workbench.studies.common import ANSWER_KEYS, bridge_qa, judge_scores
from workbench.studies.common import pairwise as _pairwise
from workbench.studies.common.parsing import headline_parse, with_parse_counts
from workbench.studies.raters import RATERS
from workbench.studies.x2_human_agreement import _releases

STUDY = "x2_human_agreement"


@dataclass
class Config(bridge_qa.BundledDesign):
    """Settings of study X2: the notebook's ``parameters`` cell (:class:`StudyConfig`).
    With ``table``, its leaderboard (pairwise) or correlations (pointwise) and the human
    ceiling."""

    metrics: list[str] = listed(["bleu", "rougeL", "keyword_score"],
                                within=bridge_qa.LEXICAL_METRICS)
    pairwise_judges: list[str] = listed(["sim/judge-a", "sim/judge-d"])
    pairwise_reference: bool = True
    n_raters: int = in_range(4, 2, len(RATERS))
    rater_seed: int = 0
    unieval_dir: str = ""
    pandalm_dir: str = ""


# --- bundled set: reliability and correlations -----------------------------------------------

def rater_reliability(ratings: pd.DataFrame, *, n_boot: int = 1000,
                      rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """Krippendorff's alpha (interval, ordinal; answers resampled for the CI) and the six
    ICCs (F-based CIs) of the ratings; one row per measure, ``workbench.stats`` columns,
    plus ``measure_label`` (its name for plots) and ``backend``."""
    alphas = [krippendorff_alpha(ratings, item=ANSWER_KEYS, rater="rater", value="score",
                                 level=level, n_boot=n_boot, rng=rng)
              for level in ("interval", "ordinal")]
    iccs = icc(ratings, item=ANSWER_KEYS, rater="rater", score="score")
    keep = ["measure", "value_level", "estimate", "ci_low", "ci_high", "ci_method", "n",
            "n_raters", "n_missing"]
    frame = pd.concat([*alphas, iccs], ignore_index=True)
    frame = frame[[c for c in keep if c in frame.columns]]
    label = frame["measure"].where(frame["measure"] != "krippendorff_alpha",
                                   "alpha (" + frame["value_level"].astype(str) + ")")
    backend = "sim" if ratings["source"].eq("sim_raters").any() else "human"
    return frame.assign(measure_label=label, backend=backend)


def judge_specs(config: Config) -> list[tuple[str, JudgeSpec]]:
    """The G-Eval judges as ``(label, spec)`` pairs for
    :func:`workbench.studies.common.judge_scores` (label: the judge without provider)."""
    return [(judge.rsplit("/", 1)[-1],
             JudgeSpec(protocol="geval", judge_model=judge, template=config.judge_template,
                       study=STUDY))
            for judge in config.judge_models]


def _level_label(level: str, grouping: str, model: Any) -> str:
    if level == "pooled":
        return "pooled"
    if level == "per_group":
        return f"per model: {model}"
    return "per model (mean)" if grouping == "answer_model" else "per item (mean)"


def human_correlations(scores: pd.DataFrame, human: pd.DataFrame, *,
                       methods: tuple[str, ...] = ("pearson", "spearman", "kendall"),
                       n_boot: int = 1000, rng: np.random.Generator | int | None = None,
                       simulated_humans: bool = True) -> pd.DataFrame:
    """Correlation of every scorer with the mean human score at three levels.

    ``pooled`` over all answers; ``per_group`` per answer model and their mean
    (``grouping`` = ``answer_model``); the mean of the per-item correlations across the
    answer models (``grouping`` = ``item_id``: each item's answers; items resampled for
    the CI). ``scope`` names the level for plots; ``backend`` is ``sim`` when the scores
    or the human scores are simulated.

    Pearson and Spearman get percentile bootstrap CIs (``n_boot``); Kendall's tau-b gets
    the Fisher-z interval of Bonett & Wright (2000) (``ci_method`` says which), because
    its bootstrap runs scipy once per resample: about 50 s for the default design.
    """
    data = scores.merge(human, on=ANSWER_KEYS, how="left", validate="many_to_one")
    frames = []
    for method in methods:
        boot = 0 if method == "kendall" else n_boot
        frames.append(correlate(data, x="score", y="human", method=method, by="answer_model",
                                level=["pooled", "per_group", "per_group_mean"], split="metric",
                                n_boot=boot, rng=rng).assign(grouping="answer_model"))
        frames.append(correlate(data, x="score", y="human", method=method, by="item_id",
                                level="per_group_mean", split="metric", n_boot=boot,
                                rng=rng).assign(grouping="item_id"))
    by_model = pd.concat(frames[0::2], ignore_index=True)
    by_item = pd.concat(frames[1::2], ignore_index=True)
    out = pd.concat([by_model, by_item], ignore_index=True)
    out["grouping"] = out["grouping"].where(out["level"] != "pooled", None)
    out["scope"] = [_level_label(*row) for row in
                    zip(out["level"], out["grouping"], out["answer_model"], strict=True)]
    found = scores.groupby("metric")["backend"].agg(lambda b: set(b.dropna().astype(str)))
    out["backend"] = out["metric"].map(
        lambda m: "sim" if simulated_humans or "sim" in found[m] else "+".join(sorted(found[m])))
    keys = pd.DataFrame({
        "m": out["metric"].map({m: i for i, m in enumerate(dict.fromkeys(scores["metric"]))}),
        "k": out["method"].map({m: i for i, m in enumerate(methods)}),
        "l": out["scope"].map({"pooled": 0, "per model (mean)": 2, "per item (mean)": 3})
        .fillna(1),
        "g": out["answer_model"].map(
            {m: i for i, m in enumerate(dict.fromkeys(scores["answer_model"]))}).fillna(-1)})
    order = keys.sort_values(["m", "k", "l", "g"], kind="stable").index
    return out.loc[order].reset_index(drop=True)


def correlation_table(corr: pd.DataFrame, *, method: str = "spearman") -> pd.DataFrame:
    """One row per scorer, one column per level (pooled, per model, per item), one method."""
    part = corr[(corr["method"] == method) & (corr["level"] != "per_group")]
    table = part.pivot(index="metric", columns="scope", values="estimate")
    table = table.reindex(index=list(dict.fromkeys(part["metric"])),
                          columns=["pooled", "per model (mean)", "per item (mean)"])
    table.columns.name = None
    return table


# --- the study -----------------------------------------------------------------------------------

#: The frames :func:`tables` writes (those that are not empty).
_TABLES = ("answers", "ratings", "reliability", "judgments", "scores", "parse_summary",
           "correlations", "pairs", "preferences", "majority", "rater_fleiss", "pairwise",
           "pairwise_agreement", "unieval", "pandalm_annotators", "pandalm_judges",
           "table_agreement", "table_ceiling", "table_skipped")


#: Columns of the bundled-set frames the notebook indexes, kept when they are empty
#: (``bundled: false``) so its table cells show an empty table instead of a KeyError.
_EMPTY_COLUMNS = {
    "reliability": ["measure", "value_level", "estimate", "ci_low", "ci_high", "ci_method", "n",
                    "n_raters", "n_missing", "measure_label", "backend"],
    "correlations": ["metric", "answer_model", "method", "level", "n", "estimate", "ci_low",
                     "ci_high", "scope", "backend"],
    "pairwise_agreement": ["judge_model", "n", "n_unparsed", "accuracy", "agreement",
                           "kappa_order0", "kappa_order1", "estimate", "ci_low", "ci_high",
                           "n_verdicts", "backend"],
}


def run(config: Config) -> StudyResults:
    """Run study X2 and return its tables (no plotting); absent analyses are empty frames.

    The bootstrap draws from ``numpy.random.default_rng(config.seed)``, in this order:
    rater reliability, correlations, the raters' Fleiss kappa, UniEval, PandaLM.

    Keys: ``answers``, ``ratings``, ``reliability``, ``judgments``, ``scores``,
    ``parse_summary``, ``correlations``, ``correlation_table`` (Spearman, one row per
    scorer), ``pairs``, ``preferences``, ``majority``, ``rater_fleiss``, ``pairwise``,
    ``pairwise_agreement``, ``kappas`` (raters and pairwise judges, for the plot) (bundled
    set); ``unieval``, ``unieval_table``; ``pandalm_annotators``, ``pandalm_judges``,
    ``pandalm_kappas``; ``table_agreement``, ``table_ceiling``, ``table_skipped`` (a judge
    table of your own, :func:`user_table_agreement`).
    """
    rng = np.random.default_rng(config.seed)
    out: dict[str, pd.DataFrame] = {name: pd.DataFrame(columns=_EMPTY_COLUMNS.get(name))
                                    for name in _TABLES}
    if config.bundled:
        items = bridge_qa.load_items(config.dataset, config.n_items)
        answers = bridge_qa.load_answers(items, answer_models=config.answer_models,
                                         temperature=config.answer_temperature,
                                         progress=config.progress)
        ratings = bridge_qa.simulated_ratings(answers, n_raters=config.n_raters,
                                              rng_seed=config.rater_seed)
        human = bridge_qa.human_means(ratings)
        judgments, judged = judge_scores(answers, judge_specs(config), progress=config.progress)
        scores = pd.concat([judged, bridge_qa.metric_scores(answers, config.metrics)],
                           ignore_index=True)
        pairs = _pairwise.pairwise_items(answers, config.answer_models)
        preferences = _pairwise.rater_preferences(ratings, pairs)
        majority = _pairwise.majority_label(preferences)
        pairwise = _pairwise.pairwise_judgments(pairs, config.pairwise_judges,
                                                use_reference=config.pairwise_reference,
                                                study=STUDY, progress=config.progress)
        out.update(
            answers=bridge_qa.joined_keywords(answers), ratings=ratings,
            reliability=rater_reliability(ratings, n_boot=config.n_boot, rng=rng),
            judgments=judgments, scores=scores, parse_summary=bridge_qa.parse_summary(scores),
            correlations=human_correlations(scores, human, n_boot=config.n_boot, rng=rng),
            pairs=pairs, preferences=preferences, majority=majority,
            rater_fleiss=fleiss_kappa(preferences, item=_pairwise.PAIR_KEYS, rater="rater",
                                      label="preference", n_boot=config.n_boot,
                                      rng=rng).assign(backend="sim"),
            pairwise=pairwise,
            pairwise_agreement=_pairwise.pairwise_agreement(pairwise, majority) if len(pairwise)
            else pd.DataFrame())
    out["correlation_table"] = (correlation_table(out["correlations"], method="spearman")
                                if config.bundled else pd.DataFrame(
                                    columns=["pooled", "per model (mean)", "per item (mean)"]))
    out["kappas"] = _pairwise.kappa_summary(out["rater_fleiss"], out["pairwise_agreement"])
    if config.unieval_dir:
        out["unieval"] = _releases.unieval_correlations(config.unieval_dir,
                                                        n_boot=config.n_boot, rng=rng)
    out["unieval_table"] = _releases.unieval_table(out["unieval"])
    if config.pandalm_dir:
        panda = _releases.pandalm_agreement(config.pandalm_dir, n_boot=config.n_boot, rng=rng)
        out.update(pandalm_annotators=panda["annotators"], pandalm_judges=panda["judges"])
    out["pandalm_kappas"] = _pairwise.kappa_summary(out["pandalm_annotators"],
                                                    out["pandalm_judges"],
                                                    raters_label="annotators (Fleiss)")
    if config.table:
        out.update(user_table_agreement(config.table, config.table_spec, by=config.table_by,
                                        n_boot=config.n_boot, seed=config.seed))
    return StudyResults(out, config=config)


def user_table_agreement(path: str, spec: dict, *, by: str = "group", n_boot: int = 1000,
                         seed: int = 0) -> dict[str, pd.DataFrame]:
    """A user's judge table (:func:`workbench.datasets.load_table` with ``spec``):
    ``table_agreement`` (pairwise: :func:`workbench.qualify.pairwise_leaderboard` per
    group and overall; pointwise: :func:`workbench.qualify.judge_correlations`),
    ``table_ceiling`` (when it has two or more annotators) and ``table_skipped`` (what the
    table could not support, and why)."""
    table = load_table(path, **spec)
    found = qualification_tables(table, by=by, n_boot=n_boot, rng=seed,
                                 sections=["agreement", "ceiling"])
    agreement = found.get("leaderboard", found.get("correlations", pd.DataFrame()))
    return {"table_agreement": agreement, "table_ceiling": found.get("ceiling", pd.DataFrame()),
            "table_skipped": found["skipped"]}


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV (:func:`_tables`) and ``parse_counts``, the parsed and
    unparsed judge rows per cell."""
    return with_parse_counts(_tables(results), results)


def _tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The non-empty frames to write as CSV, without latency and cache-hit columns."""
    return {name: results[name].drop(columns=["latency_s", "cached"], errors="ignore")
            for name in _TABLES if len(results[name])}


def _estimates(frame: pd.DataFrame, key: str | list[str], column: str = "estimate") -> dict:
    if frame.empty:
        return {}
    keys = frame[key].astype(str).agg(" | ".join, axis=1) if isinstance(key, list) else frame[key]
    return dict(zip(keys, frame[column].round(4), strict=True))


def headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records (:func:`_headline`), with the share of judge rows
    parsed, their counts and the structured-reply form each judge used."""
    return {**_headline(results), **headline_parse(results)}


def _headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records (present analyses only)."""
    out: dict[str, Any] = {}
    if len(results["ratings"]):
        rel = results["reliability"]
        alpha = rel[rel["measure"] == "krippendorff_alpha"]
        corr = results["correlations"]
        spearman = corr[(corr["method"] == "spearman") & (corr["level"] != "per_group")]
        human = results["ratings"].groupby("answer_model", sort=False)["score"].mean()
        out.update(
            backend="sim" if (corr["backend"] == "sim").any() else "real",
            n_answers=len(results["answers"]),
            human_mean=human.round(4).to_dict(),
            alpha=_estimates(alpha, "value_level"),
            icc=_estimates(rel[rel["measure"].str.startswith("ICC")], "measure"),
            rho=_estimates(spearman, ["metric", "scope"]),
            n_failed=results["parse_summary"].set_index("metric")["n_failed"].astype(int).to_dict(),
            n_pairs=len(results["majority"]),
            majority_share=results["majority"]["majority"].value_counts(normalize=True)
            .round(4).to_dict(),
            rater_fleiss_kappa=round(float(results["rater_fleiss"]["estimate"].iloc[0]), 4),
        )
        agree = results["pairwise_agreement"]
        if len(agree):
            for col in ("estimate", "kappa_order0", "kappa_order1", "agreement", "accuracy",
                        "n_unparsed"):
                out[f"pairwise_{'kappa' if col == 'estimate' else col}"] = _estimates(
                    agree, "judge_model", col)
    if len(results["unieval"]):
        out["unieval_rho"] = _estimates(results["unieval"].query("method == 'spearman'"),
                                        "dimension")
        out["unieval_n"] = int(results["unieval"]["n"].max())
    agreement = results["table_agreement"] if "table_agreement" in results else pd.DataFrame()
    if len(agreement):
        if "accuracy_both" in agreement:  # pairwise: per judge, overall (all groups)
            groups = list(agreement.columns[1:list(agreement.columns).index("n")])
            overall = agreement[(agreement[groups] == "all").all(axis=1)] if groups else agreement
            for col in ("accuracy_order0", "accuracy_both", "agreement"):
                out[f"table_{col}"] = _estimates(overall, "judge", col)
        else:  # pointwise: per judge, dimension and level
            rows = agreement[agreement["level"] != "per_group"]
            out["table_correlation"] = _estimates(rows, ["judge", "dimension", "level"])
    if len(results["pandalm_annotators"]):
        out["pandalm_fleiss_kappa"] = round(float(
            results["pandalm_annotators"]["estimate"].iloc[0]), 4)
        out["pandalm_kappa"] = _estimates(results["pandalm_judges"], "judge_model")
        out["pandalm_n_unparsed"] = _estimates(results["pandalm_judges"], "judge_model",
                                               "n_unparsed")
    return out
