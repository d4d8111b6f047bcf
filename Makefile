# Two set-up-and-go targets: `make run` (every study, offline, simulated judges)
# and `make test` (what CI runs). Both create .venv from pyproject.toml when it is
# missing or older than pyproject.toml.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export MPLBACKEND := Agg
export PYTHONHASHSEED := 0

.PHONY: run test lint lab bench clean-cache

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/workbench run-all

test: $(STAMP)
	$(BIN)/ruff check workbench tests
	$(BIN)/python -m pytest --doctest-modules --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg workbench tests notebooks

lint: $(STAMP)
	$(BIN)/ruff check workbench tests

lab: $(STAMP)
	$(BIN)/jupyter lab --config=jupyter_server_config.py $(if $(filter 0,$(shell id -u)),--allow-root,) notebooks

bench: $(STAMP)
	$(BIN)/workbench bench llm

clean-cache:
	rm -rf data/cache data/runs
