# Every target CI calls too. `make run` and `make test` need nothing installed by hand.
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTHON ?= python3

.PHONY: install run dev test test-unit lint fmt bench reliability services-deps browser-deps clean \
	constraints

# Within constraints.txt: the versions the suite last passed with, not whatever was released since.
$(STAMP): setup.cfg pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	touch $(STAMP)

# Re-pin to the latest releases; run make test (which installs them) before committing the file.
constraints:
	rm -rf .venv-pins
	$(PYTHON) -m venv .venv-pins
	.venv-pins/bin/pip install -q --upgrade pip
	.venv-pins/bin/pip install -q '.[dev]'
	{ sed -n '1,2p' constraints.txt; .venv-pins/bin/pip freeze --exclude-editable \
	  | grep -v -E '^lookout( |=)'; } > constraints.new
	mv constraints.new constraints.txt
	rm -rf .venv-pins

install: $(STAMP)

# redis-server and PostgreSQL's server (any version: see lookout/pgbin.py) for the embedded
# default; as root, the distribution's packages are installed with apt.
APT := DEBIAN_FRONTEND=noninteractive apt-get
services-deps: install
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then $(APT) update -qq && $(APT) install -y -qq redis-server >/dev/null; \
	  else echo "redis-server is missing: sudo apt-get install -y redis-server"; exit 1; fi; }
	@$(BIN)/python -m lookout.pgbin >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then $(APT) update -qq && $(APT) install -y -qq postgresql >/dev/null; \
	  else echo "PostgreSQL's server is missing: sudo apt-get install -y postgresql"; exit 1; fi; }

# Debian's chromium for the browser tests, as root; otherwise they skip, and pytest's last line
# says how many and how to enable them.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || { \
	  $(APT) update -qq && $(APT) install -y -qq chromium >/dev/null; }

# `make run` renders JavaScript pages too: chromium is installed as root like Redis (else the
# verb says how: render always / screenshots answer provider_not_configured with the line).
run: install services-deps browser-deps
	$(BIN)/lookout dev

dev: run

# Throwaway Postgres and Redis are started by tests/conftest.py unless
# LOOKOUT_TEST_DATABASE_URL and LOOKOUT_TEST_REDIS_URL point at running ones.
test: install services-deps browser-deps
	$(BIN)/pytest

test-unit: install
	$(BIN)/pytest tests/unit

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache  # the layering (.importlinter, CONTRIBUTING.md)

fmt: install
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

# Every benchmark under bench/, then BENCHMARKS.md; e.g. BENCH_ARGS='--args "versus.py=--skip-scale"'.
bench: install services-deps
	$(BIN)/python bench/report.py $(BENCH_ARGS)

# Hostile input, load and faults (tests/reliability, ~10 min), then docs/RELIABILITY.md from
# their figures; the report is written even when a test fails, and the exit status is pytest's.
reliability: install services-deps
	rm -rf tests/reliability/output
	$(BIN)/pytest tests/reliability; status=$$?; \
	  $(BIN)/python -m tests.reliability.report && exit $$status

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
