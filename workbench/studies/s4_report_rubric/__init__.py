"""Study S4 (seed 003): a six-dimension rubric for generated reports, the bias-mitigation
system prompt, verbosity, pipeline versions and how many reports a comparison needs.

``run(Config())`` scores the bundled reports (``s4_reports``) on six dimensions, one
judge call per dimension (``JudgeSpec(protocol="dimensions", per_call=True)``), with and
without the seed's bias-mitigation system prompt, on the original reports and on padded
ones (:func:`workbench.perturb.verbosity_padding` of every original, plus the bundled
padded twins). From the scores it builds the seed's JSONL score log (the notebook writes
it with :func:`write_score_log`), measures the
verbosity effect per judge and prompt (:func:`workbench.stats.perturbation_effect`),
compares the two pipeline versions (Welch's t test with a confidence interval), and
answers "how many reports do we need?" with :func:`workbench.stats.power_by_simulation`
from this run's variance components. On the sim backend the numbers show that the
pipeline works, never how real LLMs behave. The module keeps the study contract of
:mod:`workbench.studies._contract`.

References
----------
Seed 003: "AI生成レポートをAIに採点させる: LLM-as-Judge評価フレームワーク" (daily-research
pipeline; six dimensions x 1-5, judge-system.md mitigation rules, JSONL score log,
n >= 20 per version before comparing).
Welch, B. L. (1947). The generalization of "Student's" problem when several different
population variances are involved. *Biometrika*, 34(1-2), 28-35.
"""

from __future__ import annotations

from workbench.studies.s4_report_rubric._analysis import (
    pilot_components,
    prompt_label,
    reports_needed,
    verbosity_effect,
    version_comparison,
)
from workbench.studies.s4_report_rubric._data import (
    DIMENSIONS,
    ORIGINAL,
    PADDED,
    STUDY,
    TWIN,
    score_log,
    write_score_log,
)
from workbench.studies.s4_report_rubric._study import Config, headline, run, tables

__all__ = [
    "Config",
    "DIMENSIONS",
    "ORIGINAL",
    "PADDED",
    "STUDY",
    "TWIN",
    "headline",
    "pilot_components",
    "prompt_label",
    "reports_needed",
    "run",
    "score_log",
    "tables",
    "verbosity_effect",
    "version_comparison",
    "write_score_log",
]
