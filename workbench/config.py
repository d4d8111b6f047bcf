"""Paths from one root and ``WORKBENCH_*`` settings.

Importing this module sets ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and
``HF_HUB_OFFLINE=1`` *before* anything imports litellm: without them, importing
litellm fetches a price list from the network and stalls on a closed machine.

Environment settings (read at each use, so a notebook or test may change them):

=============================  ==============================================
``WORKBENCH_ROOT``             project root (default: the checkout holding
                               this package, else the current directory)
``WORKBENCH_CACHE_DIR``        LLM cache folder (default ``data/cache/llm``)
``WORKBENCH_CACHE_MODE``       ``readwrite`` | ``readonly`` | ``refresh`` | ``off``
``WORKBENCH_CONCURRENCY``      default concurrent calls per model (default 16)
``WORKBENCH_TIMEOUT``          per-call timeout in seconds (default 120)
``WORKBENCH_MAX_RETRIES``      retries of a retryable error (default 4)
=============================  ==============================================
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOG", "ERROR")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# litellm and its dependencies warn on import (pydantic, httpx); keep stderr clean.
warnings.filterwarnings("ignore", module=r"litellm(\..*)?")
warnings.filterwarnings("ignore", module=r"pydantic(\..*)?")
for _name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx"):
    logging.getLogger(_name).setLevel(logging.ERROR)

CACHE_MODES = ("readwrite", "readonly", "refresh", "off")


def _default_root() -> Path:
    here = Path(__file__).resolve().parent.parent
    if (here / "pyproject.toml").exists():
        return here
    return Path.cwd()


def root() -> Path:
    """Project root: ``WORKBENCH_ROOT`` or the checkout that holds the package."""
    value = os.environ.get("WORKBENCH_ROOT")
    return Path(value).expanduser().resolve() if value else _default_root()


def data_dir() -> Path:
    """Bundled data sets and the working folders below them."""
    return root() / "data"


def cache_dir() -> Path:
    """The LLM cache folder (``WORKBENCH_CACHE_DIR`` or ``data/cache/llm``)."""
    value = os.environ.get("WORKBENCH_CACHE_DIR")
    return Path(value).expanduser() if value else data_dir() / "cache" / "llm"


def cache_mode() -> str:
    """The cache mode from ``WORKBENCH_CACHE_MODE`` (default ``readwrite``)."""
    mode = os.environ.get("WORKBENCH_CACHE_MODE", "readwrite").strip().lower()
    if mode not in CACHE_MODES:
        raise ValueError(f"WORKBENCH_CACHE_MODE={mode!r}: expected one of {', '.join(CACHE_MODES)}")
    return mode


def runs_dir() -> Path:
    """Where Papermill writes executed notebook copies (git-ignored)."""
    return data_dir() / "runs"


def results_dir(study: str | None = None) -> Path:
    """Tidy CSV tables written by the studies: ``data/results/<study>/``."""
    base = data_dir() / "results"
    return base / study if study else base


def figures_dir(study: str | None = None) -> Path:
    """Figures written by the notebooks: ``figures/<study>/``."""
    base = root() / "figures"
    return base / study if study else base


def notebooks_dir() -> Path:
    """The study notebooks."""
    return root() / "notebooks"


def tmp_dir() -> Path:
    """A project temp folder (jieba's cache file lives here), created on demand."""
    path = data_dir() / "cache" / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def env_int(name: str, default: int) -> int:
    """An integer ``WORKBENCH_*`` setting, with a clear error when malformed."""
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer") from None


def env_float(name: str, default: float) -> float:
    """A float ``WORKBENCH_*`` setting, with a clear error when malformed."""
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a number") from None
