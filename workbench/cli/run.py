"""``workbench run``, ``run-all``, ``params`` and ``store-outputs``: thin commands over
``workbench.notebook``.

``workbench run s1 -y 'trials: 2' -y 'judge_models: [sim/judge-a, sim/judge-b]'`` runs
``notebooks/s1_judge_methods.ipynb`` through Papermill into
``data/runs/<timestamp>-s1_judge_methods/``. ``-y`` takes a YAML mapping (repeatable),
``-f`` a YAML file; values keep their YAML types (lists stay lists). An unknown name
(with a "did you mean") or a value of the wrong type is an error before any kernel
starts. A run whose values differ from the defaults writes its figures, tables and
headline into that run folder, never into ``figures/`` or ``data/results/``.
``workbench params s1`` lists the parameters: type, default and comment.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import fail

_FILE = typer.Option("-f", "--file", help="YAML file of parameters (repeatable).")
_YAML = typer.Option("-y", "--yaml", help="YAML mapping, e.g. -y 'n_batch: 5' (repeatable).")
_OUT = typer.Option(
    "-o", "--output-dir", help="Folder of the executed copies (default data/runs/<timestamp>/)."
)
_KERNEL = typer.Option("--kernel", help="Jupyter kernel name.")
_PROGRESS = typer.Option("--progress/--no-progress", help="Show Papermill's cell progress bar.")



_NOTEBOOK = typer.Argument(help="Notebook path or study name (s1, 00_tour, tour).")


def run(
    notebook: Annotated[str, _NOTEBOOK],
    file: Annotated[list[Path] | None, _FILE] = None,
    yaml: Annotated[list[str] | None, _YAML] = None,
    output_dir: Annotated[Path | None, _OUT] = None,
    kernel: Annotated[str, _KERNEL] = "python3",
    progress: Annotated[bool, _PROGRESS] = True,
) -> None:
    """Run one notebook through Papermill with the given parameters.

    The executed copy goes to data/runs/<timestamp>-<study>/.

    Only the defaults write to figures/ and data/results/; other values send
    the run's figures, tables and headline to its run folder.

    Parameters: workbench params <study>.
    """
    from workbench import notebook as nb

    try:
        params = nb.parse_parameters(files=file or (), yaml_strings=yaml or ())
        source = nb.resolve_notebook(notebook)
        declared = nb.check_parameters(source, params)
    except (ValueError, OSError) as exc:
        raise fail(str(exc), 2) from None
    changed = nb.changed_parameters(params, nb.parameter_defaults(declared))
    preset = os.environ.get(nb.OUTPUT_ENV)
    try:
        output = nb.run_notebook(
            source, parameters=params, output_dir=output_dir, kernel=kernel, progress=progress
        )
    except Exception as exc:  # papermill's execution error and kernel failures
        raise fail(f"{source.name} failed: {nb.describe_error(exc)}", 1) from None
    if changed:
        typer.echo(f"parameters differ from the defaults ({', '.join(changed)}): figures, "
                   f"tables and headline are below {preset or output.parent}")
    typer.echo(str(output))


def run_all(
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run only these (repeatable).")
    ] = None,
    file: Annotated[list[Path] | None, _FILE] = None,
    yaml: Annotated[list[str] | None, _YAML] = None,
    output_dir: Annotated[Path | None, _OUT] = None,
    kernel: Annotated[str, _KERNEL] = "python3",
    progress: Annotated[bool, _PROGRESS] = False,
    shared_kernel: Annotated[bool, typer.Option(
        "--shared-kernel/--kernel-per-notebook",
        help="One kernel for all, reset before each notebook (default), or a new one each.",
    )] = True,
) -> None:
    """Run every notebook in notebooks/ in name order; exit 1 if any failed.

    Prints a line as each notebook starts and ends, with a bar over them.

    A parameter given with -y/-f goes to every notebook that declares it.

    The notebooks share one kernel, reset before each (a new namespace, environment
    and settings; imported modules stay): the executed copies are those of a new
    kernel per notebook, which --kernel-per-notebook uses.
    """
    from workbench import notebook as nb

    try:
        params = nb.parse_parameters(files=file or (), yaml_strings=yaml or ())
        table = nb.run_all(only=only, parameters=params, output_dir=output_dir, kernel=kernel,
                           progress=progress, report=True, shared_kernel=shared_kernel)
    except (ValueError, OSError) as exc:
        raise fail(str(exc), 2) from None
    if table.empty:
        raise fail("no notebooks to run", 2)
    shown = table.drop(columns=["output"]).fillna({"error": ""})
    typer.echo(shown.to_string(index=False))
    typer.echo(f"executed copies: {Path(table['output'].iloc[0]).parent}")
    failed = table[table["status"] != "ok"]
    if not failed.empty:
        raise fail(
            f"{len(failed)} of {len(table)} notebooks failed: " + ", ".join(failed["notebook"]), 1
        )


def params(notebook: Annotated[str, _NOTEBOOK]) -> None:
    """List a notebook's parameters: name, type, default and comment.

    Set them with -y 'name: value' (YAML, so lists stay lists) or -f params.yaml.
    """
    from workbench import notebook as nb

    try:
        source = nb.resolve_notebook(notebook)
        table = nb.parameter_table(source)
    except (ValueError, OSError) as exc:
        raise fail(str(exc), 2) from None
    typer.echo(f"{source.stem}: {len(table)} parameters, set with -y 'name: value' "
               "or -f params.yaml")
    for line in parameter_lines(table):
        typer.echo(line)


def parameter_lines(table, width: int = 88) -> list[str]:
    """``workbench params``' listing: per parameter ``name: type = default`` and its
    comment below, indented, each wrapped to ``width`` characters (a long default such as
    a list of six models breaks between its items)."""
    import textwrap

    lines = []
    for row in table.itertuples(index=False):
        kind = f": {row.type}" if row.type else ""
        lines += textwrap.wrap(f"{row.name}{kind} = {row.default}", width, initial_indent="  ",
                               subsequent_indent="      ", break_on_hyphens=False)
        if row.comment:
            lines += textwrap.wrap(row.comment, width, initial_indent="      ",
                                   subsequent_indent="      ", break_on_hyphens=False)
    return lines


def store_outputs(
    notebooks: Annotated[
        list[str] | None,
        typer.Argument(help="Notebook paths or study names (default: every notebook)."),
    ] = None,
    kernel: Annotated[str, _KERNEL] = "python3",
) -> None:
    """Re-execute notebooks with their defaults and save the outputs in them (for nbval).

    Run it before committing a notebook whose outputs changed: timings, widget state and
    figure images are not stored, so reruns give the same file.
    """
    from workbench import config
    from workbench import notebook as nb

    try:
        names = notebooks or [p.stem for p in sorted(config.notebooks_dir().glob("*.ipynb"))]
        paths = [nb.resolve_notebook(name) for name in names]
    except (ValueError, OSError) as exc:
        raise fail(str(exc), 2) from None
    failed = []
    for path in paths:
        try:
            nb.store_outputs(path, kernel=kernel)
            typer.echo(f"stored  {path.name}")
        except Exception as exc:  # report and go on; the file is left as it was
            failed.append(path.name)
            typer.echo(f"failed  {path.name}: {nb.describe_error(exc)}", err=True)
    if failed:
        raise fail(f"{len(failed)} notebook(s) failed, left unchanged: {', '.join(failed)}", 1)


runs_app = typer.Typer(no_args_is_help=False)


def _list_runs() -> None:
    from workbench.notebook._runs import list_runs

    problems: list[str] = []
    table = list_runs(problems=problems)
    for problem in problems:
        typer.echo(f"warning: {problem}", err=True)
    if table.empty:
        typer.echo("no runs recorded in data/runs/ yet (workbench run <study> makes one)")
        return
    for row in table.itertuples(index=False):
        typer.echo(f"{row.run}  {row.status}  {row.backend}  commit {row.commit}")
        typer.echo(f"    study {row.study}; changed: {row.changed}")
        typer.echo(f"    judges: {row.judge_models}")
        typer.echo(f"    headline: {row.headline}")


@runs_app.callback(invoke_without_command=True)
def runs(ctx: typer.Context) -> None:
    """List the runs in data/runs/ (workbench runs, or workbench runs list): study,
    parameters changed, backend, judge models, headline numbers, git commit.

    Compare two: workbench runs compare RUN_A RUN_B (a run's name, or a part of it
    only one run has).
    """
    if ctx.invoked_subcommand is None:
        _list_runs()


@runs_app.command("list")
def list_command() -> None:
    """List the runs in data/runs/ (the same as workbench runs alone)."""
    _list_runs()


@runs_app.command("compare")
def compare(
    run_a: Annotated[str, typer.Argument(help="The first run (A).")],
    run_b: Annotated[str, typer.Argument(help="The second run (B).")],
) -> None:
    """Two runs side by side: the parameters that differ, every headline number with
    B - A, and (where both wrote a per-item scores table) a paired t test of the
    per-item mean scores, per measure."""
    import pandas as pd

    from workbench.notebook._runs import compare_runs

    try:
        out = compare_runs(run_a, run_b)
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    for problem in out["problems"]:
        typer.echo(f"warning: {problem}", err=True)
    for name in ("a", "b"):
        r = out[name]
        typer.echo(f"{name.upper()}: {r['run']}  ({r.get('study')}, {r.get('backend')}, commit "
                   f"{(r.get('commit') or '-')[:12]})")
    with pd.option_context("display.width", 100, "display.max_colwidth", 40,
                           "display.max_rows", 500, "display.precision", 4):
        typer.echo("\nparameters that differ:")
        typer.echo(out["parameters"].to_string(index=False) if len(out["parameters"]) else "  none")
        typer.echo("\nheadline numbers:")
        typer.echo(out["headline"].to_string(index=False) if len(out["headline"]) else "  none")
        if len(out["paired"]):
            typer.echo("\npaired t test of the per-item mean scores (B - A; units scored in both):")
            typer.echo(out["paired"].to_string(index=False))
        else:
            typer.echo("\nno paired test: the runs have no per-item scores table in common")


def register(app: typer.Typer) -> None:
    """Add ``run``, ``run-all``, ``params`` and ``store-outputs`` to the ``workbench`` command."""
    app.command("run")(run)
    app.command("run-all")(run_all)
    app.command("params")(params)
    app.command("store-outputs")(store_outputs)
    app.add_typer(runs_app, name="runs")
