"""Paths from one root, and the ``WORKBENCH_*`` settings.

Importing this module sets ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and
``HF_HUB_OFFLINE=1`` *before* anything imports litellm: without them, importing
litellm fetches a price list from the network and stalls on a closed machine.

Environment settings, read at each use (a notebook or test may change them). Those
marked * may also be set in code with :func:`workbench.llm.configure`, which keeps
them in this process's :func:`overrides`, winning over the environment.

====================================  ================================================
``WORKBENCH_ROOT``                    project root (default: the checkout holding
                                      this package, else the current directory)
``WORKBENCH_OUTPUT_DIR``              write figures and results tables below this
                                      folder instead of the project (the tests use it)
``WORKBENCH_CACHE_DIR`` *             LLM cache folder (default ``data/cache/llm``)
``WORKBENCH_CACHE_MODE`` *            ``readwrite`` (default) | ``readonly`` |
                                      ``refresh`` | ``off``
``WORKBENCH_CONCURRENCY`` *           calls in flight per model
``WORKBENCH_TIMEOUT`` *               per-call timeout in seconds
``WORKBENCH_MAX_RETRIES`` *           retries of a retryable error
``WORKBENCH_RETRY_BACKOFF`` *         first retry backoff in seconds (full jitter,
                                      doubling per attempt, capped at 60)
``WORKBENCH_CIRCUIT_BREAKER`` *       after this many consecutive connection
                                      failures of a model, its other requests in the
                                      batch are not run (``0``: never stop)
``WORKBENCH_CALL_MODE`` *             ``online`` (default) | ``batch`` | ``ray``: how
                                      ``complete_many`` sends uncached requests
                                      (``batch``: provider batch jobs, half price;
                                      ``ray``: a Ray Data job, ``WORKBENCH_RAY_*``
                                      in docs/real-models.md)
``WORKBENCH_BATCH_POLL`` *            first wait in seconds before polling a batch
                                      job (doubling per poll, capped at 300)
``WORKBENCH_RAY_ENGINE``              ``http`` (default) | ``vllm`` | ``sglang``: the
                                      ``ray.data.llm`` processor of ``mode="ray"``
``WORKBENCH_RAY_ENDPOINTS``           base URLs (comma-separated) of replicas that
                                      share ``mode="ray"``'s HTTP rows
``WORKBENCH_RAY_BATCH_SIZE``          rows per batch of a Ray engine actor (16)
``WORKBENCH_RAY_CONCURRENCY``         engine actors per Ray processor (2)
``WORKBENCH_MAX_WAIT`` *              the longest a call waits for its turn at a
                                      quota or for a 429's ``Retry-After`` (seconds,
                                      default 300): a longer wait is a failure row
                                      saying why, never a stalled run
``WORKBENCH_STRUCTURED``              the structured-reply form a model's requests take:
                                      ``json_schema`` | ``json_object`` | ``guided_json``
                                      | ``off``, or ``model=form`` pairs (default: where
                                      litellm says the model takes a schema)
``WORKBENCH_STRUCTURED_MAX_TEXT``     free text allowed by the grammar forms
                                      (characters, default 200)
``WORKBENCH_STRUCTURED_MAX_ITEMS``    lists allowed by the grammar forms (items,
                                      default 8)
``WORKBENCH_RPM``                     requests per minute a run never exceeds, per
                                      model (default: none; the quota is learned from
                                      the provider's ``x-ratelimit-*`` headers and 429s;
                                      ``rpm=`` of ``complete_many``/``configure`` wins)
``WORKBENCH_TPM``                     tokens per minute a run never exceeds, per
                                      model (prompt estimate + ``max_tokens`` charged
                                      before each call, as providers count them)
``WORKBENCH_HTTP_PATH``               ``direct`` (default): ``openai/<model>`` calls
                                      to an ``api_base`` skip litellm (one aiohttp
                                      POST, same body and entry) | ``litellm``
``WORKBENCH_MAX_REPLY_BYTES``         a reply body larger than this (bytes, as read
                                      after decompression; default 16 MiB) is not read
                                      further: that request fails ``too_large``
``WORKBENCH_MAX_REPLY_CHARS``         a reply text longer than this (characters;
                                      default 1,000,000, more than any model's output
                                      window) fails ``too_large`` and is not cached
``WORKBENCH_GC_FREEZE``               ``0`` leaves litellm's import-time heap in the
                                      cyclic collector's view (default: frozen)
``WORKBENCH_LOCAL_API_BASE``          the local model server ``make real-local`` and the
                                      ``local`` tests use (default
                                      ``http://127.0.0.1:8000/v1``)
====================================  ================================================

The defaults of the numeric settings are :data:`CALL_SETTINGS`, their one table:

>>> {name: default for name, (_, default) in CALL_SETTINGS.items()}
{'concurrency': 16, 'timeout': 120.0, 'max_retries': 4, 'retry_backoff': 1.0, 'circuit_breaker': 5, 'batch_poll': 30.0, 'max_wait': 300.0}
"""

