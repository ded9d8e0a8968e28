# The README names these targets; keep them stable.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q

.PHONY: run test lint typecheck unit bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PIP) install -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PIP) install -e '.[dev]'
	touch $(VENV)/.installed $@

## run: the demo session: a client drives examples/notes_server.py over stdio
run: $(VENV)/.installed
	$(PY) examples/notes_client.py

## test: lint, format check, strict type check, then the whole suite
test: $(VENV)/.installed-dev lint typecheck unit

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check src tests examples bench
	$(VENV)/bin/ruff format --check src tests examples bench

typecheck: $(VENV)/.installed-dev
	$(VENV)/bin/mypy

unit: $(VENV)/.installed-dev
	$(PY) -m pytest $(PYTEST_ARGS)

## bench: tools/call over stdio and Streamable HTTP: mcpkit, the official SDK, a floor (not part of test)
bench: $(VENV)/.installed-dev
	$(PY) bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .venv-bench .pytest_cache .mypy_cache .ruff_cache
