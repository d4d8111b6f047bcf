"""Help text that rich reflows: each paragraph of a command's docstring on one line.

Typer's rich help keeps the single line breaks of a docstring (in the list of a group's
commands, and in every paragraph after the first of a command's own help), so a sentence
wrapped at 90 columns in the source broke in mid-sentence on screen, at any terminal
width. :func:`reflow_all` joins the lines of each paragraph, and rich wraps them to the
terminal. A paragraph that starts with ``\\b`` (click's mark) is kept as written.
"""

from __future__ import annotations

import inspect

import typer


def reflow(text: str | None) -> str | None:
    r"""``text`` with the lines of each paragraph joined (paragraphs: blank-line separated).

    Examples
    --------
    >>> reflow("List the runs: study,\n    backend.\n\n    Compare two:\n    runs compare A B")
    'List the runs: study, backend.\n\nCompare two: runs compare A B'
    >>> reflow("Keep:\n\n\b\na\nb")
    'Keep:\n\n\x08\na\nb'
    """
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(
        line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)


def reflow_all(app: typer.Typer) -> None:
    """Reflow the help of every command of ``app`` and of its groups (and their own)."""
    for info in app.registered_commands:
        info.help = reflow(info.help if isinstance(info.help, str)
                           else inspect.getdoc(info.callback))
    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is None:
            continue
        if isinstance(sub.info.help, str):
            sub.info.help = reflow(sub.info.help)
        callback = sub.registered_callback
        if callback is not None and not isinstance(callback.help, str) and callback.callback:
            callback.help = reflow(inspect.getdoc(callback.callback))
        reflow_all(sub)
