"""Run notebooks through Papermill: ``run_notebook``, ``run_all`` and ``store_outputs``.

Executed copies go to ``data/runs/<timestamp>-<study>/<name>.ipynb`` (git-ignored), never
over the source; the kernel's working folder is the notebook's folder. Parameters are
checked against the notebook's ``parameters`` cell before a kernel starts and passed
through papermill's Python API, so lists and dicts stay typed (the CLI reads them from
YAML, never ``-p`` strings).

Only the default run writes to ``figures/`` and ``data/results/``: when a value differs
from the notebook's default, the kernel gets ``WORKBENCH_OUTPUT_DIR`` set to the run
folder (unless the caller, e.g. the tests, set it). Kernels keep the environment's
matplotlib backend, so executed copies hold the figures' images.

``run_all`` runs its notebooks in one kernel by default (:mod:`workbench.notebook._shared`),
reset before each notebook to how a new one starts but for its imports: a kernel start
and about 2 s of imports saved per notebook, the same executed copies.

``store_outputs`` re-executes a notebook with its defaults and saves the outputs in it
(the committed outputs ``pytest --nbval`` compares with), the one sanctioned way to
write over a source notebook. It keeps the file stable between reruns: no per-cell
timestamps, no widget state (a tqdm bar is stored only as the display it opens with),
``MPLBACKEND=Agg`` so no images (nbval would see them as extra outputs; the figures live
in ``figures/<study>/``). A failing cell aborts without touching the file. No kernel
started here is taken for an interactive one (``JPY_SESSION_NAME`` is removed, see
:func:`~workbench.notebook.interactive`), so progress bars stay off in stored outputs.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pandas as pd

from workbench import config
from workbench.notebook._html import notebook_page, write_page
from workbench.notebook._params import (
    changed_parameters,
    check_parameters,
    notebook_parameters,
    parameter_defaults,
)
from workbench.notebook._provenance import new_run_dir
from workbench.notebook._runs import write_record
from workbench.notebook._shared import SharedKernel

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


def run_notebook(
    path_or_study: str | os.PathLike,
    *,
    parameters: Mapping[str, Any] | None = None,
    output_dir: str | os.PathLike | None = None,
    kernel: str = "python3",
    progress: bool = False,
    directory: str | os.PathLike | None = None,
    shared: SharedKernel | None = None,
    page: bool = True,
) -> Path:
    """Execute one notebook with Papermill and return the executed copy's path.

    Parameters
    ----------
    path_or_study : str or path
        A notebook path or a study name (see ``resolve_notebook``).
    parameters : mapping, optional
        Values for the notebook's ``parameters`` cell; every name must be declared
        there, with a value of its type (``ValueError`` otherwise, before any kernel
        starts).
    output_dir : path, optional
        Folder of the executed copy; default ``data/runs/<timestamp>-<notebook stem>/``.
        When a value differs from the notebook's default, the run's figures, tables and
        headline go below it too (``<output_dir>/figures/<study>/``,
        ``<output_dir>/results/<study>/``), unless ``WORKBENCH_OUTPUT_DIR`` is set.
    kernel : str
        Kernel name; ``python3`` is the kernel ipykernel installs into the environment.
    progress : bool
        Show Papermill's cell progress bar.
    directory : path, optional
        Folder to resolve study names in (default: the project's ``notebooks/``).
    shared : SharedKernel, optional
        Run in this kernel (reset first) instead of a new one; ``run_all`` passes it.
    page : bool
        Write the folder's HTML pages (``index.html``, the notebook's page) when the run
        ends; ``run_all`` passes ``False`` and writes them while the next notebook runs.

    Returns
    -------
    pathlib.Path
        The executed notebook. Papermill writes it even when a cell fails, and then
        raises ``papermill.PapermillExecutionError``.
    """
    source = resolve_notebook(path_or_study, directory=directory)
    params = dict(parameters or {})
    declared = check_parameters(source, params)
    out_dir = Path(output_dir) if output_dir is not None else new_run_dir(source.stem)
    output = (out_dir / source.name).resolve()
    if output == source:
        raise ValueError(f"refusing to write the executed copy over the source {source}")
    out_dir.mkdir(parents=True, exist_ok=True)
    env: dict[str, str | None] = {}
    defaults = parameter_defaults(declared)
    changed = changed_parameters(params, defaults)
    if changed and not os.environ.get(config.OUTPUT_ENV):
        env[config.OUTPUT_ENV] = str(out_dir.resolve())
    started = time.time()
    status, error = "ok", None
    try:
        if shared is not None:
            shared.execute(source, output, parameters=params, environ=env, progress=progress)
        else:
            import papermill

            with _environment(JPY_SESSION_NAME=None, **env):
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
    except Exception as exc:
        status, error = "failed", describe_error(exc)
        raise
    finally:
        root = env.get(config.OUTPUT_ENV) or os.environ.get(config.OUTPUT_ENV)
        try:
            write_record(out_dir, source.stem, values={**defaults, **params}, changed=changed,
                         output_root=Path(root) if root else None, started=started,
                         status=status, error=error)
        except Exception as exc:  # a record or page is a convenience: never fail a run
            print(f"warning: the run record of {source.stem} was not written: {exc}",
                  file=sys.stderr)
        if page:
            _write_pages(out_dir, output)
    return output


def _write_pages(out_dir: Path, notebook: Path | None) -> None:
    """The executed ``notebook``'s HTML page (when it was written) and the folder's
    ``index.html``; a failure is a warning, never a failed run."""
    try:
        if notebook is not None and notebook.is_file():
            notebook_page(notebook)
        write_page(out_dir, notebooks=False)
    except Exception as exc:
        print(f"warning: the HTML pages of {out_dir} were not written: {exc}", file=sys.stderr)


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
    try:
        from workbench.llm._cache import open_cache

        return len(open_cache(config.cache_dir(), readonly=True))
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
    report: bool = False,
    shared_kernel: bool = True,
) -> pd.DataFrame:
    """Run every notebook of ``notebooks/`` in name order; report, don't stop, on failure.

    Parameters
    ----------
    only : sequence of str, optional
        Study names or notebook stems to run (see ``resolve_notebook``); default all.
    parameters : mapping, optional
        Values passed to each notebook that declares the name (e.g. ``cache_mode``). A
        name that no selected notebook declares is a ``ValueError`` before any run, and
        so is a value of the wrong type. A notebook given a value other than its
        default writes its outputs below the run folder (see ``run_notebook``).
    output_dir : path, optional
        Folder of the executed copies; default one ``data/runs/<timestamp>/`` per call.
    kernel, progress, directory
        As for ``run_notebook``.
    report : bool
        Print a line when each notebook starts and ends (name, seconds, new cache
        entries, failures so far) and, when stderr is a terminal, show a progress bar
        over the notebooks there (in a log its redraws would mix into the lines).
    shared_kernel : bool
        Run the notebooks one after the other in one kernel, reset before each
        (:class:`~workbench.notebook._shared.SharedKernel`: a new namespace, environment,
        settings, figures and options; imported modules stay), which saves a kernel
        start and the imports per notebook. ``False``: a new kernel per notebook.
        The first notebook's ``seconds`` include the kernel's start.

    Each notebook's HTML page and the folder's ``index.html`` are written by a thread
    while the next notebook runs (a notebook's ``seconds`` is its run alone); all are
    written when ``run_all`` returns.

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
    given = {p: {k: v for k, v in params.items() if k in declared[p]} for p in notebooks}
    for path in notebooks:  # every value's type, before the first kernel starts
        check_parameters(path, given[path])
    out_dir = Path(output_dir) if output_dir is not None else new_run_dir()

    from tqdm.auto import tqdm

    rows: list[dict[str, Any]] = []
    # The bar only on a terminal: in a log or a pipe its redraws land between the lines.
    bar = tqdm(total=len(notebooks), desc="notebooks", unit="nb", file=sys.stderr,
               disable=not (report and sys.stderr.isatty()), dynamic_ncols=True)
    width = max((len(p.stem) for p in notebooks), default=0)
    shared = SharedKernel(kernel, folder, _kernel_settings()) if shared_kernel else None
    # the HTML pages of a finished notebook are written while the next one runs (in this
    # process, which only waits on the kernel meanwhile), in the order the notebooks end
    pages = ThreadPoolExecutor(max_workers=1, thread_name_prefix="workbench-pages")
    with bar, shared or nullcontext(), pages:
        for i, path in enumerate(notebooks, 1):
            tag = f"[{i}/{len(notebooks)}] {path.stem:<{width}}"
            if report:
                bar.set_postfix_str(path.stem)
                tqdm.write(f"{tag}  started", file=sys.stdout)
            row = _run_one(path, given[path], out_dir, kernel=kernel, progress=progress,
                           shared=shared)
            pages.submit(_write_pages, out_dir, Path(row["output"]))
            rows.append(row)
            bar.update(1)
            if report:
                failed = sum(r["status"] != "ok" for r in rows)
                added = "?" if row["new_cache_entries"] is None else f"+{row['new_cache_entries']}"
                line = (f"{tag}  {row['status']:<6} {row['seconds']:7.1f} s  {added} cache entries"
                        f"  (notebooks failed so far: {failed})")
                tqdm.write(line + (f"  {row['error']}" if row["error"] else ""), file=sys.stdout)
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def _run_one(path: Path, params: dict[str, Any], out_dir: Path, *, kernel: str,
             progress: bool, shared: SharedKernel | None = None) -> dict[str, Any]:
    """Run one notebook of ``run_all``; a row of ``RUN_COLUMNS``."""
    before = _cache_entries()
    start = time.perf_counter()
    status, error, output = "ok", None, out_dir / path.name
    try:
        output = run_notebook(path, parameters=params, output_dir=out_dir, kernel=kernel,
                              progress=progress, shared=shared, page=False)
    except Exception as exc:  # report and go on with the other notebooks
        status, error = "failed", describe_error(exc)
    seconds = round(time.perf_counter() - start, 1)
    after = _cache_entries()
    added = after - before if before is not None and after is not None else None
    return {
        "notebook": path.stem,
        "status": status,
        "seconds": seconds,
        "new_cache_entries": added,
        "output": str(output),
        "error": error,
    }


@contextmanager
def _environment(**values: str | None):
    """Set (a string) or remove (None) environment variables for the block."""
    saved = {key: os.environ.get(key) for key in values}
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def lab_kernelspec(kernel: str = "python3") -> dict[str, str]:
    """The ``kernelspec`` metadata JupyterLab writes for ``kernel`` (its installed spec's
    ``display_name``, ``language`` and ``name``): a stored notebook carries exactly this,
    so opening it in Lab changes nothing (``"Python 3"`` became ``"Python 3 (ipykernel)"``
    and marked the file modified)."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(kernel)
    return {"display_name": spec.display_name, "language": spec.language, "name": kernel}


def store_outputs(
    path_or_study: str | os.PathLike,
    *,
    kernel: str = "python3",
    timeout: int | None = 1800,
    directory: str | os.PathLike | None = None,
) -> Path:
    """Run a notebook top to bottom with its default parameters; save its outputs in it.

    Parameters
    ----------
    path_or_study : str or path
        A notebook path or a study name (see ``resolve_notebook``).
    kernel : str
        Kernel name.
    timeout : int or None
        Seconds allowed per cell.
    directory : path, optional
        Folder to resolve study names in (default: the project's ``notebooks/``).

    Returns
    -------
    pathlib.Path
        The notebook, rewritten.
    """
    import nbformat
    from nbclient import NotebookClient

    source = resolve_notebook(path_or_study, directory=directory)
    doc = nbformat.read(source, as_version=4)
    client = NotebookClient(
        doc,
        kernel_name=kernel,
        timeout=timeout,
        resources={"metadata": {"path": str(source.parent)}},
        record_timing=False,
        store_widget_state=False,
        **_kernel_settings(),
    )
    with _environment(MPLBACKEND="Agg", JPY_SESSION_NAME=None):
        client.execute()
    doc.metadata.pop("widgets", None)
    doc.metadata["kernelspec"] = lab_kernelspec(kernel)
    for cell in doc.cells:
        cell.metadata.pop("execution", None)
    nbformat.validate(doc)
    nbformat.write(doc, source)
    return source
