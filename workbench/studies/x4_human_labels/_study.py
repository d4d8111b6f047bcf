"""Study X4: configuration, the simulated labelling loop, the simulation and the run."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.judges import JudgeSpec
from workbench.labels import (
    ActiveQueue,
    Annotator,
    LabelStore,
    annotate,
    expected_label,
    export_csv,
    export_label_studio,
    import_csv,
    import_label_studio,
    pairwise_judge,
    preference_labeller,
    sampled_judge,
    score_labeller,
    simulate_labelling,
)
from workbench.labels.assign import assign
from workbench.labels.standing import standing
from workbench.studies._contract import StudyResults, at_least, in_range, listed, one_of
from workbench.studies.common import judge_scores
from workbench.studies.common.bridge_qa import (
    BundledAnswers,
    human_means,
    load_answers,
    load_items,
    simulated_ratings,
)
from workbench.studies.raters import RATERS

STUDY = "x4_human_labels"
_KEYS = ["item_id", "answer_model", "answer_sample"]


@dataclass
class Config(BundledAnswers):
    """Settings of study X4; fields and defaults are the notebook's ``parameters`` cell.

    Parameters
    ----------
    dataset, n_items, answer_models, answer_temperature : see study X2
        The bundled answers (X2's defaults, so their cached calls are reused).
    judge_models : list of str
        G-Eval judges; the first is *the* judge whose scores PPI uses, the spread of all
        of them (a split jury) is its uncertainty.
    judge_template : str
        G-Eval template.
    n_raters, rater_seed : int
        The simulated raters of X2 whose mean is each answer's latent human score.
    annotator_bias, annotator_noise : list of float
        The simulated annotators (one per entry): bias and noise (SD) on the 1-5 scale.
    overlap : float
        Share of the answers labelled by every annotator first (reliability, ceiling).
    max_labels : int
        Most labels the active loop asks for.
    target_width : float
        The loop stops when the anytime interval is this narrow.
    seconds_per_label : float
        Mean time a simulated annotator spends on a label (human minutes).
    budget, n_studies : int
        Labels per simulated study and simulated studies per scenario.
    alpha, floor : float
        1 - confidence level; share of uniform sampling in the active rule.
    burn_in : int
        Labels drawn uniformly before the active rule is learnt.
    live : bool
        Label for real in JupyterLab: the notebook shows the labelling widget on
        ``label_dir`` (the simulated loop still runs, for comparison).
    label_dir : str
        Folder of the label store ("" = a temporary folder, deleted after the run).
    annotator : str
        Who labels in the widget (``live``).
    live_kind : str
        What people label in the widget: ``score`` (each answer, 1-5: the mean human
        score) or ``pairwise`` (two answers to one question: the win rate and the judge's
        accuracy against people).
    """

    n_raters: int = in_range(4, 1, len(RATERS))
    rater_seed: int = 0
    annotator_bias: list[float] = listed([0.0, -0.2, 0.2, 0.0], least=3)
    annotator_noise: list[float] = listed([0.3, 0.3, 0.4, 0.5], least=3)
    overlap: float = in_range(0.15, 0, 1)
    max_labels: int = at_least(150, 1)
    target_width: float = 0.5
    seconds_per_label: float = at_least(40.0, 0)
    budget: int = at_least(100, 1)
    n_studies: int = at_least(500, 1)
    alpha: float = in_range(0.05, 0, 1, ends="()")
    floor: float = in_range(0.2, 0, 1)
    burn_in: int = at_least(20, 0)
    live: bool = False
    label_dir: str = ""
    annotator: str = ""
    live_kind: str = one_of("score", ("score", "pairwise"))

    def cross_check(self) -> None:
        if len(self.annotator_bias) != len(self.annotator_noise):
            self.reject("annotator_bias", "and annotator_noise must have one entry per annotator "
                        f"each, got {len(self.annotator_bias)} and {len(self.annotator_noise)}")
        if self.live and not (self.label_dir and self.annotator):
            self.reject("live", "needs a label_dir (a shared folder) and an annotator")
        if self.live and self.live_kind == "pairwise" and len(self.answer_models) < 2:
            self.reject("live_kind", "pairwise needs at least two answer_models (a pair "
                        f"compares two answers to one question), got {self.answer_models!r}")
        if len(self.judge_models) < 2:
            self.reject("judge_models", "must hold at least two judges (their spread is the "
                        f"judge's uncertainty), got {self.judge_models!r}")


def annotators(config: Config) -> tuple[Annotator, ...]:
    """The simulated annotators of ``config``."""
    return tuple(Annotator(f"sim-ann-{i + 1}", float(b), float(n)) for i, (b, n) in
                 enumerate(zip(config.annotator_bias, config.annotator_noise, strict=True)))


def pool(config: Config, *, per_judge: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The answers (with their texts) and one row per answer: ``latent`` (the simulated
    raters' mean), ``prediction`` (the first judge's G-Eval score), ``uncertainty`` (SD
    over the judges), ``cost_usd`` (the judges' calls); with ``per_judge`` each judge's
    score too (a column per judge model)."""
    items = load_items(config.dataset, config.n_items)
    answers = load_answers(items, answer_models=config.answer_models,
                           temperature=config.answer_temperature, progress=config.progress)
    ratings = simulated_ratings(answers, n_raters=config.n_raters, rng_seed=config.rater_seed)
    specs = [(j, JudgeSpec(protocol="geval", judge_model=j, template=config.judge_template,
                           study=STUDY)) for j in config.judge_models]
    judgments, scores = judge_scores(answers, specs, progress=config.progress)
    wide = scores.pivot_table(index=_KEYS, columns="metric", values="score")
    frame = human_means(ratings).rename(columns={"human": "latent"}).set_index(_KEYS)
    frame = frame.join(wide, how="inner").dropna()
    first = config.judge_models[0]
    cost = (judgments.groupby(_KEYS)["cost_usd"].sum() if len(judgments)
            else pd.Series(dtype=float))
    out = pd.DataFrame({"latent": frame["latent"], "prediction": frame[first],
                        "uncertainty": frame[config.judge_models].std(axis=1, ddof=1)})
    out["cost_usd"] = cost.reindex(out.index).fillna(0.0)
    if per_judge:
        out = out.join(frame[config.judge_models])
    out = out.reset_index()
    out["answer_id"] = out[_KEYS].astype(str).agg("|".join, axis=1)
    texts = answers.assign(answer_id=answers[_KEYS].astype(str).agg("|".join, axis=1))
    return out, texts[texts["answer_id"].isin(out["answer_id"])].reset_index(drop=True)


def _label_time(rng: np.random.Generator, mean: float) -> float:
    return float(rng.gamma(4.0, mean / 4.0))


def labelling_loop(frame: pd.DataFrame, config: Config, store_dir: Path,
                   rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """Simulated annotators label through the store: first the overlap share (every
    annotator), then the active loop until the interval is ``target_width`` narrow."""
    panel = annotators(config)
    stores = {a.name: LabelStore(store_dir, annotator=a.name) for a in panel}
    reader = LabelStore(store_dir)
    # a simulation is reproducible from its seed: the sessions (which key the queue's
    # draws) are fixed names here, not a live store's host, process and random token
    for name, store in [("", reader), *stores.items()]:
        store.session = f"sim:{name}" if name else "sim"
    clock = datetime(2026, 1, 1, tzinfo=UTC)
    latent = frame["latent"].to_numpy()
    ids = frame["answer_id"].tolist()

    def give(i: int, who: int, source: str, prob: float | None = None) -> float:
        nonlocal clock
        y = float(annotate(latent[[i]], panel, np.array([who]), rng)[0])
        seconds = _label_time(rng, config.seconds_per_label)
        shown = clock
        clock = clock + timedelta(seconds=seconds)
        stores[panel[who].name].add(study=STUDY, item_id=ids[i], kind="score", value=y,
                                    shown_at=shown.isoformat(), given_at=clock.isoformat(),
                                    seconds=seconds, source=source, sampling_prob=prob)
        return y

    plan = assign(ids, [a.name for a in panel], overlap=config.overlap,
                  per_overlap=len(panel), rng=rng)
    plan = plan[plan["overlap"]]
    index = {a: i for i, a in enumerate(ids)}
    who_of = {a.name: k for k, a in enumerate(panel)}
    for row in plan.itertuples():
        give(index[row.item_id], who_of[row.annotator], "sim-overlap")
    # the active phase goes through the store as a live session does: the queue rebuilds
    # its sampler from the stored labels and their sampling probabilities before each draw
    queue = ActiveQueue(reader, frame.set_index("answer_id")["prediction"],
                        frame.set_index("answer_id")["uncertainty"], study=STUDY, rng=rng,
                        alpha=config.alpha, floor=config.floor, burn_in=config.burn_in,
                        t_star=config.budget)
    trace = []
    for t in range(config.max_labels):
        # each draw among the items its annotator has not labelled (the queue's design)
        drawn = queue.next_item(annotator=panel[t % len(panel)].name)
        if drawn is None:                       # this annotator has labelled every answer
            break
        item, prob = drawn
        y = give(index[item], t % len(panel), "sim-active", prob)
        row = queue.interval().iloc[0].to_dict()
        trace.append({**row, "item": item, "prob": prob, "label": y})
        if t + 1 >= config.burn_in and row["width"] <= config.target_width:
            break
    for s in stores.values():
        s.close()
    return {"loop": pd.DataFrame(trace)}


def round_trips(store_dir: Path, texts: pd.DataFrame, work: Path) -> pd.DataFrame:
    """The store's labels exported as CSV and as Label Studio JSON, imported into fresh
    stores, and compared with the originals column by column."""
    original = LabelStore(store_dir).labels()
    items = texts.drop(columns="item_id").rename(
        columns={"answer_id": "item_id", "response": "answer"})[["item_id", "question", "answer"]]
    rows = []
    for fmt in ("csv", "label-studio"):
        target = LabelStore(work / f"import-{fmt}", annotator="importer")
        if fmt == "csv":
            path = export_csv(original, work / "labels.csv")
            added = import_csv(target, path)
        else:
            path = export_label_studio(original, items, work / "labels-label-studio.json")
            added = import_label_studio(target, path)
        back = target.labels()
        target.close()
        same = back.reset_index(drop=True).equals(original.reset_index(drop=True))
        rows.append({"format": fmt, "n_labels": len(original), "n_imported": added,
                     "identical": bool(same)})
    return pd.DataFrame(rows)


#: Settings of the simulation's scenarios (see :func:`simulation`).
HARD_SHARES = (0.1, 0.2, 0.4)
NOISE_LEVELS = {"low": 0.3, "high": 0.8}


def simulation(frame: pd.DataFrame, config: Config, rng: np.random.Generator) -> pd.DataFrame:
    """Coverage and width of active vs uniform sampling, ``n_studies`` each, per scenario.

    The pool is the bundled answers (``latent``: the simulated raters' mean). Scenarios:

    - **G-Eval judge, jury spread**: the first judge's score, the SD over the judges as its
      uncertainty; the configured annotators.
    - **mean score, sample spread** (:func:`~workbench.labels.sampled_judge`): a share
      ``hard`` of :data:`HARD_SHARES` of the answers is hard (the judge's error SD 2 points
      instead of 0.2; its samples' SD, its uncertainty, half its error SD), annotators'
      noise SD ``low`` or ``high`` of :data:`NOISE_LEVELS` (biases as configured);
      ``informative`` or ``shuffled`` (the same uncertainty values over other answers).
    - **win rate (A), order flips** (:func:`~workbench.labels.pairwise_judge`: the six
      pairs of each question, view error 0.1, position bias 0.6, call noise 0.2; about a
      third of the pairs flip), annotators' noise ``low`` or ``high``, ``informative`` or
      ``shuffled``.
    """
    latent = frame["latent"].to_numpy()
    panels = {"config": annotators(config)}
    for level, noise in NOISE_LEVELS.items():
        panels[level] = tuple(Annotator(a.name, a.bias, noise) for a in panels["config"])
    pairs = frame.groupby("item_id").indices
    a_idx, b_idx = [], []
    for rows in pairs.values():
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                a_idx.append(rows[i])
                b_idx.append(rows[j])
    diff = latent[a_idx] - latent[b_idx]
    judge_rng = np.random.default_rng(rng.integers(2 ** 32))
    lab, target = score_labeller(latent, panels["config"])
    scenarios = [dict(quantity="mean score", scenario="G-Eval judge, jury spread",
                      informative="?", hard_share=np.nan, annotator_noise="config",
                      pred=frame["prediction"], unc=frame["uncertainty"], lab=lab,
                      target=target)]
    for level in NOISE_LEVELS:
        lab, target = score_labeller(latent, panels[level])
        for share in HARD_SHARES:
            seed = judge_rng.integers(2 ** 32)
            for informative in (True, False):
                sj = sampled_judge(latent, np.random.default_rng(seed), hard_share=share,
                                   informative=informative, hard=2.0, easy=0.2)
                kind = "informative" if informative else "shuffled"
                scenarios.append(dict(
                    quantity="mean score",
                    scenario=f"sample spread, hard {share:.0%}, noise {level}, {kind}",
                    informative=kind, hard_share=share, annotator_noise=level,
                    pred=sj["prediction"], unc=sj["uncertainty"], lab=lab, target=target))
    for level in NOISE_LEVELS:
        lab, target = preference_labeller(diff, panels[level])
        seed = judge_rng.integers(2 ** 32)
        for informative in (True, False):
            pj = pairwise_judge(diff, np.random.default_rng(seed), error=0.1,
                                position_bias=0.6, noise=0.2, informative=informative)
            kind = "informative" if informative else "shuffled"
            scenarios.append(dict(
                quantity="win rate (A)", scenario=f"order flips, noise {level}, {kind}",
                informative=kind, hard_share=float(pj["uncertainty"].mean()),
                annotator_noise=level, pred=pj["prediction"], unc=pj["uncertainty"],
                lab=lab, target=target))
    out = []
    for sc in scenarios:
        table = simulate_labelling(np.asarray(sc["pred"], float), np.asarray(sc["unc"], float),
                                   sc["lab"], sc["target"], budget=config.budget,
                                   n_studies=config.n_studies, alpha=config.alpha,
                                   floor=config.floor, burn_in=config.burn_in,
                                   rng=rng.integers(2 ** 32))
        out.append(table.assign(quantity=sc["quantity"], scenario=sc["scenario"],
                                informative=sc["informative"], hard_share=sc["hard_share"],
                                annotator_noise=sc["annotator_noise"], pool=len(sc["pred"])))
    return pd.concat(out, ignore_index=True)


_TABLES = {
    "pool": ["item_id", "answer_model", "answer_sample", "answer_id", "latent", "prediction",
             "uncertainty", "cost_usd"],
    "labels": ["label_id", "study", "item_id", "annotator", "kind", "value", "given_at",
               "seconds", "source"],
    "loop": ["estimate", "ci_low", "ci_high", "width", "wald_low", "wald_high", "n_labels",
             "lam", "ci_level", "item", "prob", "label", "truth"],
    "reliability": [], "pairs": [], "ceiling": [], "alt_test": [],
    "simulation": ["quantity", "scenario", "informative", "hard_share", "annotator_noise",
                   "method", "n_studies", "budget", "coverage", "coverage_se",
                   "coverage_anytime", "coverage_anytime_se", "width", "width_ratio",
                   "width_ratio_se", "ceiling", "wald_coverage", "wald_width", "distinct_items",
                   "ci_level", "target", "pool"],
    "round_trip": ["format", "n_labels", "n_imported", "identical"],
}


def run(config: Config) -> StudyResults:
    """Run study X4 (no plotting). ``numpy.random.default_rng(config.seed)`` draws, in
    this order: the loop (assignment, annotators, sampling), the standing bootstrap, the
    simulation."""
    rng = np.random.default_rng(config.seed)
    frame, texts = pool(config)
    with tempfile.TemporaryDirectory(prefix="x4-labels-") as tmp:
        store_dir = Path(config.label_dir) / "simulated" if config.label_dir else Path(tmp) / "store"
        out = labelling_loop(frame, config, store_dir, rng)
        labels = LabelStore(store_dir).labels(study=STUDY)
        judge = frame.set_index("answer_id")["prediction"]
        out.update(standing(labels[labels["source"] == "sim-overlap"], judge=judge,
                            n_boot=200, rng=rng))
        out["round_trip"] = round_trips(store_dir, texts, Path(tmp))
    out["labels"] = labels
    out["pool"] = frame
    out["simulation"] = simulation(frame, config, rng)
    # what the loop estimates: the panel's expected label, averaged over the answers
    truth = float(expected_label(frame["latent"].to_numpy(), annotators(config)).mean())
    out["loop"] = out["loop"].assign(truth=truth)
    return StudyResults(out, config=config)


def tables(results: StudyResults) -> dict[str, pd.DataFrame]:
    """The non-empty frames to write as CSV."""
    return {name: results[name] for name in _TABLES if name in results and len(results[name])}


def _round(value: Any) -> Any:
    return None if value is None or pd.isna(value) else round(float(value), 4)


def headline(results: StudyResults) -> dict[str, Any]:
    """The numbers the notebook records."""
    loop, labels, pool_ = results["loop"], results["labels"], results["pool"]
    last = loop.iloc[-1]
    sim = results["simulation"]
    active = sim[sim["method"] == "active"].set_index("scenario")
    uniform = sim[sim["method"] == "uniform"].set_index("scenario")
    rel = results["reliability"].set_index("measure") if len(results["reliability"]) else None
    ceiling = results["ceiling"].set_index("who") if len(results["ceiling"]) else None
    return {
        "n_answers": len(pool_),
        "n_labels": len(labels),
        "n_active_labels": int(last["n_labels"]),
        "human_minutes": _round(labels["seconds"].sum() / 60),
        "judge_cost_usd": _round(pool_["cost_usd"].sum()),
        "estimate": _round(last["estimate"]),
        "truth": _round(last["truth"]),
        "ci": [_round(last["ci_low"]), _round(last["ci_high"])],
        "width": _round(last["width"]),
        "stopped_at_width": bool(last["width"] <= results.config.target_width),
        "krippendorff_alpha": None if rel is None else _round(rel.loc["krippendorff_alpha", "estimate"]),
        "human_ceiling": None if ceiling is None else _round(ceiling.loc["human ceiling", "estimate"]),
        "judge_r": None if ceiling is None else _round(ceiling.loc["judge", "estimate"]),
        "alt_test_omega": (_round(results["alt_test"]["omega"].iloc[0])
                           if len(results["alt_test"]) else None),
        "round_trip_identical": {r["format"]: bool(r["identical"])
                                 for r in results["round_trip"].to_dict("records")},
        "coverage": {s: _round(v) for s, v in active["coverage"].items()},
        "coverage_anytime": {s: _round(v) for s, v in active["coverage_anytime"].items()},
        "coverage_uniform": {s: _round(v) for s, v in uniform["coverage"].items()},
        "width_ratio": {s: _round(v) for s, v in active["width_ratio"].items()},
        "width_ratio_se": {s: _round(v) for s, v in active["width_ratio_se"].items()},
        "n_studies": int(sim["n_studies"].iloc[0]),
    }
