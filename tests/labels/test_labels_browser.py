"""The labelling widget in a real browser (opt-in: ``-m browser``, ``make test-browser``).

JupyterLab is started on a free local port with a token, in a temporary folder holding a
small notebook; headless Chromium (Debian's ``chromium``, driven by Playwright; no
browser download) labels with the keyboard.

- :class:`workbench.labels.widget.LabelWidget` on three pairs of Japanese answers (1,
  ArrowRight, t); the test reads the SQLite store from outside the kernel, restarts the
  kernel, and checks from a new kernel that every label is still there, and that the
  widget, shown again, has nothing left to label for this annotator.
- Study X4 live (issue 35, items 1-4): pairs, then scores, each under the study's
  guideline, blinded (no model name, no item id in the widget or the tables below it),
  then a kernel restart after which the queue serves only items not labelled yet.
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


def _x4_notebook(folder: Path, labels: Path) -> Path:
    """Study X4 live: a pairwise widget, its answer; a score widget, the annotator's labels."""
    def config(kind: str) -> str:
        return (f"x4.Config(n_items=3, live=True, label_dir={str(labels)!r}, "
                f"annotator='browser', live_kind={kind!r}, burn_in=2, budget=10, "
                "progress=False)")
    load = "from workbench.studies import x4_human_labels as x4\n"
    cells = [f"{load}pairs = {config('pairwise')}\nx4.label_widget(pairs)",
             "x4.live_answer(pairs)",
             f"{load}scores = {config('score')}\nx4.label_widget(scores)",   # run after a restart
             "x4.my_labels(scores)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "x4.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture
def lab(tmp_path, lab_server):
    """JupyterLab on ``tmp_path/root`` with a token; yields (URL, token, store folder)."""
    root, store = tmp_path / "root", tmp_path / "labels"
    root.mkdir()
    _notebook(root, store)
    _x4_notebook(root, tmp_path / "x4-labels")
    env = dict(os.environ, PYTHONPATH=str(ROOT), WORKBENCH_CACHE_DIR=str(tmp_path / "cache"),
               WORKBENCH_CACHE_MODE="readwrite")
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


CELL = ".jp-Notebook .jp-Cell"
CELL_OUTPUT = """(i) => window.jupyterapp.shell.currentWidget.content.model.cells.get(i)
  .outputs.length > 0"""


def _label(page, sync_api, cell: int, keys, start: int) -> list[str]:
    """Press ``keys`` (one answer each) in the widget of ``cell``; the opaque references
    shown (from the progress line), one per answer."""
    box = page.locator(CELL).nth(cell).locator(".wb-label")
    progress = box.locator(".wb-progress")
    refs = []
    for n, answer in enumerate(keys, start=start + 1):
        sync_api.expect(progress).to_contain_text("item ", timeout=60_000)
        refs.append(progress.inner_text().rsplit("item ", 1)[1].strip())
        box.focus()
        for key in answer:
            page.keyboard.press(key)
        sync_api.expect(progress).to_contain_text(f"{n} labelled", timeout=30_000)
    return refs


def _output(page, cell: int) -> str:
    page.evaluate(RUN_CELL, cell)
    page.wait_for_function(CELL_OUTPUT, arg=cell, timeout=120_000)
    return page.evaluate(CELL_TEXT, cell)


@pytest.mark.browser
def test_x4_live_blinded_instructed_pairs_and_no_repeat_after_a_restart(lab, tmp_path):
    """Issue 35, items 1-4, as an annotator meets them in Lab."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium: `make test-browser` installs it (apt-get install chromium)")
    from workbench.studies import x4_human_labels as x4

    url, token, _ = lab
    store = tmp_path / "x4-labels" / "people"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{url}/lab/tree/x4.ipynb?token={token}")
            page.wait_for_function(KERNEL_IDLE, timeout=120_000)
            # item 4 (and 3): pairs in the widget, under what "better" means
            assert '"output_type":"error"' not in _output(page, 0)
            pair_box = page.locator(CELL).nth(0).locator(".wb-label")
            pair_box.wait_for(timeout=180_000)
            sync_api.expect(pair_box.locator(".wb-guide")).to_contain_text(
                "Better means: " + x4.BETTER[:40], timeout=30_000)
            pair_refs = _label(page, sync_api, 0, [["1"], ["ArrowRight"], ["t"]], 0)
            pair_text = pair_box.inner_text()
            pair_answer = _output(page, 1)
            # item 3: scores under the guideline and the meaning of each score
            assert '"output_type":"error"' not in _output(page, 2)
            box = page.locator(CELL).nth(2).locator(".wb-label")
            box.wait_for(timeout=180_000)
            guide = box.locator(".wb-guide")
            sync_api.expect(guide).to_contain_text(x4.GUIDELINE[:60], timeout=30_000)
            sync_api.expect(guide).to_contain_text(x4.ANCHORS[5], timeout=30_000)
            sync_api.expect(guide).to_contain_text(x4.ANCHORS[1], timeout=30_000)
            score_text = box.inner_text()
            before = _label(page, sync_api, 2, [["4", "Enter"], ["2", "Enter"], ["5", "Enter"]], 0)
            mine = _output(page, 3)
            # item 1: the kernel restarts; the queue serves only items not labelled yet
            page.evaluate(RESTART)
            page.wait_for_function(KERNEL_IDLE, timeout=120_000)
            shown = _output(page, 2)
            assert '"output_type":"error"' not in shown, shown[:2000]
            progress = page.locator(CELL).nth(2).locator(".wb-label .wb-progress")
            sync_api.expect(progress).to_contain_text("3 labelled", timeout=180_000)
            stopped = page.locator(CELL).nth(2).locator(".wb-error")
            refused = stopped.inner_text() if stopped.count() else ""
            after = [] if refused else _label(page, sync_api, 2, [["3", "Enter"], ["4", "Enter"]], 3)
        finally:
            browser.close()
    labels = LabelStore(store).labels()
    scores, pairs = labels[labels["kind"] == "score"], labels[labels["kind"] == "pairwise"]
    # item 2: nothing the annotator saw names a model or an item id; the store has real ids
    for text in (pair_text, score_text, pair_answer, mine):
        assert "sim/" not in text and "s2-" not in text, text[:300]
    assert all(r in mine for r in before) and len(pair_refs) == 3
    assert labels["item_id"].str.contains("sim/answer").all()
    # item 3: each label carries the guideline's version
    from workbench.labels.widget import guideline_version
    version = guideline_version(x4.GUIDELINE, x4.ANCHORS, x4.BETTER)
    assert (labels["guideline"] == version).all()
    # item 4: the win rate and the judge's accuracy from the pairs
    assert "win rate (A)" in pair_answer and "judge accuracy" in pair_answer
    assert len(pairs) == 3 and pairs["item_id"].is_unique
    # item 1: every label to an item its annotator had not labelled, across the restart
    assert not refused, f"after the restart the widget refused a repeat: {refused}"
    assert len(scores) == 5 and scores["item_id"].is_unique
    assert len(set(before + after)) == 5
