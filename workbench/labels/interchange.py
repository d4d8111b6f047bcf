"""Labels in and out: CSV, and Label Studio tasks with annotations (JSON).

CSV holds :data:`workbench.labels.store.COLUMNS`, one label a row. Label Studio's JSON
export is a list of tasks, each ``{"id", "data", "annotations": [...]}``; an annotation has
``completed_by``, ``created_at``, ``lead_time`` (seconds) and a ``result`` list of regions
``{"from_name", "to_name", "type", "value"}`` (Label Studio documentation, "Label Studio
Task Format"). A score is a ``rating`` region (``{"rating": 4}``, the ``Rating`` tag) or,
with ``score_tag="choices"``, a ``choices`` region (``{"choices": ["4"]}``, the ``Choices``
tag); a preference a ``pairwise`` region (``{"selected": "left"|"right"}``, the ``Pairwise``
tag, whose left is the task's ``answer_a``), a tie a ``choices`` region ``["tie"]``; a
rationale a ``textarea`` region. What Label Studio has no field for (the side shown on the
left, the label's id, the time it was shown, the package version, the correction chain)
travels in each annotation's ``workbench`` mapping, so an export imported back keeps every
label; annotations made in Label Studio itself have none and get defaults (shown order
``AB``: Label Studio shows ``answer_a`` on the left).
"""

from __future__ import annotations

import json
import uuid
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.labels._rules import finite, validated, when
from workbench.labels.store import COLUMNS, LabelStore

__all__ = ["LS_CONFIG_PAIRWISE", "LS_CONFIG_SCORE", "export_csv", "export_label_studio",
           "import_csv", "import_label_studio", "read_csv_labels", "tasks_to_labels"]

#: Label Studio labelling configurations matching the export (the ``from_name``/``to_name``).
LS_CONFIG_SCORE = """<View>
  <Text name="question" value="$question"/>
  <Text name="answer" value="$answer"/>
  <Rating name="score" toName="answer" maxRating="5"/>
  <TextArea name="rationale" toName="answer"/>
</View>"""
LS_CONFIG_PAIRWISE = """<View>
  <Text name="question" value="$question"/>
  <Pairwise name="preference" toName="answer_a,answer_b"/>
  <Text name="answer_a" value="$answer_a"/>
  <Text name="answer_b" value="$answer_b"/>
  <Choices name="tie" toName="answer_a"><Choice value="tie"/></Choices>
  <TextArea name="rationale" toName="answer_a"/>
</View>"""
_EXTRA = ["label_id", "study", "shown_order", "shown_at", "package_version", "supersedes",
          "source", "session", "value", "sampling_prob", "guideline"]
#: Columns a CSV may lack (written before they existed).
_OPTIONAL = ("guideline",)


#: Text columns a spreadsheet could read as a formula (OWASP's CSV-injection rule).
_TEXT_COLUMNS = ("label_id", "study", "item_id", "annotator", "kind", "choice", "shown_order",
                 "rationale", "shown_at", "given_at", "package_version", "supersedes",
                 "source", "session")
_FORMULA = ("=", "+", "-", "@", "\t", "\r", "'")


def _neutral(text):
    """A cell that begins like a formula (``= + - @``, tab, carriage return) gets a leading
    ``'``, as does one that begins with ``'`` (so the import can undo it exactly)."""
    return "'" + text if isinstance(text, str) and text.startswith(_FORMULA) else text


def export_csv(labels: pd.DataFrame, path: str | Path) -> Path:
    """Write labels (:data:`COLUMNS`) as UTF-8 CSV; return the path. Text cells that a
    spreadsheet would run as a formula are prefixed with ``'`` (:func:`read_csv_labels`
    removes it)."""
    path = Path(path)
    out = labels[COLUMNS].copy()
    for name in _TEXT_COLUMNS:
        out[name] = out[name].map(_neutral)
    # CRLF line ends (RFC 4180): a cell holding a carriage return is then quoted
    out.to_csv(path, index=False, encoding="utf-8", lineterminator="\r\n")
    return path


