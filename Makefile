# The two commands of the quick start, `make serve` and `make test`, and `make cluster`.
# Each creates the virtual environment in ./.venv on first use: `make serve`, `make cluster` and
# `make bench` install the service with its runtime dependencies only; `make test` and
# `make lint` add the dev extras (tests, linters).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
CHROMIUM := /usr/bin/chromium
PGBOUNCER := /usr/sbin/pgbouncer
CRD_VALIDATOR := tests/deploy/crd/node_modules/.package-lock.json
TS_CLIENT := clients/typescript/node_modules/.package-lock.json
WEB_TOOLS := web/node_modules/.package-lock.json
NGINX := /usr/sbin/nginx
JQ := /usr/bin/jq
CURL := /usr/bin/curl
NPM := $(or $(shell command -v npm),/usr/bin/npm)
CLUSTER_INSTANCES ?= 2

.PHONY: serve cluster test lint bench

# The compiled engine is built from the cryptid sources (setup.py): an edit there rebuilds it.
$(RUNTIME): pyproject.toml setup.py $(wildcard service/games/cryptids/*.py)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --editable .
	$(BIN)/python -m service simulate --version
	touch $(RUNTIME)

# The dev extras of the project just installed, read from its installed metadata: the project
# itself is not built a second time.
$(DEV): $(RUNTIME)
	$(BIN)/python -m pip install --quiet 'cryptid-backend[dev]'
	touch $(DEV)

serve: $(RUNTIME)
	$(BIN)/python -m service serve

# PostgreSQL, PgBouncer, CLUSTER_INSTANCES instances and nginx on 127.0.0.1, until Ctrl-C.
cluster: $(RUNTIME) $(PGBOUNCER) $(NGINX)
	$(BIN)/python -m service.runtime.cluster --instances $(CLUSTER_INSTANCES)

# The dashboard's browser test drives Debian's Chromium (Playwright cannot download its own
# here); the pooler and cluster tests, and `make cluster`, start Debian's PgBouncer and nginx;
# the docs' shell examples, run by the suite as pasted, call curl and jq; npm is below.
# Each program's Debian package has its name.
$(CHROMIUM) $(PGBOUNCER) $(NGINX) $(JQ) $(CURL) $(NPM):
	@if [ "$$(id -u)" = 0 ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(notdir $@); \
	else \
		echo "this needs Debian's $(notdir $@): sudo apt-get install $(notdir $@)" >&2; \
		exit 1; \
	fi

# The custom resources of deploy/k8s are validated by the checks kubernetes-models compiles from
# their CRDs, an npm package run by Node.js; the TypeScript client's tools and test dependencies
# (openapi-typescript, esbuild, tsc, ws) and the web client's build (esbuild, tsc, and the library
# itself, from clients/typescript) are npm packages too. Each is installed from its
# lockfile, with the machine's npm, or Debian's (which brings Node.js) when there is none.
$(CRD_VALIDATOR): tests/deploy/crd/package-lock.json | $(NPM)
	npm ci --prefix tests/deploy/crd --no-audit --no-fund --loglevel=error

$(TS_CLIENT): clients/typescript/package-lock.json | $(NPM)
	npm ci --prefix clients/typescript --no-audit --no-fund --loglevel=error

$(WEB_TOOLS): web/package-lock.json $(TS_CLIENT) | $(NPM)
	npm ci --prefix web --no-audit --no-fund --loglevel=error

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

test: lint $(CHROMIUM) $(PGBOUNCER) $(NGINX) $(JQ) $(CURL) $(CRD_VALIDATOR) $(TS_CLIENT) $(WEB_TOOLS)
	$(BIN)/python -m pytest -q

# The performance table of docs/performance.md (a few minutes); BENCH_ARGS=--pairing adds a million-snapshot pool.
bench: $(RUNTIME)
	$(BIN)/python -m bench $(BENCH_ARGS)
