"""People in the loop: collect human labels, and spend each where it shrinks the answer most.

==========================  ======================================================
store                       :class:`LabelStore` (SQLite, append-only, one file per
                            writer in a shared folder), :func:`current`
interchange                 CSV and Label Studio tasks/annotations, both ways
active labelling            :class:`ActiveSampler` (active PPI++ with an anytime-valid
                            confidence sequence; Zrnic & Candès 2024)
simulation                  :class:`Annotator`, :func:`simulate_labelling`
==========================  ======================================================
"""

from workbench.labels.active import ActiveQueue, ActiveSampler, cs_halfwidth, scaled_uncertainty
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
    expected_label,
    pairwise_judge,
    prefer,
    preference_labeller,
    sampled_judge,
    score_labeller,
    simulate_labelling,
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
    "cs_halfwidth",
    "current",
    "expected_label",
    "export_csv",
    "export_label_studio",
    "import_csv",
    "import_label_studio",
    "pairwise_judge",
    "prefer",
    "preference_labeller",
    "read_csv_labels",
    "sampled_judge",
    "score_labeller",
    "simulate_labelling",
    "tasks_to_labels",
    "scaled_uncertainty",
]