def read_csv_labels(path: str | Path) -> pd.DataFrame:
    """Read a label CSV, checking every row (:func:`workbench.labels.store` rules: no empty
    field, numbers finite, times ISO 8601); ``ValueError`` names the file, the (1-based,
    header = row 1) row and the field. A leading ``'`` of a text cell (the export's
    formula guard) is removed."""
    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{path.name}: not a label CSV ({exc})") from None
    missing = [c for c in COLUMNS if c not in frame.columns and c not in _OPTIONAL]
    if missing:
        raise ValueError(f"{path.name}: missing column(s) {missing}")
    out = frame.reindex(columns=COLUMNS, fill_value="")
    for name in _TEXT_COLUMNS:
        out[name] = out[name].map(lambda v: v[1:] if v.startswith("'") else v)
    for i, row in enumerate(out.to_dict("records")):
        try:
            validated({**row, "seconds": row["seconds"] or None,
                       "sampling_prob": row["sampling_prob"] or None,
                       "value": row["value"] or None})
        except ValueError as exc:
            raise ValueError(f"{path.name} row {i + 2}: {exc}") from None
    out["value"] = pd.to_numeric(out["value"].replace("", np.nan))
    for name in ("seconds", "sampling_prob"):
        out[name] = pd.to_numeric(out[name].replace("", np.nan))
    return out


def import_csv(store: LabelStore, path: str | Path) -> int:
    """Append the labels of a CSV to ``store``, all or none (labels already there with the
    same content are skipped); return the number added. ``ValueError`` names the row."""
    path = Path(path)
    frame = read_csv_labels(path)
    return store.add_many(_records(frame), where=[f"{path.name} row {i + 2}"
                                                  for i in range(len(frame))])


def _records(frame: pd.DataFrame) -> list[dict]:
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return rows


def export_label_studio(labels: pd.DataFrame, items: pd.DataFrame, path: str | Path, *,
                        score_tag: str = "rating") -> Path:
    """Write labels as Label Studio tasks with annotations (one task per item, one
    annotation per label).

    ``items`` has ``item_id`` and the task's text fields (e.g. ``question``, ``answer`` for
    scores; ``question``, ``answer_a``, ``answer_b`` for pairs), copied into ``data``.
    ``score_tag``: ``rating`` (the ``Rating`` tag) or ``choices`` (the ``Choices`` tag).
    """
    if score_tag not in ("rating", "choices"):
        raise ValueError(f"score_tag must be 'rating' or 'choices', got {score_tag!r}")
    data = {str(r["item_id"]): {k: (None if pd.isna(v) else v) for k, v in r.items()}
            for r in items.to_dict("records")}
    tasks, next_id = {}, 1
    for row in labels.to_dict("records"):
        key = (row["study"], str(row["item_id"]), row["kind"])
        if key not in tasks:
            tasks[key] = {"id": len(tasks) + 1,
                          "data": {**data.get(str(row["item_id"]), {}),
                                   "item_id": str(row["item_id"]), "kind": row["kind"]},
                          "annotations": []}
        result = []
        if row["kind"] == "score":
            value = ({"rating": int(row["value"]) if float(row["value"]).is_integer()
                      else float(row["value"])} if score_tag == "rating"
                     else {"choices": [_number_text(row["value"])]})
            result.append({"from_name": "score", "to_name": "answer", "type": score_tag,
                           "value": value})
        elif row["choice"] == "tie":
            result.append({"from_name": "tie", "to_name": "answer_a", "type": "choices",
                           "value": {"choices": ["tie"]}})
        else:
            result.append({"from_name": "preference", "to_name": "answer_a,answer_b",
                           "type": "pairwise",
                           "value": {"selected": "left" if row["choice"] == "A" else "right"}})
        if row["rationale"]:
            result.append({"from_name": "rationale", "to_name": "answer", "type": "textarea",
                           "value": {"text": [row["rationale"]]}})
        tasks[key]["annotations"].append({
            "id": next_id, "completed_by": row["annotator"], "created_at": row["given_at"],
            "updated_at": row["given_at"], "lead_time": _none(row["seconds"]),
            "was_cancelled": False, "result": result,
            "workbench": {k: _none(row[k]) for k in _EXTRA}})
        next_id += 1
    path = Path(path)
    path.write_text(json.dumps(list(tasks.values()), ensure_ascii=False, indent=1),
                    encoding="utf-8")
    return path


