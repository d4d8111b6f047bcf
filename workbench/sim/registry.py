"""The simulator's item registry: the questions its answerers (and judges) "know".

The answerer profiles answer a registered question by degrading its reference answer;
the judges use a registered item's ``wrong_answer`` (to notice an answer that follows a
cognitive-bias cue) and its reference as their own "knowledge" when judging without a
reference.

When nothing has been registered or cleared in this process, the first lookup loads
the bundled ``data/<set>/items.csv`` files, so every process (a notebook, a separate
``workbench sim-server``) knows the same items without registering anything; a caller
with its own items (e.g. a folder read with ``workbench.datasets.load_folder``) passes
them to :func:`register_items`. After an explicit :func:`register_items` or
:func:`clear_registry` the registry holds exactly what was put there.
"""

from __future__ import annotations

import csv
import threading
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from workbench.sim._text import content_tokens, lang_of, normalize, overlap
from workbench.text import is_missing

__all__ = [
    "Item",
    "clear_registry",
    "lookup",
    "register_bundled",
    "register_items",
    "restore",
    "snapshot",
    "version",
]


@dataclass(frozen=True)
class Item:
    """One registered item."""

    item_id: str
    question: str
    reference: str
    lang: str
    keywords: tuple[str, ...] = ()
    wrong_answer: str = ""
    category: str = ""


_lock = threading.Lock()
_by_question: dict[str, Item] = {}
_by_length: list[tuple[str, Item]] = []  # normalised question, longest first
_touched = False
_memo: dict[tuple[str, str], Item | None] = {}
_version = 0  # bumped on every change (caches of derived values key on it)


def version() -> int:
    """A counter bumped on every change of the registry."""
    return _version


def _text(value: object) -> str:
    return "" if is_missing(value) else str(value).strip()


def _keywords(value: object) -> tuple[str, ...]:
    if is_missing(value):
        return ()
    if isinstance(value, str):
        parts = value.split("|")
    elif isinstance(value, Iterable):
        parts = [str(v) for v in value]
    else:
        parts = [str(value)]
    return tuple(p.strip() for p in parts if p and p.strip())


def _records(records: object) -> Iterable[Mapping]:
    if hasattr(records, "to_dict") and hasattr(records, "columns"):  # a DataFrame
        return records.to_dict("records")  # type: ignore[union-attr]
    if isinstance(records, Mapping):
        return [records]
    return records  # type: ignore[return-value]


def register_items(records: object, *, source: str = "records") -> int:
    """Register items the answerers can answer and the judges know.

    Parameters
    ----------
    records : DataFrame or iterable of dict
        Needs ``question`` and ``reference`` (may be empty); optional ``item_id``,
        ``lang`` (detected from the text when absent), ``keywords`` (list or
        ``"|"``-joined string), ``wrong_answer`` (a plausible wrong answer that
        cognitive-bias cues name), ``category``.
    source : str
        Named in error messages (e.g. the file the records came from).

    Returns
    -------
    int
        The number of items registered (a question registered again replaces the
        earlier entry).

    Raises
    ------
    ValueError
        A record that is not a mapping, lacks ``question`` or ``reference``, or has
        an empty question; the message names the source, row (1-based) and field.

    Examples
    --------
    >>> from workbench.sim import lookup, register_items, registry
    >>> state = registry.snapshot()
    >>> register_items([{"question": "What is 2+2?", "reference": "It is 4."}])
    1
    >>> lookup("what is  2+2?").reference
    'It is 4.'
    >>> registry.restore(state)
    """
    items: list[Item] = []
    for row, record in enumerate(_records(records), start=1):
        if not isinstance(record, Mapping):
            raise ValueError(f"{source}, row {row}: expected a mapping, got {type(record)}")
        for name in ("question", "reference"):
            if name not in record:
                raise ValueError(f"{source}, row {row}: missing field {name!r}")
        question = _text(record["question"])
        if not question:
            raise ValueError(f"{source}, row {row}, field 'question': empty")
        reference = _text(record["reference"])
        lang = _text(record.get("lang")) or lang_of(reference or question)
        items.append(
            Item(
                item_id=_text(record.get("item_id")) or f"item-{row}",
                question=question,
                reference=reference,
                lang=lang,
                keywords=_keywords(record.get("keywords")),
                wrong_answer=_text(record.get("wrong_answer")),
                category=_text(record.get("category")),
            )
        )
    restore(({normalize(item.question): item for item in items}, True), merge=True)
    return len(items)


def clear_registry() -> None:
    """Forget every registered item (and do not load the bundled items afterwards)."""
    restore(({}, True))


def snapshot() -> tuple:
    """The registry's state, for :func:`restore` (tests use it to leave no trace)."""
    with _lock:
        return dict(_by_question), _touched


def restore(state: tuple, *, merge: bool = False) -> None:
    """Put back a state taken by :func:`snapshot` (``merge``: add its items to the current ones)."""
    global _by_length, _touched, _version
    items, touched = state
    with _lock:
        _version += 1
        if not merge:
            _by_question.clear()
        _by_question.update(items)
        _by_length = sorted(_by_question.items(), key=lambda kv: len(kv[0]), reverse=True)
        _memo.clear()
        _touched = touched


