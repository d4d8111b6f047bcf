"""The only package that talks to providers, owns the reply cache and prices.

``complete`` / ``complete_many`` (``complete_iter`` for millions, in flat memory) send chat requests to any litellm model string --
``sim/<profile>`` for the offline simulated judges, ``gpt-4o``, ``anthropic/...``,
``openai/<name>`` with ``api_base`` for local servers -- through the reply store
(``_cache.py``: one SQLite table, ``replies.db``) keyed by :func:`cache_key`, along one
pipeline (:mod:`workbench.llm._pipeline`) over three transports
(:mod:`workbench.llm._transports`: in-process simulator, direct HTTP, litellm).

Settings (cache folder and mode, concurrency, timeout, retries, backoff) come from
:func:`configure` in code, else the ``WORKBENCH_*`` environment variables read at each
call, else the defaults: the table is in :mod:`workbench.config`. :func:`peek` reads a
cached reply without calling, :func:`price` prices tokens from litellm's cost map (:func:`batch_price` for
provider batch jobs: ``complete_many(..., mode="batch")``), and
:func:`write_replay_file` turns replies found elsewhere (e.g. a paper's release) into a
file for ``workbench cache import``.

The cache survives hostile and broken stores (:mod:`workbench.llm._cache` says how);
:func:`check_cache` / :func:`repair_cache` (``workbench cache check`` / ``repair``)
diagnose and salvage.
"""

from __future__ import annotations

from workbench import config as _config  # noqa: F401  (offline switches before litellm)
from workbench.llm._cache import open_cache, peek
from workbench.llm._client import (
    complete,
    complete_iter,
    complete_many,
)
from workbench.llm._keys import cache_key, canonical, key_fields
from workbench.llm._maintenance import (
    cache_stats,
    check_cache,
    clear_cache,
    explain,
    export_cache,
    import_cache,
    last_miss,
    repair_cache,
    replay_entry,
    validate_entry,
    write_replay_file,
)
from workbench.llm._providers import batch_price, model_backend, price, supports_response_schema
from workbench.llm._secrets import scrub
from workbench.llm._settings import configure, settings, temporary_settings
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
    "batch_price",
    "cache_key",
    "cache_stats",
    "canonical",
    "check_cache",
    "clear_cache",
    "complete",
    "complete_iter",
    "complete_many",
    "configure",
    "explain",
    "export_cache",
    "import_cache",
    "key_fields",
    "last_miss",
    "model_backend",
    "open_cache",
    "peek",
    "price",
    "repair_cache",
    "replay_entry",
    "scrub",
    "settings",
    "supports_response_schema",
    "temporary_settings",
    "validate_entry",
    "write_replay_file",
]
