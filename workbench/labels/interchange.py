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
from pathlib import Path

import numpy as np
import pandas as pd

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


def export_csv(labels: pd.DataFrame, path: str | Path) -> Path:
    """Write labels (:data:`COLUMNS`) as UTF-8 CSV; return the path."""
    path = Path(path)
    labels[COLUMNS].to_csv(path, index=False, encoding="utf-8")
    return path


def read_csv_labels(path: str | Path) -> pd.DataFrame:
    """Read a label CSV, checking every row; ``ValueError`` names the file, the (1-based,
    header = row 1) row and the field."""
    path = Path(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    missing = [c for c in COLUMNS if c not in frame.columns and c not in _OPTIONAL]
    if missing:
        raise ValueError(f"{path.name}: missing column(s) {missing}")
    for i, row in frame.iterrows():
        where = f"{path.name} row {i + 2}"
        for name in ("label_id", "study", "item_id", "annotator", "kind", "given_at"):
            if not row[name]:
                raise ValueError(f"{where}: field {name!r} is empty")
        if row["kind"] not in ("score", "pairwise"):
            raise ValueError(f"{where}: field 'kind' is {row['kind']!r} (score or pairwise)")
        for name in ("value", "seconds", "sampling_prob"):
            try:
                float(row[name]) if row[name] else None
            except ValueError:
                raise ValueError(f"{where}: field {name!r} is not a number: {row[name]!r}") from None
    out = frame.reindex(columns=COLUMNS, fill_value="")
    out["value"] = pd.to_numeric(out["value"])
    for name in ("seconds", "sampling_prob"):
        out[name] = pd.to_numeric(out[name].replace("", np.nan))
    return out


def import_csv(store: LabelStore, path: str | Path) -> int:
    """Append the labels of a CSV to ``store`` (those already there are skipped); return
    the number added."""
    return store.add_many(_records(read_csv_labels(path)))


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


def tasks_to_labels(tasks: list[dict], *, study: str = "label-studio",
                    source_name: str = "tasks") -> pd.DataFrame:
    """Labels (:data:`COLUMNS`) from Label Studio tasks with annotations (cancelled
    annotations are skipped). ``ValueError`` names the task (1-based), the annotation and
    what is wrong."""
    rows = []
    for t, task in enumerate(tasks, start=1):
        item_id = str(task.get("data", {}).get("item_id", task.get("id", t)))
        for a, ann in enumerate(task.get("annotations", []), start=1):
            if ann.get("was_cancelled"):
                continue
            where = f"{source_name}: task {t}, annotation {a}"
            extra = ann.get("workbench") or {}
            score = choice = None
            rationale = ""
            for region in ann.get("result", []):
                kind, value = region.get("type"), region.get("value", {})
                if kind == "rating":
                    score = float(value["rating"])
                elif kind == "choices" and value.get("choices") == ["tie"]:
                    choice = "tie"
                elif kind == "choices":
                    try:
                        score = float(value["choices"][0])
                    except (KeyError, IndexError, ValueError):
                        raise ValueError(f"{where}: a choices region holds no number: {value!r}") from None
                elif kind == "pairwise":
                    side = value.get("selected")
                    if side not in ("left", "right"):
                        raise ValueError(f"{where}: pairwise 'selected' is {side!r} (left or right)")
                    choice = "A" if side == "left" else "B"
                elif kind == "textarea":
                    rationale = "\n".join(value.get("text", []))
            if score is None and choice is None:
                raise ValueError(f"{where}: no rating, choices or pairwise region")
            pairwise = choice is not None
            given = ann.get("created_at")
            if not given:
                raise ValueError(f"{where}: 'created_at' is missing")
            rows.append({
                "label_id": extra.get("label_id") or f"ls-{task.get('id', t)}-{ann.get('id', a)}",
                "study": extra.get("study") or study, "item_id": item_id,
                "annotator": str(ann.get("completed_by", "")),
                "kind": "pairwise" if pairwise else "score",
                "value": extra.get("value") if extra.get("value") is not None else
                ({"A": 1.0, "B": 0.0, "tie": 0.5}[choice] if pairwise else score),
                "choice": choice or "", "shown_order": extra.get("shown_order") or
                ("AB" if pairwise else ""), "rationale": rationale,
                "shown_at": extra.get("shown_at") or given, "given_at": given,
                "seconds": ann.get("lead_time"),
                "package_version": extra.get("package_version") or "label-studio",
                "supersedes": extra.get("supersedes") or "",
                "source": extra.get("source") or "label-studio",
                "session": extra.get("session") or "label-studio",
                "sampling_prob": extra.get("sampling_prob"),
                "guideline": extra.get("guideline")})
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["value"] = out["value"].astype(float)
    out["seconds"] = pd.to_numeric(out["seconds"])
    out["sampling_prob"] = pd.to_numeric(out["sampling_prob"])
    return out


def import_label_studio(store: LabelStore, path: str | Path, *, study: str = "label-studio") -> int:
    """Append the annotations of a Label Studio JSON export to ``store``; return the number
    added (labels already there are skipped)."""
    path = Path(path)
    tasks = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(tasks, list):
        raise ValueError(f"{path.name}: a Label Studio export is a JSON list of tasks")
    return store.add_many(_records(tasks_to_labels(tasks, study=study, source_name=path.name)))
