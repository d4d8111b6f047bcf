"""Study S2 (seed 001): automatic metrics and summarise-then-judge vs a human score.

50 Japanese bridge-design questions are answered by four models; every answer gets the
seed's 1-5 human score (the mean of four raters), lexical metrics (BLEU-4, ROUGE-1/2/L,
optionally the BERTScore-style F1 and the keyword score the rubric starts from) and LLM
scores: G-Eval with the original relevance prompt and with the adapted civil-engineering
prompt, each by every judge, and the proposed summarise-then-judge (the adapted G-Eval on
a summary of the answer). The study is the Spearman correlation of each score with the
human score per answering model, pooled over all answers, and averaged over models, with
bootstrap CIs; plus the vocabulary / answer-length table (seed table 4).

Human scores come from the simulated raters of :mod:`workbench.studies.raters` unless a
``human_scores`` file is given; with sim answerers, judges and raters the numbers show
that the pipeline works, never how real LLMs or people behave. The study keeps the
contract of :mod:`workbench.studies._contract`; the seed's table 3 is
``workbench/studies/published/s2_summarize_then_judge.csv``.

References
----------
Ogata, R., Okubo, J., Fujii, J. & Amakata, M. (2024). 土木分野における LLM を用いた言語モデル
評価手法の提案 (seed 001): tables 2-4.
Liu, Y., Iter, D., Xu, Y., Wang, S., Xu, R. & Zhu, C. (2023). G-Eval: NLG evaluation
using GPT-4 with better human alignment. *EMNLP 2023*, 2511-2522.
"""

from workbench.studies.common.bridge_qa import (
    LEXICAL_METRICS,
    answer_lengths,
    human_means,
    joined_keywords,
    load_answers,
    load_items,
    metric_scores,
    parse_summary,
    read_human_scores,
    simulated_ratings,
    vocabulary_table,
)
from workbench.studies.s2_summarize_then_judge._published import (
    STUDY,
    method_label,
    published_comparison,
)
from workbench.studies.s2_summarize_then_judge._study import (
    LLM_METHODS,
    Config,
    correlations,
    headline,
    judge_specs,
    mean_scores,
    rho_table,
    run,
    tables,
)

__all__ = [
    "Config",
    "LEXICAL_METRICS",
    "LLM_METHODS",
    "STUDY",
    "answer_lengths",
    "correlations",
    "headline",
    "human_means",
    "joined_keywords",
    "judge_specs",
    "load_answers",
    "load_items",
    "mean_scores",
    "method_label",
    "metric_scores",
    "parse_summary",
    "published_comparison",
    "read_human_scores",
    "rho_table",
    "run",
    "simulated_ratings",
    "tables",
    "vocabulary_table",
]
