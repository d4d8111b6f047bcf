"""Label inside JupyterLab: a blinded widget that writes each label to the store as it is given.

Built on **anywidget** rather than a composition of ipywidgets: the view is one small ES
module and stylesheet (``static/widget.js``, ``static/widget.css``, package data) with
keyboard handling and CSS for long Japanese and Chinese text (strict line breaking, CJK
fonts, wrapping of long runs), which ipywidgets' fixed controls cannot express; it needs
no Lab extension build, and the same file runs in JupyterLab, Notebook 7 and VS Code.
The Python side keeps the state the view must not see.

**Blinded.** The view receives the question and the answer text(s) only: no model name,
no judge verdict. For a pair, the side each answer is shown on is drawn per annotator and
item (a hash of seed, annotator and item: the same after a restart) and logged with the
label as ``shown_order``; a tie is an option. Keys: 1-9 choose a score and Enter sends it;
for a pair 1/← left, 2/→ right, 0/t tie.

**Nothing is lost.** Each label is one committed row (:class:`~workbench.labels.LabelStore`)
the moment it is given; the queue skips items this annotator already labelled, so a
restarted kernel resumes where it stopped. Several annotators label at once, each from
their own kernel, on one shared folder.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from pathlib import Path

import anywidget
import pandas as pd
import traitlets

from workbench.labels.store import LabelStore, now

__all__ = ["LabelWidget", "shown_order"]

_STATIC = Path(__file__).resolve().parent / "static"


def shown_order(seed: int, annotator: str, item_id: str) -> str:
    """``AB`` (answer A on the left) or ``BA``, drawn per annotator and item, reproducibly.

    Examples
    --------
    >>> shown_order(0, "ann-1", "q1") == shown_order(0, "ann-1", "q1")
    True
    >>> sorted({shown_order(0, "ann-1", f"q{i}") for i in range(20)})
    ['AB', 'BA']
    """
    digest = hashlib.sha256(f"{seed}|{annotator}|{item_id}".encode()).digest()
    return "AB" if digest[0] % 2 == 0 else "BA"


class LabelWidget(anywidget.AnyWidget):
    """Label ``tasks`` one after the other into ``store``.

    Parameters
    ----------
    store : LabelStore
        Where labels go (its ``annotator`` is who labels).
    tasks : DataFrame
        ``item_id``, ``question`` and ``answer`` (``kind="score"``) or ``answer_a`` and
        ``answer_b`` (``kind="pairwise"``); optional ``lang`` (``ja``, ``zh``, ``en``).
        Other columns are never sent to the view.
    study : str
        Study name written with each label.
    kind : str
        ``score`` or ``pairwise``.
    scale : (int, int)
        Lowest and highest score.
    rationale : bool
        Show an optional rationale box.
    next_item : callable, optional
        ``next_item(labelled_ids) -> item_id, (item_id, sampling_prob) or None`` chooses the
        next item (e.g. :meth:`workbench.labels.ActiveQueue.next_item`, whose probability is
        stored with the label); by default the tasks' order, skipping items already labelled.
    on_label : callable, optional
        Called with the new label's ``label_id`` and ``item_id`` after it is committed.
    seed : int
        Seeds the sides shown.
    """

    _esm = _STATIC / "widget.js"
    _css = _STATIC / "widget.css"
    task = traitlets.Dict().tag(sync=True)
    progress = traitlets.Unicode("").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, store: LabelStore, tasks: pd.DataFrame, *, study: str,
                 kind: str = "score", scale: tuple[int, int] = (1, 5), rationale: bool = True,
                 next_item: Callable[[set[str]], str | tuple[str, float] | None] | None = None,
                 on_label: Callable[[str, str], None] | None = None, seed: int = 0):
        super().__init__()
        need = ["item_id", "question"] + (["answer"] if kind == "score" else ["answer_a", "answer_b"])
        missing = [c for c in need if c not in tasks.columns]
        if missing:
            raise ValueError(f"LabelWidget: tasks lack column(s) {missing}")
        if kind not in ("score", "pairwise"):
            raise ValueError(f"LabelWidget: kind must be 'score' or 'pairwise', got {kind!r}")
        self.store, self.study, self.kind, self.scale = store, study, kind, scale
        self.rationale, self.seed = rationale, seed
        self.tasks = tasks.assign(item_id=tasks["item_id"].astype(str)).set_index("item_id")
        self.next_item, self.on_label = next_item, on_label
        self._current: dict | None = None
        self.on_msg(self._on_msg)
        self.advance()

    def labelled(self) -> set[str]:
        """Items this annotator has labelled in this study (from the store)."""
        labels = self.store.labels(study=self.study)
        mine = labels[(labels["annotator"] == self.store.annotator) & (labels["kind"] == self.kind)]
        return set(mine["item_id"])

    def advance(self) -> None:
        """Show the next task (or say that none is left)."""
        done = self.labelled()
        prob = None
        if self.next_item is not None:
            item = self.next_item(done)
            if isinstance(item, tuple):
                item, prob = item
        else:
            item = next((i for i in self.tasks.index if i not in done), None)
        self.progress = f"{self.store.annotator}: {len(done)} labelled, " \
                        f"{max(len(self.tasks) - len(done), 0)} to go"
        if item is None:
            self._current = None
            self.message = "Nothing left to label. Thank you."
            self.task = {}
            return
        row = self.tasks.loc[item]
        token = uuid.uuid4().hex
        view = {"token": token, "kind": self.kind, "question": str(row["question"]),
                "lang": str(row.get("lang", "") or ""), "rationale": self.rationale}
        order = ""
        if self.kind == "pairwise":
            order = shown_order(self.seed, self.store.annotator, item)
            left, right = ("answer_a", "answer_b") if order == "AB" else ("answer_b", "answer_a")
            view.update(left=str(row[left]), right=str(row[right]))
        else:
            view.update(answer=str(row["answer"]), low=int(self.scale[0]), high=int(self.scale[1]))
        self._current = {"token": token, "item_id": item, "shown_order": order,
                         "shown_at": now(), "sampling_prob": prob}
        self.task = view

    def give(self, value, rationale: str = "") -> str:
        """Record the answer to the task on view (what the view's buttons and keys call):
        a score, or ``left``/``right``/``tie``; returns the ``label_id``."""
        cur = self._current
        if cur is None:
            raise RuntimeError("LabelWidget: no task on view")
        if self.kind == "pairwise":
            if value not in ("left", "right", "tie"):
                raise ValueError(f"LabelWidget: a pair takes left, right or tie, got {value!r}")
            left_is_a = cur["shown_order"] == "AB"
            choice = "tie" if value == "tie" else (
                "A" if (value == "left") == left_is_a else "B")
            label_id = self.store.add(study=self.study, item_id=cur["item_id"], kind="pairwise",
                                      choice=choice, shown_order=cur["shown_order"],
                                      rationale=rationale, shown_at=cur["shown_at"],
                                      sampling_prob=cur["sampling_prob"])
        else:
            score = float(value)
            if not self.scale[0] <= score <= self.scale[1]:
                raise ValueError(f"LabelWidget: score {score} outside {self.scale}")
            label_id = self.store.add(study=self.study, item_id=cur["item_id"], kind="score",
                                      value=score, rationale=rationale,
                                      shown_at=cur["shown_at"],
                                      sampling_prob=cur["sampling_prob"])
        if self.on_label is not None:
            self.on_label(label_id, cur["item_id"])
        self.advance()
        return label_id

    def receive(self, content: dict) -> str | None:
        """Handle one answer from the view (``{"type": "label", "token", "value",
        "rationale"}``); an answer to a task no longer on view (a repeated click) is
        ignored. Returns the new ``label_id`` or None."""
        if content.get("type") != "label":
            return None
        if not self._current or content.get("token") != self._current["token"]:
            return None                 # a stale or repeated click: the task has moved on
        return self.give(content.get("value"), content.get("rationale", "") or "")

    def _on_msg(self, _widget, content, _buffers) -> None:
        # a label that could not be stored is said in the view, and its task stays there
        try:
            self.receive(content)
        except Exception as exc:
            self.error = f"Label NOT saved ({type(exc).__name__}: {exc}); try again."
            raise
        else:
            self.error = ""
