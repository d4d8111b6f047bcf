"""The only module that talks to providers (through litellm) and to the reply cache.

``complete`` / ``complete_many`` send chat requests to any litellm model string --
``sim/<profile>`` for the offline simulated judges, ``gpt-4o``, ``anthropic/...``,
``openai/<name>`` with ``api_base`` for local servers -- through a diskcache store
keyed by :func:`cache_key`. See DESIGN §2 for the contract.

Settings (read at each call; :func:`configure` sets them in code):
``WORKBENCH_CACHE_DIR``, ``WORKBENCH_CACHE_MODE`` (``readwrite`` | ``readonly`` |
``refresh`` | ``off``), ``WORKBENCH_CONCURRENCY`` (per model, default 16),
``WORKBENCH_TIMEOUT`` (seconds per call, default 120), ``WORKBENCH_MAX_RETRIES``
(default 4), ``WORKBENCH_RETRY_BACKOFF`` (first backoff in seconds, default 1).
"""

from __future__ import annotations

from workbench import config as _config  # noqa: F401  (offline switches before litellm)
from workbench.llm._cache import (
    configure,
    last_miss,
    open_cache,
    settings,
    temporary_settings,
)
from workbench.llm._client import complete, complete_many
from workbench.llm._keys import cache_key, canonical, key_fields
from workbench.llm._maintenance import (
    cache_stats,
    clear_cache,
    explain,
    export_cache,
    import_cache,
    validate_entry,
)
from workbench.llm._providers import model_backend
from workbench.llm._secrets import scrub
from workbench.llm._types import (
    ERROR_TYPES,
    RETRYABLE,
    CallFailure,
    Completion,
    Request,
    Usage,
)

__all__ = [
    "CallFailure",
    "Completion",
    "ERROR_TYPES",
    "RETRYABLE",
    "Request",
    "Usage",
    "cache_key",
    "cache_stats",
    "canonical",
    "clear_cache",
    "complete",
    "complete_many",
    "configure",
    "explain",
    "export_cache",
    "import_cache",
    "key_fields",
    "last_miss",
    "model_backend",
    "open_cache",
    "scrub",
    "settings",
    "temporary_settings",
    "validate_entry",
]
