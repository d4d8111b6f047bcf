"""The one column vocabulary of every frame that ``workbench.stats`` returns.

pingouin names its p-value ``p_val`` in one function and ``pval`` in another; here every
output column is declared once, in :data:`COLUMNS`, with what it means, and
:func:`tidy` (used by every public function) refuses a column that is not declared
(grouping columns named by the caller, such as ``judge_model``, pass through first).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

#: Output column -> meaning, in the order columns appear in returned frames.
COLUMNS: dict[str, str] = {
    # what is estimated
    "measure": "name of the quantity estimated in the row (e.g. 'consistency_index', 'ICC2k')",
    "method": "correlation method: 'pearson', 'spearman' or 'kendall' (tau-b)",
    "level": "correlation level: 'pooled', 'per_group' or 'per_group_mean'",
    "unit": "columns (joined by '+') that define one unit or group of scores",
    "within": "columns (joined by '+') that vary inside a unit; 'unchecked' if not declared",
    "replicate": "columns (joined by '+') over which a system's mean score is replicated",
    "a": "first level of a paired comparison (the reference when one is given)",
    "b": "second level of a paired comparison",
    "condition": "perturbed condition compared with the baseline",
    "baseline": "baseline condition",
    "kind": "'score' (numeric paired difference) or 'verdict' (categorical flip rate)",
    "class": "span class (e.g. 'excess_gist')",
    "average": "span averaging unit: 'item' or 'unit'",
    "weights": "kappa weighting: 'none', 'linear' or 'quadratic'",
    "value_level": "Krippendorff metric: 'nominal', 'ordinal', 'interval' or 'ratio'",
    "design": "power simulation design: 'paired' or 'independent'",
    "test": "test used for p_value: 'paired_t', 'wilcoxon', 't', 'welch', 'F', 'z', ...",
    # sizes
    "n": "number of observations used (rows, pairs or items; see each function)",
    "n_missing": "observations dropped because a needed value was missing (NaN/None)",
    "n_skipped": "units or groups skipped because the statistic is undefined there",
    "n_groups": "number of groups that entered the estimate",
    "n_units": "number of units that entered the estimate",
    "n_raters": "number of raters (or judges)",
    "n_categories": "number of distinct labels",
    "n_unparsed": "verdicts that were missing (unparsed), kept as a value of their own",
    "n_incomplete": "items lacking one of the two orders or conditions",
    "n_items": "number of items",
    "n_trials": "number of trials per item and judge",
    "n_judges": "number of judges",
    # estimate and uncertainty
    "estimate": "point estimate of `measure`",
    "se": "standard error of the estimate",
    "ci_low": "lower bound of the confidence interval",
    "ci_high": "upper bound of the confidence interval",
    "ci_level": "confidence level of [ci_low, ci_high]",
    "ci_method": "how the CI was computed ('t', 'fisher_z', 'percentile_bootstrap', ...)",
    "n_boot": "bootstrap resamples (0 when no bootstrap was run)",
    "n_boot_failed": "bootstrap resamples whose statistic was undefined (left out of the CI)",
    # tests
    "test_statistic": "value of the test statistic (t, W, F or z)",
    "df": "degrees of freedom of a t statistic",
    "df_num": "numerator degrees of freedom of an F statistic",
    "df_den": "denominator degrees of freedom of an F statistic",
    "p_value": "two-sided p-value, unadjusted",
    "p_value_wilcoxon": "two-sided Wilcoxon signed-rank p-value, unadjusted",
    "p_adjusted": "p-value adjusted for multiple comparisons (see `padjust`)",
    "padjust": "multiple-comparison adjustment: 'bonf', 'holm', 'fdr_bh' or 'none'",
    "alpha": "significance level",
    "significant": "p_adjusted < alpha",
    # effect sizes and parts
    "cohen_dz": "Cohen's d_z: mean paired difference / sd of the differences",
    "rank_biserial": "matched-pairs rank-biserial correlation (Wilcoxon effect size)",
    "mean_a": "mean of a over the pairs used",
    "mean_b": "mean of b over the pairs used",
    "mean_baseline": "mean baseline score over the items used",
    "mean_condition": "mean perturbed score over the items used",
    "numerator": "numerator of a ratio estimate",
    "denominator": "denominator of a ratio estimate",
    "p_observed": "observed agreement",
    "p_expected": "agreement expected by chance",
    "d_observed": "observed disagreement (Krippendorff's D_o)",
    "d_expected": "disagreement expected by chance (Krippendorff's D_e)",
    "raw_slope": "slope of score on length, in score units per `per` units of length",
    "raw_slope_ci_low": "lower CI bound of raw_slope",
    "raw_slope_ci_high": "upper CI bound of raw_slope",
    "per": "length units the raw slope refers to",
    # position consistency
    "accuracy_order0": "share of items whose first-order verdict equals the label",
    "accuracy_order1": "share of items whose second-order verdict equals the label",
    "accuracy": "mean of accuracy_order0 and accuracy_order1",
    "agreement": "share of items whose two verdicts are equal",
    "kappa_order0": "Cohen's kappa of first-order verdict vs label",
    "kappa_order1": "Cohen's kappa of second-order verdict vs label",
    # span matching
    "recall": "character-level recall",
    "precision": "character-level precision",
    "f1": "harmonic mean of the (averaged) precision and recall",
    "n_items_recall": "items where recall is defined (gold has units of the class)",
    "n_items_precision": "items where precision is defined (prediction has units)",
    "n_items_both_empty": "items where neither side has a unit of the class",
    "n_gold_units": "gold units",
    "n_pred_units": "predicted units",
    "n_pairs": "one-to-one pairs of gold and predicted units",
    "gold_chars": "characters covered by gold units",
    "pred_chars": "characters covered by predicted units",
    "overlap_chars": "characters shared by paired units",
    "gold_unit": "gold unit id",
    "pred_unit": "predicted unit id",
    "pair_score": "pairing score (character-level F of the two units)",
    # power
    "effect": "true difference in mean score simulated",
    "effect_size_d": "effect divided by the sd of the analysed difference (design-specific)",
    "power_analytic": "power of the same test from the noncentral t distribution",
    "n_sim": "simulated data sets",
    # variance components
    "component": "variance component name",
    "variance": "estimated variance component (truncated at 0)",
    "variance_raw": "method-of-moments estimate before truncation (may be negative)",
    "share": "variance / total variance",
}

_ORDER = {name: i for i, name in enumerate(COLUMNS)}


def tidy(frame: pd.DataFrame, *, keys: Iterable[str] = ()) -> pd.DataFrame:
    """Order the columns of an output frame and check them against :data:`COLUMNS`.

    Parameters
    ----------
    frame : DataFrame
        Output of a statistics function.
    keys : iterable of str
        Grouping columns named by the caller (``by=``, ``item=`` ...); they come first,
        in the given order, and are exempt from the vocabulary.

    Returns
    -------
    DataFrame
        ``frame`` with columns ``keys`` + vocabulary order and a fresh RangeIndex.

    Raises
    ------
    KeyError
        If a column is neither a key nor in :data:`COLUMNS` (a programming error).
    """
    keys = [k for k in dict.fromkeys(keys) if k in frame.columns]
    rest = [c for c in frame.columns if c not in keys]
    unknown = [c for c in rest if c not in _ORDER]
    if unknown:
        raise KeyError(f"columns not in the workbench.stats vocabulary: {unknown}")
    rest.sort(key=_ORDER.__getitem__)
    return frame.loc[:, keys + rest].reset_index(drop=True)
