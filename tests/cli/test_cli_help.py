"""The help of every ``workbench`` command reads as written: rich wraps each docstring
paragraph to the terminal, never at the line breaks of the source."""

from __future__ import annotations

import inspect
import re

import pytest
import typer
from typer.testing import CliRunner

from workbench.cli import app


def _commands(group: typer.Typer, path: tuple[str, ...] = ()):
    """``(argv, docstring)`` of every command and group below ``group``."""
    for info in group.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        yield (*path, name), inspect.getdoc(info.callback)
    for info in group.registered_groups:
        sub = info.typer_instance
        doc = inspect.getdoc(sub.registered_callback.callback) if sub.registered_callback else None
        yield (*path, info.name), doc
        yield from _commands(sub, (*path, info.name))


def _screen(argv: tuple[str, ...], columns: int) -> str:
    out = CliRunner().invoke(app, [*argv, "--help"], env={"COLUMNS": str(columns)},
                             terminal_width=columns)
    assert out.exit_code == 0, out.output
    return "\n".join(re.sub(r"\s+", " ", line.strip(" │╭╮╰╯─")).strip()
                     for line in out.output.splitlines())


COMMANDS = sorted(_commands(app))


@pytest.mark.parametrize(("argv", "doc"), COMMANDS, ids=[" ".join(c[0]) for c in COMMANDS])
def test_each_paragraph_of_a_commands_help_is_wrapped_by_the_terminal(argv, doc):
    """At 400 columns each paragraph (up to 300 characters) is one line on screen, in the
    command's own help and in its group's list of commands; typer's rich help kept the
    docstring's own line breaks ("every headline number with" / "B - A, and ..."), in
    mid-sentence at any width."""
    if not doc:
        pytest.skip("no docstring")
    wide = _screen(argv, 400).splitlines()
    paragraphs = [re.sub(r"\s+", " ", p).strip()
                  for p in inspect.cleandoc(doc.split("\f")[0]).split("\n\n")
                  if not p.startswith("\b")]
    for text in paragraphs:
        if text and len(text) <= 300:
            assert text in wide, f"{' '.join(argv)}: {text!r} not on one line:\n{wide}"
    if len(argv) > 1 and len(paragraphs[0]) <= 300:  # the group's list of commands
        assert f"{argv[-1]} {paragraphs[0]}" in _screen(argv[:-1], 400).splitlines()
    assert paragraphs[0].split()[0] in _screen(argv, 80)  # and it renders at 80 columns


def test_runs_list_is_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_ROOT", str(tmp_path))
    alone = CliRunner().invoke(app, ["runs"])
    listed = CliRunner().invoke(app, ["runs", "list"])
    assert alone.exit_code == listed.exit_code == 0, listed.output
    assert listed.output == alone.output and "no runs recorded" in listed.output
    assert "workbench runs list" in _screen(("runs",), 200)
