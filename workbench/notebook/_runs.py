"""Run records: what each Papermill run did, listed and compared (``workbench runs``).

Every ``run_notebook`` (and so every ``workbench run`` / ``run-all``) leaves in its run
folder ``data/runs/<YYYYmmddTHHMMSSZ>-<label>/`` (UTC, one naming for every run):

- ``<notebook>.run.json``: the notebook, its study, status, start (UTC) and seconds, the
  parameters that differ from the defaults and all values in force, the backend, the
  judge models, the headline numbers, the package version and the git commit;
- ``results/<study>/`` and ``figures/<study>/``: the run's own tables, headline and
  figures (a default run writes them to ``data/results/`` and ``figures/``; a copy is
  kept here, so a later run cannot change what this run found);
- ``index.html``: the executed notebooks and figures as one page (``_html``).

:func:`list_runs` reads the records (and, for sessions run in JupyterLab with changed
parameters, the headline's ``run`` entry); :func:`compare_runs` puts two runs side by
side: parameters, headline numbers with their difference and, where both runs wrote a
per-item ``scores`` table, a paired test of the per-item mean scores.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workbench import config
from workbench.notebook._provenance import git_commit

_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
               int: "a number", float: "a number", type(None): "null"}

#: Suffix of a notebook's run record in its run folder.
RECORD_SUFFIX = ".run.json"
#: Columns of :func:`list_runs`.
RUNS_COLUMNS = ("run", "study", "status", "started", "changed", "backend", "judge_models",
                "headline", "commit")
#: Columns that identify the judged unit in a per-item table, and those that separate
#: measures (a paired test per measure).
UNIT_COLUMNS = ("item_id", "answer_model", "conversation", "question")
MEASURE_COLUMNS = ("protocol", "metric", "method", "dimension")


def utc_stamp(moment: _dt.datetime | None = None) -> str:
    """``YYYYmmddTHHMMSSZ``, UTC: the time stamp of every run folder."""
    return (moment or _dt.datetime.now(_dt.UTC)).astimezone(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")


def _models(values: Mapping[str, Any], word: str) -> list[str]:
    """The model strings of the parameters whose name holds ``word`` and ``model`` (an
    empty string, "none given", is not a model)."""
    out: list[str] = []
    for name, value in values.items():
        if word in name and "model" in name:
            for v in value if isinstance(value, list | tuple) else [value]:
                if isinstance(v, str) and v.strip() and v not in out:
                    out.append(v)
    return out


def _joined(value: Any) -> str | None:
    """A backend as recorded (``"sim"``, or a list such as ``["openai", "sim"]``) as one
    string (``openai+sim``); None when it is neither."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) and v for v in value):
        return "+".join(sorted(set(value)))
    return None


def _table_backends(folder: Path) -> str | None:
    """The ``backend`` values of the result tables in ``folder`` (those with the column):
    where the replies came from, row by row."""
    found: set[str] = set()
    for path in sorted(folder.glob("*.csv")):
        try:
            column = pd.read_csv(path, usecols=lambda c: c == "backend", dtype=str)
        except (OSError, ValueError):
            continue
        if "backend" in column.columns:
            found.update(v for v in column["backend"].dropna() if v)
    return "+".join(sorted(found)) or None


def _backend(values: Mapping[str, Any], headline: Mapping[str, Any],
             tables: Path | None = None) -> str:
    """Where a run's replies came from: the headline's ``backend`` (a study records the
    backends of its results or calls), else the ``backend`` column of its result tables,
    else, a guess, the providers of the models among its parameters."""
    recorded = _joined(headline.get("backend"))
    if recorded:
        return recorded
    from_tables = _table_backends(tables) if tables is not None and tables.is_dir() else None
    if from_tables:
        return from_tables
    models = _models(values, "")
    if not models:
        return "unknown"
    return "sim" if all(m.startswith("sim/") for m in models) else "+".join(sorted(
        {"sim" if m.startswith("sim/") else m.split("/")[0] if "/" in m else "openai"
         for m in models}))


