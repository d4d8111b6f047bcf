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

The study keeps the contract of :mod:`workbench.studies._contract`; the seed's
published values are ``published/s1_judge_methods.csv``. With the default ``sim/...``
models the numbers show that the pipeline works, never how real LLMs behave.

References
----------
Ota, M., Saigusa, K., Igarashi, K., Tameoka, A., & Kazama, M. (Ubie, Inc.). 医療系対話 AI
における評価基準の策定と自動評価手法の比較検証 [Building evaluation criteria for medical
dialogue AI and comparing automatic evaluation methods] (seed 000): §3-4, table 3.
Arora, R. K. et al. (2025). HealthBench: Evaluating large language models towards
improved human health. arXiv:2505.08775.
"""

from workbench.studies.s1_judge_methods._checklist import (
    flagged_conversations,
    judge_disagreement,
    weakness_map,
)
from workbench.studies.s1_judge_methods._indices import (
    judge_mean_variance_ratio,
    method_correlations,
    reliability,
)
from workbench.studies.s1_judge_methods._report import (
    model_means,
    parse_failures,
)
from workbench.studies.s1_judge_methods._run import (
    METHODS,
    STUDY,
    Config,
    conversations,
    design,
)
from workbench.studies.s1_judge_methods._study import headline, run, tables

__all__ = [
    "Config",
    "METHODS",
    "STUDY",
    "conversations",
    "design",
    "flagged_conversations",
    "headline",
    "judge_disagreement",
    "judge_mean_variance_ratio",
    "method_correlations",
    "model_means",
    "parse_failures",
    "reliability",
    "run",
    "tables",
    "weakness_map",
]
