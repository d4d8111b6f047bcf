"""``workbench bench llm`` runs end to end with small numbers (no time is asserted)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from workbench.cli import cache as llm_cli


@pytest.mark.slow
def test_bench_llm_runs_and_prints_its_ratios():
    app = typer.Typer()
    llm_cli.register(app)
    result = CliRunner().invoke(app, ["bench", "llm", "--n-replay", "200", "--n-server", "24",
                                      "--concurrency", "8", "--concurrency", "16",
                                      "--latency-ms", "20", "--n-sequential", "4"])
    assert result.exit_code == 0, result.output
    for label in ("ratio replay / bare", "efficiency", "speed-up vs sequential",
                  "batch_completion / ours", "via litellm (old path)", "at concurrency 16"):
        assert label in result.output
    assert result.output.count("efficiency") >= 3  # one per concurrency, one of litellm's path
    assert "(0 failed" in result.output
    assert result.output.count("batch_completion / ours") == 2  # beside each concurrency
    assert "batch_completion / ideal" in result.output
