"""People in the loop: collect human labels, and spend each where it shrinks the answer most.

==========================  ======================================================
store                       :class:`LabelStore` (SQLite, append-only for real, one file
                            per writer in a shared folder; :meth:`LabelStore.check`),
                            :func:`current`
interchange                 CSV and Label Studio tasks/annotations, both ways; imports
                            all or nothing
active labelling            :class:`ActiveSampler` (active PPI++ with an anytime-valid
                            confidence sequence; Zrnic & Candès 2024),
                            :class:`ActiveQueue` (live, over the store: no item twice
                            for one annotator, fresh and reproducible draws)
simulation                  :class:`Annotator`, :func:`simulate_labelling`,
                            :func:`label_scenarios`
==========================  ======================================================
"""

from workbench.labels._queue import ActiveQueue
from workbench.labels.active import (
    ActiveSampler,
    cs_halfwidth,
    default_scale,
    scaled_uncertainty,
)
from workbench.labels.interchange import (
    export_csv,
    export_label_studio,
    import_csv,
    import_label_studio,
    read_csv_labels,
    tasks_to_labels,
)
from workbench.labels.simulate import (
    ANNOTATORS,
    Annotator,
    annotate,
    binary_labeller,
    continuous_labeller,
    expected_label,
    label_scenarios,
    pairwise_judge,
    prefer,
    preference_labeller,
    sampled_judge,
    score_labeller,
    simulate_labelling,
    verdict_judge,
)
from workbench.labels.store import COLUMNS, LabelStore, current

__all__ = [
    "ANNOTATORS",
    "ActiveQueue",
    "ActiveSampler",
    "Annotator",
    "COLUMNS",
    "LabelStore",
    "annotate",
    "binary_labeller",
    "continuous_labeller",
    "cs_halfwidth",
    "current",
    "default_scale",
    "expected_label",
    "export_csv",
    "export_label_studio",
    "import_csv",
    "import_label_studio",
    "label_scenarios",
    "pairwise_judge",
    "prefer",
    "preference_labeller",
    "read_csv_labels",
    "sampled_judge",
    "score_labeller",
    "simulate_labelling",
    "tasks_to_labels",
    "verdict_judge",
    "scaled_uncertainty",
]
