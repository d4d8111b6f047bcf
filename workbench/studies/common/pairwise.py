"""Pairwise judging against simulated raters' majority preference (study X2, private).

Every pair of answers to an item is judged in both orders; each rater's preference in
the pair follows from their two 1-5 scores; the raters' majority is the reference
label. Agreement comes from :mod:`workbench.stats` (Cohen's and Fleiss' kappa, position
consistency), with an unparsed verdict kept as a category of its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from workbench.judges import JudgeSpec, run_judging
from workbench.stats import UNPARSED, cohen_kappa, position_consistency
from workbench.studies.common.bridge_qa import ok_responses

#: Columns that identify one pair of answers to an item.
PAIR_KEYS = ["item_id", "model_a", "model_b"]
#: Pairwise verdicts in the items' numbering (``run_judging``), plus unparsed.
VERDICTS = ["A", "B", "tie", UNPARSED]


def pairwise_items(answers: pd.DataFrame, models: list[str] | None = None) -> pd.DataFrame:
    """Every pair of answers to the same item (failed answers left out).

    Pairs follow ``models`` order, and every second pair of an item is swapped, so each
    model is ``model_a`` in about half of its pairs: the better answer is not always
    the first one (which would confound quality with position). Columns
    :data:`PAIR_KEYS`, ``question, reference, response_a, response_b, lang``.
    """
    ok = answers[answers["ok"].astype(bool)].assign(response=lambda f: ok_responses(f))
    models = models or list(dict.fromkeys(ok["answer_model"]))
    rows = []
    for item_id, part in ok.groupby("item_id", sort=False):
        texts = part.drop_duplicates("answer_model").set_index("answer_model")
        present = [m for m in models if m in texts.index]
        for k, (a, b) in enumerate(itertools.combinations(present, 2)):
            a, b = (b, a) if k % 2 else (a, b)
            rows.append({"item_id": item_id, "model_a": a, "model_b": b,
                         "question": texts.loc[a, "question"],
                         "reference": texts.loc[a, "reference"],
                         "response_a": texts.loc[a, "response"],
                         "response_b": texts.loc[b, "response"], "lang": texts.loc[a, "lang"]})
    return pd.DataFrame(rows, columns=[*PAIR_KEYS, "question", "reference", "response_a",
                                       "response_b", "lang"])


def pair_scores(pairs: pd.DataFrame, scores: pd.DataFrame, *, by: str) -> pd.DataFrame:
    """The :data:`PAIR_KEYS` of ``pairs`` with both sides' scores, ``score_a`` and
    ``score_b``, from per-answer ``scores`` (``item_id, answer_model, <by>, score``): one
    row per pair and ``by`` value (a rater, a metric) that scored both sides."""
    return pairs[PAIR_KEYS].merge(
        scores.rename(columns={"answer_model": "model_a", "score": "score_a"}),
        on=["item_id", "model_a"]).merge(
        scores.rename(columns={"answer_model": "model_b", "score": "score_b"}),
        on=["item_id", "model_b", by])


def rater_preferences(ratings: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Each rater's preference within each pair: ``A`` (higher score for model_a), ``B``
    or ``tie``; pairs a rater did not score on both sides are left out for that rater."""
    scores = ratings.dropna(subset=["score"]).groupby(
        ["item_id", "answer_model", "rater"], sort=False)["score"].mean()
    merged = pair_scores(pairs, scores.rename("score").reset_index(), by="rater")
    diff = merged["score_a"] - merged["score_b"]
    merged["preference"] = np.select([diff > 0, diff < 0], ["A", "B"], "tie")
    return merged[[*PAIR_KEYS, "rater", "score_a", "score_b", "preference"]]


