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
                                      "--latency-ms", "20", "--n-sequential", "4",
                                      "--n-short", "16"])
    assert result.exit_code == 0, result.output
    for label in ("ratio replay / bare", "efficiency", "speed-up vs sequential",
                  "batch_completion / ours", "via litellm (old path)", "at concurrency 16"):
        assert label in result.output
    assert result.output.count("efficiency") >= 3  # one per concurrency, one of litellm's path
    assert "(0 failed" in result.output
    assert result.output.count("batch_completion / ours") == 2  # beside each concurrency
    assert result.output.count("via OPENAI_BASE_URL") == 2
    assert "batch_completion / ideal" in result.output
    assert result.output.count("short run, cold gate") == 1  # at the first concurrency
    assert "16 calls of a model not called before, 0 failed" in result.output
    assert result.output.count("first run, fresh process") == 1
    assert "16 calls from a new process to an endpoint it has not seen, 0 failed" in result.output


@pytest.mark.slow
def test_bench_quota_runs_and_prints_a_row_per_client():
    app = typer.Typer()
    llm_cli.register(app)
    result = CliRunner().invoke(app, ["bench", "quota", "--quota", "600 RPM", "--seconds", "1",
                                      "--latency-ms", "20", "--client", "workbench",
                                      "--client", "fixed 16"])
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines() if "600 RPM" in line]
    assert [row[2] for row in rows] == ["workbench", "fixed"]
    assert rows[0][7] == "0"  # the workbench: no failed row


def test_quota_bench_ideal_time_counts_the_burst_then_the_rate():
    from workbench.cli.bench_quota import _ideal, scenarios

    by_name = {s["name"]: s for s in scenarios(seconds=15, seconds_slow=20, burst_s=1.0)}
    slow = by_name["60 RPM"]
    assert slow["n"] == 21 and slow["capacity"] == 1.0
    assert _ideal(slow, 0.2) == pytest.approx(20.2)  # 1 at once, then 1 per second
    other = scenarios(seconds=30, burst_s=1.0, rpms=(3000,))
    assert [s["name"] for s in other] == ["3,000 RPM", "60,000 TPM"]
    assert other[0]["n"] == 50 + 1500 and _ideal(other[0], 0.2) == pytest.approx(30.2)
    tokens = by_name["60,000 TPM"]
    assert tokens["cost"] > 200 and _ideal(tokens, 0.0) == pytest.approx(
        (tokens["n"] * tokens["cost"] - 1000) / 1000)