def _none(value):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def _number_text(value: float) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def _region_value(region, where: str) -> tuple[str, object]:
    """(kind, value) of one result region: ``score``, ``tie``, ``choice`` or ``text``."""
    if not isinstance(region, dict):
        raise ValueError(f"{where}: a result region is not an object: {region!r:.60}")
    kind, value = region.get("type"), region.get("value")
    if not isinstance(value, dict):
        raise ValueError(f"{where}: the {kind} region's 'value' is not an object")
    if kind == "rating":
        if "rating" not in value:
            raise ValueError(f"{where}: a rating region without 'rating'")
        return "score", _finite(value["rating"], where, "rating")
    if kind == "choices":
        choices = value.get("choices")
        if choices == ["tie"]:
            return "tie", "tie"
        if not isinstance(choices, list) or not choices:
            raise ValueError(f"{where}: a choices region holds no number: {value!r:.60}")
        return "score", _finite(choices[0], where, "choices")
    if kind == "pairwise":
        side = value.get("selected")
        if side not in ("left", "right"):
            raise ValueError(f"{where}: pairwise 'selected' is {side!r} (left or right)")
        return "choice", "A" if side == "left" else "B"
    if kind == "textarea":
        text = value.get("text", [])
        text = [text] if isinstance(text, str) else text    # one string, or a list of lines
        if not isinstance(text, list) or not all(isinstance(t, str) for t in text):
            raise ValueError(f"{where}: a textarea region's 'text' is not text")
        return "text", "\n".join(text)
    return "other", None


def _finite(value, where: str, name: str) -> float:
    try:
        return finite(value, name)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _edit_id(label_id: str, value: float, rationale: str, updated) -> str:
    key = json.dumps([label_id, value, rationale, str(updated)])
    return uuid.uuid5(uuid.NAMESPACE_URL, "workbench-ls-edit:" + key).hex


