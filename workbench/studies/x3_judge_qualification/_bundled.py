"""Study X3 on the bundled set (private): the frames each analysis reads, built from the
answers, the simulated raters' scores, the G-Eval scores and the pairwise verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.studies.common import ANSWER_KEYS
from workbench.studies.common.pairwise import PAIR_KEYS, pair_scores


def wide_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per answer (:data:`ANSWER_KEYS`), one column per rater."""
    out = ratings.pivot_table(index=ANSWER_KEYS, columns="rater", values="score", aggfunc="mean")
    out.columns.name = None
    return out


def wide_scores(scores: pd.DataFrame, index: pd.Index) -> pd.DataFrame:
    """One row per answer (rows of ``index``), one column per scorer (``metric``)."""
    out = scores.pivot_table(index=ANSWER_KEYS, columns="metric", values="score",
                             aggfunc="mean", dropna=False)
    out.columns.name = None
    return out.reindex(index=index, columns=list(dict.fromkeys(scores["metric"])))


def item_split(item_ids: pd.Series, share: float, rng: np.random.Generator) -> np.ndarray:
    """True for the rows of a random ``share`` of the items (the calibration split)."""
    items = np.array(sorted(set(item_ids)))
    chosen = set(rng.choice(items, int(round(share * len(items))), replace=False))
    return item_ids.isin(chosen).to_numpy()


def shown_order(pairwise: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Pairwise verdicts as shown: ``first``/``second`` (the models in shown order),
    ``first_wins`` (1, 0, NaN for a tie or an unparsed verdict) and ``length_diff``
    (characters of the first answer minus the second's, in hundreds), per verdict row."""
    lengths = pairs[PAIR_KEYS].assign(len_a=pairs["response_a"].str.len(),
                                      len_b=pairs["response_b"].str.len())
    data = pairwise.merge(lengths, on=PAIR_KEYS, how="left", validate="many_to_one")
    swap = data["order"] == 1
    first = data["model_a"].where(~swap, data["model_b"])
    second = data["model_b"].where(~swap, data["model_a"])
    first_letter = np.where(swap, "B", "A")
    won = np.where(data["verdict"].isin(["A", "B"]),
                   (data["verdict"] == first_letter).astype(float), np.nan)
    diff = (data["len_a"] - data["len_b"]).where(~swap, data["len_b"] - data["len_a"]) / 100
    return data[[*PAIR_KEYS, "judge_model", "order", "verdict", "backend"]].assign(
        first=first, second=second, first_wins=won, length_diff=diff,
        self_preference=(first == data["judge_model"]).astype(float)
        - (second == data["judge_model"]).astype(float))


def score_preferences(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Each G-Eval scorer's preference in each pair (``A``, ``B`` or ``tie`` by its two
    scores; None when a score is missing): :data:`PAIR_KEYS`, ``metric``, ``verdict``."""
    data = pair_scores(pairs, scores[[*ANSWER_KEYS, "metric", "score"]], by="metric")
    diff = data["score_a"] - data["score_b"]
    verdict = np.select([diff > 0, diff < 0, diff == 0], ["A", "B", "tie"], "")
    return data[[*PAIR_KEYS, "metric"]].assign(
        verdict=pd.Series(verdict, index=data.index).replace("", None))


def selective_frame(pairwise: pd.DataFrame, preferences: pd.DataFrame,
                    majority: pd.DataFrame, judge: str) -> pd.DataFrame:
    """Per pair: the ``judge``'s first-order ``verdict``, its ``confidence`` (the share
    of all verdicts on the pair — every pairwise judge in both orders and each G-Eval
    scorer's preference — equal to it, as an ensemble of simulated annotators in Jung et
    al. 2024) and ``correct`` (equal to the raters' majority). Pairs whose raters split
    (majority ``tie``) have no human preference and are left out, as in Jung et al."""
    target = pairwise[(pairwise["judge_model"] == judge) & (pairwise["order"] == 0)]
    votes = pd.concat([pairwise[[*PAIR_KEYS, "verdict"]], preferences[[*PAIR_KEYS, "verdict"]]],
                      ignore_index=True)
    data = target[[*PAIR_KEYS, "verdict", "backend"]].merge(
        majority.loc[majority["majority"] != "tie", [*PAIR_KEYS, "majority"]], on=PAIR_KEYS,
        validate="one_to_one")
    counts = votes.groupby(PAIR_KEYS)["verdict"].agg(list)
    data["confidence"] = [
        float(np.mean([v == verdict for v in counts.loc[tuple(key)]])) if verdict else 0.0
        for key, verdict in zip(data[PAIR_KEYS].itertuples(index=False), data["verdict"],
                                strict=True)]
    data["correct"] = data["verdict"] == data["majority"]
    return data


def win_indicators(labels: pd.Series, model_a: pd.Series, model_b: pd.Series,
                   model: str) -> np.ndarray:
    """1 where ``model`` won the pair by ``labels`` (``A``/``B``/``tie`` in the pairs'
    numbering), 0 where it lost, 0.5 for a tie, NaN for a missing label or a pair
    without ``model``."""
    won_a = labels.map({"A": 1.0, "B": 0.0, "tie": 0.5}).to_numpy(dtype=float)
    return np.where(model_a == model, won_a, np.where(model_b == model, 1 - won_a, np.nan))
