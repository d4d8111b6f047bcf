"""Study X4: people in the loop — collect human labels, and spend each where it shrinks the
answer most (:mod:`workbench.labels`).

On the bundled S2 set by default (the answers, the **simulated** raters and the G-Eval sim
judges of studies X2/X3, whose cached calls it reuses), with **simulated annotators** of
known bias and noise standing in for people:

1. **the loop**: a share of the answers goes to every annotator (overlap: reliability, the
   human ceiling), then the active sampler picks each next answer by the judges'
   disagreement (a split jury) and a simulated annotator labels it through the label
   store; after every label, the prediction-powered estimate of the mean human score with
   its anytime-valid interval, until it is as narrow as asked;
2. **standing**: Krippendorff's alpha, Fleiss' and Cohen's kappa, and the judge beside the
   human ceiling, from the store;
3. **simulation**: coverage and width of the active and uniform intervals over many
   studies, in scenarios where the judge's uncertainty is and is not informative;
4. **round trips**: the store's labels through CSV and Label Studio JSON and back.

Sim numbers show that the pipeline works; they are not evidence about real judges or
people.
"""

from workbench.studies.x4_human_labels._live import (
    ANCHORS,
    BETTER,
    GUIDELINE,
    label_widget,
    live_answer,
    my_labels,
    people_labels,
)
from workbench.studies.x4_human_labels._study import STUDY, Config, headline, run, tables

__all__ = ["ANCHORS", "BETTER", "Config", "GUIDELINE", "STUDY", "headline", "label_widget",
           "live_answer", "my_labels", "people_labels", "run", "tables"]