from __future__ import annotations

import logging
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: The package version (``workbench.__version__``), recorded in every cache entry.
__version__ = "0.1.0"

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
CALL_MODES = ("online", "batch", "ray")

#: The numeric settings of LLM calls: name -> (environment variable, default).
CALL_SETTINGS: dict[str, tuple[str, int | float]] = {
    "concurrency": ("WORKBENCH_CONCURRENCY", 16),
    "timeout": ("WORKBENCH_TIMEOUT", 120.0),
    "max_retries": ("WORKBENCH_MAX_RETRIES", 4),
    "retry_backoff": ("WORKBENCH_RETRY_BACKOFF", 1.0),
    "circuit_breaker": ("WORKBENCH_CIRCUIT_BREAKER", 5),
    "batch_poll": ("WORKBENCH_BATCH_POLL", 30.0),
    "max_wait": ("WORKBENCH_MAX_WAIT", 300.0),
}

_overrides: dict[str, Any] = {}


def overrides() -> dict[str, Any]:
    """Settings set in code for this process (a copy); they win over the environment.

    Names: ``cache_dir``, ``cache_mode``, ``call_mode``, the keys of :data:`CALL_SETTINGS` and
    ``rpm``. :func:`workbench.llm.configure` checks and sets them.
    """
    return dict(_overrides)


def set_overrides(values: Mapping[str, Any], *, replace: bool = False) -> None:
    """Add ``values`` to :func:`overrides` (``replace``: instead of the current ones)."""
    if replace:
        _overrides.clear()
    _overrides.update(values)


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
    """The LLM cache folder: set in code, else ``WORKBENCH_CACHE_DIR``, else ``data/cache/llm``."""
    value = _overrides.get("cache_dir") or os.environ.get("WORKBENCH_CACHE_DIR")
    return Path(value).expanduser() if value else data_dir() / "cache" / "llm"


def cache_mode() -> str:
    """The cache mode: set in code, else ``WORKBENCH_CACHE_MODE``, else ``readwrite``."""
    value = _overrides.get("cache_mode") or os.environ.get("WORKBENCH_CACHE_MODE", "readwrite")
    mode = value.strip().lower()
    if mode not in CACHE_MODES:
        raise ValueError(f"WORKBENCH_CACHE_MODE={mode!r}: expected one of {', '.join(CACHE_MODES)}")
    return mode


def call_mode() -> str:
    """How ``complete_many`` sends uncached requests: set in code, else
    ``WORKBENCH_CALL_MODE``, else ``online`` (``batch``: provider batch jobs)."""
    value = _overrides.get("call_mode") or os.environ.get("WORKBENCH_CALL_MODE") or "online"
    mode = value.strip().lower()
    if mode not in CALL_MODES:
        raise ValueError(f"WORKBENCH_CALL_MODE={mode!r}: expected one of {', '.join(CALL_MODES)}")
    return mode


#: What one reply may be: name -> (environment variable, default).
REPLY_LIMITS: dict[str, tuple[str, int]] = {
    "bytes": ("WORKBENCH_MAX_REPLY_BYTES", 16 * 2**20),
    "chars": ("WORKBENCH_MAX_REPLY_CHARS", 1_000_000),
}


def reply_limit(name: str) -> int:
    """The bound ``name``: ``bytes`` (of a reply's HTTP body as read, after
    decompression: ``WORKBENCH_MAX_REPLY_BYTES``) or ``chars`` (of its text:
    ``WORKBENCH_MAX_REPLY_CHARS``), else :data:`REPLY_LIMITS`'s default."""
    variable, default = REPLY_LIMITS[name]
    number = _env_number(variable, int, least=1)
    return default if number is None else number


