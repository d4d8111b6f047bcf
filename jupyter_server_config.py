"""JupyterLab settings for this project: the project as Lab's root, inline figures, and no
network calls.

Used by ``make lab`` (``jupyter lab --config=jupyter_server_config.py``). Lab's file browser
starts at the project root, so the run pages and figures under ``data/runs/`` and
``figures/`` are reachable, and it opens on ``notebooks/`` (``default_url``), the root one
click up.
JupyterLab 4 otherwise fetches a news feed and asks in a toast whether it may, checks
PyPI for a newer JupyterLab, and its extension manager asks for consent to search PyPI.
The server-side switches are below; the front end's are in ``jupyter/lab/settings/``
(``overrides.json``: the notification settings ``fetchNews`` and ``checkForUpdates``
off; ``page_config.json``: the extension manager plugin disabled), made JupyterLab's
application settings folder here.

Kernels keep ipykernel's inline matplotlib backend (``make lab`` unsets ``MPLBACKEND``),
so figures show in the notebook; ``save_figure`` writes the same bytes either way.
"""

from pathlib import Path

try:
    c = get_config()  # noqa: F821  (defined by Jupyter when it loads this file)
except NameError:  # imported as a module (e.g. pytest --doctest-modules from the root)
    from traitlets.config import Config

    c = Config()

ROOT = Path(__file__).resolve().parent
c.ServerApp.root_dir = str(ROOT)
c.LabApp.default_url = "/lab/tree/notebooks"  # the file browser opens on notebooks/
c.LabApp.news_url = None  # no announcements feed
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"  # no version check
c.LabApp.extension_manager = "readonly"  # list installed extensions; never query PyPI
c.LabApp.app_settings_dir = str(ROOT / "jupyter" / "lab" / "settings")
