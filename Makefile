# Two commands do everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test install install-dev system-test-deps migrate seed serve db-stop bench bench-quality bench-retrieval clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# torch is pinned (==2.13.0, the CPU build) by the `local` extra; see pyproject.toml.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[local]"
	touch $@

# The Python client (clients/python) is installed with its framework extras (Strands, LangGraph, OpenAI
# Agents): its tests and the server's end-to-end tests of it run in the same suite.
$(VENV)/.installed-dev: pyproject.toml clients/python/pyproject.toml $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ".[local,dev]" -e "clients/python[strands,langgraph,openai-agents]"
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

migrate: install
	$(BIN)/python manage.py migrate --noinput

seed: migrate
	$(BIN)/python manage.py seed_demo

# collectstatic: with DEBUG=false the admin's and the console's pages are served from STATIC_ROOT.
run: seed
	$(BIN)/python manage.py collectstatic --noinput -v0
	$(BIN)/python manage.py prepare_models
	$(BIN)/python manage.py serve

# What the tests run besides Python: Debian's Chromium for the browser tests (Playwright's own browser download
# does not work offline) and redis-server for the scale-out path of live events.
system-test-deps:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	if [ -n "$$missing" ]; then \
		echo "Installing$$missing (apt-get)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# pytest exits 5 when it collects no tests, so an empty run fails here too.
test: install-dev system-test-deps
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

db-stop:
	$(BIN)/python manage.py embedded_db stop

bench: install
	$(BIN)/python bench/search.py $(BENCH_ARGS)

# What the extractor keeps from the corpus in bench/data/extraction, e.g. BENCH_ARGS="--part dev --verbose".
bench-quality: install
	$(BIN)/python bench/extraction_quality.py $(BENCH_ARGS)

# How well search finds the turns that answer LoCoMo's questions, e.g. BENCH_ARGS="--embedders hash --json /tmp/r.json".
bench-retrieval: install
	$(BIN)/python bench/retrieval.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) var/staticfiles
