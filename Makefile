# The two commands: `make run` and `make test` (README.md). Both work from a fresh clone with only
# Python 3.11+; they create .venv and install requirements/local.txt when it changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: run test lint venv clean

run: $(INSTALLED)
	$(BIN)/python -m scripts.run

test: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest tests

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

venv: $(INSTALLED)

$(INSTALLED): requirements/base.txt requirements/local.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (set PYTHON=...)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements/local.txt
	touch $(INSTALLED)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
