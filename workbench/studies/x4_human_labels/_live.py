"""Study X4, live: people label in JupyterLab, blinded and instructed; the answer so far.

The widget (:class:`~workbench.labels.widget.LabelWidget`) shows each answer (``score``) or
pair of answers to one question (``pairwise``) drawn by the active queue, under the
study's guideline (the judges' criterion; :data:`GUIDELINE`, :data:`ANCHORS`,
:data:`BETTER`), and names each item by an opaque reference keyed by a secret in the label
folder (``people/.blind-key``), never by its id, which names the answering model. The
tables an annotator is shown (:func:`my_labels`, :func:`live_answer`) name no model and no
judge verdict; :func:`people_labels` (the real ids) is for the analysis.
"""

from __future__ import annotations

import os
import secrets
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.labels import ActiveQueue, ActiveSampler, LabelStore
from workbench.labels.store import COLUMNS
from workbench.labels.widget import blind_ref

#: The criterion people label by: the one the G-Eval judges score by (template
#: ``geval_civil``), in words for people.
GUIDELINE = (
    "Judge each answer to the question from a civil-engineering point of view: how close it "
    "is in meaning to a correct answer, and whether it contains the keywords that matter. "
    "Count against an answer any unnecessary material (repeating the question, text in a "
    "language other than the question's) and any error. Judge the content, not the style.")
#: The meaning of each score (the template anchors 1 and 5; 2 to 4 lie between).
ANCHORS = {
    1: "None of the important keywords; wrong or off the point.",
    2: "A few important keywords, but mostly wrong, off the point or padded.",
    3: "Some important keywords; partly correct, or with errors or unnecessary material.",
    4: "Most important keywords and close to a correct answer; a minor error or some padding.",
    5: "Most of the important keywords, close in meaning to a correct answer, no errors.",
}
#: What "better" means for a pair.
BETTER = ("closer in meaning to a correct answer, with more of the keywords that matter "
          "from a civil-engineering point of view and fewer errors or unnecessary material. "
          "Choose tie when neither is better.")
_KEYS = ["item_id", "answer_model", "answer_sample"]
_SIDE = {("A", "AB"): "left", ("B", "AB"): "right", ("A", "BA"): "right",
         ("B", "BA"): "left"}


def _folder(config) -> Path:
    return Path(config.label_dir) / "people"


def blind_key(config) -> str:
    """The secret of the opaque item names of ``config.label_dir`` (created once, shared by
    every annotator of the folder)."""
    path = _folder(config) / ".blind-key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".blind-key.{uuid.uuid4().hex}")
        tmp.write_text(secrets.token_hex(16), encoding="utf-8")
        try:
            os.link(tmp, path)              # the first writer wins; the others read its key
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return path.read_text(encoding="utf-8").strip()


def live_pool(config) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per item: ``item_id``, ``prediction``, ``uncertainty``, and for pairs
    ``verdict`` and ``agreement``; the tasks the widget shows) for ``config.live_kind``.

    Scores: each answer; the first judge's G-Eval score, the SD over the judges. Pairs:
    every two answers to one question, ``A`` the model listed first in ``answer_models``;
    each judge's verdict from its scores (1 A better, 0 B, 0.5 equal), the prediction the
    first judge's, the uncertainty their SD; ``agreement`` the share of the judges whose
    verdict is the first judge's (its own chance of being right)."""
    from workbench.studies.x4_human_labels._study import pool

    frame, texts = pool(config, per_judge=True)
    texts = texts.drop(columns="item_id").rename(columns={"answer_id": "item_id",
                                                          "response": "answer"})
    lang = ["lang"] if "lang" in texts else []
    if config.live_kind == "score":
        return (frame.drop(columns="item_id").rename(columns={"answer_id": "item_id"}),
                texts[["item_id", "question", "answer", *lang]])
    rank = {m: i for i, m in enumerate(config.answer_models)}
    frame = frame.assign(rank=frame["answer_model"].map(rank)).sort_values(["item_id", "rank",
                                                                           "answer_sample"])
    text = texts.set_index("item_id")
    judges = list(config.judge_models)
    rows, tasks = [], []
    for _, group in frame.groupby("item_id", sort=False):
        recs = group.to_dict("records")
        for i, a in enumerate(recs):
            for b in recs[i + 1:]:
                votes = np.array([np.sign(a[j] - b[j]) / 2 + 0.5 for j in judges])
                pair = f"{a['answer_id']}~{b['answer_id']}"
                rows.append({"item_id": pair, "prediction": votes[0],
                             "uncertainty": float(np.std(votes, ddof=1)),
                             "verdict": {1.0: "A", 0.0: "B"}.get(votes[0], "tie"),
                             "agreement": float(np.mean(votes == votes[0]))})
                ta, tb = text.loc[a["answer_id"]], text.loc[b["answer_id"]]
                tasks.append({"item_id": pair, "question": ta["question"],
                              "answer_a": ta["answer"], "answer_b": tb["answer"],
                              **({"lang": ta["lang"]} if lang else {})})
    return pd.DataFrame(rows), pd.DataFrame(tasks)


