# `make demo` and `make test` set the project up by themselves on a fresh machine.
VENV ?= .venv
PYTHON ?= python3
STAMP := $(VENV)/.installed
# npm ci writes node_modules/.package-lock.json: the MCP servers of package-lock.json are in.
NODE_STAMP := node_modules/.package-lock.json

.PHONY: setup demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check --upgrade pip
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# The MCP servers that run on Node (@sentry/mcp-server), pinned by package-lock.json.
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

setup: $(STAMP) $(NODE_STAMP)

demo: $(STAMP)
	$(VENV)/bin/incident-bot demo

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

test: lint $(NODE_STAMP)
	$(VENV)/bin/pytest

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/scenarios.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info node_modules
