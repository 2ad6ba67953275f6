# The two commands: `make run` and `make test` (README.md). Both work from a fresh clone with only
# Python 3.11+; they create .venv and install requirements/local.txt when it changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: run test test-fast test-node test-postgres test-engine-python engine-build lint venv clean

run: $(INSTALLED) engine-build
	$(BIN)/python -m games info
	$(BIN)/python -m scripts.run

# The test tiers (README.md, "Tests"). Each is a list of steps run by scripts/steps.py, which stops
# at the first failure and then prints which steps passed (with their times), which failed and
# which were skipped.
#
# test-fast, before every commit: lint, the import contracts, and every test that starts no
# process, browser or database server: the markers integration, browser, postgres and slow are
# left out (tests/tiers.py says which tests are slow and why; a file whose every test is left out
# is not even imported, tests/whole_modules.py). Every test keeps its full checks (Hypothesis
# counts included): the time goes to the tests themselves. Its times: docs/benchmarks.md.
#
# test, in CI (.ci/run runs exactly this) and before a merge: every check.
# - ruff, the import contracts, the engine build's report, the Node.js starter's own tests;
# - the whole suite on SQLite with the compiled engine, in parallel (pytest-xdist, one test file
#   per worker at a time: each worker process has its own test database, redis-server, ports and
#   Celery workers; the longest files first, tests/tiers.py LONGEST, so no worker has a long tail);
# - the engine suite again on the pure-Python build (ESCOBA_ENGINE=python): the same source run
#   uncompiled, which is what a machine without a C compiler runs and what the compiled run
#   cannot check;
# - on a private PostgreSQL cluster, one pytest run of what only PostgreSQL can check (SQLite
#   serialises every write and ignores row locks): the tests marked postgres (skipped on SQLite:
#   advisory locks, skip_locked, concurrent quota and rating transactions, pg_dump backups, a
#   worker and uvicorn on PostgreSQL) and, run again, the tests marked postgres_too, whose
#   concurrent writers meet real row locks there:
#     tests/leagues/test_rating_concurrency.py  sets recorded at once, one fit of a pool at a time;
#     tests/reliability/test_worker_crashes.py  a worker's threads and redelivered matches' leases;
#     tests/reliability/test_ladder_crashes.py  the worker and beat's tick filling the ladder at once;
#     tests/reliability/test_service_restarts.py (the worker-kill test) recovery beside live runs.
#   The rest of the suite reads and writes the same through the ORM on either database.
PYTEST := $(BIN)/python -m pytest
# TEST_WORKERS: pytest-xdist's worker processes (`auto`: one per core); `make test TEST_WORKERS=3`
# tries more on a machine whose tests mostly wait on other processes.
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
FAST_TESTS := not integration and not browser and not postgres and not slow

test-fast: $(INSTALLED) engine-build
	@$(BIN)/python -m scripts.steps \
		"ruff=$(BIN)/ruff check ." \
		"import contracts=$(BIN)/lint-imports" \
		"fast tests=$(PYTEST) $(XDIST) -m '$(FAST_TESTS)' tests"

test: $(INSTALLED) engine-build
	@$(BIN)/python -m scripts.steps \
		"ruff=$(BIN)/ruff check ." \
		"import contracts=$(BIN)/lint-imports" \
		"engine build=$(BIN)/python -m games info" \
		"Node.js starter=$(MAKE) --no-print-directory test-node" \
		"whole suite, SQLite=$(BIN)/python -m pytest $(XDIST) tests" \
		"engine suite, pure-Python build=$(MAKE) --no-print-directory test-engine-python" \
		"PostgreSQL=$(MAKE) --no-print-directory test-postgres"

# The two tests left out run each build in a process of its own whatever ESCOBA_ENGINE says: the
# whole suite has run them already.
ENGINE_BOTH_BUILDS := tests/engine/test_engine_builds.py::test_both_builds_write_the_same_logs_byte_for_byte \
	tests/engine/test_engine_builds.py::test_the_pure_build_runs_where_cython_is_not_installed

test-engine-python: $(INSTALLED)
	ESCOBA_ENGINE=python $(PYTEST) $(XDIST) tests/engine $(addprefix --deselect ,$(ENGINE_BOTH_BUILDS))

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
	$(PYTEST) $(XDIST) -m "postgres or postgres_too" tests || status=$$?; \
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
