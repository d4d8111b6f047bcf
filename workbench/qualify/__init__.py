"""Qualify a judge against people: can it stand in for them, and with how many labels?

=============================  ====================================================
judge vs people                :func:`leave_one_out_agreement` (beside the human
                               ceiling), :func:`alt_test` (Calderon et al. 2025)
few human labels               :func:`ppi_mean`, :func:`ppi_simulation`,
                               :func:`labels_needed` (prediction-powered inference)
juries                         :func:`jury_scores`, :func:`jury_vs_best`
bias-corrected ranking         :func:`bradley_terry`, :func:`length_controlled_win_rate`
selective judging              :func:`calibrate_threshold`, :func:`selective_report`,
                               :func:`clopper_pearson_upper` (Jung et al. 2024)
=============================  ====================================================

Methods layer: numpy, scipy, statsmodels and ``ppi-python`` on plain arrays and frames;
no LLM calls (study X3 makes them).
"""

from workbench.qualify._agreement import MEASURES, alt_test, leave_one_out_agreement
from workbench.qualify._bradley_terry import bradley_terry, bt_design, length_controlled_win_rate
from workbench.qualify._jury import AGGREGATES, jury_scores, jury_vs_best
from workbench.qualify._ppi import labels_needed, ppi_mean, ppi_simulation
from workbench.qualify._selective import (
    calibrate_threshold,
    clopper_pearson_upper,
    selective_report,
)

__all__ = [
    "AGGREGATES",
    "MEASURES",
    "alt_test",
    "bradley_terry",
    "bt_design",
    "calibrate_threshold",
    "clopper_pearson_upper",
    "jury_scores",
    "jury_vs_best",
    "labels_needed",
    "leave_one_out_agreement",
    "length_controlled_win_rate",
    "ppi_mean",
    "ppi_simulation",
    "selective_report",
]
