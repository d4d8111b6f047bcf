"""Statistics for judge studies, in the style of pingouin.

One function per statistic, long-format ``data=`` plus column names, a tidy DataFrame
back whose columns come from one vocabulary (:data:`COLUMNS`: ``estimate``,
``ci_low``, ``ci_high``, ``p_value``, ``n`` ...), effect sizes beside p-values, and an
explicit ``rng`` wherever something is random.

=============================  ====================================================
reliability of a method        :func:`consistency_index`, :func:`variance_ratio`
correlation with humans        :func:`correlate`, :func:`bootstrap_ci`
comparisons                    :func:`paired_tests`, :func:`p_adjust`
agreement and reliability      :func:`cohen_kappa`, :func:`fleiss_kappa`,
                               :func:`krippendorff_alpha`, :func:`icc`
bias probes                    :func:`position_consistency`,
                               :func:`perturbation_effect`, :func:`length_bias`
span annotation                :func:`span_match`
planning                       :func:`variance_components`,
                               :func:`power_by_simulation`
=============================  ====================================================
"""

from workbench.stats._agreement import cohen_kappa, fleiss_kappa, kappa_from_labels
from workbench.stats._bias import length_bias, perturbation_effect
from workbench.stats._bootstrap import bootstrap_ci
from workbench.stats._columns import COLUMNS
from workbench.stats._comparison import p_adjust, paired_tests
from workbench.stats._correlation import correlate
from workbench.stats._icc import icc
from workbench.stats._krippendorff import krippendorff_alpha
from workbench.stats._position import UNPARSED, position_consistency
from workbench.stats._power import power_by_simulation, variance_components
from workbench.stats._reliability import consistency_index, variance_ratio
from workbench.stats._spans import SpanMatch, span_match

__all__ = [
    "COLUMNS",
    "SpanMatch",
    "UNPARSED",
    "bootstrap_ci",
    "cohen_kappa",
    "consistency_index",
    "correlate",
    "fleiss_kappa",
    "icc",
    "kappa_from_labels",
    "krippendorff_alpha",
    "length_bias",
    "p_adjust",
    "paired_tests",
    "perturbation_effect",
    "position_consistency",
    "power_by_simulation",
    "span_match",
    "variance_components",
    "variance_ratio",
]
