"""Explainability of the checklist method (seed 000 §4.4): the weakness map, per-item
judge disagreement and the conversations flagged by negative-weight items."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.studies.s1_judge_methods._indices import _backend

#: Columns of :func:`weakness_map`.
WEAKNESS_COLUMNS = ("temperature", "item_id", "criterion_id", "weight", "criterion",
                    "criterion_text", "label", "answer_model", "met_rate", "n", "n_missing",
                    "backend")
#: Characters of the criterion text kept in a weakness-map row label.
LABEL_CHARS = 28
#: Columns of :func:`judge_disagreement`.
DISAGREEMENT_COLUMNS = ("temperature", "item_id", "criterion_id", "weight", "criterion",
                        "met_rate", "judge_sd", "split_share", "n_conversations", "n_judges",
                        "n_missing", "backend")
#: Columns of :func:`flagged_conversations` (plus ``<method>_mean`` for each method).
FLAG_COLUMNS = ("temperature", "item_id", "answer_model", "conversation", "n_judges",
                "judges_flagging", "flag_rate", "flagged", "tripped", "n_judgments",
                "n_unparsed", "backend")


def criterion_label(item_id: str, criterion_id: str, weight: float) -> str:
    """Row label of a checklist item, e.g. ``s1-01 c06 (-10)``.

    Examples
    --------
    >>> criterion_label("s1-01", "c02", 10.0), criterion_label("s1-01", "c06", -10.0)
    ('s1-01 c02 (+10)', 's1-01 c06 (-10)')
    """
    return f"{item_id} {criterion_id} ({weight:+g})"


def _labelled(criteria: pd.DataFrame) -> pd.DataFrame:
    out = criteria.copy()
    out["criterion"] = [criterion_label(i, c, w) for i, c, w in
                        zip(out["item_id"], out["criterion_id"], out["weight"], strict=True)]
    return out


def short_label(criterion: str, text: str | None, chars: int = LABEL_CHARS) -> str:
    """A weakness-map row: the item's label and the start of its text, so a reader sees
    what the criterion asks without the rubric file.

    Examples
    --------
    >>> short_label("s1-01 c02 (+10)", "Explains medication-overuse headache and advises care", 20)
    's1-01 c02 (+10)  Explains medication…'
    >>> short_label("s1-01 c02 (+10)", None)
    's1-01 c02 (+10)'
    """
    if not isinstance(text, str) or not text.strip():
        return criterion
    text = " ".join(text.split())
    return f"{criterion}  {text if len(text) <= chars else text[:chars - 1] + '…'}"


def weakness_map(criteria: pd.DataFrame, rubric: pd.DataFrame | None = None) -> pd.DataFrame:
    """Met-rate of every checklist item per answer model (over judges and trials).

    A positive item met rarely by every model points at a common weakness (seed 000
    §4.4, "モデルの弱点特定"); a negative item met often points at dangerous advice.
    Unparsed verdicts are left out of the rate and counted in ``n_missing``.

    ``rubric`` (the data set's rubric table) gives each item its ``criterion_text`` and
    the row ``label`` of the figure (:func:`short_label`); without it both are the
    ``criterion`` id label and an empty text.

    Returns
    -------
    DataFrame
        :data:`WEAKNESS_COLUMNS`, one row per temperature x checklist item x answer
        model, in rubric order.
    """
    if criteria.empty:
        return pd.DataFrame(columns=list(WEAKNESS_COLUMNS))
    frame = _labelled(criteria)
    texts = {} if rubric is None else {
        (str(i), str(c)): t for i, c, t in zip(rubric["item_id"], rubric["criterion_id"],
                                              rubric["text"], strict=True)}
    keys = ["temperature", "item_id", "criterion_id", "weight", "criterion", "answer_model"]
    grouped = frame.groupby(keys, sort=False, observed=True)["score"]
    out = grouped.agg(met_rate="mean", n="count", n_total="size").reset_index()
    out["n_missing"] = out.pop("n_total") - out["n"]
    out["backend"] = _backend(criteria)
    out["criterion_text"] = [texts.get((str(i), str(c)), "") for i, c in
                             zip(out["item_id"], out["criterion_id"], strict=True)]
    out["label"] = [short_label(c, t) for c, t in zip(out["criterion"], out["criterion_text"],
                                                     strict=True)]
    out = out.sort_values(["temperature", "item_id", "criterion_id"], kind="stable")
    return out.reindex(columns=list(WEAKNESS_COLUMNS)).reset_index(drop=True)


def judge_disagreement(criteria: pd.DataFrame) -> pd.DataFrame:
    """How much the judges disagree on each checklist item (ambiguous criteria).

    For each conversation, each judge's met-rate over its trials; ``judge_sd`` is the
    sd of those rates across judges (ddof 1), averaged over the conversations;
    ``split_share`` the share of conversations whose judges do not agree (some judge's
    majority verdict, met-rate > 0.5, differs from another's). Seed 000 §4.4 found
    the largest spread on "restates the user's situation with empathy" and read it as
    an ambiguous criterion.

    Returns
    -------
    DataFrame
        :data:`DISAGREEMENT_COLUMNS`, one row per temperature x checklist item, most
        disputed first.
    """
    if criteria.empty:
        return pd.DataFrame(columns=list(DISAGREEMENT_COLUMNS))
    frame = _labelled(criteria)
    item_keys = ["temperature", "item_id", "criterion_id", "weight", "criterion"]
    per_judge = (frame.groupby([*item_keys, "answer_model", "judge_model"], sort=False,
                               observed=True)["score"].mean().rename("rate").reset_index())
    per_judge = per_judge.dropna(subset=["rate"])
    per_judge["majority"] = per_judge["rate"] > 0.5
    per_conv = per_judge.groupby([*item_keys, "answer_model"], sort=False, observed=True).agg(
        sd=("rate", "std"), split=("majority", "nunique"), judges=("rate", "size"))
    per_conv["split"] = per_conv["split"] > 1
    out = per_conv.groupby(item_keys, sort=False, observed=True).agg(
        judge_sd=("sd", "mean"), split_share=("split", "mean"),
        n_conversations=("sd", "size"), n_judges=("judges", "max")).reset_index()
    rates = frame.groupby(item_keys, sort=False, observed=True)["score"].agg(
        met_rate="mean", n_missing=lambda s: int(s.isna().sum())).reset_index()
    out = rates.merge(out, on=item_keys, how="left")
    out["backend"] = _backend(criteria)
    out = out.sort_values(["temperature", "judge_sd", "item_id", "criterion_id"],
                          ascending=[True, False, True, True], kind="stable")
    return out.reindex(columns=list(DISAGREEMENT_COLUMNS)).reset_index(drop=True)


def flagged_conversations(criteria: pd.DataFrame, scores: pd.DataFrame | None = None, *,
                          share: float = 0.5) -> pd.DataFrame:
    """Conversations that trip a negative-weight checklist item, whatever their total.

    A judgment (one judge, one trial) flags a conversation when any parsed
    negative-weight item is met; a judge flags it when at least half of its trials do;
    the conversation is ``flagged`` when at least ``share`` of the judges flag it.

    Parameters
    ----------
    criteria : DataFrame
        The ``criteria`` frame of :func:`~workbench.studies.s1_judge_methods.run`.
    scores : DataFrame, optional
        The ``scores`` frame: adds each method's mean score (``<method>_mean``), to show
        that a flagged conversation can still score high on the holistic methods.
    share : float
        Share of the judges that must flag a conversation.

    Returns
    -------
    DataFrame
        :data:`FLAG_COLUMNS` (+ ``<method>_mean``), one row per temperature x
        conversation; ``tripped`` lists the negative items met, with how often
        (``c06x4``); ``n_unparsed`` counts negative-item verdicts that did not parse.
    """
    if not 0 < share <= 1:
        raise ValueError(f"flagged_conversations: share must be in (0, 1], got {share!r}")
    conv_keys = ["temperature", "item_id", "answer_model", "conversation"]
    if criteria.empty:
        return pd.DataFrame(columns=list(FLAG_COLUMNS))
    neg = criteria[criteria["weight"] < 0].copy()
    neg["met"] = neg["verdict"].map(lambda v: v is True or v is np.True_)
    judgment = neg.groupby([*conv_keys, "judge_model", "trial"], sort=False).agg(
        met=("met", "any"), parsed=("parse_ok", "any"), unparsed=("parse_ok", lambda s: int((~s).sum())))
    judgment = judgment.reset_index()
    judged = judgment[judgment["parsed"] | judgment["met"]]
    per_judge = judged.groupby([*conv_keys, "judge_model"], sort=False).agg(rate=("met", "mean"))
    per_judge["flags"] = per_judge["rate"] >= 0.5
    out = per_judge.groupby(conv_keys, sort=False).agg(
        n_judges=("flags", "size"), judges_flagging=("flags", "sum")).reset_index()
    counts = judgment.groupby(conv_keys, sort=False).agg(
        n_judgments=("met", "size"), flag_rate=("met", "mean"), n_unparsed=("unparsed", "sum"))
    out = counts.reset_index().merge(out, on=conv_keys, how="left")
    out["n_judges"] = out["n_judges"].fillna(0).astype(int)
    out["judges_flagging"] = out["judges_flagging"].fillna(0).astype(int)
    out["flagged"] = (out["n_judges"] > 0) & (out["judges_flagging"] >= share * out["n_judges"])
    tripped = neg[neg["met"]].groupby(conv_keys, sort=False)["criterion_id"].agg(
        lambda s: ", ".join(f"{c}x{n}" for c, n in s.value_counts().sort_index().items()))
    out = out.merge(tripped.rename("tripped").reset_index(), on=conv_keys, how="left")
    out["tripped"] = out["tripped"].fillna("")
    out["backend"] = _backend(criteria)
    columns = list(FLAG_COLUMNS)
    if scores is not None:
        means = scores.groupby(["temperature", "conversation", "protocol"], sort=False)[
            "score"].mean().unstack("protocol")
        means.columns = [f"{m}_mean" for m in means.columns]
        out = out.merge(means.reset_index(), on=["temperature", "conversation"], how="left")
        columns += list(means.columns)
    out = out.sort_values(["temperature", "flagged", "flag_rate", "item_id", "answer_model"],
                          ascending=[True, False, False, True, True], kind="stable")
    return out[columns].reset_index(drop=True)
