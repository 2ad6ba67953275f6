# The two commands: `make run` and `make test` (README.md). Both work from a fresh clone with only
# Python 3.11+; they create .venv and install requirements/local.txt when it changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: run test test-node test-postgres test-engine-python engine-build lint venv clean

run: $(INSTALLED) engine-build
	$(BIN)/python -m games info
	$(BIN)/python -m scripts.run

# The whole suite: lint, the import contracts (pyproject.toml), everything on SQLite, then what PostgreSQL proves (concurrent rating commits,
# and the reliability and query-count suites again) against a private PostgreSQL cluster.
# The engine suite runs twice: on the compiled build in the whole suite (when a C compiler made
# one), then on the pure-Python build (test-engine-python).
test: $(INSTALLED) engine-build
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m games info
	$(MAKE) test-node
	$(BIN)/python -m pytest tests
	$(MAKE) test-engine-python
	$(MAKE) test-postgres

test-engine-python: $(INSTALLED)
	ESCOBA_ENGINE=python $(BIN)/python -m pytest tests/engine

# Compile the engine's hot modules with Cython (games/engine/_build.py): a no-op while the build
# matches the sources, and without a C compiler (the engine then runs as pure Python).
engine-build: $(INSTALLED)
	$(BIN)/python -m scripts.engine_build

# The Node.js starter's own tests (node:test, standard library only); .ci/run installs nodejs.
test-node:
	@if command -v node >/dev/null; then node --test starters/node/; \
	else echo "test-node: node is missing, so the Node.js starter's tests were skipped (apt-get install nodejs)"; fi

# Needs the PostgreSQL server binaries (Debian: postgresql-15); .ci/run installs them.
test-postgres: $(INSTALLED)
	@test -x /usr/lib/postgresql/15/bin/initdb || { echo "test-postgres: PostgreSQL 15 server binaries are missing (apt-get install postgresql-15)"; exit 1; }
	export "$$(scripts/postgres.sh start)" && \
	status=0 && \
	$(BIN)/python -m pytest -m postgres tests && \
	$(BIN)/python -m pytest -m "not postgres" tests/reliability tests/performance || status=$$?; \
	scripts/postgres.sh stop; exit $$status

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

venv: $(INSTALLED)

$(INSTALLED): requirements/base.txt requirements/local.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (set PYTHON=...)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements/local.txt
	touch $(INSTALLED)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .import_linter_cache .grimp_cache games/engine/_compiled
