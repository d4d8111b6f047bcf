"""JupyterLab as a person meets it: ``make lab``, a notebook run in a browser, figures inline.

The browser test (marker ``browser``; it runs only when selected with ``-m browser``, as
``make test-browser`` does) starts ``make lab`` on a free local port with a token, opens
``notebooks/00_tour.ipynb`` in headless Chromium (Debian's ``chromium``, driven by
Playwright; no browser download), runs every cell, and checks that the figure shows as
an image in the page, that the progress bar is a widget, that no cell failed, and that
no "Jupyter news" toast appeared. It runs with ``MPLBACKEND=Agg`` in its own
environment, which ``make lab`` must not pass on to the kernel. The notebook file is
never saved (autosave is off in a temporary user-settings folder). It takes 25-30 s on
a 2-core machine: about 5 s for JupyterLab to start, the rest in the browser (page,
kernel, the tour's cells).

The other tests here are quick checks of the same set-up without a browser."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "notebooks" / "00_tour.ipynb"
#: User settings of the test's JupyterLab: render every cell; autosave every second if it
#: were on (the project's settings must keep it off: a run never rewrites the file).
USER_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosaveInterval": 1},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
DIRTY = "() => window.jupyterapp.shell.currentWidget.content.model.dirty"
KERNEL_READY = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
    && panel.sessionContext.session.kernel;
  return Boolean(kernel && kernel.status === 'idle' && panel.content && panel.content.model);
}"""
ALL_RUN = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type === 'code' && !cell.executionCount) return false;
  }
  return panel.sessionContext.session.kernel.status === 'idle';
}"""
OUTPUT_KINDS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  const kinds = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    for (let j = 0; j < cell.outputs.length; j++) {
      const out = cell.outputs.get(j);
      const json = out.toJSON();
      kinds.push([out.type, ...(json.name ? [json.name] : []), ...Object.keys(out.data)]);
    }
  }
  return kinds;
}"""


def _make() -> str:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    return make


def _lab_command(make: str, args: str) -> list[str]:
    # -o: take the installed .venv as up to date (the test runs inside it)
    return [make, "--no-print-directory", "-o", ".venv/.installed", "lab", f"ARGS={args}"]