def _task_rows(tasks: list, study: str, source_name: str) -> tuple[list[dict], list[str]]:
    """(labels as dicts of :data:`COLUMNS`, where each came from)."""
    rows, where = [], []
    unmapped: dict[str, int] = {}
    for t, task in enumerate(tasks, start=1):
        if not isinstance(task, dict):
            raise ValueError(f"{source_name}: task {t} is not an object")
        data = task.get("data") or {}
        if not isinstance(data, dict):
            raise ValueError(f"{source_name}: task {t}: 'data' is not an object")
        if "item_id" not in data:
            key = str(task.get("id", t))
            if key in unmapped:
                raise ValueError(f"{source_name}: tasks {unmapped[key]} and {t} share the id "
                                 f"{key} and name no item_id (merged projects?): give each "
                                 "task's data an item_id")
            unmapped[key] = t
        item_id = str(data.get("item_id", task.get("id", t)))
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            raise ValueError(f"{source_name}: task {t}: 'annotations' is not a list")
        for a, ann in enumerate(annotations, start=1):
            here = f"{source_name}: task {t}, annotation {a}"
            if not isinstance(ann, dict):
                raise ValueError(f"{here}: not an object")
            if ann.get("was_cancelled"):
                continue
            extra = ann.get("workbench") or {}
            if not isinstance(extra, dict):
                raise ValueError(f"{here}: 'workbench' is not an object")
            score = choice = None
            rationale = ""
            result = ann.get("result") or []
            if not isinstance(result, list):
                raise ValueError(f"{here}: 'result' is not a list")
            for region in result:
                kind, value = _region_value(region, here)
                if kind == "score":
                    score = value
                elif kind in ("tie", "choice"):
                    choice = value
                elif kind == "text":
                    rationale = value
            if score is None and choice is None:
                raise ValueError(f"{here}: no rating, choices or pairwise region")
            pairwise = choice is not None
            given = ann.get("created_at")
            if not given:
                raise ValueError(f"{here}: 'created_at' is missing")
            value = {"A": 1.0, "B": 0.0, "tie": 0.5}[choice] if pairwise else score
            label_id = extra.get("label_id") or f"ls-{task.get('id', t)}-{ann.get('id', a)}"
            supersedes = extra.get("supersedes") or ""
            source = extra.get("source") or "label-studio"
            stored = extra.get("value")
            if stored is not None and _finite(stored, here, "workbench.value") != value:
                # edited in Label Studio after the export: the annotation as edited wins, as
                # a correction of the exported label
                warnings.warn(f"{here}: edited in Label Studio ({stored!r} exported, "
                              f"{value!r} now): imported as a correction of {label_id}",
                              stacklevel=3)
                supersedes = label_id
                label_id = _edit_id(label_id, value, rationale, ann.get("updated_at"))
                source = "label-studio"
                if when(ann.get("updated_at")) > when(given):
                    given = ann["updated_at"]                 # given when edited
            rows.append({
                "label_id": label_id, "study": extra.get("study") or study, "item_id": item_id,
                "annotator": str(ann.get("completed_by", "")),
                "kind": "pairwise" if pairwise else "score", "value": value,
                "choice": choice or "", "shown_order": extra.get("shown_order") or
                ("AB" if pairwise else ""), "rationale": rationale,
                "shown_at": extra.get("shown_at") or given, "given_at": given,
                "seconds": ann.get("lead_time"),
                "package_version": extra.get("package_version") or "label-studio",
                "supersedes": supersedes, "source": source,
                "session": extra.get("session") or "label-studio",
                "sampling_prob": extra.get("sampling_prob"),
                "guideline": extra.get("guideline")})
            where.append(here)
            try:
                validated(dict(rows[-1]))
            except ValueError as exc:
                raise ValueError(f"{here}: {exc}") from None
    return rows, where


def tasks_to_labels(tasks: list[dict], *, study: str = "label-studio",
                    source_name: str = "tasks") -> pd.DataFrame:
    """Labels (:data:`COLUMNS`) from Label Studio tasks with annotations (cancelled
    annotations are skipped). ``ValueError`` names the task (1-based), the annotation and
    what is wrong. An annotation whose rating or choice was changed in Label Studio after
    the export (its ``workbench.value`` disagrees) comes back as edited, as a correction
    of the exported label, with a warning."""
    rows, _ = _task_rows(tasks, study, source_name)
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["value"] = out["value"].astype(float)
    out["seconds"] = pd.to_numeric(out["seconds"])
    out["sampling_prob"] = pd.to_numeric(out["sampling_prob"])
    return out


def import_label_studio(store: LabelStore, path: str | Path, *, study: str = "label-studio") -> int:
    """Append the annotations of a Label Studio JSON export to ``store``, all or none
    (labels already there with the same content are skipped); return the number added."""
    path = Path(path)
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise ValueError(f"{path.name}: JSON nested too deeply to be a Label Studio export") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path.name}: not JSON ({exc})") from None
    if not isinstance(tasks, list):
        raise ValueError(f"{path.name}: a Label Studio export is a JSON list of tasks")
    rows, where = _task_rows(tasks, study, path.name)
    return store.add_many(rows, where=where)
