# `make test` and `make demo` work from a fresh clone with only the package registry reachable.
# GPU users: `make venv TORCH_SPEC="torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128"`
# or any torch build you already have (TORCH_SPEC="" skips the torch step).
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
# The extras `make venv` and `make test` install; `make demo` needs only `train`.
EXTRAS ?= dev
BIN := $(VENV)/bin

.PHONY: venv test test-quick demo bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# One stamp per set of extras makes a second `make test` or `make demo` cheap; it is rebuilt when
# pyproject.toml changes. The demo's set installs in about 1.5 minutes, the tests' in about 2.5.
$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	@if [ -n "$(TORCH_SPEC)" ]; then $(BIN)/python -m pip install -q $(TORCH_SPEC); fi
	$(BIN)/python -m pip install -q -e ".[$*]"
	touch $@

venv: $(VENV)/.installed-$(EXTRAS)

test: venv
	$(BIN)/python -m pytest -q

# The quicker loop: leaves out the real-model tests, the Slurm test and the others marked slow.
test-quick: venv
	$(BIN)/python -m pytest -q -m "not slow and not real_model and not slurm"

# The matched Base-vs-SFT experiment on the synthetic world (scripts/demo.sh; about 12 minutes on 2 cores once .venv exists).
demo: $(VENV)/.installed-train
	PYTHON=$(BIN)/python bash scripts/demo.sh

bench: venv
	$(BIN)/python benchmarks/search.py --corpus ../shared/data/arxiv-cs-2025/papers.jsonl.gz --date-field listed --json benchmarks/results/search.json

clean:
	rm -rf $(VENV) .pytest_cache
