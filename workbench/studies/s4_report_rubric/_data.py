"""S4 data stage: report texts, per-dimension judging and the seed's score log (private;
partly re-exported by ``workbench.studies.s4_report_rubric``)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from workbench import perturb
from workbench.config import results_dir
from workbench.judges import JudgeSpec, run_judging

STUDY = "s4_report_rubric"
#: Condition names: the original reports, the operator's padding, the bundled twins.
ORIGINAL, PADDED, TWIN = "none", "verbosity_padding", "padded_twin"
#: The six dimensions of seed 003 (the ``report6`` set of the judges' dimension catalogue).
DIMENSIONS = ("factual_grounding", "depth_of_analysis", "coherence", "specificity", "novelty",
              "actionability")
#: The seed's minimum reports per version before a comparison counts (else provisional).
MIN_PER_VERSION = 20
#: Columns of the long scores frame (one row per judge call).
SCORE_COLUMNS = (
    "item_id", "source_item", "perturbation", "pipeline_version", "track", "date",
    "judge_model", "mitigation", "trial", "dimension", "score", "parse_ok", "error",
    "backend", "latency_s",
)
#: Columns of the score log (one row per report text, judge, prompt and trial).
LOG_COLUMNS = (
    "date", "pipeline_version", "track", "slug", "source_slug", "perturbation", "mitigation",
    "trial", "scores", "total", "n_failed", "judge_model", "backend", "eval_duration_s",
)


def build_texts(data: dict[str, pd.DataFrame], *, padding_factor: float = 1.6,
                padding_style: str = "mixed", bundled_twins: bool = True) -> pd.DataFrame:
    """The report texts to judge: every original, its padded version (same content, about
    ``padding_factor`` times longer: :func:`workbench.perturb.verbosity_padding`) and, with
    ``bundled_twins``, the bundled hand-padded twins (``perturbation = "padded_twin"``).

    One row per text with the ``run_judging`` item columns (``question`` = the report's
    topic, ``response`` = its Markdown, no reference) and the report's ``date``,
    ``pipeline_version`` and ``track`` (a padded text keeps its original's).
    """
    reports = data["reports"].set_index("slug")
    items = data["items"].merge(data["responses"], on="item_id", validate="one_to_one")
    is_twin = items["source_item"] != items["item_id"]
    originals = items[~is_twin].assign(perturbation=ORIGINAL)
    parts = [originals, perturb.apply(originals, PADDED, factor=padding_factor,
                                      style=padding_style)]
    if bundled_twins:
        parts.append(items[is_twin].assign(perturbation=TWIN))
    texts = pd.concat(parts, ignore_index=True)
    for column in ("date", "pipeline_version", "track"):
        texts[column] = [reports.at[s, column] for s in texts["source_item"]]
    texts["reference"] = None
    texts["n_words"] = texts["response"].str.split().str.len()
    return texts.drop(columns=["perturbation_params", "keywords"], errors="ignore")


def judge_texts(texts: pd.DataFrame, *, judge_models: list[str], mitigation: list[bool],
                temperature: float = 1.0, trials: int = 1, progress: bool = False) -> pd.DataFrame:
    """Six dimensions per text, one call each (seed 003), per judge and prompt condition.

    Returns the long scores frame (:data:`SCORE_COLUMNS`): failed or unparsed calls stay
    as rows with ``parse_ok=False`` and a NaN score.
    """
    meta = texts[["item_id", "pipeline_version", "track", "date"]]
    parts = []
    for judge in judge_models:
        for mit in mitigation:
            spec = JudgeSpec(protocol="dimensions", per_call=True, mitigation=bool(mit),
                             dimensions=DIMENSIONS, judge_model=judge, use_reference=False,
                             temperature=temperature, trials=trials, study=STUDY)
            parts.append(run_judging(texts, spec, progress=progress))
    scores = pd.concat(parts, ignore_index=True)
    scores["mitigation"] = scores["mitigation"].astype(bool)
    scores = scores.merge(meta, on="item_id", how="left", validate="many_to_one")
    return scores[list(SCORE_COLUMNS)]


def score_log(scores: pd.DataFrame) -> pd.DataFrame:
    """The seed's score log: one row per report text, judge, prompt and trial.

    ``scores`` maps each judged dimension (the six of seed 003 by default) to its score (None when the call failed or did not
    parse); ``total`` is their sum when all six parsed, else NaN (``n_failed`` says how
    many did not); ``eval_duration_s`` is the summed latency of the six calls (a timing:
    it changes between runs and is not shown in notebooks).
    """
    dims = list(dict.fromkeys(scores["dimension"]))  # the judged dimensions, in call order
    keys = ["item_id", "judge_model", "mitigation", "trial"]
    rows = []
    for key, part in scores.groupby(keys, sort=True):
        first = part.iloc[0]
        by_dim = dict(zip(part["dimension"], part["score"], strict=True))
        values = {d: (None if pd.isna(by_dim.get(d)) else int(by_dim[d]) if float(by_dim[d])
                      .is_integer() else float(by_dim[d])) for d in dims}
        failed = sum(v is None for v in values.values())
        rows.append({
            "date": first["date"], "pipeline_version": first["pipeline_version"],
            "track": first["track"], "slug": key[0], "source_slug": first["source_item"],
            "perturbation": first["perturbation"], "mitigation": bool(key[2]),
            "trial": int(key[3]), "scores": values,
            "total": float(sum(values.values())) if failed == 0 else np.nan,
            "n_failed": failed, "judge_model": key[1], "backend": first["backend"],
            "eval_duration_s": round(float(part["latency_s"].fillna(0).sum()), 3),
        })
    return pd.DataFrame(rows, columns=list(LOG_COLUMNS))


def write_score_log(log: pd.DataFrame, *, study: str = STUDY, name: str = "scores.jsonl") -> str:
    """Write the score log as JSON lines to ``<results>/<study>/<name>``; return
    ``<study>/<name>`` (a relative name, never a machine path)."""
    folder = results_dir(study)
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for rec in log.to_dict("records"):
        rec = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in rec.items()}
        if isinstance(rec["total"], float) and rec["total"].is_integer():
            rec["total"] = int(rec["total"])  # as in the seed: "total": 23
        lines.append(json.dumps(rec, ensure_ascii=False, default=_json_default))
    (folder / name).write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return f"{study}/{name}"


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return None if np.isnan(value) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"cannot write {type(value).__name__} to the score log")


def totals(log: pd.DataFrame) -> pd.DataFrame:
    """The log without the per-dimension dict and the timing: one ``total`` per report
    text, judge, prompt and trial (NaN when a dimension failed)."""
    return log.drop(columns=["scores", "eval_duration_s"]).rename(
        columns={"slug": "item_id", "source_slug": "source_item"})
