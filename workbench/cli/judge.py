"""``workbench judge``: judge the answers in your own CSV file with one protocol.

::

    workbench judge my.csv --protocol holistic_simple --judge sim/judge-a --out scores.csv

Reads the CSV (one row per answer, with the columns the protocol requires: docs/your-data.md,
"Judge your own data"), runs :func:`workbench.judges.run_judging` through the cached
client with a progress bar, and writes its long results frame (one row per judge call
and score, :data:`workbench.judges.RESULT_COLUMNS`) as CSV. Before any call the whole
file is checked (:func:`workbench.judges.check_items`): a missing column stops at once;
otherwise every problem is listed with its line in the file (counted from 1, the header
being line 1) — empty required fields, malformed criteria or rubric cells, and an
``item_id`` repeated (with the same ``answer_model`` / ``answer_sample``), whose result
rows could not be told apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import fail


def _read_table(path: Path, what: str):
    import pandas as pd

    try:
        return pd.read_csv(path, dtype={"item_id": str, "criterion_id": str}, keep_default_na=True)
    except (OSError, ValueError) as exc:  # missing file, empty file, malformed CSV
        raise fail(f"{path}: cannot read the {what} CSV ({exc})") from None


def record_lines(path: Path) -> list[int]:
    """The 1-based line on which each data record of a CSV file starts (the header is
    line 1; blank lines are skipped, as pandas does; a quoted field may span lines)."""
    import csv

    starts, end = [], 0
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        reader = csv.reader(handle)
        for record in reader:
            start, end = end + 1, reader.line_num
            if record:
                starts.append(start)
    return starts[1:]


def _in_file(message: str, path: Path, columns) -> str:
    """``run_judging``'s table errors ("items: column 'x' is required ...") said of the
    file, with the columns it has."""
    if not message.startswith("items"):
        return message
    return f"{path}{message[len('items'):]} (its columns: {', '.join(map(str, columns))})"


def _problems(path: Path, items, spec, rubric) -> list[str]:
    """Every problem of the file for ``spec``, each naming its line."""
    from workbench.judges import check_items

    lines = record_lines(path)
    if len(lines) != len(items):  # a layout the csv module reads differently: count rows
        lines = [i + 2 for i in range(len(items))]
    out = []
    for p in check_items(items, spec, rubric=rubric):
        if p.row is None:
            return [_in_file(p.message, path, items.columns)]
        item_id = items["item_id"].iloc[p.row] if "item_id" in items.columns else None
        message = p.message
        if p.other is not None:  # the repeated record, by its line too
            message = message.replace(f"on row {p.other + 1} ", f"on line {lines[p.other]} ", 1)
        out.append(f"{path} line {lines[p.row]} (item_id {item_id!r}): {message}")
    return out


def _cost_text(scores, spec) -> str:
    """The run's cost, or "cost unknown" when a model it called has no price (its calls
    are recorded at $0, which is not what they cost)."""
    import math

    from workbench.llm import price

    if "backend" in scores and scores["backend"].eq("sim").all():
        return f"${scores['cost_usd'].sum():.4f}"  # simulated judges (sim/ or a sim-server)
    models = {spec.judge_model} | ({spec.summarizer_model} if spec.protocol == "summarize_then" else set())
    unpriced = sorted(m for m in models if not m.startswith("sim/")
                      and math.isnan(price(m, 1000, 1000)))
    if unpriced:
        return f"cost unknown (no price for {', '.join(unpriced)})"
    return f"${scores['cost_usd'].sum():.4f}"


def judge(
    data: Annotated[Path, typer.Argument(help="CSV file: one row per answer to judge.")],
    judge_model: Annotated[
        str, typer.Option("--judge", help="Judge model (litellm string; sim/* runs offline).")
    ],
    protocol: Annotated[
        str, typer.Option("--protocol", help="Judging protocol (holistic_simple needs no rubric).")
    ] = "holistic_simple",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Results CSV (default: <data stem>_scores.csv here)."),
    ] = None,
    trials: Annotated[int, typer.Option("--trials", help="Judge calls per answer.")] = 1,
    temperature: Annotated[
        list[float] | None,
        typer.Option("--temperature", help="Judge temperature (repeatable; default 0)."),
    ] = None,
    lang: Annotated[
        str | None, typer.Option("--lang", help="Prompt language ja | en | zh (default: per row).")
    ] = None,
    template: Annotated[
        str | None, typer.Option("--template", help="Judging template id (default per protocol).")
    ] = None,
    reference: Annotated[
        bool | None,
        typer.Option("--reference/--no-reference",
                     help="Show the reference answer (default per protocol)."),
    ] = None,
    rubric: Annotated[
        Path | None,
        typer.Option("--rubric", help="Rubric CSV (item_id, criterion_id, text, weight, kind) "
                                      "for holistic and checklist."),
    ] = None,
    inner: Annotated[
        str | None,
        typer.Option("--inner", help="summarize_then: the protocol applied to the summary."),
    ] = None,
    summarizer: Annotated[
        str, typer.Option("--summarizer", help="summarize_then: the summarising model.")
    ] = "sim/summarizer",
    cache_mode: Annotated[
        str | None,
        typer.Option("--cache-mode", help="readwrite | readonly | refresh | off "
                                          "(default: WORKBENCH_CACHE_MODE, else readwrite)."),
    ] = None,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", help="Stop before spending more than this.")
    ] = None,
    progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="Show the progress bar of the calls.")
    ] = True,
) -> None:
    """Judge the answers in a CSV file with one protocol; write the scores as CSV."""
    from workbench import llm
    from workbench.errors import BudgetExceeded
    from workbench.judges import JudgeSpec, run_judging

    items = _read_table(data, "data")
    rubric_frame = _read_table(rubric, "rubric") if rubric is not None else None
    options = dict(judge_model=judge_model, template=template, lang=lang, use_reference=reference,
                   trials=trials, temperature=tuple(temperature or (0.0,)), study=data.stem)
    try:
        if protocol == "summarize_then":
            if inner is None:
                raise ValueError("--protocol summarize_then needs --inner (e.g. --inner geval)")
            spec = JudgeSpec(protocol="summarize_then", summarizer_model=summarizer, study=data.stem,
                             inner=JudgeSpec(protocol=inner, **options), budget_usd=budget_usd)
        else:
            if inner is not None:
                raise ValueError("--inner goes with --protocol summarize_then")
            spec = JudgeSpec(protocol=protocol, budget_usd=budget_usd, **options)
        if cache_mode is not None:
            llm.configure(cache_mode=cache_mode)
    except ValueError as exc:
        raise fail(str(exc)) from None

    target = out if out is not None else Path(f"{data.stem}_scores.csv")
    if not target.parent.is_dir() or target.is_dir():
        raise fail(f"--out {target}: " + ("is a folder; give a file name" if target.is_dir() else
                                          f"no folder {target.parent} to write it in"))
    problems = _problems(data, items, spec, rubric_frame)
    if len(problems) == 1:
        raise fail(f"{problems[0]}; nothing judged")
    if problems:
        raise fail(f"{len(problems)} problems, nothing judged:\n  " + "\n  ".join(problems))
    stopped = None
    try:
        scores = run_judging(items, spec, rubric=rubric_frame, progress=progress)
    except ValueError as exc:  # malformed items, rubric or spec: before any call
        raise fail(_in_file(str(exc), data, items.columns)) from None
    except BudgetExceeded as exc:
        scores, stopped = exc.results, exc
    try:
        scores.to_csv(target, index=False)
    except OSError as exc:  # e.g. no permission: the replies are cached, a rerun is free
        raise fail(f"--out {target}: cannot write the scores ({exc}); the replies are in "
                   "the cache, so a rerun with another --out costs nothing", 1) from None
    unparsed = int((~scores["parse_ok"]).sum())
    cached = int(scores["cached"].fillna(False).sum())
    typer.echo(
        f"{len(items)} rows of {data.name} judged by {spec.judge_model} ({protocol}, "
        f"{trials} trial(s)): {len(scores)} scores, {unparsed} unparsed, {cached} from the cache, "
        f"{_cost_text(scores, spec)} -> {target}"
    )
    if (scores["backend"] == "sim").any():
        typer.echo("simulated judge: the scores show that the pipeline works, not how an LLM judges")
    if stopped is not None:
        raise fail(f"the budget stopped the run: {stopped}; the scores so far are in {target}", 1)


def register(app: typer.Typer) -> None:
    """Add ``judge`` to the ``workbench`` command."""
    app.command("judge")(judge)
