"""The ``workbench`` command (typer).

Sub-commands live beside the code they drive: the cache, sim-server and bench commands
in ``workbench.llm_cli``; run, run-all, params and store-outputs (over
``workbench.notebook``) in ``workbench.run_cli``; judge (over ``workbench.judges``) in
``workbench.judge_cli``; qualify (a user's judge table, over ``workbench.qualify``) in
``workbench.qualify_cli``.
"""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LLM-as-a-judge research workbench.")


def _register() -> None:
    from workbench import judge_cli, llm_cli, qualify_cli, run_cli

    llm_cli.register(app)
    run_cli.register(app)
    judge_cli.register(app)
    qualify_cli.register(app)


_register()

if __name__ == "__main__":
    app()
