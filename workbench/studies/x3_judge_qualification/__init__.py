"""Study X3: can a judge stand in for people, and how many human labels are needed to know?

Five analyses over :mod:`workbench.qualify`, on the bundled S2 set by default (the
answers, the four **simulated** raters and the sim judges of study X2, whose cached
calls it reuses):

1. **qualification**: each G-Eval judge's Pearson r with the raters beside the human
   ceiling, both leave one rater out, with bootstrap CIs; and the alternative annotator
   test (Calderon et al. 2025) per judge: winning rate omega over the raters (BY-FDR).
2. **prediction-powered inference** (Angelopoulos et al. 2023, via ``ppi-python``) of the
   mean human score from a few human labels and the judge's scores of every answer;
   coverage and width by resampling the pilot; human labels needed for a CI width.
3. **juries** of the G-Eval judges (mean, median, majority, weighted) against the best
   member on held-out answers, with a paired test of absolute errors.
4. **Bradley-Terry** from the pairwise verdicts (both orders) with position and length
   covariates fitted jointly (statsmodels GLM), and length-controlled win rates
   (Dubois et al. 2024).
5. **selective judging** (Jung et al. 2024): a confidence threshold chosen on a
   calibration split so that agreement with the raters' majority on accepted pairs is
   at least 1 - alpha with probability 1 - delta; coverage and agreement held out.

A judge table of your own (``table``, read with ``table_spec``) goes through the same
methods: human ceiling, alternative annotator test, PPI labels needed, Bradley-Terry and
selective judging, each where the table supports it.

Sim numbers show that the pipeline works; they are not evidence about real judges or
people.
"""

from workbench.studies.x3_judge_qualification._study import (
    STUDY,
    Config,
    headline,
    qualification,
    run,
    tables,
)

__all__ = ["Config", "STUDY", "headline", "qualification", "run", "tables"]