def test_make_lab_unsets_the_backend_and_passes_arguments_through():
    args = "--port=8899 --no-browser --IdentityProvider.token=abc"
    shown = subprocess.run([*_lab_command(_make(), args), "-n"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout
    assert "env -u MPLBACKEND" in shown and "--config=jupyter_server_config.py" in shown
    assert shown.rstrip().endswith(args)  # no folder after it: the config sets the root
    test_line = subprocess.run([_make(), "-n", "-o", ".venv/.installed", "test"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout
    assert "MPLBACKEND=Agg" in test_line and '-m "not browser"' in test_line


def test_project_config_turns_off_news_update_check_and_extension_manager():
    c = runpy.run_path(str(ROOT / "jupyter_server_config.py"))["c"]
    assert c.LabApp.news_url is None and c.LabApp.extension_manager == "readonly"
    settings = Path(c.LabApp.app_settings_dir)
    overrides = json.loads((settings / "overrides.json").read_text(encoding="utf-8"))
    assert overrides["@jupyterlab/apputils-extension:notification"] == {
        "fetchNews": "false",
        "checkForUpdates": False,
    }
    page = json.loads((settings / "page_config.json").read_text(encoding="utf-8"))
    assert page["disabledExtensions"] == {"@jupyterlab/extensionmanager-extension": True}


def test_lab_serves_the_project_root_and_opens_on_the_notebooks():
    c = runpy.run_path(str(ROOT / "jupyter_server_config.py"))["c"]
    assert Path(c.ServerApp.root_dir) == ROOT  # data/runs/ and figures/ in the file browser
    assert c.LabApp.default_url == "/lab/tree/notebooks"
    assert (Path(c.ServerApp.root_dir) / c.LabApp.default_url.removeprefix("/lab/tree/")).is_dir()


@pytest.fixture
def lab(tmp_path, lab_server):
    """``make lab`` on a free port with a token; yields (base URL, token)."""
    make = _make()
    env = dict(
        os.environ,
        MPLBACKEND="Agg",  # as under `make test`: `make lab` must not pass it on
        WORKBENCH_OUTPUT_DIR=str(tmp_path / "out"),
        WORKBENCH_CACHE_DIR=str(tmp_path / "cache"),
    )

    def command(port: int, token: str) -> list[str]:
        return _lab_command(make, f"--port={port} --no-browser --ServerApp.ip=127.0.0.1 "
                                  f"--IdentityProvider.token={token} "
                                  "--LabApp.expose_app_in_browser=True")

    yield lab_server(command, USER_SETTINGS, env=env, cwd=ROOT)


@pytest.mark.browser
def test_make_lab_opens_on_the_notebooks_with_the_run_pages_in_reach(lab):
    import urllib.request

    url, token = lab
    with urllib.request.urlopen(f"{url}/?token={token}", timeout=30) as reply:
        assert reply.url.startswith(f"{url}/lab/tree/notebooks")
    with urllib.request.urlopen(f"{url}/api/contents?token={token}", timeout=30) as reply:
        names = {entry["name"] for entry in json.load(reply)["content"]}
    assert {"notebooks", "data", "figures"} <= names


@pytest.mark.browser
def test_lab_runs_the_tour_and_shows_its_figure_inline(lab):
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium: `make test-browser` installs it (apt-get install chromium)")
    url, token = lab
    before = TOUR.read_bytes()
    start = time.perf_counter()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{url}/lab/tree/notebooks/{TOUR.name}?token={token}")
            page.wait_for_function(KERNEL_READY, timeout=120_000)
            page.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_function(ALL_RUN, timeout=300_000, polling=500)
            page.wait_for_timeout(3000)  # three autosave intervals, were autosave on
            ran_unsaved = page.evaluate(DIRTY)
            kinds = page.evaluate(OUTPUT_KINDS)
            images = page.locator(".jp-OutputArea .jp-RenderedImage img")
            images.first.wait_for(timeout=60_000)
            n_images = images.count()
            toasts = page.locator(".Toastify__toast").all_inner_texts()
        finally:
            browser.close()
    seconds = time.perf_counter() - start
    print(f"JupyterLab ran {TOUR.name} in the browser in {seconds:.1f} s")

    assert n_images >= 1, "no figure image in the page"
    assert any("image/png" in kind for kind in kinds), "the kernel did not use the inline backend"
    assert not [kind for kind in kinds if kind[0] == "error"], kinds
    assert any("application/vnd.jupyter.widget-view+json" in kind for kind in kinds), (
        "the progress bar is not a widget"
    )
    assert not [t for t in toasts if "news" in t.lower()], toasts
    assert not [kind for kind in kinds if kind[:2] == ["stream", "stderr"]], (
        "a pink stderr block in the tour", kinds)
    assert ran_unsaved, "the run left the notebook unmodified?"
    assert TOUR.read_bytes() == before, "the notebook file was saved (autosave must be off)"


@pytest.mark.browser
def test_opening_a_committed_notebook_in_lab_leaves_it_unmodified(lab):
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium: `make test-browser` installs it (apt-get install chromium)")
    url, token = lab
    path = ROOT / "notebooks" / "x1_bias_probes.ipynb"
    before = path.read_bytes()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{url}/lab/tree/notebooks/{path.name}?token={token}")
            page.wait_for_function(KERNEL_READY, timeout=120_000)
            page.wait_for_timeout(3000)
            dirty = page.evaluate(DIRTY)
            kernelspec = page.evaluate(
                "() => window.jupyterapp.shell.currentWidget.content.model.getMetadata('kernelspec')")
        finally:
            browser.close()
    assert kernelspec == json.loads(before)["metadata"]["kernelspec"]
    assert not dirty, "opening the notebook marked it modified"
    assert path.read_bytes() == before


def test_committed_notebooks_carry_the_kernelspec_lab_writes_and_autosave_is_off():
    from workbench.notebook._run import lab_kernelspec

    expected = lab_kernelspec("python3")
    assert expected["display_name"] == "Python 3 (ipykernel)"
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        meta = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        assert meta["kernelspec"] == expected, path.name
    c = runpy.run_path(str(ROOT / "jupyter_server_config.py"))["c"]
    overrides = json.loads((Path(c.LabApp.app_settings_dir) / "overrides.json").read_text())
    assert overrides["@jupyterlab/docmanager-extension:plugin"] == {"autosave": False}


def _has_japanese_font() -> bool | None:
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    found = subprocess.run([fc_list, ":lang=ja", "family"], capture_output=True, text=True)
    return bool(found.stdout.strip())


@pytest.mark.browser
def test_make_lab_says_up_front_when_japanese_would_show_as_boxes(lab, tmp_path):
    has_font = _has_japanese_font()
    if has_font is None:
        pytest.skip("no fc-list: make lab cannot tell")
    log = (tmp_path / "lab.log").read_text()
    assert ("no Japanese font installed" in log) is (not has_font), log[:2000]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme[readme.index("## Quick start"):readme.index("## The studies")]
    assert "fonts-noto-cjk" in quick and "make lab" in quick


@pytest.mark.browser
def test_a_run_folder_opens_in_chromium_without_jupyter(tmp_path, monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium: `make test-browser` installs it (apt-get install chromium)")
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from workbench.notebook import run_notebook

    folder = tmp_path / "project" / "notebooks"
    folder.mkdir(parents=True)
    doc = new_notebook()
    params = new_code_cell("values: list = [1, 3, 2]  # points")
    params.metadata["tags"] = ["parameters"]
    doc.cells = [params, new_code_cell(
        "import matplotlib.pyplot as plt\nfrom workbench.notebook import figures_dir, record\n"
        "fig, ax = plt.subplots()\nax.plot(values)\nout = figures_dir('tiny')\n"
        "out.mkdir(parents=True, exist_ok=True)\nfig.savefig(out / 'line.png')\nplt.show()\n"
        "record('tiny', total=sum(values))")]
    doc.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                  "language": "python"}
    nbformat.write(doc, folder / "00_tiny.ipynb")
    monkeypatch.setenv("WORKBENCH_ROOT", str(folder.parent))
    monkeypatch.delenv("WORKBENCH_OUTPUT_DIR", raising=False)
    monkeypatch.delenv("MPLBACKEND", raising=False)  # inline images in the executed copy
    run = run_notebook(folder / "00_tiny.ipynb", parameters={"values": [2, 4]}).parent
    shared = tmp_path / "sent-by-mail"
    shutil.copytree(run, shared)  # the folder alone, elsewhere: nothing points back
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto((shared / "index.html").as_uri())
            index_images = page.evaluate("() => Array.from(document.images).map(i => i.naturalWidth)")
            text = page.inner_text("body")
            page.click("text=the executed notebook")
            page.wait_for_load_state("load")
            notebook_images = page.evaluate(
                "() => Array.from(document.images).map(i => i.naturalWidth)")
            notebook_text = page.inner_text("body")
        finally:
            browser.close()
    assert index_images and all(w > 0 for w in index_images), index_images
    assert "values = [2, 4]" in text and "total" in text
    assert notebook_images and all(w > 0 for w in notebook_images), notebook_images
    assert "record('tiny', total=sum(values))" in notebook_text
