# ragway — run `make help` for the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
WHEELHOUSE ?= $(HOME)/.cache/ragway/wheels
PROTOS := $(wildcard proto/ragway/v1/*.proto)

# Thread pools set deliberately: numpy's BLAS pool and onnxruntime/torch each
# start one thread per core and oversubscribe a small machine (INFRA.md).
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*?## "} /^[a-zA-Z_-]+:.*?## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "ragway needs Python 3.11, found " + sys.version.split()[0]' \
	  || { echo "error: set PYTHON=python3.11 (ragway needs Python 3.11)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==25.3
	# A local wheelhouse carries the large wheels (torch and its CUDA libraries,
	# ~3 GB) between runs and clones: files already there are not fetched again.
	# (pip's HTTP cache does not help: the registry here marks responses no-store.)
	$(BIN)/python -m pip download --quiet --dest $(WHEELHOUSE) -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-index --find-links $(WHEELHOUSE) -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

.PHONY: install
install: $(STAMP) ## Create .venv with the pinned dependencies (done by the other targets)

.PHONY: up
up: $(STAMP) ## Start Redis, retriever, generator and gateway on loopback, load the demo KB (ARGS="--port 8080")
	$(BIN)/ragway up $(ARGS)

.PHONY: test
test: $(STAMP) browser ## Run every test: unit, integration on real processes, the page in Chromium
	$(BIN)/python -m pytest

.PHONY: browser
browser: ## Install Debian's Chromium for the browser tests when missing (root + apt)
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (Debian package) for the browser tests"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
	      || echo "warning: could not install chromium; the browser tests will be skipped"; \
	  else echo "note: chromium is not installed; the browser tests will be skipped"; fi; }

.PHONY: test-unit
test-unit: $(STAMP) ## Run the fast unit tests only
	$(BIN)/python -m pytest -m "unit"

.PHONY: bench
bench: $(STAMP) ## End-to-end latency report on a private stack (var/bench/report.md)
	$(BIN)/ragway bench

SCIFACT ?= ../shared/datasets/scifact

.PHONY: bench-retrieval
bench-retrieval: $(STAMP) ## Retrieval quality and latency of every mode on SciFact (validation split)
	$(BIN)/ragway eval retrieval --dataset $(SCIFACT) --split validation

.PHONY: bench-ingest
bench-ingest: $(STAMP) ## Ingestion throughput on SciFact against the embedder's raw throughput (var/bench/ingest.md)
	$(BIN)/python scripts/bench_ingest.py --dataset $(SCIFACT)

.PHONY: lint
lint: $(STAMP) ## ruff (lint + format check) and mypy --strict
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy ragway services tests scripts

.PHONY: fmt
fmt: $(STAMP) ## Format and autofix with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

.PHONY: proto
proto: $(STAMP) ## Regenerate the gRPC stubs in ragway/v1 from proto/
	$(BIN)/python scripts/gen_proto.py

.PHONY: proto-check
proto-check: proto ## Fail when the committed stubs differ from a fresh regeneration
	@git diff --exit-code --stat -- ragway/v1 \
	  || { echo "error: ragway/v1 is stale: run 'make proto' and commit the result"; exit 1; }
	@test -z "$$(git status --porcelain -- ragway/v1)" \
	  || { echo "error: untracked generated files in ragway/v1"; git status --porcelain -- ragway/v1; exit 1; }

.PHONY: openapi
openapi: $(STAMP) ## Write the gateway's OpenAPI spec to docs/openapi.json
	$(BIN)/ragway openapi --output docs/openapi.json

.PHONY: lock
lock: ## Re-resolve requirements.lock from pyproject.toml (needs the registry)
	rm -rf /tmp/ragway-lock && $(PYTHON) -m venv /tmp/ragway-lock
	/tmp/ragway-lock/bin/pip install --quiet -e '.[dev]'
	{ echo '# Every package, pinned: resolved from pyproject.toml ([dev] included) by `make lock`.'; \
	  /tmp/ragway-lock/bin/pip freeze --exclude-editable | grep -v '^-e '; \
	  /tmp/ragway-lock/bin/pip freeze --all | grep '^setuptools=='; } > requirements.lock

.PHONY: clean
clean: ## Remove run data (var/) and caches; keeps .venv
	rm -rf var .pytest_cache .mypy_cache .ruff_cache