def write_record(out_dir: Path, notebook: str, *, values: Mapping[str, Any],
                 changed: Mapping[str, Any], output_root: Path | None, started: float,
                 status: str, error: str | None) -> Path:
    """Write ``<out_dir>/<notebook>.run.json`` after a run (see the module docstring).

    ``output_root`` is the ``WORKBENCH_OUTPUT_DIR`` the kernel had (None: the project's
    ``data/results`` and ``figures``); the studies whose headline was written since
    ``started`` (a POSIX time; ``record`` rewrites it on every run) are this run's, and
    their folders are copied whole into the run folder when they were written elsewhere.
    """
    results_root = (output_root / "results") if output_root else config.data_dir() / "results"
    figures_root = (output_root / "figures") if output_root else config.root() / "figures"
    studies, headline = [], {}
    for path in sorted(results_root.glob("*/headline.json")):
        if path.stat().st_mtime >= started - 1e-3:
            studies.append(path.parent.name)
            found, why = read_json(path)  # a kernel killed while writing it: no numbers
            headline = found if isinstance(found, dict) else {}
    out_dir = Path(out_dir)
    for study in studies:
        for root, kind in ((results_root, "results"), (figures_root, "figures")):
            src, dst = root / study, out_dir / kind / study
            if src.resolve() == dst.resolve() or not src.is_dir():
                continue
            # every file: save_figure leaves an unchanged figure (and its mtime) alone
            for path in (q for q in src.rglob("*") if q.is_file()):
                target = dst / path.relative_to(src)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    headline = {k: v for k, v in headline.items() if k != "run"}
    record = {
        "notebook": notebook, "study": studies[0] if len(studies) == 1 else (studies or None),
        "status": status, "error": error,
        "started": utc_stamp(_dt.datetime.fromtimestamp(started, _dt.UTC)),
        "seconds": round(_dt.datetime.now(_dt.UTC).timestamp() - started, 1),
        "changed": dict(changed), "parameters": dict(values),
        "backend": _backend(values, headline, results_root / studies[0] if len(studies) == 1
                            else None),
        "judge_models": _models(values, "judge"),
        "headline": headline, "version": config.__version__, "commit": git_commit(),
        "executed": f"{notebook}.ipynb",
    }
    path = out_dir / f"{notebook}{RECORD_SUFFIX}"
    path.write_text(json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False,
                               default=str) + "\n", encoding="utf-8")
    return path


def flat_numbers(headline: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """The numbers of a headline, nested keys joined with ``.`` (booleans left out).

    Examples
    --------
    >>> flat_numbers({"ci": {"checklist": 0.4, "simple": None}, "n": 3, "backend": "sim"})
    {'ci.checklist': 0.4, 'ci.simple': nan, 'n': 3.0}
    """
    out: dict[str, float] = {}
    for key, value in headline.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flat_numbers(value, f"{name}."))
        elif value is None:
            out[name] = math.nan
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = float(value)
    return out


def _kind(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _plain(value: Any) -> bool:
    try:
        config.check_name(value, "name")
    except ValueError:
        return False
    return True


def record_problem(rec: Any) -> str | None:
    """Why a run record is not sound (its first wrong field), or None."""
    if not isinstance(rec, dict):
        return f"not a run record: {_kind(rec)}, expected an object"
    if not _plain(rec.get("notebook")):
        return (f"field 'notebook' is {_kind(rec.get('notebook'))}"
                + (f" ({rec['notebook']!r})" if isinstance(rec.get("notebook"), str) else "")
                + ", expected a notebook's name")
    study = rec.get("study")
    studies = study if isinstance(study, list) else [] if study is None else [study]
    if not all(_plain(s) for s in studies):
        return f"field 'study' is {study!r}, expected a study's name (or a list of them)"
    for name, kinds, what in (
            (("changed", "parameters", "headline"), (dict,), "an object"),
            (("status", "started", "backend", "commit", "error", "version", "executed"),
             (str,), "a string"),
            (("judge_models",), (list,), "an array"),
            (("seconds",), (int, float), "a number")):
        for field in name:
            value = rec.get(field)
            if value is not None and not isinstance(value, kinds):
                return f"field {field!r} is {_kind(value)}, expected {what}"
    if not all(isinstance(m, str) for m in rec.get("judge_models") or []):
        return "field 'judge_models' holds a value that is not a string"
    return None


def read_json(path: Path) -> tuple[Any, str | None]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), None
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or type(exc).__name__})"
    except ValueError as exc:
        return None, f"not JSON ({str(exc).splitlines()[0][:80]})"


