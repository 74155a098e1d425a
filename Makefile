# The two commands a newcomer needs: `make run` and `make test`.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SERVE_STAMP := $(VENV)/.installed-serve
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run reset test test-postgres fuzz chaos lint format clean bench bench-api

# The project with its dev tools (tests, lint, fuzzing, the browser driver).
install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP) $(SERVE_STAMP)

# Only what serving needs.
$(SERVE_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	@touch $(SERVE_STAMP)

run: $(SERVE_STAMP)
	@mkdir -p var
	$(VENV)/bin/finplat migrate
	$(VENV)/bin/finplat demo --docs-url http://$(HOST):$(PORT)/docs
	$(VENV)/bin/finplat serve --host $(HOST) --port $(PORT)

# Start over: drop the embedded database and the demo credentials (var/), keep the venv.
reset:
	rm -rf var

# Runs against the embedded SQLite database unless FINPLAT_TEST_DATABASE_URL names a PostgreSQL
# server (a fresh database is created on it for the run and dropped afterwards). The browser
# tests need Debian's Chromium: installed here when this user may (root or passwordless sudo);
# otherwise one line says how, and those tests skip. The suite runs on TEST_WORKERS pytest-xdist
# workers, each on its own scratch database (much of it waits on clocks and subprocesses, not
# on the CPU); TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 3
test: install
	@.ci/install-chromium || true
	FINPLAT_TEST_DATABASE_URL=$(FINPLAT_TEST_DATABASE_URL) $(PY) -m pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS)

test-postgres: install
	@.ci/install-chromium || true
	FINPLAT_TEST_DATABASE_URL=postgresql+asyncpg://postgres@127.0.0.1:5432/test $(PY) -m pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS)

# The long schema-driven fuzzing profile (many more examples, stateful sequences). Prints its
# seed; replay a failure with `make fuzz FINPLAT_FUZZ_SEED=<seed>`.
fuzz: install
	FINPLAT_FUZZ_PROFILE=long FINPLAT_FUZZ_SEED=$(FINPLAT_FUZZ_SEED) FINPLAT_TEST_DATABASE_URL=$(FINPLAT_TEST_DATABASE_URL) \
		$(PY) -m pytest -q -s tests/fuzz/test_schemathesis.py -k finds_nothing

# Randomised parallel card money with provider faults on PostgreSQL (slow; not in `make test`).
# More seeds: `make chaos FINPLAT_CHAOS_SEEDS=50`; replay one: `FINPLAT_CHAOS_SEED=<n>
# FINPLAT_CHAOS_SEEDS=1`.
chaos: install
	FINPLAT_CHAOS_SEED=$(FINPLAT_CHAOS_SEED) FINPLAT_CHAOS_SEEDS=$(FINPLAT_CHAOS_SEEDS) \
		FINPLAT_TEST_DATABASE_URL=postgresql+asyncpg://postgres@127.0.0.1:5432/test \
		$(PY) -m pytest -q -m slow tests/cards/funding/test_chaos.py

lint: install
	$(VENV)/bin/ruff check src tests migrations bench
	$(VENV)/bin/ruff format --check src tests migrations bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-logo

format: install
	$(VENV)/bin/ruff format src tests migrations bench
	$(VENV)/bin/ruff check --fix src tests migrations bench

# The benchmarks, in one command: first the card top-up benchmark (issue 5): a real server on
# a fresh PostgreSQL database, `spread` and `hot` scenarios and the pgbench yardstick (when
# ../shared/bench is present) measured in interleaved rounds (bench/rounds.py), then the
# ratios; then the whole-API benchmark (`bench-api`).
# BENCH_SECONDS / BENCH_CLIENTS tune the runs; BENCH_ARGS passes more to bench/topups.py
# (e.g. --workers 2), BENCH_API_ARGS to bench/api.py (e.g. --ops topup,unload).
BENCH_SECONDS ?= 20
BENCH_CLIENTS ?= 32
CEILING := ../shared/bench/ceiling.sh
# bench/api.py measures twelve operations, on two databases: 10 s each unless BENCH_SECONDS
# is given (on the command line or in the environment).
BENCH_API_SECONDS := $(if $(filter file,$(origin BENCH_SECONDS)),10,$(BENCH_SECONDS))

bench: install
	@mkdir -p var
	@ceiling=; if [ -x $(CEILING) ]; then ceiling="--ceiling $(CEILING)"; \
		else echo '[bench] $(CEILING) not found: no ceiling figure'; fi; \
	$(PY) bench/topups.py --seconds $(BENCH_SECONDS) --clients $(BENCH_CLIENTS) $$ceiling \
		$(BENCH_ARGS) > var/bench.jsonl; status=$$?; cat var/bench.jsonl; exit $$status
	@$(PY) bench/ratio.py var/bench.jsonl
	@$(MAKE) --no-print-directory bench-api

# The whole-API benchmark (issue 31): every operation on the ordinary request path, each alone,
# on a fresh PostgreSQL database and then on a fresh SQLite file (bench/api.py); one JSON line
# per operation in var/bench-api.jsonl. Fails when an operation failed or a ledger does not
# verify, after both runs.
bench-api: install
	@mkdir -p var
	@$(PY) bench/api.py --seconds $(BENCH_API_SECONDS) --clients $(BENCH_CLIENTS) \
		$(BENCH_API_ARGS) > var/bench-api.jsonl; postgres=$$?; \
	$(PY) bench/api.py --sqlite --seconds $(BENCH_API_SECONDS) --clients $(BENCH_CLIENTS) \
		$(BENCH_API_ARGS) >> var/bench-api.jsonl; sqlite=$$?; \
	cat var/bench-api.jsonl; test $$postgres -eq 0 && test $$sqlite -eq 0

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
