# The two commands of the quick start: `make serve` and `make test`.
# Each creates the virtual environment in ./.venv on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --editable '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/python -m service serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest -q

# The performance table of the README (a few minutes); BENCH_ARGS=--pairing adds a million-snapshot pool.
bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)
