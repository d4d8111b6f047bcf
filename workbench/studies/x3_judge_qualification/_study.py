"""Study X3: configuration, analyses of the bundled set and the run (private)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.datasets import load_table
from workbench.judges import JudgeSpec
from workbench.qualify import (
    alt_test,
    bradley_terry,
    jury_vs_best,
    labels_needed,
    leave_one_out_agreement,
    length_controlled_win_rate,
    ppi_mean,
    ppi_simulation,
    qualification_tables,
    selective_report,
)
from workbench.studies._contract import StudyResults, at_least, in_range, listed
from workbench.studies.common import judge_scores
from workbench.studies.common.bridge_qa import (
    BundledDesign,
    human_means,
    load_answers,
    load_items,
    simulated_ratings,
)
from workbench.studies.common.pairwise import (
    PAIR_KEYS,
    majority_label,
    pairwise_items,
    pairwise_judgments,
    rater_preferences,
)
from workbench.studies.common.parsing import attempt, headline_parse, with_parse_counts
from workbench.studies.raters import RATERS
from workbench.studies.x3_judge_qualification._bundled import (
    item_split,
    score_preferences,
    selective_frame,
    shown_order,
    wide_ratings,
    wide_scores,
    win_indicators,
)
from workbench.studies.x3_judge_qualification._releases import (
    llmbar_analysis,
    pandalm_qualification,
    unieval_ppi,
)

STUDY = "x3_judge_qualification"


@dataclass
class Config(BundledDesign):
    """Settings of study X3: the notebook's ``parameters`` cell (:class:`StudyConfig`).

    The answers, raters and judges default to study X2's, so X3 reuses X2's cached calls;
    here the ``judge_models`` are qualified against the raters and put in juries. With
    ``table``: human ceiling, alternative annotator test, PPI labels needed,
    Bradley-Terry and selective judging, each where the table supports it.
    """

    pairwise_judges: list[str] = listed(["sim/judge-a", "sim/judge-d"])
    pairwise_reference: bool = True
    n_raters: int = in_range(4, 3, len(RATERS))
    rater_seed: int = 0
    epsilon: float = 0.2
    fdr: float = in_range(0.05, 0, 1, ends="()")
    ppi_judge: str = "sim/judge-a"
    ppi_labels: int = at_least(40, 1)
    ppi_sizes: list[int] = listed([10, 20, 40, 80, 120], least=1)
    ppi_reps: int = at_least(300, 1)
    target_width: float = 0.5
    calibration_share: float = in_range(0.5, 0, 1, ends="()")
    lc_baseline: str = "sim/answer-mid"
    selective_judge: str = "sim/judge-a"
    risk_alpha: float = in_range(0.1, 0, 1, ends="()")
    risk_delta: float = in_range(0.1, 0, 1, ends="()")
    pandalm_dir: str = ""
    unieval_dir: str = ""
    llmbar_dir: str = ""
    llmbar_judge: str = ""

    def cross_check(self) -> None:
        super().cross_check()
        if not self.bundled:
            return
        for name, among in (("ppi_judge", "judge_models"), ("selective_judge", "pairwise_judges"),
                            ("lc_baseline", "answer_models")):
            if getattr(self, name) not in getattr(self, among):
                self.reject(name, f"{getattr(self, name)!r} is not in {among} {getattr(self, among)!r}")


def _label(judge: str) -> str:
    return judge.rsplit("/", 1)[-1]


def _standardise(scores: pd.DataFrame) -> pd.DataFrame:
    """Each column as z-scores over its non-missing items (a constant column: 0)."""
    sd = scores.std(ddof=0).replace(0, 1)
    return (scores - scores.mean()) / sd


def _backend(values: pd.Series) -> str:
    """The distinct values of a ``backend`` (or ``source``) column, sorted and joined by '+'."""
    return "+".join(sorted(set(values.dropna().astype(str))))


# --- the analyses of the bundled set -----------------------------------------------------------

def qualification(humans: pd.DataFrame, judges: pd.DataFrame, *, epsilon: float, fdr: float,
                  n_boot: int, rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """Agreement beside the human ceiling (Pearson r with the other raters' mean, leave
    one rater out) and the alternative annotator test (``neg_rmse``) per judge.

    The G-Eval scores are continuous (probability-weighted) and the raters' integers, on
    scales used differently: before ``neg_rmse`` every scorer — each rater and each
    judge — is standardised (z-scores over the items it scored), as the Alt-Test
    authors advise for scores on different scales: the test compares where each scorer
    places an answer relative to its own mean and spread, not a judge's offset or
    compression of the scale."""
    agreement = leave_one_out_agreement(humans, judges, measure="pearson", n_boot=n_boot,
                                        rng=rng)
    z_humans, z_judges = _standardise(humans), _standardise(judges)
    per_rater, summary = [], []
    for judge in judges.columns:
        table, result = alt_test(z_humans, z_judges[judge].to_numpy(), epsilon=epsilon,
                                 alpha=fdr, metric="neg_rmse")
        per_rater.append(table.assign(judge_model=judge))
        summary.append({"judge_model": judge, **result})
    summary = pd.DataFrame(summary).rename(columns={"alpha": "fdr"})
    agreement = agreement.merge(summary[["judge_model", "omega", "passed"]],
                                left_on="who", right_on="judge_model", how="left"
                                ).drop(columns="judge_model")
    return {"agreement": agreement, "alt_test": pd.concat(per_rater, ignore_index=True),
            "alt_test_summary": summary}


def ppi_analysis(human: np.ndarray, judge: np.ndarray, config: Config,
                 rng: np.random.Generator, wins: tuple[np.ndarray, np.ndarray] | None = None
                 ) -> dict[str, pd.DataFrame]:
    """PPI intervals from ``config.ppi_labels`` random human labels: of the mean human
    score (``measure`` ``mean score``) and, given ``wins`` (human and judge win indicators
    of one model's pairs), of its win rate; the mean's coverage and width by simulation
    on the same data, and the labels needed for the target width. Items missing either
    label are left out of each. ``truth``: the mean of the remaining human labels."""
    intervals = []
    for measure, (y, yhat) in (("mean score", (human, judge)),
                               *((("win rate", wins),) if wins is not None else ())):
        ok = ~np.isnan(y) & ~np.isnan(yhat)
        y, yhat = y[ok], yhat[ok]
        mask = np.zeros(len(y), dtype=bool)
        mask[rng.choice(len(y), min(config.ppi_labels, len(y) - 1), replace=False)] = True
        intervals.append(ppi_mean(y[mask], yhat[mask], yhat[~mask]).assign(
            measure=measure, truth=float(np.mean(y))))
    interval = pd.concat(intervals, ignore_index=True)
    ok = ~np.isnan(human) & ~np.isnan(judge)
    sizes = [n for n in config.ppi_sizes if n < ok.sum()]
    simulation = ppi_simulation(human[ok], judge[ok], sizes, n_rep=config.ppi_reps, rng=rng)
    return {"ppi": interval, "ppi_simulation": simulation,
            "ppi_needed": labels_needed(simulation, config.target_width)}


def bt_analysis(shown: pd.DataFrame, lc_baseline: str) -> dict[str, pd.DataFrame]:
    """Bradley-Terry with position and length difference (and self-preference when a
    judge also answered) per pairwise judge; length-controlled win rates vs the baseline.
    Standard errors are cluster-robust by pair (each pair is judged in both orders)."""
    fits, lc = [], []
    for judge, part in shown.groupby("judge_model", sort=False):
        covariates = ["length_diff"] + (["self_preference"]
                                        if part["self_preference"].abs().sum() else [])
        fits.append(bradley_terry(part, covariates=covariates, reference=lc_baseline,
                                  groups=PAIR_KEYS).assign(judge_model=judge))
        for model in sorted(set(part["first"]) | set(part["second"])):
            if model == lc_baseline:
                continue
            vs = part[((part["first"] == model) & (part["second"] == lc_baseline))
                      | ((part["first"] == lc_baseline) & (part["second"] == model))]
            sign = np.where(vs["first"] == model, 1.0, -1.0)
            wins = np.where(sign > 0, vs["first_wins"], 1 - vs["first_wins"])
            pair = vs[PAIR_KEYS].astype(str).agg("|".join, axis=1).to_numpy()
            lc.append({"judge_model": judge, "answer_model": model, "baseline": lc_baseline,
                       **length_controlled_win_rate(wins, sign * vs["length_diff"],
                                                    groups=pair)})
    backend = shown["backend"].iloc[0]
    return {"bradley_terry": pd.concat(fits, ignore_index=True).assign(backend=backend),
            "lc_win_rate": pd.DataFrame(lc).assign(backend=backend)}


# --- the study ---------------------------------------------------------------------------------

_AGREEMENT = ["who", "kind", "measure", "estimate", "ci_low", "ci_high", "ci_level", "n_items",
              "n_used", "n_missing", "n_raters", "n_boot", "omega", "passed", "backend"]
_ALT_TEST = ["rater", "n_items", "n_judge_missing", "rho_f", "rho_h", "test_statistic",
             "p_value", "p_adjusted", "significant", "judge_model"]
_ALT_SUMMARY = ["judge_model", "omega", "passed", "advantage", "n_raters", "epsilon", "fdr"]
_PPI = ["method", "estimate", "ci_low", "ci_high", "width", "ci_level", "n_labeled",
        "n_unlabeled"]
_PPI_SIM = ["n_labeled", "method", "coverage", "width", "n_rep", "ci_level"]
_BT = ["term", "a", "estimate", "se", "ci_low", "ci_high", "p_value", "n", "ci_level",
       "judge_model", "backend"]
_SELECTIVE = ["policy", "threshold", "coverage", "agreement", "n_items", "n", "alpha", "delta",
              "guarantee_met", "judge_model", "backend"]

#: The frames :func:`tables` writes (those that are not empty), with their columns (an
#: analysis that does not run leaves an empty frame with these columns).
_TABLES: dict[str, list[str]] = {
    "ratings": ["item_id", "answer_model", "answer_sample", "rater", "score", "source"],
    "scores": ["item_id", "answer_model", "answer_sample", "metric", "family", "judge_model",
               "score", "parse_ok", "error", "backend"],
    "agreement": [*_AGREEMENT, "rater_source"],
    "alt_test": _ALT_TEST,
    "alt_test_summary": _ALT_SUMMARY,
    "ppi": [*_PPI, "measure", "truth", "backend", "rater_source"],
    "ppi_simulation": [*_PPI_SIM, "backend", "rater_source"],
    "ppi_needed": ["method", "width", "n_labeled"],
    "jury": ["who", "kind", "weight", "estimate", "mae", "b", "mean_diff", "test_statistic",
             "p_value", "p_value_wilcoxon", "n_items", "backend", "rater_source"],
    "bradley_terry": _BT,
    "lc_win_rate": ["judge_model", "answer_model", "baseline", "win_rate", "estimate",
                    "ci_low", "ci_high", "length_coef", "n", "backend"],
    "selective": [*_SELECTIVE, "rater_source"],
    "selective_items": ["item_id", "model_a", "model_b", "verdict", "backend", "majority",
                        "confidence", "correct", "calibration"],
    "pandalm_agreement": _AGREEMENT,
    "pandalm_alt_test": [*_ALT_TEST, "backend"],
    "pandalm_alt_test_summary": [*_ALT_SUMMARY, "backend"],
    "unieval_ppi": [*_PPI, "dimension", "truth", "backend"],
    "unieval_ppi_simulation": [*_PPI_SIM, "dimension", "backend"],
    "llmbar_bradley_terry": _BT,
    "llmbar_selective": _SELECTIVE,
    "table_ceiling": ["who", "kind", "measure", "estimate", "ci_low", "ci_high", "ci_level",
                      "n_items", "n_used", "n_missing", "n_raters", "n_boot", "dimension"],
    "table_alt_test": ["judge", "dimension", "omega", "passed", "advantage", "n_raters",
                       "epsilon", "alpha"],
    "table_ppi_simulation": [*_PPI_SIM, "judge"],
    "table_ppi_needed": ["method", "width", "n_labeled", "judge", "n_pilot"],
    "table_bradley_terry": [c if c != "judge_model" else "judge" for c in _BT
                            if c != "backend"],
    "table_selective": [c if c != "judge_model" else "judge" for c in _SELECTIVE
                        if c != "backend"],
    "table_skipped": ["section", "reason"],
    "not_computed": ["section", "reason"],
}

#: The user-table frames and the :func:`workbench.qualify.qualification_tables` name of each.
_USER_TABLES = {"table_ceiling": "ceiling", "table_alt_test": "alt_test",
                "table_ppi_simulation": "ppi_simulation", "table_ppi_needed": "ppi_needed",
                "table_bradley_terry": "bradley_terry", "table_selective": "selective",
                "table_skipped": "skipped"}


def user_table_qualification(path: str, spec: dict, *, by: str, epsilon: float, n_boot: int,
                             n_rep: int, seed: int) -> dict[str, pd.DataFrame]:
    """A user's judge table (:func:`workbench.datasets.load_table` with ``spec``) through
    :func:`workbench.qualify.qualification_tables`: the human ceiling and the alternative
    annotator test (the ceiling from two annotators, the test from three), PPI labels needed, Bradley-Terry (systems)
    and selective judging (confidence); ``table_skipped`` says what the table could not
    support and why."""
    found = qualification_tables(load_table(path, **spec), by=by, n_boot=n_boot, n_rep=n_rep,
                                 epsilon=epsilon, rng=seed,
                                 sections=["ceiling", "alt_test", "ppi", "bradley_terry",
                                           "selective"])
    return {name: found[key].reindex(columns=_TABLES[name])  # pairwise: no dimension
            for name, key in _USER_TABLES.items() if key in found}


def run(config: Config) -> StudyResults:
    """Run study X3 and return its tables (no plotting); absent analyses are empty frames
    with their columns.

    ``numpy.random.default_rng(config.seed)`` draws, in this order: the agreement
    bootstrap, the PPI labelled subset and simulations, the jury calibration split, the
    selective-judging calibration split; then PandaLM, UniEval and LLMBar. A judge table
    of your own (``config.table``) draws from its own generator seeded by ``config.seed``.
    """
    rng = np.random.default_rng(config.seed)
    out = {name: pd.DataFrame() for name in _TABLES}
    if config.bundled:
        items = load_items(config.dataset, config.n_items)
        answers = load_answers(items, answer_models=config.answer_models,
                               temperature=config.answer_temperature, progress=config.progress)
        ratings = simulated_ratings(answers, n_raters=config.n_raters, rng_seed=config.rater_seed)
        specs = [(judge, JudgeSpec(protocol="geval", judge_model=judge,
                                   template=config.judge_template, study=STUDY))
                 for judge in config.judge_models]
        _, scores = judge_scores(answers, specs, progress=config.progress)
        humans = wide_ratings(ratings)
        judges = wide_scores(scores, humans.index)
        human = human_means(ratings).set_index(humans.index.names)["human"].reindex(humans.index)
        out.update(ratings=ratings, scores=scores)
        skipped: list[dict] = []

        def guarded(label: str, step) -> None:  # a row saying why, when unparsed replies stop it
            note = attempt(label, lambda: step() or pd.DataFrame(), scores)
            if "note" in note.columns and len(note) == 1 and str(note["note"].iloc[0]).startswith("not computed"):
                skipped.append({"section": label, "reason": note["note"].iloc[0]})

        guarded("agreement", lambda: out.update(qualification(
            humans, judges, epsilon=config.epsilon, fdr=config.fdr, n_boot=config.n_boot, rng=rng)))
        pairs = pairwise_items(answers, config.answer_models)
        majority = majority_label(rater_preferences(ratings, pairs))
        judged = majority.merge(score_preferences(scores, pairs).query(
            "metric == @config.ppi_judge"), on=PAIR_KEYS, how="left")
        model = config.answer_models[0]
        wins = (win_indicators(judged["majority"], judged["model_a"], judged["model_b"], model),
                win_indicators(judged["verdict"], judged["model_a"], judged["model_b"], model))

        def ppi() -> None:
            found = ppi_analysis(human.to_numpy(float), judges[config.ppi_judge].to_numpy(float),
                                 config, rng, wins=wins)
            found["ppi"]["measure"] = found["ppi"]["measure"].replace("win rate", f"win rate: {model}")
            out.update(found)

        guarded("ppi", ppi)
        calibration = item_split(humans.reset_index()["item_id"], config.calibration_share, rng)
        guarded("jury", lambda: out.update(jury=jury_vs_best(judges, human, calibration)))
        pairwise = pairwise_judgments(pairs, config.pairwise_judges,
                                      use_reference=config.pairwise_reference, study=STUDY,
                                      progress=config.progress)
        guarded("bradley_terry", lambda: out.update(bt_analysis(shown_order(pairwise, pairs),
                                                                config.lc_baseline)))

        def selective() -> None:
            sel = selective_frame(pairwise, score_preferences(scores, pairs), majority,
                                  config.selective_judge)
            split = item_split(sel["item_id"], config.calibration_share, rng)
            out["selective"] = selective_report(sel["confidence"], sel["correct"], split,
                                                alpha=config.risk_alpha, delta=config.risk_delta
                                                ).assign(judge_model=config.selective_judge)
            out["selective_items"] = sel.assign(calibration=split)

        guarded("selective", selective)
        # the judges' numbers come from their calls (``backend`` of the scores and
        # verdicts); the human labels they are compared with from the simulated raters
        backend = _backend(scores["backend"])
        raters = _backend(ratings["source"])
        for name in ("agreement", "ppi", "ppi_simulation", "jury"):
            out[name] = out[name].assign(backend=backend, rater_source=raters)
        out["selective"] = out["selective"].assign(backend=_backend(pairwise["backend"]),
                                                   rater_source=raters)
        out["not_computed"] = pd.DataFrame(skipped, columns=["section", "reason"])
    if config.pandalm_dir:
        out.update(pandalm_qualification(config.pandalm_dir, epsilon=config.epsilon,
                                         fdr=config.fdr, n_boot=config.n_boot, rng=rng))
    if config.unieval_dir:
        out.update(unieval_ppi(config.unieval_dir, n_labeled=config.ppi_labels,
                               sizes=config.ppi_sizes, n_rep=config.ppi_reps, rng=rng))
    if config.llmbar_dir:
        out.update(llmbar_analysis(config.llmbar_dir, judge=config.llmbar_judge,
                                   alpha=config.risk_alpha, delta=config.risk_delta,
                                   share=config.calibration_share, rng=rng))
    if config.table:
        out.update(user_table_qualification(config.table, config.table_spec,
                                            by=config.table_by, epsilon=config.epsilon,
                                            n_boot=config.n_boot, n_rep=config.ppi_reps,
                                            seed=config.seed))
    empty = {name: pd.DataFrame(columns=columns) for name, columns in _TABLES.items()
             if not len(out[name])}
    return StudyResults({**out, **empty}, config=config)


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The frames written as CSV (:func:`_tables`) and ``parse_counts``, the parsed and
    unparsed judge rows per cell."""
    return with_parse_counts(_tables(results), results, names=["scores"])


def _tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The non-empty frames to write as CSV."""
    return {name: results[name] for name in _TABLES if len(results[name])}


def _round(value: Any) -> Any:
    return None if value is None or pd.isna(value) else round(float(value), 4)


def headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records (:func:`_headline`), with the share of judge rows
    parsed, their counts and the structured-reply form each judge used."""
    return {**_headline(results), **headline_parse(results, names=["scores"])}


def _headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records (present analyses only)."""
    out: dict[str, Any] = {}
    bundled = ("agreement", "alt_test_summary", "ppi", "ppi_simulation", "ppi_needed", "jury",
               "bradley_terry", "lc_win_rate", "selective")
    if len(results["not_computed"]):  # replies that did not parse left these out
        out["not_computed"] = dict(zip(results["not_computed"]["section"],
                                       results["not_computed"]["reason"], strict=True))
    if all(len(results[name]) for name in bundled):
        agree = results["agreement"].set_index("who")
        summary = results["alt_test_summary"].set_index("judge_model")
        ppi = results["ppi"][results["ppi"]["measure"] == "mean score"].set_index("method")
        win = results["ppi"][results["ppi"]["measure"] != "mean score"].set_index("method")
        sim = results["ppi_simulation"]
        needed = results["ppi_needed"].set_index("method")["n_labeled"]
        jury = results["jury"].set_index("who")
        bt = results["bradley_terry"]
        position = bt[bt["term"] == "position"].set_index("judge_model")
        length = bt[bt["term"] == "length_diff"].set_index("judge_model")
        sel = results["selective"].set_index("policy")
        out.update(
            backend=str(results["agreement"]["backend"].iloc[0]),
            rater_source=str(results["agreement"]["rater_source"].iloc[0]),
            n_answers=len(results["ratings"].drop_duplicates(["item_id", "answer_model"])),
            human_ceiling=_round(agree.loc["human ceiling", "estimate"]),
            judge_r={_label(j): _round(agree.loc[j, "estimate"]) for j in summary.index},
            alt_test_omega={_label(j): _round(v) for j, v in summary["omega"].items()},
            alt_test_passed={_label(j): bool(v) for j, v in summary["passed"].items()},
            ppi_n_labeled=int(ppi.loc["ppi", "n_labeled"]),
            ppi_estimate=_round(ppi.loc["ppi", "estimate"]),
            ppi_ci=[_round(ppi.loc["ppi", "ci_low"]), _round(ppi.loc["ppi", "ci_high"])],
            ppi_width=_round(ppi.loc["ppi", "width"]),
            classical_width=_round(ppi.loc["classical", "width"]),
            human_mean=_round(ppi.loc["ppi", "truth"]),
            ppi_win_rate=_round(win.loc["ppi", "estimate"]),
            ppi_win_rate_ci=[_round(win.loc["ppi", "ci_low"]), _round(win.loc["ppi", "ci_high"])],
            human_win_rate=_round(win.loc["ppi", "truth"]),
            ppi_coverage={f"{m} n={n}": _round(c) for m, n, c in
                          zip(sim["method"], sim["n_labeled"], sim["coverage"], strict=True)},
            labels_needed={m: None if pd.isna(v) else int(v) for m, v in needed.items()},
            jury_r={k: _round(v) for k, v in jury["estimate"].items()},
            jury_p_value={k: _round(v) for k, v in jury["p_value"].dropna().items()},
            bt_position={_label(j): _round(v) for j, v in position["estimate"].items()},
            bt_length={_label(j): _round(v) for j, v in length["estimate"].items()},
            lc_win_rate={f"{_label(j)} | {m}": _round(v) for j, m, v in zip(
                results["lc_win_rate"]["judge_model"], results["lc_win_rate"]["answer_model"],
                results["lc_win_rate"]["estimate"], strict=True)},
            selective_threshold=_round(sel.loc["selective", "threshold"])
            if np.isfinite(sel.loc["selective", "threshold"]) else None,
            selective_coverage=_round(sel.loc["selective", "coverage"]),
            selective_agreement=_round(sel.loc["selective", "agreement"]),
            all_items_agreement=_round(sel.loc["all items", "agreement"]),
        )
    if len(results["pandalm_agreement"]):
        agree = results["pandalm_agreement"].set_index("who")
        summary = results["pandalm_alt_test_summary"].set_index("judge_model")
        out.update(pandalm_ceiling=_round(agree.loc["human ceiling", "estimate"]),
                   pandalm_kappa={j: _round(agree.loc[j, "estimate"]) for j in summary.index},
                   pandalm_omega={j: _round(v) for j, v in summary["omega"].items()})
    if len(results["unieval_ppi"]):
        ppi = results["unieval_ppi"].query("method == 'ppi'").set_index("dimension")
        out.update(unieval_ppi={d: [_round(r["ci_low"]), _round(r["ci_high"])]
                                for d, r in ppi.iterrows()},
                   unieval_truth={d: _round(v) for d, v in ppi["truth"].items()},
                   unieval_n_labeled=int(ppi["n_labeled"].max()))
        sim = results["unieval_ppi_simulation"]
        if len(sim):
            part = sim[sim["method"] == "ppi"]
            out["unieval_coverage"] = {f"{d} n={n}": _round(c) for d, n, c in zip(
                part["dimension"], part["n_labeled"], part["coverage"], strict=True)}
    if len(results["llmbar_bradley_terry"]):
        bt = results["llmbar_bradley_terry"]
        position = bt[bt["term"] == "position"].set_index("judge_model")["estimate"]
        out["llmbar_position"] = {j: _round(v) for j, v in position.items()}
    if len(results["table_alt_test"]):
        alt = results["table_alt_test"]
        out.update(table_alt_test_omega={j: _round(v) for j, v in zip(alt["judge"], alt["omega"],
                                                                      strict=True)},
                   table_alt_test_passed={j: bool(v) for j, v in zip(alt["judge"], alt["passed"],
                                                                     strict=True)})
    if len(results["table_ceiling"]):
        ceiling = results["table_ceiling"]
        out["table_ceiling"] = {w: _round(v) for w, v in zip(ceiling["who"], ceiling["estimate"],
                                                             strict=True)}
    if len(results["table_ppi_needed"]):
        needed = results["table_ppi_needed"]
        out["table_labels_needed"] = {f"{j} | {m}": None if pd.isna(n) else int(n) for j, m, n in
                                      zip(needed["judge"], needed["method"],
                                          needed["n_labeled"], strict=True)}
    if len(results["llmbar_selective"]):
        sel = results["llmbar_selective"].set_index("policy")
        out.update(llmbar_selective_coverage=_round(sel.loc["selective", "coverage"]),
                   llmbar_selective_agreement=_round(sel.loc["selective", "agreement"]))
    return out
