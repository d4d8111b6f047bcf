"""Study S4: configuration, the run, the tables it writes and the headline numbers (private;
re-exported by ``workbench.studies.s4_report_rubric``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.datasets import load_dataset
from workbench.studies._contract import StudyConfig, StudyResults, at_least, in_range, listed, param
from workbench.studies.common import selected
from workbench.studies.common.parsing import attempt, headline_parse, with_parse_counts
from workbench.studies.s4_report_rubric._analysis import (
    failure_counts,
    pilot_components,
    power_table,
    reports_needed,
    verbosity_effect,
    version_comparison,
)
from workbench.studies.s4_report_rubric._data import (
    PADDED,
    build_texts,
    judge_texts,
    score_log,
    totals,
)


@dataclass
class Config(StudyConfig):
    """Parameters of study S4: the notebook's ``parameters`` cell (:class:`StudyConfig`).

    ``sim/judge-b`` is the profile whose verbosity bias the mitigation prompt is built to
    shrink, ``sim/judge-a`` a low-bias control; ``padding_style`` is a style of
    :func:`workbench.perturb.verbosity_padding`.
    """

    dataset: str = "s4_reports"
    judge_models: list[str] = listed(["sim/judge-a", "sim/judge-b"], least=1, of=str)
    mitigation: list[bool] = listed([False, True], least=1, of=bool)
    temperature: float = 1.0
    trials: int = at_least(3, 1)
    padding_factor: float = 1.6
    padding_style: str = "mixed"
    bundled_twins: bool = True
    report_ids: list[str] = param([])
    version_a: str = "v1-single-pass"
    version_b: str = "v2-two-pass"
    power_effects: list[float] = param([1.0, 2.0, 3.0])
    power_n_items: list[int] = param([5, 10, 20, 40, 80])
    power_trials: int = at_least(1, 1)
    power_judges: int = at_least(1, 1)
    power_target: float = in_range(0.8, 0, 1, ends="()")
    n_sim: int = at_least(1000, 1)
    alpha: float = in_range(0.05, 0, 1, ends="()")
    shrink_judge: str = "sim/judge-b"

    def cross_check(self) -> None:
        if self.version_a == self.version_b:
            self.reject("version_a", f"and version_b must differ, both are {self.version_a!r}")


#: Columns of ``reports_needed`` (also when no power could be simulated).
NEEDED_COLUMNS = ("effect", "target", "n_items", "power", "power_analytic", "largest_n_tried",
                  "power_at_largest_n")


def _collect(config: Config) -> dict[str, pd.DataFrame]:
    """``texts`` (one row per report text judged), ``scores`` (one row per judge call,
    ``SCORE_COLUMNS``) and ``log`` (the seed's score log, ``LOG_COLUMNS``)."""
    texts = build_texts(load_dataset(config.dataset), padding_factor=config.padding_factor,
                        padding_style=config.padding_style, bundled_twins=config.bundled_twins)
    texts = selected(texts, "source_item", config.report_ids, field="report_ids",
                     what="reports", dataset=config.dataset)
    scores = judge_texts(texts, judge_models=list(config.judge_models),
                         mitigation=list(config.mitigation), temperature=config.temperature,
                         trials=config.trials, progress=config.progress)
    return {"texts": texts, "scores": scores, "log": score_log(scores)}


def _analyze(data: dict[str, pd.DataFrame], config: Config) -> dict[str, pd.DataFrame]:
    """Every analysis of S4 on the frames of :func:`_collect`: ``totals``,
    ``verbosity_effect`` (per judge x prompt, on the total), ``versions``, ``components``,
    ``power`` (drawn from ``numpy.random.default_rng(config.seed)``), ``reports_needed``,
    ``failures``."""
    tot, scores = totals(data["log"]), data["scores"]
    pilot = True if True in config.mitigation else config.mitigation[0]
    # with replies that did not parse, an analysis short of complete reports leaves a row
    # saying why (e.g. variance components need two complete reports)
    components = attempt("components", lambda: pilot_components(tot, mitigation=pilot), scores,
                         ("component", "variance", "share"))
    power = attempt("power", lambda: power_table(
        components, effects=config.power_effects, n_items=config.power_n_items,
        n_trials=config.power_trials, n_judges=config.power_judges, n_sim=config.n_sim,
        alpha=config.alpha, rng=np.random.default_rng(config.seed)), scores,
        ("effect", "n_items", "estimate", "power_analytic"))
    return {
        "totals": tot,
        "verbosity_effect": attempt("verbosity_effect", lambda: verbosity_effect(tot), scores,
                                    ("judge_model", "mitigation", "condition", "estimate")),
        "versions": attempt("versions", lambda: version_comparison(
            tot, version_a=config.version_a, version_b=config.version_b, alpha=config.alpha),
            scores, ("judge_model", "mitigation", "estimate")),
        "components": components,
        "power": power,
        "reports_needed": attempt("reports_needed", lambda: reports_needed(
            power, target=config.power_target).reindex(columns=NEEDED_COLUMNS), scores,
            NEEDED_COLUMNS),
        "failures": failure_counts(scores),
    }


def run(config: Config) -> StudyResults:
    """Run study S4: judge every report text, then every analysis; no plotting, nothing
    written (the notebook writes the score log with ``write_score_log``).

    Returns
    -------
    StudyResults
        ``texts``, ``scores``, ``log`` (the seed's score log), ``totals``,
        ``verbosity_effect``, ``versions``, ``components``, ``power``, ``reports_needed``,
        ``failures``.
    """
    data = _collect(config)
    return StudyResults({**data, **_analyze(data, config)}, config=config)


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV (:func:`_tables`) and ``parse_counts``, the parsed and
    unparsed judge rows per cell."""
    return with_parse_counts(_tables(results), results, names=["scores"])


def _tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The tables written as CSV: the analyses and the scores (without latencies, which
    vary from run to run)."""
    return {
        "verbosity_effect": results["verbosity_effect"],
        "versions": results["versions"],
        "components": results["components"],
        "power": results["power"],
        "reports_needed": results["reports_needed"],
        "scores": results["scores"].drop(columns="latency_s"),
    }


def _num(value: Any) -> float | None:
    value = float(value)
    return None if np.isnan(value) else value


def headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records (:func:`_headline`), with the share of judge rows
    parsed, their counts and the structured-reply form each judge used."""
    return {**_headline(results), **headline_parse(results, names=["scores"])}


def _headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the S4 notebook records (plain Python values).

    ``effect`` maps ``"<judge> | mitigation=<bool> | <condition>"`` to the mean padded -
    original difference of the total; ``shrink_judge`` / ``effect_without`` /
    ``effect_with`` give it for ``config.shrink_judge`` (operator padding) without and
    with the mitigation prompt, and ``shrinks`` says whether its size (absolute value) is smaller
    with the prompt; the version comparison of the first judge with the
    mitigation prompt (``version_*``); ``reports_needed`` per effect; call counts.
    """
    judge = results.config.shrink_judge
    eff = results["verbosity_effect"]
    effect = {f"{r.judge_model} | mitigation={bool(r.mitigation)} | {r.condition}": _num(r.estimate)
              for r in eff.itertuples(index=False)}
    mine = eff[(eff["judge_model"] == judge) & (eff["condition"] == PADDED)].set_index("mitigation")
    without = _num(mine.at[False, "estimate"]) if False in mine.index else None
    with_ = _num(mine.at[True, "estimate"]) if True in mine.index else None
    versions = results["versions"]
    pick = versions[versions["mitigation"]] if versions["mitigation"].any() else versions
    first = pick.iloc[0] if len(pick) else None
    needed = results["reports_needed"]
    scores, log = results["scores"], results["log"]
    return {
        "backend": "+".join(sorted(set(scores["backend"].dropna()))),
        "judges": sorted(set(scores["judge_model"])),
        "effect": effect,
        "shrink_judge": judge,
        "effect_without": without,
        "effect_with": with_,
        "shrinks": (without is not None and with_ is not None and abs(with_) < abs(without)),
        "version_judge": None if first is None else str(first["judge_model"]),
        "version_difference": None if first is None else _num(first["estimate"]),
        "version_ci": None if first is None else [_num(first["ci_low"]), _num(first["ci_high"])],
        "version_p_value": None if first is None else _num(first["p_value"]),
        "version_n": None if first is None else [int(first["n_a"]), int(first["n_b"])],
        "version_provisional": None if first is None else bool(first["provisional"]),
        "reports_needed": {f"{e:g}": (None if np.isnan(n) else int(n))
                           for e, n in zip(needed["effect"], needed["n_items"], strict=True)},
        "n_texts": int(results["texts"]["item_id"].nunique()),
        "n_calls": len(scores),
        "n_unparsed": int((~scores["parse_ok"].astype(bool)).sum()),
        "n_log_lines": len(log),
        "n_incomplete_totals": int(log["total"].isna().sum()),
    }