def majority_label(preferences: pd.DataFrame) -> pd.DataFrame:
    """The raters' majority per pair: the preference with strictly the most votes, else
    ``tie`` (the raters split). Columns :data:`PAIR_KEYS`, ``majority``, ``n_raters``,
    ``n_votes`` (votes for the majority label; 0 for a tie imposed by a split).

    Examples
    --------
    >>> prefs = pd.DataFrame({"item_id": ["q1"] * 4 + ["q2"] * 4, "model_a": "m1",
    ...                       "model_b": "m2", "rater": ["r1", "r2", "r3", "r4"] * 2,
    ...                       "preference": ["A", "A", "B", "tie", "A", "A", "B", "B"]})
    >>> majority_label(prefs)[["item_id", "majority", "n_votes"]]
      item_id majority  n_votes
    0      q1        A        2
    1      q2      tie        0
    """
    counts = preferences.groupby([*PAIR_KEYS, "preference"], sort=False).size()
    rows = []
    for key, part in counts.groupby(level=[0, 1, 2], sort=False):
        votes = part.droplevel([0, 1, 2]).sort_values(ascending=False)
        top = votes.index[0] if len(votes) == 1 or votes.iloc[0] > votes.iloc[1] else "tie"
        rows.append({**dict(zip(PAIR_KEYS, key, strict=True)), "majority": top,
                     "n_raters": int(votes.sum()), "n_votes": int(votes.get(top, 0))})
    return pd.DataFrame(rows, columns=[*PAIR_KEYS, "majority", "n_raters", "n_votes"])


def pairwise_judgments(pairs: pd.DataFrame, judges: Sequence[str], *,
                       use_reference: bool = True, study: str = "",
                       progress: bool = False) -> pd.DataFrame:
    """``run_judging`` pairwise rows (MT-Bench prompt, both orders) for every judge."""
    frames = [run_judging(pairs, JudgeSpec(protocol="pairwise", judge_model=judge,
                                           use_reference=use_reference, study=study),
                          progress=progress)
              for judge in judges]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def pairwise_agreement(judgments: pd.DataFrame, majority: pd.DataFrame) -> pd.DataFrame:
    """Pairwise judges against the raters' majority, one row per judge.

    From :func:`workbench.stats.position_consistency` (accuracy and Cohen's kappa per
    presentation order, agreement between the orders; an unparsed verdict is a value
    of its own, so it counts against the judge) and :func:`workbench.stats.cohen_kappa`
    over both orders pooled (``estimate``, ``ci_low``, ``ci_high``), plus ``backend``.
    """
    data = judgments.merge(majority, on=PAIR_KEYS, how="inner", validate="many_to_one")
    data = data.assign(verdict_or_unparsed=data["verdict"].astype(object).where(
        data["verdict"].notna(), UNPARSED))
    position = position_consistency(data, item=PAIR_KEYS, order="order", verdict="verdict",
                                    label="majority", by="judge_model")
    kappa = cohen_kappa(data, a="verdict_or_unparsed", b="majority", by="judge_model",
                        categories=VERDICTS)
    kappa = kappa[["judge_model", "estimate", "ci_low", "ci_high", "n"]].rename(
        columns={"n": "n_verdicts"})
    backend = data.groupby("judge_model")["backend"].first()
    out = position.merge(kappa, on="judge_model", how="left")
    out["backend"] = out["judge_model"].map(backend)
    return out


def kappa_summary(raters: pd.DataFrame, judges: pd.DataFrame, *, judge: str = "judge_model",
                  raters_label: str = "raters (Fleiss)") -> pd.DataFrame:
    """One row for the raters' Fleiss' kappa and one per judge's Cohen's kappa with the
    majority: ``who``, ``estimate``, ``ci_low``, ``ci_high``, ``n``, ``n_unparsed``
    (judges only), ``backend`` (from the frames; empty frames give no rows)."""
    cols = ["who", "estimate", "ci_low", "ci_high", "n", "n_unparsed", "backend"]
    parts = []
    if len(raters):
        parts.append(raters.assign(who=raters_label))
    if len(judges):
        parts.append(judges.assign(who=judges[judge].astype(str) + " vs majority"))
    if not parts:
        return pd.DataFrame(columns=cols)
    return pd.concat([p.reindex(columns=cols) for p in parts], ignore_index=True)
