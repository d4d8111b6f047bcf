"""X1 probes: the config, the answers, every perturbation operator, the judge calls."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench import perturb
from workbench.datasets import load_dataset
from workbench.errors import ProviderError
from workbench.judges import JudgeSpec, run_judging
from workbench.studies._contract import StudyConfig, at_least, listed, one_of, param
from workbench.studies.common import generate_answers

STUDY = "x1_bias_probes"
#: Single-score protocols the score probes can use.
SCORE_PROTOCOLS = ("holistic_simple", "holistic", "geval")
#: The pairwise probe: the pairwise protocol judges both orders, i.e. with and without
#: ``perturb.position_swap``.
PAIRWISE_OPERATORS = frozenset({"position_swap"})
#: Every operator of :mod:`workbench.perturb` but the baseline, in a fixed order.
ALL_OPERATORS = tuple(sorted(set(perturb.OPERATORS) - {"none"}))
DEFAULT_JUDGES = (
    "sim/judge-a",
    "sim/judge-b",
    "sim/judge-c",
    "sim/judge-d",
    "sim/judge-e",
    "sim/judge-f",
)


def probe_kind(operator: str) -> str:
    """How an operator probes a judge.

    ``answer``: the judged text changes (padding, citation, author label …) while the
    content is kept or rewritten; ``question``: a cognitive-bias cue is injected into the
    question, the answer models answer the cued question and the judges score those
    answers (seed 002's category 3 → 4); ``pairwise``: the order of two answers shown to
    a pairwise judge is swapped.
    """
    if operator in PAIRWISE_OPERATORS:
        return "pairwise"
    if operator in perturb.QUESTION_OPERATORS:
        return "question"
    if operator in perturb.OPERATORS:
        return "answer"
    raise ValueError(
        f"unknown perturbation {operator!r}; known: {', '.join(sorted(perturb.OPERATORS))}"
    )


def _operators_problem(names: list[str] | dict[str, Any]) -> str | None:
    """What is wrong with operator names (``operators``, the keys of ``operator_params``)."""
    if isinstance(names, list) and "none" in names:
        return "must leave out 'none': it is the baseline and always run"
    unknown = [name for name in names if name not in perturb.OPERATORS]
    if unknown:
        return f"has unknown perturbation(s) {unknown}; known: {', '.join(sorted(perturb.OPERATORS))}"
    return None


@dataclass
class Config(StudyConfig):
    """Parameters of the bias-probe study: the notebook's ``parameters`` cell
    (:class:`StudyConfig`). ``rewrite_model`` applies unless ``operator_params`` names
    one; ``perturb_seed`` is also the LLM operators' sample index; ``llmbar_dir`` and ``judgebench_dir`` relative paths are read from the working
    folder, else from the project root.
    """

    dataset: str = "s3_hiv_en"
    items_per_category: int = at_least(0, 0)
    answer_models: list[str] = listed(
        ["sim/answer-strong", "sim/answer-mid", "sim/answer-weak"], least=1)
    answer_temperature: float = 1.0
    judge_models: list[str] = listed(list(DEFAULT_JUDGES))
    operators: list[str] = param(list(ALL_OPERATORS), check=_operators_problem)
    operator_params: dict[str, dict[str, Any]] = param({}, check=_operators_problem)
    rewrite_model: str = "sim/paraphraser"
    self_label_author: str = one_of("judge", ("judge", "answer"))
    protocol: str = one_of("holistic_simple", SCORE_PROTOCOLS)
    use_reference: bool = True
    judge_temperature: float = 0.0
    trials: int = at_least(1, 1)
    perturb_seed: int = 0
    llmbar_dir: str = ""
    judgebench_dir: str = ""

    def cross_check(self) -> None:
        if "position_swap" in self.operators and len(self.answer_models) < 2:
            self.reject("operators", "holds position_swap, which needs two or more "
                        f"answer_models, got {self.answer_models!r}")

    def params_for(self, operator: str) -> dict[str, Any]:
        """The keyword arguments ``operator`` is applied with."""
        params = dict(self.operator_params.get(operator, {}))
        if operator in perturb.LLM_OPERATORS:
            params.setdefault("model", self.rewrite_model)
        return params


def load_items(dataset: str, *, items_per_category: int = 0) -> pd.DataFrame:
    """The data set's questions: the first ``items_per_category`` of each category (all
    when 0; the first ones overall when the set has no ``category`` column)."""
    items = load_dataset(dataset)["items"]
    if not items_per_category:
        return items
    if "category" in items.columns:
        return items.groupby("category", sort=False).head(items_per_category).reset_index(drop=True)
    return items.head(items_per_category).reset_index(drop=True)


def answer_frame(items: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Judge-ready rows: the successful answers joined with their items."""
    ok = answers[answers["ok"]][["item_id", "answer_model", "answer_sample", "response"]]
    cols = [c for c in items.columns if c not in ("perturbation", "perturbation_params")]
    return ok.merge(items[cols], on="item_id", how="inner").reset_index(drop=True)


def coverage_row(
    operator: str, n: int, *, skipped: int = 0, error: str | None = None, params: dict | None = None
) -> dict:
    """A row of the ``coverage`` table: the items ``operator`` probed and skipped."""
    return {
        "operator": operator,
        "probe_kind": "baseline" if operator == "none" else probe_kind(operator),
        "n_items": n,
        "n_skipped": skipped,
        "operator_params": repr(params or {}),
        "error": error,
    }


