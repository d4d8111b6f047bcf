"""The ``workbench`` command (typer).

Sub-commands live beside the code they drive: the cache, sim-server and bench commands
in ``workbench.cli.cache``; run, run-all, params and store-outputs (over
``workbench.notebook``) in ``workbench.cli.run``; judge (over ``workbench.judges``) in
``workbench.cli.judge``; qualify (a user's judge table, over ``workbench.qualify``) in
``workbench.cli.qualify``.
"""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LLM-as-a-judge research workbench.")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr; the ``typer.Exit`` to raise (exit ``code``)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _register() -> None:
    from workbench.cli import _help, cache, judge, qualify, run

    cache.register(app)
    run.register(app)
    judge.register(app)
    qualify.register(app)
    _help.reflow_all(app)  # each docstring paragraph on one line: rich wraps it


_register()
