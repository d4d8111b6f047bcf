"""S1 configuration and data stage: answers from six answerers, three methods x judges x
temperatures x trials, and the two frames every analysis reads (conversation scores,
checklist rows) (private)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from workbench.datasets import load_dataset
from workbench.judges import Design, JudgeSpec, run_design
from workbench.studies._contract import StudyConfig, at_least, in_range, listed, param
from workbench.studies.common import generate_answers, selected

#: Study name: folder of the figures and tables, ``study`` column of the results.
STUDY = "s1_judge_methods"
#: The three judging methods of seed 000 (protocols of :func:`workbench.judges.run_judging`).
METHODS: tuple[str, ...] = ("holistic", "holistic_simple", "checklist")
#: Default answerers (the seed's six conversation models, simulated).
ANSWER_MODELS: tuple[str, ...] = (
    "sim/answer-strong", "sim/answer-mid", "sim/answer-weak",
    "sim/answer-tiny", "sim/answer-concise", "sim/answer-verbose",
)
#: Default judges (the seed's six evaluation models, simulated).
JUDGE_MODELS: tuple[str, ...] = tuple(f"sim/judge-{j}" for j in "abcdef")

#: Columns of the ``scores`` frame (one conversation-level score per row).
SCORE_COLUMNS = ("item_id", "answer_model", "conversation", "judge_model", "protocol",
                 "temperature", "trial", "score", "parse_ok", "negative_flag", "error",
                 "backend")
#: Columns of the ``criteria`` frame (one checklist item verdict per row).
CRITERION_COLUMNS = ("item_id", "answer_model", "conversation", "judge_model", "temperature",
                     "trial", "criterion_id", "weight", "verdict", "score", "parse_ok", "error",
                     "backend")
_CONVERSATION_FIELDS = ("item_id", "lang", "question", "reference", "good_example",
                        "bad_example", "axis")


@dataclass
class Config(StudyConfig):
    """Parameters of study S1: the notebook's ``parameters`` cell (:class:`StudyConfig`),
    the seed's full design. ``methods`` are any of :data:`METHODS`; a judge flags a
    conversation when a negative-weight item is met in at least half its trials.
    """

    dataset: str = "s1_medical_ja"
    item_ids: list[str] = param([], convert=lambda ids: [str(i) for i in ids])
    answer_models: list[str] = listed(list(ANSWER_MODELS), least=1, distinct=True)
    judge_models: list[str] = listed(list(JUDGE_MODELS), least=1, distinct=True)
    methods: list[str] = listed(list(METHODS), least=1, distinct=True, within=METHODS)
    temperatures: list[float] = listed([0.0, 1.0], least=1, distinct=True)
    trials: int = at_least(5, 1)
    answer_temperature: float = 1.0
    n_boot: int = at_least(1000, 0)
    flag_share: float = in_range(0.5, 0, 1, ends="(]")


def conversations(items: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """The judged items: one row per answered conversation (prompt x answer model).

    Answers whose call failed (``ok`` False) are not judged; they stay in ``answers``
    (with their error) and are counted in the headline (``n_answer_failures``).
    """
    keep = [c for c in _CONVERSATION_FIELDS if c in items.columns]
    ok = answers[answers["ok"].astype(bool)]
    conv = items[keep].merge(ok[["item_id", "answer_model", "answer_sample", "response"]],
                             on="item_id", how="inner", validate="one_to_many")
    return conv.reset_index(drop=True)


def design(config: Config, conv: pd.DataFrame, rubric: pd.DataFrame) -> Design:
    """The factorial judging design: methods x judges x temperatures x trials.

    Pass it to :func:`workbench.judges.estimate` to see the calls and their cost before
    any spend (useful before switching to real judges).
    """
    specs = tuple(JudgeSpec(m, config.judge_models[0], study=STUDY) for m in config.methods)
    return Design(conv, specs, judges=tuple(config.judge_models),
                  temperatures=tuple(float(t) for t in config.temperatures),
                  trials=config.trials, rubric=rubric, study=STUDY)


def _conversation_label(frame: pd.DataFrame) -> pd.Series:
    return frame["item_id"].astype(str) + "|" + frame["answer_model"].astype(str)


def method_scores(results: pd.DataFrame) -> pd.DataFrame:
    """Conversation-level scores of each judge call (holistic) or checklist total.

    Holistic and simple holistic: the 1-10 score of the call. Checklist: the total of
    ``run_judging``'s ``total`` row (met weights / positive weights; NaN when an
    item did not parse). Unparsed rows keep ``parse_ok=False`` and a NaN score.
    """
    holistic = results["protocol"].isin(["holistic", "holistic_simple"]) & (
        results["dimension"] == "overall")
    total = (results["protocol"] == "checklist") & (results["dimension"] == "total")
    out = results.loc[holistic | total].copy()
    out["conversation"] = _conversation_label(out)
    return out[list(SCORE_COLUMNS)].reset_index(drop=True)


def criterion_rows(results: pd.DataFrame) -> pd.DataFrame:
    """One row per checklist item verdict (``verdict`` True/False, ``score`` 1/0, NaN unparsed)."""
    rows = results[(results["protocol"] == "checklist") & (results["dimension"] != "total")].copy()
    rows["conversation"] = _conversation_label(rows)
    return rows[list(CRITERION_COLUMNS)].reset_index(drop=True)


def collect(config: Config) -> dict[str, pd.DataFrame]:
    """Answer every prompt with every answer model, then judge every conversation.

    Returns ``answers`` (:func:`~workbench.studies.common.generate_answers`, failed calls
    kept), ``judgments`` (every row of :func:`workbench.judges.run_judging`, raw replies
    included), ``scores`` (:data:`SCORE_COLUMNS`, from :func:`method_scores`) and
    ``criteria`` (:data:`CRITERION_COLUMNS`, from :func:`criterion_rows`). The default
    design (60 conversations x 6 judges x 3 methods x 5 trials x 2 temperatures, about 37k
    judge calls) takes 3-5 minutes on sim judges from an empty cache on 2 cores, seconds
    from the cache.
    """
    data = load_dataset(config.dataset)
    items = selected(data["items"], "item_id", config.item_ids, field="item_ids", what="items",
                     dataset=config.dataset)
    answers = generate_answers(items, config.answer_models,
                               temperature=config.answer_temperature, progress=config.progress)
    conv = conversations(items, answers)
    if conv.empty:
        first = answers["error"].dropna()
        raise ValueError(f"no answer to judge: all {len(answers)} answer calls failed"
                         + (f" (first error: {first.iloc[0]})" if len(first) else ""))
    judgments = run_design(design(config, conv, data["rubric"]), progress=config.progress)
    return {"answers": answers, "judgments": judgments, "scores": method_scores(judgments),
            "criteria": criterion_rows(judgments)}
