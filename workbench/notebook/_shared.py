"""One Jupyter kernel for all the notebooks of a ``run_all`` (``shared_kernel=True``).

A new kernel per notebook costs its start and its imports (pandas, matplotlib, the
workbench: about 4 s), most of a ``run-all`` whose LLM calls all come from the cache.
:class:`SharedKernel` starts one kernel in the notebooks' folder and runs each notebook in
it through Papermill (the same injected parameters, cell metadata and executed copy).
Before each notebook :data:`_RESET` puts the kernel back as a new one starts (namespace
and execution count, so the copy numbers its cells from 1; environment; working folder;
``sys.path``; warning filters; workbench settings, run entries and cache handles;
matplotlib figures and rcParams, the backend kept; pandas options). Imported modules
stay imported: that is the saving. A kernel that died is replaced before the next
notebook.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

#: Papermill engine name under which :func:`_engine` registers the shared-kernel engine.
ENGINE = "workbench-shared-kernel"

# Runs in the kernel, in a namespace of its own (the user namespace never sees it), with
# ``CHANGES``: environment variables to set (a string) or remove (None) for the notebook.
_RESET = r"""
import os, sys, warnings

shell = get_ipython()
start = getattr(shell, "_workbench_start", None)
if start is None:  # a new kernel: remember how it started
    shell._workbench_start = {"environ": dict(os.environ), "cwd": os.getcwd(),
                              "path": list(sys.path), "filters": list(warnings.filters)}
else:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
    shell.reset(new_session=True)
    for key in [k for k in os.environ if k.startswith("WORKBENCH_") and k not in start["environ"]]:
        del os.environ[key]
    for key, value in start["environ"].items():
        if os.environ.get(key) != value:
            os.environ[key] = value
    os.chdir(start["cwd"])
    sys.path[:] = start["path"]
    warnings.filters[:] = start["filters"]
    warnings._filters_mutated()
    config = sys.modules.get("workbench.config")
    if config is not None:
        config.set_overrides({}, replace=True)
    session = sys.modules.get("workbench.notebook._session")
    if session is not None:
        session._RUNS.clear()
        session._REDIRECTS.clear()
    store = sys.modules.get("workbench.llm._cache")
    if store is not None:
        store.close_caches()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "matplotlib" in sys.modules:
            sys.modules["matplotlib"].rc_file_defaults()
        if "pandas" in sys.modules:
            sys.modules["pandas"].reset_option("all")
for key, value in CHANGES.items():
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value
"""


@cache
def _engine() -> str:
    """Register (once) and name the Papermill engine that runs in a given kernel.

    It is Papermill's nbclient engine with a client that talks through the channels of
    :class:`SharedKernel` (``kc``, ready and kept open: no wait for a new client per
    notebook), first runs ``prelude`` (the reset) silently, and leaves the kernel and
    its channels open when its notebook is done (nbclient reads only the replies to its
    own requests, so nothing earlier is taken for this notebook's output). The
    executed copy is written once, when the notebook ends (Papermill would rewrite the
    whole file, images included, at each cell's start and end), and also when the run
    stops on an error or a dead kernel.
    """
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.iorw import write_ipynb
    from papermill.log import logger

    class _Client(PapermillNotebookClient):
        prelude = ""

        def papermill_execute_cells(self) -> None:
            if self.prelude:
                reply = self.wait_for_reply(self.kc.execute(self.prelude, silent=True,
                                                            store_history=False))
                content = (reply or {}).get("content", {})
                if content.get("status") != "ok":
                    raise RuntimeError(f"resetting the shared kernel failed: "
                                       f"{content.get('ename')}: {content.get('evalue')}")
            super().papermill_execute_cells()

        def execute(self, **kwargs: Any) -> Any:
            try:
                return super().execute(**kwargs)
            finally:
                self.kc = None  # the channels belong to SharedKernel

    class _Engine(NBClientEngine):
        @classmethod
        def execute_notebook(cls, nb, kernel_name, output_path=None, **kwargs):
            try:
                return super().execute_notebook(nb, kernel_name, output_path=None, **kwargs)
            except BaseException:
                if output_path:  # what ran so far, as Papermill's per-cell saves would leave it
                    write_ipynb(nb, output_path)
                raise

        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False,
                                     stdout_file=None, stderr_file=None, start_timeout=60,
                                     execution_timeout=None, prelude="", kc=None, **kwargs):
            kwargs.pop("input_path", None)
            client = _Client(nb_man, kernel_name=kernel_name, log=logger, log_output=log_output,
                             stdout_file=stdout_file, stderr_file=stderr_file,
                             startup_timeout=start_timeout, timeout=execution_timeout, **kwargs)
            client.prelude, client.kc = prelude, kc
            return client.execute()

    papermill_engines.register(ENGINE, _Engine)
    return ENGINE


class SharedKernel:
    """A kernel started on first use in ``cwd`` and kept for several notebooks.

    Use as a context manager (the kernel is shut down at the end);
    :meth:`execute` runs one notebook through Papermill in it.
    """

    def __init__(self, kernel: str, cwd: str | os.PathLike,
                 settings: Mapping[str, Any] | None = None) -> None:
        self.kernel = kernel
        self.cwd = str(cwd)
        self.settings = dict(settings or {})
        self.km: Any = None
        self.kc: Any = None
        self.starts = 0

    def __enter__(self) -> SharedKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _alive(self) -> bool:
        from jupyter_core.utils import run_sync

        return self.km is not None and bool(run_sync(self.km.is_alive)())

    def _start(self) -> None:
        from jupyter_client.manager import AsyncKernelManager
        from jupyter_core.utils import run_sync

        self.close()
        km = AsyncKernelManager(kernel_name=self.kernel, **self.settings)
        # the environment of run_notebook's kernels: never taken for an interactive one
        env = {k: v for k, v in os.environ.items() if k != "JPY_SESSION_NAME"}
        run_sync(km.start_kernel)(cwd=self.cwd, env=env,
                                  extra_arguments=["--HistoryManager.hist_file=:memory:"])
        self.km = km
        self.kc = km.client()
        self.kc.start_channels()
        # papermill's import (~2 s: jsonschema's format grammars) while the kernel boots
        import papermill  # noqa: F401
        run_sync(self.kc.wait_for_ready)(timeout=60)
        self.kc.allow_stdin = False
        self.starts += 1

    def execute(self, source: Path, output: Path, *, parameters: Mapping[str, Any],
                environ: Mapping[str, str | None], progress: bool) -> None:
        """Reset the kernel (start it, again if it died), then run ``source`` into
        ``output`` with Papermill; ``environ``: variables to set (None: remove) for it."""
        if not self._alive():
            self._start()
        import papermill

        prelude = (f"exec(compile({_RESET!r}, '<workbench kernel reset>', 'exec'), "
                   f"{{'get_ipython': get_ipython, 'CHANGES': {dict(environ)!r}}})")
        papermill.execute_notebook(
            str(source),
            str(output),
            parameters=dict(parameters),
            kernel_name=self.kernel,
            engine_name=_engine(),
            cwd=str(source.parent),
            progress_bar=progress,
            log_output=False,
            language="python",
            km=self.km,
            kc=self.kc,
            prelude=prelude,
        )

    def close(self) -> None:
        """Shut the kernel down (if one runs)."""
        if self.km is None:
            return
        from jupyter_core.utils import run_sync

        km, self.km = self.km, None
        if self.kc is not None:
            self.kc.stop_channels()
            self.kc = None
        if run_sync(km.is_alive)():
            run_sync(km.shutdown_kernel)(now=False)  # also removes its connection file
        else:
            run_sync(km.cleanup_resources)()
