"""S1 — three judging methods for Japanese medical dialogue (seed 000, Ubie; STUDIES S1).

Ten consultation prompts are answered once each (temperature 1.0) by six answer models:
60 conversations. Every conversation is scored by every judge with three methods —
``holistic`` (1-10 with must/bonus/penalty evaluation points and a good and a bad
example), ``holistic_simple`` (1-10, the axis only) and ``checklist`` (one True/False
call per weighted rubric item; score = met weights / positive weights) — in several
trials at judge temperatures 0.0 and 1.0. The analyses:

- consistency index and variance ratio per method, for both readings of the grouping
  (:func:`reliability`), with bootstrap CIs;
- Pearson r between methods on conversation means (:func:`method_correlations`);
- the checklist's explainability: the weakness map (:func:`weakness_map`), per-item
  judge disagreement (:func:`judge_disagreement`) and conversations flagged by
  negative-weight items (:func:`flagged_conversations`).

``run(config)`` makes the calls and returns tidy frames (no plotting); the notebook
``notebooks/s1_judge_methods.ipynb`` draws them. With the default ``sim/...`` models
the numbers show that the pipeline works, never how real LLMs behave.

References
----------
Ota, M., Saigusa, K., Igarashi, K., Tameoka, A., & Kazama, M. (Ubie, Inc.). 医療系対話 AI
における評価基準の策定と自動評価手法の比較検証 [Building evaluation criteria for medical
dialogue AI and comparing automatic evaluation methods] (seed 000): §3-4, table 3.
Arora, R. K. et al. (2025). HealthBench: Evaluating large language models towards
improved human health. arXiv:2505.08775.
"""

from workbench.studies.s1_judge_methods._checklist import (
    DISAGREEMENT_COLUMNS,
    FLAG_COLUMNS,
    WEAKNESS_COLUMNS,
    criterion_label,
    flagged_conversations,
    judge_disagreement,
    weakness_map,
)
from workbench.studies.s1_judge_methods._indices import (
    CORRELATION_COLUMNS,
    READINGS,
    RELIABILITY_COLUMNS,
    conversation_means,
    judge_mean_variance_ratio,
    method_correlations,
    reliability,
)
from workbench.studies.s1_judge_methods._report import (
    FAILURE_COLUMNS,
    MEANS_COLUMNS,
    PUBLISHED,
    PUBLISHED_TEMPERATURE,
    analyze,
    compare_published,
    headline,
    model_means,
    parse_failures,
)
from workbench.studies.s1_judge_methods._run import (
    ANSWER_MODELS,
    CRITERION_COLUMNS,
    JUDGE_MODELS,
    METHODS,
    SCORE_COLUMNS,
    STUDY,
    Config,
    conversations,
    criterion_rows,
    design,
    method_scores,
    run,
)

__all__ = [
    "ANSWER_MODELS",
    "CORRELATION_COLUMNS",
    "CRITERION_COLUMNS",
    "Config",
    "DISAGREEMENT_COLUMNS",
    "FAILURE_COLUMNS",
    "FLAG_COLUMNS",
    "JUDGE_MODELS",
    "MEANS_COLUMNS",
    "METHODS",
    "PUBLISHED",
    "PUBLISHED_TEMPERATURE",
    "READINGS",
    "RELIABILITY_COLUMNS",
    "SCORE_COLUMNS",
    "STUDY",
    "WEAKNESS_COLUMNS",
    "analyze",
    "compare_published",
    "conversation_means",
    "conversations",
    "criterion_label",
    "criterion_rows",
    "design",
    "flagged_conversations",
    "headline",
    "judge_disagreement",
    "judge_mean_variance_ratio",
    "method_correlations",
    "method_scores",
    "model_means",
    "parse_failures",
    "reliability",
    "run",
    "weakness_map",
]
