"""``workbench bench labels``: study X4's simulation table from the command line (small)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from workbench.cli import cache as llm_cli


def _app() -> typer.Typer:
    app = typer.Typer()
    llm_cli.register(app)
    return app


@pytest.mark.slow
def test_bench_labels_prints_the_coverage_and_width_table():
    result = CliRunner().invoke(_app(), ["bench", "labels", "--n-studies", "20",
                                         "--budget", "20"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = lines[0].split()
    for column in ("coverage", "coverage_se", "coverage_anytime", "width_ratio",
                   "width_ratio_se", "ceiling"):
        assert column in header
    # 17 X4 scenarios + 4 binary + 2 continuous, x 5 methods (active, q ∝ u, uniform,
    # oracle rule, ppi-python)
    assert sum(" active " in line for line in lines) == 23
    assert sum("uniform ppi-python (fixed n)" in line for line in lines) == 23
    assert sum(line.lstrip().startswith("binary, accuracy") for line in lines) == 4 * 5
    assert "20 studies of 20 labels per scenario, 95% confidence sequence" in result.output


def test_bench_labels_refuses_too_few_studies():
    result = CliRunner().invoke(_app(), ["bench", "labels", "--n-studies", "1"])
    assert result.exit_code == 1
    assert "--n-studies and --budget must be >= 2" in result.output
