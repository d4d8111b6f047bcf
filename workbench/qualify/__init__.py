"""Qualify a judge against people: can it stand in for them, and with how many labels?

=============================  ====================================================
judge vs people                :func:`leave_one_out_agreement` (beside the human
                               ceiling), :func:`alt_test` (Calderon et al. 2025)
few human labels               :func:`ppi_mean`, :func:`ppi_simulation`,
                               :func:`labels_needed` (prediction-powered inference);
                               :func:`ppi_mean_intervals`,
                               :func:`classical_mean_intervals` (many samples at once)
juries                         :func:`jury_scores`, :func:`jury_vs_best`
bias-corrected ranking         :func:`bradley_terry`, :func:`length_controlled_win_rate`
selective judging              :func:`calibrate_threshold`, :func:`selective_report`,
                               :func:`clopper_pearson_upper` (Jung et al. 2024)
a user's judge table           :func:`pairwise_leaderboard`, :func:`judge_correlations`,
                               :func:`pairwise_bradley_terry`, :func:`pairwise_position`,
                               :func:`pairwise_systems`,
                               :func:`human_ceiling`,
                               :func:`judge_alt_test`, :func:`judge_ppi`,
                               :func:`judge_selective`, :func:`qualification_tables`
                               (written as a report by
                               :func:`workbench.report.qualification_report`)
=============================  ====================================================

The functions of the last row take one long table of :func:`workbench.datasets.load_pairwise`
or :func:`workbench.datasets.load_pointwise`.

Methods layer: numpy, scipy, statsmodels and ``ppi-python`` on plain arrays and frames;
no LLM calls (study X3 makes them).
"""

from workbench.qualify._agreement import MEASURES, alt_test, leave_one_out_agreement
from workbench.qualify._bradley_terry import bradley_terry, bt_design, length_controlled_win_rate
from workbench.qualify._jury import AGGREGATES, jury_scores, jury_vs_best
from workbench.qualify._ppi import (
    classical_mean_intervals,
    labels_needed,
    ppi_mean,
    ppi_mean_intervals,
    ppi_simulation,
)
from workbench.qualify._qualification import qualification_tables
from workbench.qualify._selective import (
    calibrate_threshold,
    clopper_pearson_upper,
    selective_report,
)
from workbench.qualify._tables import (
    human_ceiling,
    human_reference,
    judge_alt_test,
    judge_correlations,
    table_kind,
)
from workbench.qualify._tables_pairwise import (
    pairwise_bradley_terry,
    pairwise_leaderboard,
    pairwise_position,
)
from workbench.qualify._tables_ppi import judge_ppi, judge_selective
from workbench.qualify._tables_systems import pairwise_systems

__all__ = [
    "AGGREGATES",
    "MEASURES",
    "alt_test",
    "bradley_terry",
    "bt_design",
    "calibrate_threshold",
    "classical_mean_intervals",
    "clopper_pearson_upper",
    "human_ceiling",
    "human_reference",
    "judge_alt_test",
    "judge_correlations",
    "judge_ppi",
    "judge_selective",
    "jury_scores",
    "jury_vs_best",
    "labels_needed",
    "leave_one_out_agreement",
    "length_controlled_win_rate",
    "pairwise_bradley_terry",
    "pairwise_leaderboard",
    "pairwise_position",
    "pairwise_systems",
    "ppi_mean",
    "ppi_mean_intervals",
    "ppi_simulation",
    "qualification_tables",
    "selective_report",
    "table_kind",
]
