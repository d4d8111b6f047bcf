"""One replay line per notebook cell (workbench.notebook._replays), in a real IPython shell."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.llm import _pipeline
from workbench.notebook._session import PANDAS_OPTIONS

CELL = """
from workbench.llm import Request, complete_many
requests = [Request("sim/judge-a", [{"role": "user", "content": f"question {i}"}]) for i in range(3)]
for _ in range(19):  # S1 replays its runs one after another in one cell
    complete_many(requests, progress=True)
"""


@pytest.fixture
def shell(monkeypatch, tmp_path):
    """An IPython shell in this process, without history; ``__main__`` restored after."""
    import sys

    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    monkeypatch.setattr(_pipeline, "replay_listener", None, raising=False)
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    settings = Config()
    settings.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=settings)
    yield shell
    InteractiveShell.clear_instance()
    for key in PANDAS_OPTIONS:  # set by setup(): leave the test process as it was
        pd.reset_option(key)


def test_a_cell_of_19_replayed_runs_prints_one_line(shell, capsys):
    from workbench.notebook import setup

    shell.run_cell("from workbench.llm import Request, complete_many\n"
                   "complete_many([Request('sim/judge-a', [{'role': 'user', 'content': "
                   "f'question {i}'}]) for i in range(3)], progress=False)")  # fills the cache
    shell.run_cell("from workbench.notebook import setup\nctx = setup(0)")
    capsys.readouterr()
    result = shell.run_cell(CELL)
    assert result.success, result.error_in_exec
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("LLM calls")]
    assert lines == ["LLM calls: 57 replayed from cache"]
    shell.run_cell("x = 1")
    assert "LLM calls" not in capsys.readouterr().out  # a cell without calls: no line
    setup(0)  # twice in one kernel: still one line per cell
    shell.run_cell(CELL)
    assert capsys.readouterr().out.count("LLM calls") == 1


def test_outside_ipython_each_run_prints_its_line(capsys):
    from workbench.llm import Request, complete_many
    from workbench.notebook._replays import tally_replays_per_cell

    assert tally_replays_per_cell() is False and _pipeline.replay_listener is None
    requests = [Request("sim/judge-a", [{"role": "user", "content": "q"}])]
    complete_many(requests, progress=False)
    complete_many(requests, progress=True)
    complete_many(requests, progress=True)
    assert capsys.readouterr().out.count("LLM calls: 1 replayed from cache") == 2