def read_records(runs: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every sound run record below ``runs`` (a JupyterLab session's run folder, with no
    record and a headline with a ``run`` entry, gives one too), and one line per file left
    out: ``<path>: <why>``."""
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for folder in sorted(p for p in runs.glob("*") if p.is_dir()):
        records = sorted(folder.glob(f"*{RECORD_SUFFIX}"))
        for path in records:
            rec, why = read_json(path)
            why = why or record_problem(rec)
            if why:
                problems.append(f"{path}: {why}; left out")
                continue
            rec["folder"] = folder
            rec["run"] = folder.name if len(records) == 1 else f"{folder.name}/{rec['notebook']}"
            # what the study recorded beats a record's guess (records before this fix)
            rec["backend"] = _joined((rec.get("headline") or {}).get("backend")) or rec.get(
                "backend")
            out.append(rec)
        if records:
            continue
        for head in sorted(folder.glob("results/*/headline.json")):
            headline, why = read_json(head)
            if why is None and not isinstance(headline, dict):
                why = f"{_kind(headline)}, expected an object"
            if why:
                problems.append(f"{head}: {why}; left out")
                continue
            entry = headline.pop("run", None)
            if not isinstance(entry, dict):
                continue
            params = entry.get("parameters")
            if not isinstance(params, dict):
                problems.append(f"{head}: field 'run.parameters' is {_kind(params)}, expected "
                                "an object; left out")
                continue
            out.append({"folder": folder, "run": folder.name, "notebook": None,
                        "study": head.parent.name, "status": "session", "started": folder.name[:16],
                        "changed": params, "parameters": params,
                        "backend": _backend(params, headline, head.parent),
                        "judge_models": _models(params, "judge"), "headline": headline,
                        "commit": _text(entry.get("commit")), "version": _text(entry.get("version"))})
    return out, problems


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def inside(folder: Path, path: Path) -> bool:
    """Whether ``path`` (links followed) is inside ``folder``."""
    try:
        path.resolve().relative_to(Path(folder).resolve())
    except (ValueError, OSError):
        return False
    return True


def _short(values: Mapping[str, Any], limit: int = 3, width: int = 40) -> str:
    items = []
    for k, v in values.items():
        text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        items.append(f"{k}={text if len(text) <= width else text[:width - 1] + '…'}")
    return ", ".join(items[:limit]) + (f", … (+{len(items) - limit})" if len(items) > limit else "")


def list_runs(runs_dir: Path | None = None, *, problems: list[str] | None = None
              ) -> pd.DataFrame:
    """One row per recorded run, oldest first: :data:`RUNS_COLUMNS`.

    ``changed`` is ``default`` for a run with the notebook's defaults; ``headline``
    shows its first three numbers (``workbench runs compare`` shows all). A record that
    is not sound is left out, and a line naming it appended to ``problems``.
    """
    rows = []
    records, found = read_records(runs_dir or config.runs_dir())
    if problems is not None:
        problems.extend(found)
    for rec in records:
        numbers = {k: round(v, 4) for k, v in flat_numbers(rec.get("headline") or {}).items()}
        rows.append({
            "run": rec["run"], "study": rec.get("study") or rec.get("notebook"),
            "status": rec.get("status"), "started": rec.get("started"),
            "changed": _short(rec.get("changed") or {}) or "default",
            "backend": rec.get("backend"),
            "judge_models": ", ".join(rec.get("judge_models") or []) or "-",
            "headline": _short(numbers), "commit": (rec.get("commit") or "-")[:12],
        })
    return pd.DataFrame(rows, columns=list(RUNS_COLUMNS))


def find_run(name: str, runs_dir: Path | None = None, *,
             records: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The record of a run named by its ``run`` (folder, or folder/notebook), or by a
    part of it that only one run has (``s1_judge_methods``, a time stamp prefix), among
    ``records`` (default: those of :func:`read_records`)."""
    if records is None:
        records = read_records(runs_dir or config.runs_dir())[0]
    exact = [r for r in records if name in (r["run"], r["folder"].name)]
    found = exact or [r for r in records if name in r["run"]]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValueError(f"no run matches {name!r} (workbench runs lists them)")
    raise ValueError(f"{name!r} matches {len(found)} runs: "
                     + ", ".join(r["run"] for r in found[:6]) + "; give more of the name")


def _scores(rec: Mapping[str, Any]) -> pd.DataFrame | None:
    """The run's ``results/<study>/scores.csv``, only from inside its run folder (a
    study that is not a plain name, or a link out of the folder, is no table)."""
    study = rec.get("study")
    if not _plain(study):
        return None
    path = rec["folder"] / "results" / study / "scores.csv"
    if not path.is_file() or not inside(rec["folder"], path):
        return None
    try:
        frame = pd.read_csv(path, low_memory=False)
    except (OSError, ValueError):
        return None
    return frame if "score" in frame.columns else None


def paired_items(a: Mapping[str, Any], b: Mapping[str, Any]) -> pd.DataFrame:
    """Paired test of the two runs' per-item mean scores, one row per measure.

    Each run's ``results/<study>/scores.csv`` is averaged per unit (the present
    :data:`UNIT_COLUMNS`) within each measure (the present :data:`MEASURE_COLUMNS`),
    over everything else (judges, trials, temperatures); units scored in both runs are
    paired, and :func:`workbench.stats.paired_tests` tests the mean of B - A (paired t).
    Empty when either run has no such table.
    """
    from workbench.stats import paired_tests

    frames = {"A": _scores(a), "B": _scores(b)}
    if any(f is None for f in frames.values()):
        return pd.DataFrame()
    common = set(frames["A"].columns) & set(frames["B"].columns)
    units = [c for c in UNIT_COLUMNS if c in common]
    if not units:
        return pd.DataFrame()
    by = [c for c in MEASURE_COLUMNS if c in common]
    long = pd.concat([f.assign(run=k) for k, f in frames.items()], ignore_index=True)
    long["unit"] = long[units].astype(str).agg(" | ".join, axis=1)
    long["score"] = pd.to_numeric(long["score"], errors="coerce")
    means = long.groupby([*by, "unit", "run"], dropna=False)["score"].mean().reset_index()
    tests = paired_tests(means, dv="score", within="run", subject="unit", reference="B",
                         by=by or None, padjust="none")
    keep = [*by, "n", "mean_b", "mean_a", "estimate", "ci_low", "ci_high", "p_value", "cohen_dz"]
    out = tests[keep].rename(columns={"mean_b": "A", "mean_a": "B", "estimate": "B - A"})
    return out


def compare_runs(name_a: str, name_b: str, runs_dir: Path | None = None) -> dict[str, Any]:
    """Two runs side by side: ``a``, ``b`` (their records), ``parameters`` (every value
    that differs, A and B), ``headline`` (every number: A, B, B - A), ``paired``
    (:func:`paired_items`) and ``problems`` (the records left out, as in
    :func:`read_records`)."""
    records, problems = read_records(runs_dir or config.runs_dir())
    try:
        a, b = find_run(name_a, records=records), find_run(name_b, records=records)
    except ValueError as exc:
        if not problems:
            raise
        raise ValueError(f"{exc}; {len(problems)} record(s) left out, the first: "
                         f"{problems[0]}") from None
    pa, pb = a.get("parameters") or {}, b.get("parameters") or {}
    params = pd.DataFrame(
        [{"parameter": k, "A": json.dumps(pa.get(k), ensure_ascii=False),
          "B": json.dumps(pb.get(k), ensure_ascii=False)}
         for k in sorted(set(pa) | set(pb)) if pa.get(k) != pb.get(k)],
        columns=["parameter", "A", "B"])
    ha, hb = flat_numbers(a.get("headline") or {}), flat_numbers(b.get("headline") or {})
    heads = pd.DataFrame([{"number": k, "A": ha.get(k, math.nan), "B": hb.get(k, math.nan)}
                          for k in list(dict.fromkeys([*ha, *hb]))], columns=["number", "A", "B"])
    heads["B - A"] = heads["B"] - heads["A"]
    return {"a": a, "b": b, "parameters": params, "headline": heads,
            "paired": paired_items(a, b), "problems": problems}
