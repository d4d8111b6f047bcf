"""workbench: a research workbench for studying LLM-as-a-judge.

The public surface is re-exported here and loaded lazily, so ``import workbench``
is cheap and never touches the network (``workbench.config`` sets litellm's offline
switches first). Import from the package: ``from workbench import complete``.
"""

from __future__ import annotations

import importlib
from typing import Any

from workbench import config as config  # noqa: F401  (sets offline env vars first)
from workbench.config import __version__
from workbench.errors import (
    BudgetExceeded,
    CacheMiss,
    DatasetError,
    ParseError,
    ProviderError,
    WorkbenchError,
)

# public name -> module that defines it (loaded on first use)
_LAZY = {
    "CallFailure": "workbench.llm",
    "Completion": "workbench.llm",
    "Request": "workbench.llm",
    "cache_key": "workbench.llm",
    "complete": "workbench.llm",
    "complete_many": "workbench.llm",
    "configure": "workbench.llm",
    "JudgeSpec": "workbench.judges",
    "parse_reply": "workbench.judges",
    "run_judging": "workbench.judges",
    "load_dataset": "workbench.datasets",
}

__all__ = [
    "BudgetExceeded",
    "CacheMiss",
    "CallFailure",
    "Completion",
    "DatasetError",
    "JudgeSpec",
    "ParseError",
    "ProviderError",
    "Request",
    "WorkbenchError",
    "__version__",
    "cache_key",
    "complete",
    "complete_many",
    "configure",
    "load_dataset",
    "parse_reply",
    "run_judging",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
