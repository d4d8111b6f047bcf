"""One package per study of STUDIES.md (``workbench.studies.<study>``), all of one shape.

Every study exposes ``STUDY``, ``Config``, ``run(config)``, ``tables(results)`` and
``headline(results)`` (the contract: :mod:`workbench.studies._contract`); its notebook
builds the ``Config`` from its parameters with :func:`config_from`. The numbers a study's
source document published are in ``published/<study>.csv`` (:func:`published`).
No study imports another: what several share is in :mod:`workbench.studies.common`
(answer generation, per-answer judge scores, table writing; ``bridge_qa``, the bundled
civil-engineering QA set of S2, X2, X3 and X4; ``pairwise``, its pairwise judgments) and :mod:`workbench.studies.raters` (the simulated human
raters of S2 and X2).
"""

from workbench.studies._contract import StudyResults, config_fields, config_from, published

__all__ = ["StudyResults", "config_fields", "config_from", "published"]
