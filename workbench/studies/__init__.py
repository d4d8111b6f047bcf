"""One module per study of STUDIES.md: a config dataclass and ``run(config)``.

Each ``run`` returns a dict of tidy DataFrames (no plotting); notebooks call it, then
``workbench.stats`` and ``workbench.plots``. Shared pieces (answer generation, table
writing, the simulated-backend label) are in :mod:`workbench.studies.common`.
"""