def perturb_answers(base: pd.DataFrame, config: Config) -> tuple[list[pd.DataFrame], list[dict]]:
    """Apply the baseline and every ``answer`` operator but ``self_label`` to the answers.

    Returns the perturbed frames and one coverage row per operator. An LLM operator whose
    calls fail is reported in its coverage row (``error``) and left out, not dropped
    silently.
    """
    frames = [perturb.apply(base, "none")]
    coverage = [coverage_row("none", len(base))]
    for op in config.operators:
        if probe_kind(op) != "answer" or op == "self_label":
            continue
        params = config.params_for(op)
        try:
            frames.append(
                perturb.apply(
                    base, op, seed=config.perturb_seed, progress=config.progress, **params
                )
            )
            coverage.append(coverage_row(op, len(base), params=params))
        except ProviderError as exc:
            coverage.append(coverage_row(op, 0, skipped=len(base), error=str(exc), params=params))
    return frames, coverage


def self_labelled(base: pd.DataFrame, config: Config, judge: str) -> pd.DataFrame:
    """The answers labelled with an author (the judge itself or the answer model)."""
    params = dict(config.operator_params.get("self_label", {}))
    if config.self_label_author == "judge":
        params.setdefault("author", judge)
    return perturb.apply(base, "self_label", seed=config.perturb_seed, **params)


def cued_answers(
    items: pd.DataFrame, config: Config
) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """Questions with a cognitive-bias cue, answered by the answer models.

    Only items with a ``wrong_answer`` (the X the cue names) can be cued; the others are
    counted as skipped. Returns the judge-ready rows, the answer table and coverage rows.
    """
    ops = [op for op in config.operators if probe_kind(op) == "question"]
    if not ops:
        return pd.DataFrame(), pd.DataFrame(), []
    has_cue = (
        items["wrong_answer"].fillna("").astype(str).str.strip() != ""
        if "wrong_answer" in items.columns
        else pd.Series(False, index=items.index)
    )
    eligible = items[has_cue]
    coverage = []
    frames = []
    for op in ops:
        params = config.params_for(op)
        coverage.append(
            coverage_row(
                op,
                len(eligible) * len(config.answer_models),
                skipped=int((~has_cue).sum()) * len(config.answer_models),
                params=params,
            )
        )
        if len(eligible):
            frames.append(perturb.apply(eligible, op, seed=config.perturb_seed, **params))
    if not frames:
        return pd.DataFrame(), pd.DataFrame(), coverage
    cued = pd.concat(frames, ignore_index=True)
    answers = generate_answers(
        cued, config.answer_models, temperature=config.answer_temperature, progress=config.progress
    )
    ok = answers[answers["ok"]][["item_id", "answer_model", "answer_sample", "response"]]
    return ok.merge(cued, on="item_id").reset_index(drop=True), answers, coverage


def score_spec(config: Config, judge: str) -> JudgeSpec:
    """The judging configuration of the score probes for one judge."""
    return JudgeSpec(
        protocol=config.protocol,
        judge_model=judge,
        use_reference=config.use_reference,
        temperature=config.judge_temperature,
        trials=config.trials,
        study=STUDY,
    )


def judge_scores(frames: list[pd.DataFrame], base: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Score every perturbed answer with every judge (one ``run_judging`` per judge).

    ``self_label`` items are made per judge when ``self_label_author="judge"``.
    """
    results = []
    for judge in config.judge_models:
        mine = list(frames)
        if "self_label" in config.operators:
            mine.append(self_labelled(base, config, judge))
        items = pd.concat([f for f in mine if len(f)], ignore_index=True)
        results.append(run_judging(items, score_spec(config, judge), progress=config.progress))
    return pd.concat(results, ignore_index=True)


def pair_items(base: pd.DataFrame, answer_models: list[str]) -> pd.DataFrame:
    """Every pair of answer models' answers to the same question, as pairwise items.

    ``item_id`` is ``<item>|<model_a> vs <model_b>``; ``source_item`` the question.
    """
    by = {(r.item_id, r.answer_model): r for r in base.itertuples(index=False)}
    rows = []
    for item in pd.unique(base["item_id"]):
        for a, b in itertools.combinations(answer_models, 2):
            ra, rb = by.get((item, a)), by.get((item, b))
            if ra is None or rb is None:
                continue
            rows.append(
                {
                    "item_id": f"{item}|{a} vs {b}",
                    "source_item": item,
                    "lang": ra.lang,
                    "question": ra.question,
                    "reference": ra.reference,
                    "response_a": ra.response,
                    "response_b": rb.response,
                    "model_a": a,
                    "model_b": b,
                }
            )
    return pd.DataFrame(rows)


def judge_pairs(pairs: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Pairwise verdicts in both orders from every judge (MT-Bench protocol)."""
    results = []
    for judge in config.judge_models:
        spec = JudgeSpec(
            protocol="pairwise",
            judge_model=judge,
            temperature=config.judge_temperature,
            trials=config.trials,
            study=STUDY,
        )
        results.append(run_judging(pairs, spec, progress=config.progress))
    return pd.concat(results, ignore_index=True)
