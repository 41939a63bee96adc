# Parlour: everything a newcomer or CI needs, from a machine with only python3 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install browser postgres redis cluster run test lint typecheck pytest pytest-parallel bench soak clean fuzz docs chaos

install: $(STAMP)

# Modules compiled with mypyc (setup.py lists them): editing one means rebuilding it.
COMPILED := $(shell sed -n 's/^ *"\(src\/parlour\/.*\.py\)",$$/\1/p' setup.py)

# Reinstall only when the project's declared dependencies or its compiled modules change.
$(STAMP): pyproject.toml setup.py $(COMPILED)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: install
	$(BIN)/parlour serve

# lint-imports checks the layers of docs/DESIGN.md (pyproject.toml, [tool.importlinter]).
lint: install
	$(BIN)/ruff check src tests bench examples tools setup.py
	$(BIN)/ruff format --check src tests bench examples tools setup.py
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# The browser tests drive Debian's Chromium (never a downloaded browser build); install it once.
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium; }

# The PostgreSQL store's tests (and bench/store.py) start a throwaway server from Debian's
# binaries (initdb, pg_ctl under /usr/lib/postgresql/*/bin); install them once.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql; }

# The cluster's tests, bench/cluster.py and `make cluster` run Debian's redis-server.
redis:
	@command -v redis-server >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server; }

# NODES nodes (2 by default: make cluster NODES=3) on ports 8080, 8081... sharing Redis and
# PostgreSQL, all on loopback, their data in var/cluster/ (docs/cluster.md); WORKERS=N worker
# processes per node (parlour serve --workers). Ctrl-C stops everything.
NODES ?= 2
WORKERS ?= 1

cluster: install postgres redis
	NODES=$(NODES) WORKERS=$(WORKERS) deploy/local-cluster.sh

# Two workers, a test file each at a time (module fixtures stay with their file): the suite is
# mostly waiting on loopback servers and the browser, so it halves on a 2-core machine. Then the
# tests marked `alone`, whose latency bounds hold for the server under test, not for a machine
# that a second worker keeps busy.
PYTEST_WORKERS ?= 2
# The files holding tests marked `alone` (tests/test_makefile.py checks that none is missing):
# named, so that the second phase collects only them.
ALONE := tests/chaos/test_chaos.py tests/cluster/test_three_nodes.py

pytest: pytest-parallel
	$(BIN)/pytest -q -m "alone and not soak" $(ALONE)

pytest-parallel: install browser postgres redis
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m "not soak and not alone"

# The linters take a core for a few seconds while the parallel phase mostly waits: they run
# beside it (each one's output shown whole once it ends), then the tests marked `alone`.
test: install browser postgres redis
	$(MAKE) --no-print-directory -j3 --output-sync=target lint typecheck pytest-parallel
	$(BIN)/pytest -q -m "alone and not soak" $(ALONE)

bench: install postgres redis
	@set -e; for b in bench/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b; done

# 1,000 games of every protocol against one server; fails if its memory grows (bench/soak.py).
# A 60-game slice of the same code runs in make test (tests/test_soak.py).
soak: install
	$(BIN)/python bench/soak.py --games 1000 --every 100

# The generated references (tests fail while either is stale): the settings from settings.py, the
# /async protocol from its message declarations. Written to a temporary file first, so that a
# failing generator leaves the old file in place.
docs: install
	$(BIN)/python -m parlour.settings_doc > docs/settings.md.tmp && mv docs/settings.md.tmp docs/settings.md
	$(BIN)/python -m parlour.protocols.async_ws.reference.schema > docs/async-protocol.md.tmp \
	  && mv docs/async-protocol.md.tmp docs/async-protocol.md

clean:
	rm -rf $(VENV) build .mypy_cache .pytest_cache .ruff_cache

# The frame fuzzer: 100,000 hostile frames per protocol against a real server, with
# counts per class and outcome. Not part of `make test` (which runs a seeded 600 per protocol).
# Replay a run with: make fuzz FUZZ_ARGS='--seed N'
FUZZ_ARGS ?=
fuzz: install
	$(BIN)/python -m tests.fuzz --frames 100000 $(FUZZ_ARGS)

# A chaos run of the whole cluster (tests/chaos): PostgreSQL, Redis and three nodes, clients
# playing while a seeded nemesis kills, pauses and cuts them; the checker's verdict at the end.
# As root it runs in a network namespace of its own. Replay a run with its seed:
# make chaos SEED=N MINUTES=M. A short run of the same code is part of make test.
SEED ?=
MINUTES ?= 3
chaos: install postgres redis
	$(BIN)/python -m tests.chaos --minutes $(MINUTES) $(if $(SEED),--seed $(SEED))