def _env_number(variable: str, kind: type, *, least: float | None = None) -> int | float | None:
    """The number in environment variable ``variable`` (None when unset or blank); a
    ``ValueError`` naming it when it is not a ``kind`` (``int``: a whole number) or is
    below ``least``."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return None
    try:
        number = kind(value)
    except ValueError:
        number = None
    if number is None or (least is not None and number < least):
        what = "a whole number" if kind is int else "a number"
        bound = "" if least is None else f" >= {least}"
        raise ValueError(f"{variable}={value!r}: expected {what}{bound}")
    return number


def runs_dir() -> Path:
    """Where Papermill writes executed notebook copies (git-ignored)."""
    return data_dir() / "runs"


#: Redirects figures and results tables below one folder (``<dir>/figures/<study>/``,
#: ``<dir>/results/<study>/``) without moving the bundled data; the tests use it.
OUTPUT_ENV = "WORKBENCH_OUTPUT_DIR"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def check_name(value: str, what: str) -> str:
    """Return ``value`` if it is a plain file-name stem, else raise ``ValueError``.

    Study and figure names become folder and file names: letters, digits, ``_``,
    ``-`` and ``.``, starting with a letter or digit, no path separators.
    """
    if not isinstance(value, str) or not _NAME.match(value) or value in {".", ".."}:
        raise ValueError(
            f"{what} {value!r} is not a plain name (letters, digits, '_', '-', '.'; no '/')"
        )
    return value


def _output_dir(kind: str, home: Callable[[], Path], study: str | None) -> Path:
    """``<WORKBENCH_OUTPUT_DIR>/<kind>/[<study>/]`` when that is set, else under ``home()``."""
    out = os.environ.get(OUTPUT_ENV)
    base = Path(out).expanduser() / kind if out else home() / kind
    return base / check_name(study, "study") if study is not None else base


def results_dir(study: str | None = None) -> Path:
    """Tidy CSV tables and headline numbers of a study: ``data/results/<study>/``, or
    ``<WORKBENCH_OUTPUT_DIR>/results/<study>/`` when that is set.

    Examples
    --------
    >>> results_dir("00_tour").parts[-2:]
    ('results', '00_tour')
    """
    return _output_dir("results", data_dir, study)


def figures_dir(study: str | None = None) -> Path:
    """Figures of a study: ``figures/<study>/``, or ``<WORKBENCH_OUTPUT_DIR>/figures/<study>/``
    when that is set.

    Examples
    --------
    >>> figures_dir("00_tour").parts[-2:]
    ('figures', '00_tour')
    """
    return _output_dir("figures", root, study)


def notebooks_dir() -> Path:
    """The study notebooks."""
    return root() / "notebooks"


def tmp_dir() -> Path:
    """A project temp folder (jieba's cache file lives here), created on demand."""
    path = data_dir() / "cache" / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def call_setting(name: str) -> int | float:
    """A numeric LLM setting (a key of :data:`CALL_SETTINGS`): set in code, else its
    environment variable (``ValueError`` when malformed), else the default."""
    if name in _overrides:
        return _overrides[name]
    variable, default = CALL_SETTINGS[name]
    number = _env_number(variable, type(default))
    return default if number is None else number


#: The user's caps of a provider's quota: name -> environment variable.
RATE_CAPS = {"rpm": "WORKBENCH_RPM", "tpm": "WORKBENCH_TPM"}


def rate_cap(name: str) -> float | None:
    """``WORKBENCH_RPM`` / ``WORKBENCH_TPM``: the requests or tokens per minute a run
    never exceeds, for every model (``None``: unset or 0, learn the quota instead)."""
    return _env_number(RATE_CAPS[name], float, least=0) or None


def interactive() -> bool:
    """Whether this is a kernel a person drives in JupyterLab (or Jupyter Notebook).

    Jupyter Server puts ``JPY_SESSION_NAME`` (the notebook's path) in the environment of
    the kernel it starts for a notebook; Papermill and nbval start their kernels without
    it (``workbench run`` and ``store-outputs`` remove it, should they be started from a
    notebook). The default of a notebook's ``progress`` parameter follows it: progress
    bars in JupyterLab, none in stored or executed outputs.

    Examples
    --------
    >>> interactive()  # a doctest is not a Jupyter kernel
    False
    """
    return bool(os.environ.get("JPY_SESSION_NAME")) and "ipykernel" in sys.modules
