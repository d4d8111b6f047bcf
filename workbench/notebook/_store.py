"""``store_outputs``: execute a notebook with its defaults and save the outputs in place.

The committed notebooks carry the outputs of their default (sim) parameters, which
``pytest --nbval`` compares against a fresh run. This is the one sanctioned way to write
over a source notebook, and it keeps the stored file stable between reruns:

- no per-cell execution timestamps (``record_timing=False``);
- no widget state (``store_widget_state=False``): a tqdm bar is stored only as the
  display it opens with (``0/20 [00:00<?, ?call/s]``), never its final rate;
- ``MPLBACKEND=Agg``, as under ``make test``, so no figure images are stored (nbval
  skips images anyway; the figures live in ``figures/<study>/``);
- the kernel's working folder is the notebook's folder; nothing is injected.

A cell that fails aborts without touching the file.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from workbench.notebook._run import _kernel_settings, resolve_notebook


@contextmanager
def _environment(**values: str):
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


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
    with _environment(MPLBACKEND="Agg"):
        client.execute()
    doc.metadata.pop("widgets", None)
    for cell in doc.cells:
        cell.metadata.pop("execution", None)
    nbformat.validate(doc)
    nbformat.write(doc, source)
    return source
