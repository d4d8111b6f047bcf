"""Run notebooks through Papermill: ``run_notebook`` and ``run_all``.

Executed copies go to ``data/runs/<timestamp>/<name>.ipynb`` (git-ignored), never over
the source; the kernel's working folder is the notebook's folder. Parameter names are
checked against ``papermill.inspect_notebook`` before a kernel starts: an unknown name
is an error, not papermill's warning. Values are passed through papermill's Python API,
so lists and dicts stay typed (the CLI reads them from YAML, never ``-p`` strings).
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from workbench import config

#: Columns of the table ``run_all`` returns.
RUN_COLUMNS = ("notebook", "status", "seconds", "new_cache_entries", "output", "error")


def _notebooks(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.glob("*.ipynb") if not p.name.startswith(".") and p.is_file()
    )


def resolve_notebook(
    name: str | os.PathLike, *, directory: str | os.PathLike | None = None
) -> Path:
    """Find the notebook meant by a path or a study name.

    ``name`` may be a path to an ``.ipynb`` file, a notebook's stem
    (``s1_judge_methods``), its prefix before the first ``_`` (``s1``, ``00``) or its
    stem without a leading number (``tour`` for ``00_tour``). Raises ``ValueError``
    listing the notebooks when nothing or more than one notebook matches.
    """
    folder = Path(directory) if directory is not None else config.notebooks_dir()
    as_path = Path(name)
    if as_path.suffix == ".ipynb" or as_path.is_file():
        if not as_path.is_file():
            raise FileNotFoundError(f"notebook {str(name)!r} does not exist")
        return as_path.resolve()
    key = str(name)
    notebooks = _notebooks(folder)
    found = [
        p
        for p in notebooks
        if key in {p.stem, p.stem.split("_", 1)[0]}
        or (p.stem.split("_", 1)[0].isdigit() and p.stem.split("_", 1)[-1] == key)
    ]
    names = ", ".join(p.stem for p in notebooks) or "(none)"
    if not found:
        raise ValueError(f"no notebook matches {key!r} in {folder}; notebooks: {names}")
    if len(found) > 1:
        raise ValueError(f"{key!r} matches several notebooks: {', '.join(p.stem for p in found)}")
    return found[0].resolve()


def notebook_parameters(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The parameters a notebook declares (``papermill.inspect_notebook``).

    Returns a dict name -> ``{"name", "inferred_type_name", "default", "help"}``;
    ``default`` is the source text of the literal. Raises ``ValueError`` when the
    notebook has no cell tagged ``parameters``.
    """
    import papermill

    declared = papermill.inspect_notebook(str(path))
    if not declared:
        raise ValueError(f"{path}: no cell tagged 'parameters' (or it assigns nothing)")
    return dict(declared)


