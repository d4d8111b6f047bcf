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

**Nothing is lost, nothing asked twice.** Each label is one committed row
(:class:`~workbench.labels.LabelStore`) the moment it is given; the queue skips items this
annotator already labelled, so a restarted kernel resumes where it stopped, and an item a
queue serves again to the same annotator is refused (unless ``repeats=True``: a design that
asks for repeats on purpose, and says so in the view). Several annotators label at once,
each from their own kernel, on one shared folder.

**Instructions.** A ``guideline`` (the criterion), ``anchors`` (what each score means) and
``better`` (for a pair, what "better" means) are shown with every task; each label stores
the guideline's version (:func:`guideline_version`, a short hash of all three), and the
text of each version is kept in the store's ``guidelines/`` folder.

**Opaque ids.** With a ``blind_key`` the view names the item by :func:`blind_ref` (a keyed
hash) so an annotator can point at one without seeing its id; the store keeps the real id.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

import anywidget
import pandas as pd
import traitlets

from workbench.labels.store import LabelStore, current, now

__all__ = ["LabelWidget", "blind_ref", "guideline_version", "shown_order"]

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


def blind_ref(key: str | bytes, item_id: str) -> str:
    """An opaque name for ``item_id`` (10 hex digits of an HMAC-SHA256 keyed by ``key``):
    the same for one key, unguessable from the id without it.

    Examples
    --------
    >>> blind_ref("k", "s2-003|sim/answer-strong|0") == blind_ref("k", "s2-003|sim/answer-strong|0")
    True
    >>> len(blind_ref("k", "q1")), blind_ref("k", "q1") != blind_ref("other", "q1")
    (10, True)
    """
    key = key.encode() if isinstance(key, str) else key
    return hmac.new(key, str(item_id).encode(), hashlib.sha256).hexdigest()[:10]