def _queue(config, items: pd.DataFrame, store: LabelStore | None = None) -> ActiveQueue:
    """The active queue; given the store the widget writes through, it serves only items
    this annotator has not labelled, and its draws are keyed by this session."""
    store = store if store is not None else LabelStore(_folder(config))
    return ActiveQueue(store, items.set_index("item_id")["prediction"],
                       items.set_index("item_id")["uncertainty"], study=_study(),
                       kind=config.live_kind, rng=config.seed, alpha=config.alpha,
                       floor=config.floor, burn_in=config.burn_in, t_star=config.budget)


def _study() -> str:
    from workbench.studies.x4_human_labels._study import STUDY

    return STUDY


def label_widget(config):
    """The labelling widget for ``config.annotator`` on ``label_dir/people`` (``live``):
    blinded ``live_kind`` tasks (question and answer(s) only, named by opaque references)
    under the study's guideline, each next item drawn by the active queue from the
    judges' spread."""
    from workbench.labels.widget import LabelWidget

    if not (config.live and config.label_dir and config.annotator):
        raise ValueError("x4.label_widget: set live = True, a shared label_dir and your "
                         "annotator name")
    items, tasks = live_pool(config)
    store = LabelStore(_folder(config), annotator=config.annotator)
    return LabelWidget(store, tasks, study=_study(), kind=config.live_kind,
                       next_item=_queue(config, items, store).next_item, seed=config.seed,
                       guideline=GUIDELINE, anchors=ANCHORS, better=BETTER,
                       blind_key=blind_key(config))


def people_labels(config) -> pd.DataFrame:
    """The labels people gave in the widget (``label_dir/people``; empty without one).
    Unblinded: ``item_id`` names the answering model(s); for the analysis, not for
    annotators (they see :func:`my_labels`)."""
    if not config.label_dir:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})
    return LabelStore(_folder(config)).labels(study=_study())


def my_labels(config) -> pd.DataFrame:
    """``config.annotator``'s labels so far, blinded: ``item`` (the opaque reference the
    widget shows), ``kind``, ``score`` or ``side`` (left, right, tie: as clicked),
    ``rationale``, ``given_at``, ``seconds``."""
    labels = people_labels(config)
    labels = labels[labels["annotator"] == config.annotator]
    key = blind_key(config) if config.label_dir else ""
    side = [("tie" if c == "tie" else _SIDE.get((c, o), "")) for c, o in
            zip(labels["choice"], labels["shown_order"], strict=True)]
    return pd.DataFrame({
        "item": [blind_ref(key, i) for i in labels["item_id"]],
        "kind": labels["kind"].to_numpy(),
        "score": labels["value"].where(labels["kind"] == "score").to_numpy(),
        "side": side, "rationale": labels["rationale"].to_numpy(),
        "given_at": labels["given_at"].to_numpy(), "seconds": labels["seconds"].to_numpy()})


def live_answer(config) -> pd.DataFrame:
    """The answer from people's labels so far, with anytime-valid intervals (empty unless
    ``live``): the mean human score, or the win rate of A (the model listed first) and the
    judge's accuracy against people (share of pairs whose person's choice is the first
    judge's verdict). Rerun after each label; stop when ``width`` is small enough. Names
    no model and shows no verdict."""
    cols = ["quantity", "estimate", "ci_low", "ci_high", "width", "n_labels", "ci_level",
            "annotators", "human_minutes"]
    if not config.live:
        return pd.DataFrame(columns=cols)
    items, _ = live_pool(config)
    labels = people_labels(config)
    labels = labels[labels["kind"] == config.live_kind]
    queue = _queue(config, items)
    rows = [queue.interval().assign(
        quantity="mean human score" if config.live_kind == "score" else "win rate (A)")]
    if config.live_kind == "pairwise":
        rows.append(_accuracy(config, items, queue).assign(quantity="judge accuracy"))
    return pd.concat(rows, ignore_index=True).assign(
        annotators=labels["annotator"].nunique(),
        human_minutes=labels["seconds"].sum() / 60)[cols]


def _accuracy(config, items: pd.DataFrame, queue: ActiveQueue) -> pd.DataFrame:
    """The first judge's accuracy against people from the win rate's draws: each label
    (in force) turned into 1 (the person chose the judge's verdict) or 0, with the
    probability it was drawn with and, for a draw among the items its annotator had not
    labelled, those earlier labels turned the same way (the queue's estimator); the
    judge's jury agreement is its prediction."""
    verdict = items["prediction"].to_numpy(float)       # the verdict as a pair's value
    sampler = ActiveSampler(items["agreement"].to_numpy(float),
                            items["uncertainty"].to_numpy(float), alpha=config.alpha,
                            floor=config.floor, burn_in=config.burn_in, t_star=config.budget,
                            label_range=(0.0, 1.0))
    for d in queue.draws():
        done = d["done"]
        if done is not None:
            done = (done[0], (done[1] == verdict[done[0]]).astype(float))
        sampler.update(d["item"], d["prob"], float(d["value"] == verdict[d["item"]]), done=done)
    return sampler.interval()
