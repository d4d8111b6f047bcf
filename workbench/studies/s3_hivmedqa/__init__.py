"""Study S3 (seed 002, HIVMedQA): supervised vs unsupervised MedGPT judging and the
cognitive-bias categories.

``run(Config())`` builds categories 1-3 of the bundled ``s3_hiv_en`` set plus category 4
(the category-3 vignettes with a recency, frequency or status-quo cue from
:mod:`workbench.perturb`), has every answer model answer each question ``iterations``
times at temperature 1, rewrites each reference with a paraphraser (the upper bound),
judges every answer on the five MedGPT dimensions with and without the reference, and
computes the entity F1 with synonym sets. With ``Config(release_dir=...)`` the same
analyses run on a downloaded HIVMedQA release (its answers and its judge's replies)
instead, and ``table2`` compares them with the paper's Table 2 (its published numbers:
``workbench/studies/published/s3_hivmedqa.csv``).

The study keeps the contract of :mod:`workbench.studies._contract`; its analysis
functions take the long ``scores`` frame and return tidy frames. On the sim backend the
numbers show the pipeline works, never how real LLMs behave.

References
----------
Cardenal-Antolin, G., Fellay, J., Jaha, B., Kouyos, R., Beerenwinkel, N. & Duroux, D.
HIVMedQA: benchmarking large language models for HIV medical decision support (seed 002).
"""

from workbench.studies.s3_hivmedqa._analysis import (
    best_model,
    best_model_tests,
    bias_drop,
    category_trend,
    failure_counts,
    format_table2,
    iteration_means,
    model_summary,
    pairing_comparison,
    supervision_gap,
    table2_side_by_side,
    trend_counts,
)
from workbench.studies.s3_hivmedqa._data import (
    BIAS_TYPES,
    DIMENSIONS,
    STUDY,
    UPPER_BOUND,
    build_items,
    entity_f1,
    judge_answers,
    make_answers,
)
from workbench.studies.s3_hivmedqa._release import (
    compare_table2,
    from_release,
    paper_table2,
    scope_label,
    table2_verdict,
)
from workbench.studies.s3_hivmedqa._study import Config, headline, run, tables

__all__ = [
    "BIAS_TYPES",
    "Config",
    "DIMENSIONS",
    "STUDY",
    "UPPER_BOUND",
    "best_model",
    "best_model_tests",
    "bias_drop",
    "build_items",
    "category_trend",
    "compare_table2",
    "entity_f1",
    "failure_counts",
    "format_table2",
    "from_release",
    "headline",
    "iteration_means",
    "judge_answers",
    "make_answers",
    "model_summary",
    "pairing_comparison",
    "paper_table2",
    "run",
    "scope_label",
    "supervision_gap",
    "table2_side_by_side",
    "table2_verdict",
    "tables",
    "trend_counts",
]