def register_bundled(data_dir: Path | None = None) -> int:
    """Register every bundled ``<data_dir>/*/items.csv`` (csv module, no pandas).

    A file that cannot be read is skipped with a warning naming it.
    """
    global _touched
    if data_dir is None:
        from workbench import config

        data_dir = config.data_dir()
    total = 0
    for path in sorted(Path(data_dir).glob("*/items.csv")):
        try:
            with path.open(encoding="utf-8", newline="") as handle:
                rows = list(csv.DictReader(handle))
            total += register_items(rows, source=str(path))
        except (OSError, ValueError, csv.Error) as err:
            warnings.warn(f"sim registry: skipped {path}: {err}", stacklevel=2)
    _touched = True
    return total


def _ensure_loaded() -> None:
    if not _touched:
        with _lock:
            pending = not _touched
        if pending:
            register_bundled()


def lookup(question: str | None, *, reference: str | None = None) -> Item | None:
    """The registered item for a question text, or ``None``.

    Exact normalised question first; then the longest registered question contained
    in the text (a perturbed question contains the original); then the registered
    question whose content tokens are (>= 90%) all in the text (a sentence inserted in
    the middle); then, if given, an item with exactly this reference.
    """
    _ensure_loaded()
    if not _by_question:
        return None
    memo_key = (question or "", reference or "")
    if memo_key in _memo:
        return _memo[memo_key]
    found = _find(question, reference)
    if len(_memo) > 20000:
        _memo.clear()
    _memo[memo_key] = found
    return found


class _Index:
    """Lookup tables over ``_by_length`` (built once per registry version).

    Every table keeps ``_by_length``'s order (the position ``rank``), so the indexed
    lookup returns exactly the item the plain scan (:func:`_scan`) returns:

    - ``by_gram``: the 8-character windows at offsets ``0 .. stride - 1`` of each
      registered question of length >= 8 -> its ranks, where ``stride`` is the shortest
      such length minus 7, at most 8 (so at most 8 windows per question). A registered
      question contained in a text covers one of the text's windows at ``0, stride,
      2 * stride, ...``, so only those are looked up and only their candidates checked.
    - ``by_token``: content token -> ranks of the registered questions with at least 4
      content tokens that hold it (a question sharing no token has overlap 0, which
      never beats the scan's starting best of 0).
    - ``by_reference``: stripped reference -> the first item in order with it.
    """

    __slots__ = ("by_gram", "by_reference", "by_token", "entries", "sizes", "stride", "version")

    def __init__(self, entries: list[tuple[str, Item]], version: int) -> None:
        self.version = version
        self.entries = entries
        self.by_gram: dict[str, list[int]] = {}
        self.by_token: dict[str, list[int]] = {}
        self.sizes: list[int] = []
        self.by_reference: dict[str, Item] = {}
        self.stride = min([8] + [len(r) - 7 for r, _ in entries if len(r) >= 8])
        for rank, (registered, item) in enumerate(entries):
            if len(registered) >= 8:
                for offset in range(self.stride):
                    ranks = self.by_gram.setdefault(registered[offset : offset + 8], [])
                    if not ranks or ranks[-1] != rank:  # a window repeated in a question
                        ranks.append(rank)
            rt = content_tokens(registered)
            self.sizes.append(len(rt))
            if len(rt) >= 4:
                for tok in rt:
                    self.by_token.setdefault(tok, []).append(rank)
            if item.reference:
                self.by_reference.setdefault(item.reference.strip(), item)


_index: _Index | None = None


def _current_index() -> _Index:
    global _index
    index = _index
    if index is None or index.version != _version:
        with _lock:
            index = _Index(list(_by_length), _version)
        _index = index
    return index


def _find(question: str | None, reference: str | None) -> Item | None:
    index = _current_index()
    entries = index.entries
    key = normalize(question) if question else ""
    if key:
        item = _by_question.get(key)
        if item is not None:
            return item
        by_gram = index.by_gram
        first = None
        for start in range(0, len(key) - 7, index.stride):
            ranks = by_gram.get(key[start : start + 8])
            if ranks:
                for rank in ranks:
                    if (first is None or rank < first) and entries[rank][0] in key:
                        first = rank
                        break  # ranks ascend: a later one cannot be earlier
        if first is not None:
            return entries[first][1]
        # a question with a sentence inserted (e.g. a cognitive-bias cue in the middle)
        toks = content_tokens(key)
        hits: dict[int, int] = {}
        by_token = index.by_token
        for tok in toks:
            for rank in by_token.get(tok, ()):
                hits[rank] = hits.get(rank, 0) + 1
        best, best_share = None, 0.0
        sizes = index.sizes
        for rank in sorted(hits):
            share = hits[rank] / sizes[rank]
            if share > best_share:
                best, best_share = entries[rank][1], share
        if best is not None and best_share >= 0.9:
            return best
    if reference:
        return index.by_reference.get(reference.strip())
    return None


def _scan(question: str | None, reference: str | None) -> Item | None:
    """The plain scan over every registered item that :func:`_find` indexes (tests
    compare the two)."""
    key = normalize(question) if question else ""
    if key:
        item = _by_question.get(key)
        if item is not None:
            return item
        for registered, item in _by_length:
            if 8 <= len(registered) <= len(key) and registered in key:
                return item
        # a question with a sentence inserted (e.g. a cognitive-bias cue in the middle)
        toks = content_tokens(key)
        best, best_share = None, 0.0
        for registered, item in _by_length:
            rt = content_tokens(registered)
            if len(rt) >= 4:
                share = overlap(toks, rt)
                if share > best_share:
                    best, best_share = item, share
        if best is not None and best_share >= 0.9:
            return best
    if reference:
        ref = reference.strip()
        for _, item in _by_length:
            if item.reference and item.reference.strip() == ref:
                return item
    return None
