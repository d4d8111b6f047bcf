"""Study X2: how well judges and metrics agree with human scores, and humans with each other.

Three analyses, each on its own data:

- **bundled** (default, offline): the 50 Japanese QA items of S2 answered by four sim
  answerers and rated 1-5 by four **simulated** raters (seed 001's rubric). Inter-rater
  reliability of the ratings (Krippendorff's alpha, interval and ordinal; ICC); the
  correlation (Pearson, Spearman, Kendall tau-b) of sim judges (G-Eval) and lexical
  metrics with the mean rating at three levels — pooled, per answer model (then
  averaged) and per item (then averaged) — with bootstrap CIs; and pairwise judging of
  every pair of answers to an item, in both orders, against the raters' majority
  preference: Cohen's kappa per order, position agreement, and Fleiss' kappa among the
  raters' own preferences.
- **UniEval Topical-Chat** (``unieval_dir``): turn-level correlations of the release's
  metric predictions with the USR human scores, pooled per dimension, as published.
- **PandaLM** (``pandalm_dir``): Fleiss' kappa among the three annotators, and Cohen's
  kappa of each judge file with the annotators' majority label.
- **your judge table** (``table``, read with ``table_spec``): its leaderboard per group
  and overall (pairwise) or its correlations at pooled, per-item and system level
  (pointwise), and the human ceiling when it has two or more annotators.

The study keeps the contract of :mod:`workbench.studies._contract`; the simulated raters
are :mod:`workbench.studies.raters`. Sim numbers show the pipeline works; they are not
evidence about real judges or people.

References
----------
Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School
for Communication, University of Pennsylvania.
Shrout, P. E. & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
reliability. *Psychological Bulletin*, 86(2), 420-428.
Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena.
*NeurIPS Datasets and Benchmarks*.
Zhong, M. et al. (2022). Towards a unified multi-dimensional evaluator for text
generation. *EMNLP 2022*.
Wang, Y. et al. (2024). PandaLM: an automatic evaluation benchmark for LLM instruction
tuning optimization. *ICLR 2024*.
"""

from workbench.studies.common.pairwise import (
    kappa_summary,
    majority_label,
    pairwise_agreement,
    pairwise_items,
    pairwise_judgments,
    rater_preferences,
)
from workbench.studies.x2_human_agreement._releases import (
    pandalm_agreement,
    unieval_correlations,
    unieval_table,
)
from workbench.studies.x2_human_agreement._study import (
    STUDY,
    Config,
    correlation_table,
    headline,
    judge_specs,
    run,
    tables,
)

__all__ = [
    "Config",
    "STUDY",
    "correlation_table",
    "headline",
    "judge_specs",
    "kappa_summary",
    "majority_label",
    "pairwise_agreement",
    "pairwise_items",
    "pairwise_judgments",
    "pandalm_agreement",
    "rater_preferences",
    "run",
    "tables",
    "unieval_correlations",
    "unieval_table",
]
