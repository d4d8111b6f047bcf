"""Run folders and run records: where a non-default run's outputs go, and what made them.

Only a notebook's default run writes to ``figures/<study>/`` and
``data/results/<study>/``. A run with other parameters writes its executed copy,
figures, tables and headline into its own folder ``data/runs/<timestamp>-<label>/``
(``WORKBENCH_OUTPUT_DIR`` pointed there), and its ``headline.json`` gets a ``run``
entry: the parameters that differ from the defaults, the package version and the git
commit of the checkout.
"""

from __future__ import annotations

import datetime as _dt
import subprocess
from pathlib import Path
from typing import Any

from workbench import config


def new_run_dir(label: str | None = None) -> Path:
    """A folder name not yet used: ``data/runs/<YYYYmmddTHHMMSSZ>[-<label>][-<n>]`` (UTC;
    the one naming of every run folder; not created)."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"{stamp}-{config.check_name(label, 'run label')}" if label else stamp
    base = config.runs_dir() / name
    candidate, n = base, 1
    while candidate.exists():
        candidate = base.with_name(f"{base.name}-{n}")
        n += 1
    return candidate


def git_commit() -> str | None:
    """The checkout's commit (``<sha>``, ``<sha>-dirty`` with uncommitted changes to
    tracked files), or None outside a git checkout or without git."""
    root = str(config.root())
    try:
        sha = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{sha}-dirty" if dirty else sha


def run_record(parameters: dict[str, Any]) -> dict[str, Any]:
    """The ``run`` entry of a non-default run's headline: ``parameters`` (those that
    differ from the defaults), ``version`` (of workbench) and ``commit``."""
    return {"parameters": dict(parameters), "version": config.__version__, "commit": git_commit()}
