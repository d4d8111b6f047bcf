"""The ``workbench`` command (typer).

Sub-commands live beside the code they drive: the cache, sim-server and bench
commands in ``workbench.llm_cli``; run and run-all in ``workbench.notebook``.
"""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LLM-as-a-judge research workbench.")


def _register() -> None:
    from workbench import llm_cli, run_cli

    llm_cli.register(app)
    run_cli.register(app)


_register()

if __name__ == "__main__":
    app()