def guideline_version(guideline: str = "", anchors: Mapping | None = None,
                      better: str = "") -> str:
    """The version of a guideline stored with each label: 12 hex digits of the SHA-256 of
    the guideline, the anchors and the meaning of "better" ("" when all are empty).

    Examples
    --------
    >>> guideline_version()
    ''
    >>> guideline_version("Rate correctness.", {1: "wrong", 5: "right"}) != guideline_version("Rate correctness.")
    True
    """
    anchors = {str(k): str(v) for k, v in (anchors or {}).items()}
    if not (guideline or anchors or better):
        return ""
    text = json.dumps({"guideline": guideline, "anchors": anchors, "better": better},
                      ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class LabelWidget(anywidget.AnyWidget):
    """Label ``tasks`` one after the other into ``store``.

    Parameters
    ----------
    store : LabelStore
        Where labels go (its ``annotator`` is who labels).
    tasks : DataFrame
        ``item_id`` (each once), ``question`` and ``answer`` (``kind="score"``) or
        ``answer_a`` and ``answer_b`` (``kind="pairwise"``); optional ``lang`` (``ja``,
        ``zh``, ``en``). Other columns are never sent to the view.
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
    guideline : str
        The criterion, shown above every task.
    anchors : mapping, optional
        Meaning of each score (``{1: "...", 5: "..."}``), shown with every score task.
    better : str
        What "better" means in a pair, shown with every pair.
    blind_key : str, optional
        Key of the opaque item names shown in the view (:func:`blind_ref`); none shown
        without one.
    repeats : bool
        Allow ``next_item`` to serve an item this annotator has labelled (a repeat design);
        the view then says so. Without it such an item is refused and nothing is shown.
    """

    _esm = _STATIC / "widget.js"
    _css = _STATIC / "widget.css"
    task = traitlets.Dict().tag(sync=True)
    guide = traitlets.Dict().tag(sync=True)
    progress = traitlets.Unicode("").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, store: LabelStore, tasks: pd.DataFrame, *, study: str,
                 kind: str = "score", scale: tuple[int, int] = (1, 5), rationale: bool = True,
                 next_item: Callable[[set[str]], str | tuple[str, float] | None] | None = None,
                 on_label: Callable[[str, str], None] | None = None, seed: int = 0,
                 guideline: str = "", anchors: Mapping | None = None, better: str = "",
                 blind_key: str | bytes | None = None, repeats: bool = False):
        super().__init__()
        need = ["item_id", "question"] + (["answer"] if kind == "score" else ["answer_a", "answer_b"])
        missing = [c for c in need if c not in tasks.columns]
        if missing:
            raise ValueError(f"LabelWidget: tasks lack column(s) {missing}")
        if kind not in ("score", "pairwise"):
            raise ValueError(f"LabelWidget: kind must be 'score' or 'pairwise', got {kind!r}")
        ids = tasks["item_id"].astype(str)
        repeated = sorted(set(ids[ids.duplicated()]))
        if repeated:
            raise ValueError(f"LabelWidget: tasks repeat item_id {repeated[:5]}"
                             f"{' ...' if len(repeated) > 5 else ''}: give each item once")
        self.store, self.study, self.kind, self.scale = store, study, kind, scale
        self.rationale, self.seed = rationale, seed
        self.blind_key, self.repeats = blind_key, repeats
        self.tasks = tasks.assign(item_id=ids).set_index("item_id")
        self.next_item, self.on_label = next_item, on_label
        self.version = _keep_guideline(store, guideline, anchors, better)
        shown = {str(k): str(v) for k, v in (anchors or {}).items()} if kind == "score" else {}
        self.guide = {"text": guideline, "anchors": shown,
                      "better": better if kind == "pairwise" else ""}
        self._current: dict | None = None
        self.on_msg(self._on_msg)
        self.advance()

    def labelled(self) -> set[str]:
        """Items this annotator has labelled in this study (from the store)."""
        return set(self._mine()["item_id"])

    def _mine(self) -> pd.DataFrame:
        labels = current(self.store.labels(study=self.study))
        return labels[(labels["annotator"] == self.store.annotator)
                      & (labels["kind"] == self.kind)]

    def ref(self, item_id: str) -> str:
        """The name of ``item_id`` shown to the annotator (opaque; "" without a key)."""
        return blind_ref(self.blind_key, item_id) if self.blind_key else ""

    def advance(self) -> None:
        """Show the next task (or say that none is left)."""
        self.error = ""
        mine = self._mine()
        done = set(mine["item_id"])
        prob = None
        if self.next_item is not None:
            item = self.next_item(done)
            if isinstance(item, tuple):
                item, prob = item
        else:
            item = next((i for i in self.tasks.index if i not in done), None)
        extra = len(mine) - len(done)      # labels in force beyond one per item: repeats
        again = f" ({len(mine)} labels, {extra} repeated)" if extra else ""
        self.progress = f"{self.store.annotator}: {len(done)} labelled{again}, " \
                        f"{max(len(self.tasks) - len(done), 0)} to go"
        refused = None
        if item is not None and item not in self.tasks.index:
            refused = "the queue served an item that is not among the tasks"
        elif item is not None and item in done and not self.repeats:
            refused = "the queue served an item you have already labelled"
        if item is None or refused:
            self._current = None
            self.message = "Nothing left to label. Thank you." if item is None else ""
            if refused:
                ref = self.ref(item)
                self.error = f"Stopped: {refused}{f' ({ref})' if ref else ''}; " \
                             "tell whoever runs the study."
            self.task = {}
            return
        row = self.tasks.loc[item]
        token = uuid.uuid4().hex
        view = {"token": token, "kind": self.kind, "question": str(row["question"]),
                "lang": str(row.get("lang", "") or ""), "rationale": self.rationale,
                "ref": self.ref(item), "repeat": item in done}
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
        common = dict(study=self.study, item_id=cur["item_id"], rationale=rationale,
                      shown_at=cur["shown_at"], sampling_prob=cur["sampling_prob"],
                      guideline=self.version or None)
        if self.kind == "pairwise":
            if value not in ("left", "right", "tie"):
                raise ValueError(f"LabelWidget: a pair takes left, right or tie, got {value!r}")
            left_is_a = cur["shown_order"] == "AB"
            choice = "tie" if value == "tie" else (
                "A" if (value == "left") == left_is_a else "B")
            label_id = self.store.add(kind="pairwise", choice=choice,
                                      shown_order=cur["shown_order"], **common)
        else:
            score = float(value)
            if not self.scale[0] <= score <= self.scale[1]:
                raise ValueError(f"LabelWidget: score {score} outside {self.scale}")
            label_id = self.store.add(kind="score", value=score, **common)
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


def _keep_guideline(store: LabelStore, guideline: str, anchors: Mapping | None,
                    better: str) -> str:
    """The guideline's version; its text written once to ``<store>/guidelines/<version>.json``."""
    version = guideline_version(guideline, anchors, better)
    if version:
        folder = store.folder / "guidelines"
        folder.mkdir(exist_ok=True)
        path = folder / f"{version}.json"
        if not path.exists():
            text = {"guideline": guideline, "better": better,
                    "anchors": {str(k): str(v) for k, v in (anchors or {}).items()}}
            tmp = folder / f".{version}.{uuid.uuid4().hex}.tmp"
            tmp.write_text(json.dumps(text, ensure_ascii=False, indent=1), encoding="utf-8")
            tmp.replace(path)
    return version
