# Two commands for a new user:
#   make run    set up a virtual environment and serve MCP over HTTP on 127.0.0.1:8000 (/mcp)
#   make test   set up the same environment and run lint (ruff, mypy) and the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
ARGS ?= --transport http --host 127.0.0.1 --port 8000

.PHONY: run stdio test lint bench load replicas inspector conformance clean

# On `make stdio` stdout is the MCP protocol channel from its first byte, first run included: the
# set-up echoes no command (@) and sends all it prints to stderr. A client running make from
# another directory passes -s (make -s -C /path/to/checkout stdio): make -C prints "Entering
# directory" on stdout itself, before it reads this file.
$(BIN)/.installed: pyproject.toml
	@echo "setting up $(VENV) (first run only)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(BIN)/python -m pip install --quiet --upgrade pip >&2
	@$(BIN)/python -m pip install --quiet -e ".[dev,render]" >&2
	@touch $@

run: $(BIN)/.installed
	$(BIN)/mcp-server-web $(ARGS)

stdio: $(BIN)/.installed
	@exec $(BIN)/mcp-server-web

lint: $(BIN)/.installed
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy src

test: lint
	$(BIN)/python -m pytest

bench: $(BIN)/.installed
	bench/setup-peers
	$(BIN)/python bench/run.py
	$(BIN)/python bench/scaling.py
	$(BIN)/python -m pip install --quiet --group train
	$(BIN)/python bench/blockmodel/build_model.py --cross-validate --out bench/blockmodel/.cache/block_model.json

# The HTTP service under load: 50 clients, 20,000 calls; writes bench/results/load.json.
load: $(BIN)/.installed
	$(BIN)/python bench/load.py

# One replica against two sharing a redis-server, behind haproxy (both from the machine's
# packages: scripts/install-services); writes bench/results/replicas.json (~1.5-2.5 min).
replicas: $(BIN)/.installed
	$(BIN)/python bench/replicas.py

inspector:
	scripts/install-inspector

conformance:
	scripts/install-conformance

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .inspector .conformance/node_modules .clients
