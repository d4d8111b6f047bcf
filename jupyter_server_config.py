"""JupyterLab settings for this project: no network calls that a closed machine cannot make.

Used by ``make lab`` (``jupyter lab --config=jupyter_server_config.py notebooks``).
JupyterLab 4 otherwise fetches a news feed, checks PyPI for a newer JupyterLab, and its
extension manager searches PyPI.
"""

try:
    c = get_config()  # noqa: F821  (defined by Jupyter when it loads this file)
except NameError:  # imported as a module (e.g. pytest --doctest-modules from the root)
    from traitlets.config import Config

    c = Config()

c.LabApp.news_url = None  # no announcements feed
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"  # no version check
c.LabApp.extension_manager = "readonly"  # list installed extensions; never query PyPI