def check_parameters(path: str | os.PathLike, parameters: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming every parameter the notebook does not declare."""
    declared = notebook_parameters(path)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise ValueError(
            f"{Path(path).name}: unknown parameter(s) {', '.join(unknown)}; "
            f"valid: {', '.join(sorted(declared))}"
        )


def parse_parameters(
    *, files: Iterable[str | os.PathLike] = (), yaml_strings: Iterable[str] = ()
) -> dict[str, Any]:
    """Merge notebook parameters from YAML files (``-f``) and YAML strings (``-y``).

    Files are read first, then the strings, in order; a later value wins. Each source
    must be a YAML mapping with string keys. Values keep their YAML types.

    Examples
    --------
    >>> parse_parameters(yaml_strings=["judges: [sim/judge-a, sim/judge-b]", "trials: 2"])
    {'judges': ['sim/judge-a', 'sim/judge-b'], 'trials': 2}
    """
    merged: dict[str, Any] = {}
    sources = [(f"file {str(f)!r}", Path(f).read_text(encoding="utf-8")) for f in files]
    sources += [(f"-y {text!r}", text) for text in yaml_strings]
    for label, text in sources:
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"{label}: not valid YAML ({exc})") from None
        if not isinstance(value, dict) or not value:
            raise ValueError(f"{label}: expected a YAML mapping such as 'n_batch: 5'")
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise ValueError(f"{label}: parameter names must be strings, got {bad!r}")
        merged.update(value)
    return merged


def _timestamp() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def _fresh_run_dir() -> Path:
    base = config.runs_dir() / _timestamp()
    candidate, n = base, 1
    while candidate.exists():
        candidate = base.with_name(f"{base.name}-{n}")
        n += 1
    return candidate


def run_notebook(
    path_or_study: str | os.PathLike,
    *,
    parameters: Mapping[str, Any] | None = None,
    output_dir: str | os.PathLike | None = None,
    kernel: str = "python3",
    progress: bool = False,
    directory: str | os.PathLike | None = None,
) -> Path:
    """Execute one notebook with Papermill and return the executed copy's path.

    Parameters
    ----------
    path_or_study : str or path
        A notebook path or a study name (see ``resolve_notebook``).
    parameters : mapping, optional
        Values for the notebook's ``parameters`` cell; every name must be declared
        there (``ValueError`` otherwise, before any kernel starts).
    output_dir : path, optional
        Folder of the executed copy; default ``data/runs/<timestamp>/``.
    kernel : str
        Kernel name; ``python3`` is the kernel ipykernel installs into the environment.
    progress : bool
        Show Papermill's cell progress bar.
    directory : path, optional
        Folder to resolve study names in (default: the project's ``notebooks/``).

    Returns
    -------
    pathlib.Path
        The executed notebook. Papermill writes it even when a cell fails, and then
        raises ``papermill.PapermillExecutionError``.
    """
    source = resolve_notebook(path_or_study, directory=directory)
    params = dict(parameters or {})
    check_parameters(source, params)
    out_dir = Path(output_dir) if output_dir is not None else _fresh_run_dir()
    output = (out_dir / source.name).resolve()
    if output == source:
        raise ValueError(f"refusing to write the executed copy over the source {source}")
    out_dir.mkdir(parents=True, exist_ok=True)

    import papermill

    papermill.execute_notebook(
        str(source),
        str(output),
        parameters=params,
        kernel_name=kernel,
        cwd=str(source.parent),
        progress_bar=progress,
        log_output=False,
        language="python",
        **_kernel_settings(),
    )
    return output


def _kernel_settings() -> dict[str, Any]:
    """Ask for CurveZMQ encryption when jupyter_client and zmq offer it.

    ipykernel >= 7 warns on stderr when its sockets are plain TCP; jupyter_client >= 8.10
    provisions Curve keys for kernels whose spec declares support (``auto``). The setting
    goes in through traitlets config, so nbclient still owns (and shuts down) the kernel.
    """
    try:
        import zmq
        from jupyter_client.manager import KernelManager
        from traitlets.config import Config
    except ImportError:  # pragma: no cover - all come with papermill
        return {}
    if "transport_encryption" not in KernelManager.class_trait_names() or not zmq.has("curve"):
        return {}
    return {"config": Config({"KernelManager": {"transport_encryption": "auto"}})}


def _cache_entries() -> int | None:
    """Entries in the LLM cache folder now (``None`` if it cannot be read)."""
    folder = config.cache_dir()
    if not (folder / "cache.db").exists():
        return 0
    try:
        import diskcache

        with diskcache.Cache(str(folder), eviction_policy="none") as cache:
            return len(cache)
    except Exception:  # the count is informative only; never fail a run over it
        return None


def describe_error(exc: BaseException) -> str:
    """One line for a failed run: the notebook's own exception when a cell raised it."""
    if hasattr(exc, "ename") and hasattr(exc, "evalue"):  # papermill.PapermillExecutionError
        where = f" (cell {exc.exec_count})" if getattr(exc, "exec_count", None) else ""
        return f"{exc.ename}: {exc.evalue}{where}"[:300]
    lines = [line for line in str(exc).splitlines() if line.strip() and set(line) != {"-"}]
    return f"{type(exc).__name__}: {lines[0].strip() if lines else ''}"[:300]


def run_all(
    *,
    only: Sequence[str] | None = None,
    parameters: Mapping[str, Any] | None = None,
    output_dir: str | os.PathLike | None = None,
    kernel: str = "python3",
    progress: bool = False,
    directory: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Run every notebook of ``notebooks/`` in name order; report, don't stop, on failure.

    Parameters
    ----------
    only : sequence of str, optional
        Study names or notebook stems to run (see ``resolve_notebook``); default all.
    parameters : mapping, optional
        Values passed to each notebook that declares the name (e.g. ``cache_mode``). A
        name that no selected notebook declares is a ``ValueError`` before any run.
    output_dir : path, optional
        Folder of the executed copies; default one ``data/runs/<timestamp>/`` per call.
    kernel, progress, directory
        As for ``run_notebook``.

    Returns
    -------
    pandas.DataFrame
        ``RUN_COLUMNS``: ``notebook`` (stem), ``status`` (``ok`` or ``failed``),
        ``seconds`` (wall time, one decimal), ``new_cache_entries`` (LLM cache entries
        added by the run: 0 when everything was replayed from the cache; missing when
        the cache could not be read), ``output`` (executed copy) and ``error`` (the
        exception's first line, for failures).
    """
    folder = Path(directory) if directory is not None else config.notebooks_dir()
    notebooks = _notebooks(folder)
    if only:
        wanted = {resolve_notebook(name, directory=folder) for name in only}
        notebooks = [p for p in notebooks if p.resolve() in wanted]
    params = dict(parameters or {})
    declared = {p: set(notebook_parameters(p)) for p in notebooks}
    unused = sorted(set(params) - set().union(*declared.values()))
    if unused:
        raise ValueError(f"parameter(s) {', '.join(unused)} are declared by none of the notebooks")
    out_dir = Path(output_dir) if output_dir is not None else _fresh_run_dir()

    rows = []
    for path in notebooks:
        before = _cache_entries()
        start = time.perf_counter()
        status, error, output = "ok", None, out_dir / path.name
        try:
            output = run_notebook(
                path,
                parameters={k: v for k, v in params.items() if k in declared[path]},
                output_dir=out_dir,
                kernel=kernel,
                progress=progress,
            )
        except Exception as exc:  # report and go on with the other notebooks
            status, error = "failed", describe_error(exc)
        seconds = round(time.perf_counter() - start, 1)
        after = _cache_entries()
        added = after - before if before is not None and after is not None else None
        rows.append(
            {
                "notebook": path.stem,
                "status": status,
                "seconds": seconds,
                "new_cache_entries": added,
                "output": str(output),
                "error": error,
            }
        )
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))
