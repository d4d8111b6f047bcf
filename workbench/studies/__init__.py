"""One package per study of STUDIES.md (``workbench.studies.<study>``), all of one shape.

Every study exposes ``STUDY``, ``Config``, ``run(config)``, ``tables(results)`` and
``headline(results)`` (the contract: :mod:`workbench.studies._contract`); its notebook
builds the ``Config`` from its parameters with :func:`config_from`. The numbers a study's
source document published are in ``published/<study>.csv`` (:func:`published`).
Shared pieces are in :mod:`workbench.studies.common` (answer generation, per-answer
judge scores, table writing) and :mod:`workbench.studies.raters` (the simulated human
raters of S2 and X2).
"""

from workbench.studies._contract import StudyResults, config_fields, config_from, published

__all__ = ["StudyResults", "config_fields", "config_from", "published"]
