"""The labelling widget in a real browser (opt-in: ``-m browser``, ``make test-browser``).

JupyterLab is started on a free local port with a token, in a temporary folder holding a
small notebook that shows :class:`workbench.labels.widget.LabelWidget` on three pairs of
Japanese answers; headless Chromium (Debian's ``chromium``, driven by Playwright; no
browser download) labels them with the keyboard (1, ArrowRight, t); the test reads the
SQLite store from outside the kernel, restarts the kernel, and checks from a new kernel
that every label is still there, and that the widget, shown again, has nothing left to
label for this annotator.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS

from workbench.labels import LabelStore

ROOT = Path(__file__).resolve().parents[2]
USER_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
}
KERNEL_IDLE = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
    && panel.sessionContext.session.kernel;
  return Boolean(kernel && kernel.status === 'idle' && panel.content && panel.content.model);
}"""
RUN_CELL = """async (index) => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.activeCellIndex = index;
  await window.jupyterapp.commands.execute('notebook:run-cell');
}"""
CELL_TEXT = """(index) => {
  const cell = window.jupyterapp.shell.currentWidget.content.model.cells.get(index);
  const texts = [];
  for (let j = 0; j < cell.outputs.length; j++) {
    const out = cell.outputs.get(j);
    texts.push(JSON.stringify(out.toJSON()));
  }
  return texts.join('\\n');
}"""
RESTART = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.session.kernel.restart();
}"""


def _notebook(folder: Path, store: Path) -> Path:
    setup = (
        "import pandas as pd\n"
        "from workbench.labels import LabelStore\n"
        "from workbench.labels.widget import LabelWidget\n"
        f"store = LabelStore({str(store)!r}, annotator='browser')\n"
        "tasks = pd.DataFrame({'item_id': ['p1', 'p2', 'p3'],\n"
        "                      'question': ['橋梁の設計で考慮すべき荷重は何ですか。'] * 3,\n"
        "                      'answer_a': ['死荷重と活荷重、' * 40, '風荷重', '地震の影響'],\n"
        "                      'answer_b': ['温度変化の影響', '雪荷重' * 30, '衝撃']})\n"
        "widget = LabelWidget(store, tasks, study='browser', kind='pairwise', rationale=False)\n"
        "widget"
    )
    count = ("from workbench.labels import LabelStore\n"
             f"print('labels:', len(LabelStore({str(store)!r}).labels()))")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(setup),
                                         nbformat.v4.new_code_cell(count)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "label.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture
def lab(tmp_path, lab_server):
    """JupyterLab on ``tmp_path/root`` with a token; yields (URL, token, store folder)."""
    root, store = tmp_path / "root", tmp_path / "labels"
    root.mkdir()
    _notebook(root, store)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MPLBACKEND", None)

    def command(port: int, token: str) -> list[str]:
        cmd = [sys.executable, "-m", "jupyterlab", f"--port={port}", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
               "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
               f"--ServerApp.root_dir={root}"]
        return [*cmd, "--allow-root"] if os.geteuid() == 0 else cmd

    url, token = lab_server(command, USER_SETTINGS, env=env)
    yield url, token, store


@pytest.mark.browser
def test_label_in_the_browser_restart_the_kernel_labels_are_kept(lab):
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium: `make test-browser` installs it (apt-get install chromium)")
    url, token, store = lab
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{url}/lab/tree/label.ipynb?token={token}")
            page.wait_for_function(KERNEL_IDLE, timeout=120_000)
            page.evaluate(RUN_CELL, 0)
            box = page.locator(".wb-label")
            box.wait_for(timeout=120_000)
            progress = page.locator(".wb-progress")
            for key, done in (("1", 1), ("ArrowRight", 2), ("t", 3)):
                page.locator(".wb-label").focus()
                page.keyboard.press(key)
                sync_api.expect(progress).to_contain_text(f"{done} labelled", timeout=30_000)
            sync_api.expect(page.locator(".wb-done")).to_contain_text("Nothing left")
            # committed while the kernel lives: read from outside it
            labels = LabelStore(store).labels()
            assert len(labels) == 3
            page.evaluate(RESTART)
            page.wait_for_function(KERNEL_IDLE, timeout=120_000)
            page.evaluate(RUN_CELL, 1)
            page.wait_for_function("(i) => window.jupyterapp.shell.currentWidget.content.model"
                                   ".cells.get(i).outputs.length > 0", arg=1, timeout=60_000)
            counted = page.evaluate(CELL_TEXT, 1)
            page.evaluate(RUN_CELL, 0)                      # the widget again, new kernel
            sync_api.expect(page.locator(".wb-done").last).to_contain_text("Nothing left",
                                                                           timeout=60_000)
        finally:
            browser.close()
    assert "labels: 3" in counted
    after = LabelStore(store).labels().set_index("item_id")
    assert after.loc["p3", "choice"] == "tie"
    # keys name sides, the store the pair's own answers: 1 is left, ArrowRight is right
    for item, side in (("p1", "left"), ("p2", "right")):
        order = after.loc[item, "shown_order"]
        assert after.loc[item, "choice"] == ("A" if (side == "left") == (order == "AB") else "B")
    assert (after["seconds"] > 0).all()
