"""The ``workbench`` command (typer).

Sub-commands live beside the code they drive: the cache, sim-server and bench commands
in ``workbench.cli.cache``; run, run-all, params and store-outputs (over
``workbench.notebook``) in ``workbench.cli.run``; judge (over ``workbench.judges``) in
``workbench.cli.judge``; qualify (a user's judge table, over ``workbench.qualify``) in
``workbench.cli.qualify``.

Every command shares one error path (:class:`Commands`): a user's mistake the workbench
raises on purpose (:class:`~workbench.errors.WorkbenchError`) or a file that cannot be
opened is one ``error:`` line and a non-zero exit; any other exception is a bug and
keeps its traceback.
"""

from __future__ import annotations

import typer
from typer.core import TyperGroup


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr; the ``typer.Exit`` to raise (exit ``code``)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def user_error(exc: BaseException) -> str | None:
    """The one-line message of an expected failure, or ``None`` for a bug.

    Expected: a :class:`~workbench.errors.WorkbenchError` (its message says what to do)
    and an ``OSError`` about a named file (missing, a folder, not readable).
    """
    from workbench.errors import WorkbenchError

    if isinstance(exc, WorkbenchError):
        return str(exc)
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return None


class Commands(TyperGroup):
    """The command group whose ``invoke`` turns expected failures into one line, exit 1."""

    def invoke(self, ctx):  # noqa: D102 (click's)
        try:
            return super().invoke(ctx)
        except Exception as exc:
            message = user_error(exc)
            if message is None:
                raise
            raise fail(message, 1) from None


app = typer.Typer(add_completion=False, no_args_is_help=True, cls=Commands,
                  help="LLM-as-a-judge research workbench.")


def _register() -> None:
    from workbench.cli import _help, cache, judge, qualify, run

    cache.register(app)
    run.register(app)
    judge.register(app)
    qualify.register(app)
    _help.reflow_all(app)  # each docstring paragraph on one line: rich wraps it


_register()
