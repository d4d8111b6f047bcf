"""Study S2: configuration, LLM methods, correlations and the run (private)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.judges import JudgeSpec
from workbench.stats import correlate
from workbench.studies._contract import StudyConfig, StudyResults, at_least, in_range, listed
from workbench.studies.common import ANSWER_KEYS, judge_scores
from workbench.studies.common import bridge_qa as _qa
from workbench.studies.common.parsing import headline_parse, with_parse_counts
from workbench.studies.raters import RATERS
from workbench.studies.s2_summarize_then_judge import _published

#: The three LLM methods of seed 001 table 2 (per judge): prompt template, summarised first.
LLM_METHODS = {"geval_original": ("geval_relevance", False),
               "geval_adapted": ("geval_civil", False),
               "summarize_then": ("geval_civil", True)}


@dataclass
class Config(StudyConfig):
    """Settings of study S2: the notebook's ``parameters`` cell (:class:`StudyConfig`),
    the seed's design.

    The seed's answer models were Llama 2, GPT-3.5, GPT-4 and PaLM 2 (the sim stand-ins:
    strong = long answers like GPT-4, mid, weak, tiny = repeats the question); its judges
    and summariser GPT-4 and Gemini-Pro. ``llm_methods`` are keys of :data:`LLM_METHODS`;
    ``bertscore`` is off by default (see :func:`metric_scores` for its cost). G-Eval scores
    by ``logprobs`` (sum p(s) s), ``samples`` (mean of ``geval_samples`` samples) or
    ``auto`` (log-probabilities when the provider gives them).
    """

    dataset: str = "s2_civil_ja"
    n_items: int = at_least(50, 0)
    answer_models: list[str] = listed([
        "sim/answer-strong", "sim/answer-mid", "sim/answer-weak", "sim/answer-tiny"])
    answer_temperature: float = 1.0
    judge_models: list[str] = listed(["sim/judge-a", "sim/judge-b"])
    summarizer_model: str = "sim/summarizer"
    llm_methods: list[str] = listed(list(LLM_METHODS), within=LLM_METHODS)
    lexical_metrics: list[str] = listed(["bleu", "rouge1", "rouge2", "rougeL", "keyword_score"],
                                        within=_qa.LEXICAL_METRICS)
    judge_temperature: float = 0.0
    geval_mode: str = "auto"
    geval_samples: int = 20
    judge_sees_keywords: bool = False
    responses_path: str = ""
    human_scores_path: str = ""
    human_dimension: str = ""
    n_raters: int = in_range(4, 1, len(RATERS))
    rater_seed: int = 0
    n_boot: int = at_least(1000, 0)

    def cross_check(self) -> None:
        if not self.responses_path and not self.answer_models:
            self.reject("answer_models", "is empty (and no responses_path is given)")
        if self.llm_methods and not self.judge_models:
            self.reject("judge_models", "is empty but llm_methods are requested")


def judge_specs(config: Config) -> list[tuple[str, JudgeSpec]]:
    """The LLM methods of seed 001 table 2 for every judge, as ``(label, spec)`` pairs for
    :func:`workbench.studies.common.judge_scores` (label: :func:`method_label`)."""
    out = []
    for method in config.llm_methods:
        template, summarise = LLM_METHODS[method]
        for judge in config.judge_models:
            spec = JudgeSpec(protocol="geval", judge_model=judge, template=template,
                             temperature=config.judge_temperature, geval_mode=config.geval_mode,
                             geval_samples=config.geval_samples, study=_published.STUDY)
            if summarise:
                spec = JudgeSpec(protocol="summarize_then", inner=spec,
                                 study=_published.STUDY,
                                 summarizer_model=config.summarizer_model)
            out.append((_published.method_label(method, judge), spec))
    return out


# --- analysis -------------------------------------------------------------------------------

def _backend(scores: pd.DataFrame, simulated_humans: bool) -> pd.Series:
    """Per metric: ``sim`` when its scores or the human scores are simulated."""
    def one(values: pd.Series) -> str:
        found = set(values.dropna().astype(str)) | ({"sim"} if simulated_humans else set())
        return "sim" if "sim" in found else "+".join(sorted(found))
    return scores.groupby("metric", sort=False)["backend"].agg(one)


def correlations(scores: pd.DataFrame, human: pd.DataFrame, *, method: str = "spearman",
                 n_boot: int = 1000, rng: np.random.Generator | int | None = None,
                 simulated_humans: bool = True) -> pd.DataFrame:
    """Correlation of every metric with the human score at the three levels.

    ``pooled`` (all answers), ``per_group`` (per answer model) and ``per_group_mean``
    (the mean of the per-model values), with percentile bootstrap CIs from
    :func:`workbench.stats.correlate` (rows resampled within the level's unit, models
    for the mean). Adds ``family`` and ``backend`` (``sim`` when the metric's scores or
    the human scores are simulated).
    """
    data = scores.merge(human, on=ANSWER_KEYS, how="left", validate="many_to_one")
    result = correlate(data, x="score", y="human", method=method, by="answer_model",
                       level=["pooled", "per_group", "per_group_mean"], split="metric",
                       n_boot=n_boot, rng=rng)
    family = scores.groupby("metric", sort=False)["family"].first()
    result.insert(1, "family", result["metric"].map(family))
    result["backend"] = result["metric"].map(_backend(scores, simulated_humans))
    # metrics and answer models in input order; per metric: pooled, per model, mean
    metric_rank = {m: i for i, m in enumerate(family.index)}
    model_rank = {m: i for i, m in enumerate(dict.fromkeys(scores["answer_model"]))}
    level_rank = {"pooled": 0, "per_group": 1, "per_group_mean": 2}
    keys = pd.DataFrame({"m": result["metric"].map(metric_rank),
                         "l": result["level"].map(level_rank),
                         "g": result["answer_model"].map(model_rank).fillna(-1)})
    order = keys.sort_values(["m", "l", "g"], kind="stable").index
    return result.loc[order].reset_index(drop=True)


def rho_table(corr: pd.DataFrame, *, models: Sequence[str] | None = None) -> pd.DataFrame:
    """Seed 001 table 3: one row per metric; a column per answer model, ``pooled``, ``mean``."""
    per = corr[corr["level"] == "per_group"].pivot(index="metric", columns="answer_model",
                                                   values="estimate")
    per = per[list(models)] if models is not None else per
    table = per.assign(
        pooled=corr[corr["level"] == "pooled"].set_index("metric")["estimate"],
        mean=corr[corr["level"] == "per_group_mean"].set_index("metric")["estimate"])
    order = list(dict.fromkeys(corr["metric"]))
    table = table.reindex(order)
    table.columns.name = None
    return table


def mean_scores(scores: pd.DataFrame, human: pd.DataFrame) -> pd.DataFrame:
    """Mean of every metric and of the human score per answer model (wide)."""
    wide = scores.pivot_table(index="answer_model", columns="metric", values="score",
                              aggfunc="mean", sort=False)
    wide.insert(0, "human", human.groupby("answer_model", sort=False)["human"].mean())
    wide.columns.name = None
    return wide.reset_index()


def run(config: Config) -> StudyResults:
    """Run study S2 and return its tables (no plotting).

    The bootstrap draws from ``numpy.random.default_rng(config.seed)``.

    Returns
    -------
    StudyResults
        ``answers``, ``ratings`` (per rater), ``human`` (mean per answer), ``judgments``
        (``run_judging`` rows, summaries included), ``scores`` (long, per answer and
        metric), ``parse_summary``, ``correlations`` (three levels, CIs), ``rho_table``,
        ``vocabulary``, ``answer_lengths``, ``mean_scores``, ``published`` (seed 001's
        table 3 beside this run's).
    """
    items = _qa.load_items(config.dataset, config.n_items)
    answers = _qa.load_answers(items, answer_models=config.answer_models,
                               temperature=config.answer_temperature,
                               responses_path=config.responses_path, dataset=config.dataset,
                               progress=config.progress)
    if config.human_scores_path:
        ratings = _qa.read_human_scores(config.human_scores_path, items=items,
                                        dimension=config.human_dimension)
    else:
        ratings = _qa.simulated_ratings(answers, n_raters=config.n_raters,
                                        rng_seed=config.rater_seed)
    human = _qa.human_means(ratings)
    fields = ["question", "reference", "response", "lang"]
    judgments, llm = judge_scores(
        answers, judge_specs(config),
        fields=fields + (["keywords"] if config.judge_sees_keywords else []),
        progress=config.progress)
    scores = pd.concat([_qa.metric_scores(answers, config.lexical_metrics), llm],
                       ignore_index=True)
    rng = np.random.default_rng(config.seed)
    corr = correlations(scores, human, n_boot=config.n_boot, rng=rng,
                        simulated_humans=not config.human_scores_path)
    models = list(dict.fromkeys(answers["answer_model"]))
    rho = rho_table(corr, models=models)
    return StudyResults({
        "answers": _qa.joined_keywords(answers),
        "ratings": ratings,
        "human": human,
        "judgments": judgments,
        "scores": scores,
        "parse_summary": _qa.parse_summary(scores),
        "correlations": corr,
        "rho_table": rho,
        "vocabulary": _qa.vocabulary_table(answers),
        "answer_lengths": _qa.answer_lengths(answers),
        "mean_scores": mean_scores(scores, human),
        "published": _published.published_comparison(rho, judge_models=config.judge_models),
    }, config=config)


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV (:func:`_tables`) and ``parse_counts``, the parsed and
    unparsed judge rows per cell."""
    return with_parse_counts(_tables(results), results)


def _tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames to write as CSV, without run-dependent columns (latency, cache hits)."""
    out = {name: results[name] for name in ("answers", "ratings", "scores", "parse_summary",
                                             "correlations", "vocabulary", "mean_scores")}
    out["rho_table"] = results["rho_table"].reset_index()
    out["judgments"] = results["judgments"].drop(columns=["latency_s", "cached"],
                                                 errors="ignore")
    return out


def headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records (:func:`_headline`), with the share of judge rows
    parsed, their counts and the structured-reply form each judge used."""
    return {**_headline(results), **headline_parse(results)}


def _headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records: rho per metric (pooled, mean), failures, lengths."""
    corr = results["correlations"]
    pick = {level: corr[corr["level"] == level].set_index("metric")["estimate"]
            for level in ("pooled", "per_group_mean")}
    vocab = results["vocabulary"].set_index("answer_model")
    human = results["human"].groupby("answer_model", sort=False)["human"].mean()
    summary = results["parse_summary"].set_index("metric")
    longest = str(vocab["mean_length_chars"].idxmax())
    per = corr[corr["level"] == "per_group"]
    return {
        "backend": "sim" if (corr["backend"] == "sim").any() else "real",
        "n_answers": len(results["answers"]),
        "n_answers_failed": int((~results["answers"]["ok"].astype(bool)).sum()),
        "answer_models": list(human.index),
        "rho_pooled": pick["pooled"].round(4).to_dict(),
        "rho_mean": pick["per_group_mean"].round(4).to_dict(),
        "n_failed": summary["n_failed"].astype(int).to_dict(),
        "human_mean": human.round(4).to_dict(),
        "mean_length_chars": vocab["mean_length_chars"].round(1).to_dict(),
        "n_unique_words": vocab["n_unique_words"].astype(int).to_dict(),
        "longest_model": longest,
        "rho_longest_model": per[per["answer_model"] == longest].set_index("metric")[
            "estimate"].round(4).to_dict(),
    }
