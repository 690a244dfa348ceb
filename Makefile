# The two commands of the quick start: `make serve` and `make test`.
# Each creates the virtual environment in ./.venv on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
PGBOUNCER := /usr/sbin/pgbouncer
CRD_VALIDATOR := tests/deploy/crd/node_modules/.package-lock.json

.PHONY: serve test lint bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --editable '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/python -m service serve

# The dashboard's browser test drives Debian's Chromium (Playwright cannot download its own
# here); the pooler test starts Debian's PgBouncer.
$(CHROMIUM) $(PGBOUNCER):
	@if [ "$$(id -u)" = 0 ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium pgbouncer; \
	else \
		echo "the tests need Debian's chromium and pgbouncer: sudo apt-get install chromium pgbouncer" >&2; \
		exit 1; \
	fi

# The custom resources of deploy/k8s are validated by the checks kubernetes-models compiles from
# their CRDs, an npm package run by Node.js (on the machine, or Debian's when there is none).
$(CRD_VALIDATOR): tests/deploy/crd/package-lock.json
	@if ! command -v npm > /dev/null; then \
		if [ "$$(id -u)" = 0 ]; then \
			DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
		else \
			echo "the manifest tests need Node.js and npm: sudo apt-get install nodejs npm" >&2; \
			exit 1; \
		fi; \
	fi
	npm ci --prefix tests/deploy/crd --no-audit --no-fund --loglevel=error

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

test: lint $(CHROMIUM) $(PGBOUNCER) $(CRD_VALIDATOR)
	$(BIN)/python -m pytest -q

# The performance table of the README (a few minutes); BENCH_ARGS=--pairing adds a million-snapshot pool.
bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)
