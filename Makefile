# ragway — run `make help` for the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
WHEELHOUSE ?= $(HOME)/.cache/ragway/wheels
PROTOS := $(wildcard proto/ragway/v1/*.proto)
# Packages installed without their declared dependencies (see the file).
NODEPS := requirements-nodeps.lock
# The 'llama' generator backend (llama-cpp-python, compiled from source) is not
# part of the default install: `make install-llm` (or `ragway up --generator llama`)
# adds it; `make test` needs it for the LLM tests.
LLM_LOCK  := requirements-llm.lock
LLM_STAMP := $(VENV)/.installed-llm

# Thread pools set deliberately: numpy's BLAS pool and onnxruntime/torch each
# start one thread per core and oversubscribe a small machine (INFRA.md).
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*?## "} /^[a-zA-Z_-]+:.*?## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml requirements.lock $(NODEPS)
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "ragway needs Python 3.11, found " + sys.version.split()[0]' \
	  || { echo "error: set PYTHON=python3.11 (ragway needs Python 3.11)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==25.3
	# A local wheelhouse carries the large wheels (torch and its CUDA libraries,
	# ~3 GB) between runs and clones: files already there are not fetched again.
	# (pip's HTTP cache does not help: the registry here marks responses no-store.)
	$(BIN)/python -m pip download --quiet --dest $(WHEELHOUSE) -r requirements.lock
	$(BIN)/python -m pip download --quiet --no-deps --dest $(WHEELHOUSE) -r $(NODEPS)
	$(BIN)/python -m pip install --quiet --no-index --find-links $(WHEELHOUSE) -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-index --no-deps --find-links $(WHEELHOUSE) -r $(NODEPS)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

.PHONY: install
install: $(STAMP) ## Create .venv with the pinned dependencies, no compiling (done by the other targets)

# llama-cpp-python comes as source only: compiled once per wheelhouse (C++, ~11 min
# on 2 cores) for baseline x86-64 (AVX2/FMA/F16C, no AVX-512/AMX), never for this
# CPU only, into $(WHEELHOUSE)/<flavour>/; later installs take that wheel. Then a
# smoke check decodes a few tokens (ragway_tools/llm_build.py has the flags).
$(LLM_STAMP): $(STAMP) $(LLM_LOCK) ragway_tools/llm_build.py
	WHEELHOUSE=$(WHEELHOUSE) $(BIN)/python -m ragway_tools.llm_build install
	touch $(LLM_STAMP)

.PHONY: install-llm
install-llm: $(LLM_STAMP) ## Add the 'llama' generator backend: compiles llama.cpp once (~11 min), smoke-checks it

.PHONY: up
up: $(STAMP) ## Start Redis, retriever, generator, gateway, ingest API and worker on loopback, load the demo KB (ARGS="--port 8080")
	$(BIN)/ragway up $(ARGS)

.PHONY: test
test: $(LLM_STAMP) browser ## Run every test: unit, integration on real processes (LLM included), the page in Chromium
	RAGWAY_TEST_REQUIRE_LLM=1 RAGWAY_TEST_REQUIRE_SCHEMATHESIS=1 $(BIN)/python -m pytest

.PHONY: attack
attack: $(STAMP) ## The attack suite alone (~4 min, part of make test): tenant probes (var/attacks/report.json), schemathesis
	RAGWAY_TEST_REQUIRE_SCHEMATHESIS=1 $(BIN)/python -m pytest -rA -s \
	  tests/integration/test_attacks.py tests/integration/test_schemathesis.py

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
bench: $(STAMP) ## End-to-end latency report on a private stack (var/bench/report.md), then bench-tracing
	$(BIN)/ragway bench
	$(BIN)/ragway bench-tracing $(TRACING_ARGS)

.PHONY: bench-tracing
bench-tracing: $(STAMP) ## Tracing on vs off, same closed-loop /v1/ask load, same run (~3 min): var/bench/tracing.md
	$(BIN)/ragway bench-tracing $(TRACING_ARGS)

.PHONY: trace-report
trace-report: $(STAMP) ## One webhook and one /v1/ask on a private traced stack (~2 min): span trees and every /metrics in var/observability/report.md
	$(BIN)/ragway trace-report $(ARGS)

.PHONY: loadtest
loadtest: $(STAMP) ## Load with injected faults (~2 min) and the invariant checks: var/loadtest/short.md
	$(BIN)/python -m loadtests loadtests/scenarios/short.yaml --output var/loadtest $(ARGS)

.PHONY: canary-drill
canary-drill: $(STAMP) ## Planted regressions rolled back, a good candidate stepped to promotion, a shadow (~5 min): var/canary-drill/report.md
	$(BIN)/python -m loadtests.canary_drill --output var/canary-drill $(ARGS)

SCIFACT  ?= ../shared/datasets/scifact
# The newest SciFact-trained reranker artifact, if any (make train-reranker writes one);
# adapted ones (reranker-<tenant>-…, ragway train reranker --from-folder) are not it.
RERANKER ?= $(lastword $(sort $(wildcard var/models/reranker-[0-9]*)))

.PHONY: train-reranker
train-reranker: $(STAMP) ## Fine-tune the cross-encoder on SciFact's train split (var/models/)
	OMP_NUM_THREADS=$$(nproc) $(BIN)/ragway train reranker --dataset $(SCIFACT)

.PHONY: bench-rerank
bench-rerank: $(STAMP) ## Rerank stage p50/p95 at depths 5/10/20, fp32 baseline vs int8/batching/clipping, same run (6-12 min): var/bench/rerank/report.md
	$(BIN)/ragway eval rerank-bench $(ARGS)

.PHONY: bench-capacity
bench-capacity: $(STAMP) ## Runs/s at 50 streams (with and without think time), 2,000 streams on one slow run, 10,000 held open, same-run baselines: var/bench/capacity/report.md; then ingestion vs a plain encoder (var/bench/capacity/ingest.md)
	$(BIN)/python -m loadtests.capacity --output var/bench/capacity $(ARGS)
	$(BIN)/python scripts/bench_ingest.py --dataset $(SCIFACT) --output var/bench/capacity $(INGEST_ARGS)

# py-spy is a development tool, not in requirements.lock: installed here, into the venv.
PY_SPY_VERSION := 0.4.3

.PHONY: profile
profile: $(STAMP) ## py-spy on gateway, retriever and generator under 50 closed-loop streams: var/profile/summary.md
	$(BIN)/python -m pip install -q py-spy==$(PY_SPY_VERSION)
	$(BIN)/python -m loadtests.profile --output var/profile --py-spy $(BIN)/py-spy $(ARGS)

.PHONY: bench-retrieval
bench-retrieval: $(STAMP) ## SciFact validation: every mode, + the trained reranker (trains one if none)
	@if [ -z "$(RERANKER)" ]; then $(MAKE) --no-print-directory train-reranker; fi
	r="$(RERANKER)"; [ -n "$$r" ] || r=$$(ls -d var/models/reranker-[0-9]* | sort | tail -n 1); \
	$(BIN)/ragway eval retrieval --dataset $(SCIFACT) --split validation --reranker "$$r"

.PHONY: train-answerability
train-answerability: $(STAMP) ## Refit the refusal decision on the tuning QA sets (services/generator/answerability.json)
	$(BIN)/ragway train answerability

.PHONY: train-unit-ranker
train-unit-ranker: $(STAMP) ## Refit which unit answers each question part on the tuning QA sets (services/generator/unit_ranker.json)
	$(BIN)/ragway train unit-ranker

# The help-centre fixtures under eval/ whose tuning and held-out parts eval-answers and
# eval-gate run through the API (the gate's reports: var/eval/gate/<set>-<part>/).
ANSWER_FIXTURES := \
  helpcentre supportdesk servicehub homecart hostclub harbourpad \
  lineside fernhill kestrel tidewater saltmarsh marlowe \
  ashgrove copperleaf juniper orchard wrenfield quayside \
  pinecrest bramble thornbury kingsmere seabright galloway \
  ravensworth ambleside holloway dunmore westcombe lochinver \
  redcliffe oakhampton

.PHONY: eval-answers
eval-answers: $(STAMP) ## The demo and every help-centre fixture's QA set through the API (tuning and held-out parts)
	$(BIN)/ragway eval answers --qa eval/demo-qa.yaml
	$(BIN)/ragway eval answers --qa eval/demo-qa-heldout.yaml
	set -e; for set in $(ANSWER_FIXTURES); do for part in tuning heldout; do \
	  $(BIN)/ragway eval answers --qa eval/$$set/qa-$$part.yaml; \
	done; done

.PHONY: eval-gate
eval-gate: $(STAMP) ## What CI blocks on: demo and help-centre answers + fixture retrieval, gated
	$(BIN)/ragway eval answers --qa eval/demo-qa.yaml --output var/eval/gate/answers
	$(BIN)/ragway eval answers --qa eval/demo-qa-heldout.yaml --output var/eval/gate/answers-heldout
	set -e; for set in $(ANSWER_FIXTURES); do for part in tuning heldout; do \
	  $(BIN)/ragway eval answers --qa eval/$$set/qa-$$part.yaml \
	    --output var/eval/gate/$$set-$$part; \
	done; done
	$(BIN)/ragway eval retrieval --dataset tests/fixtures/beir-tiny --split all \
	  --output var/eval/gate/retrieval
	$(BIN)/ragway eval gate --config eval/gates.yaml

OPENSEARCH_NODE := deploy/opensearch-test-node
OPENSEARCH_MAIN := $(OPENSEARCH_NODE)/target/classes/org/ragway/opensearch/TestNode.class

$(OPENSEARCH_MAIN): $(OPENSEARCH_NODE)/pom.xml $(wildcard $(OPENSEARCH_NODE)/src/main/java/org/ragway/opensearch/*.java)
	cd $(OPENSEARCH_NODE) && mvn -B -q compile dependency:copy-dependencies
	touch $@

.PHONY: opensearch-node
opensearch-node: $(OPENSEARCH_MAIN) ## Build the OpenSearch 2.19 test node (Java 17 + Maven; jars cached in ~/.m2)

.PHONY: opensearch-up
opensearch-up: $(STAMP) $(OPENSEARCH_MAIN) ## Run the OpenSearch test node on 127.0.0.1:9200 until Ctrl-C (ARGS="--port 9201")
	$(BIN)/ragway opensearch-node $(ARGS)

.PHONY: test-backends
test-backends: $(STAMP) $(OPENSEARCH_MAIN) ## The backend suite (OpenSearch node, qdrant-client, congruence)
	RAGWAY_TEST_REQUIRE_OPENSEARCH=1 $(BIN)/python -m pytest tests/integration/backends

KUSTOMIZE ?= $(shell command -v kustomize || echo $(HOME)/go/bin/kustomize)

.PHONY: deploy-check
deploy-check: $(STAMP) ## Validate docker-compose.yml (docker compose config) and the k8s overlays (schemas, the dev overlay's Secrets)
	@test -x $(KUSTOMIZE) || { echo "installing kustomize v5.7.1 from the Go module proxy"; \
	  go install sigs.k8s.io/kustomize/kustomize/v5@v5.7.1; }
	@docker compose version >/dev/null 2>&1 || { echo "building the docker compose v2.35.1 plugin from the Go module proxy"; \
	  rm -rf /tmp/ragway-compose && go mod download github.com/docker/compose/v2@v2.35.1 && \
	  cp -r "$$(go env GOMODCACHE)/github.com/docker/compose/v2@v2.35.1" /tmp/ragway-compose && \
	  chmod -R u+w /tmp/ragway-compose && mkdir -p $(HOME)/.docker/cli-plugins && \
	  (cd /tmp/ragway-compose && go build -o $(HOME)/.docker/cli-plugins/docker-compose ./cmd); }
	@# The dev overlay generates its Secrets from these dev-only files (git-ignored).
	$(BIN)/python scripts/dev_secrets.py
	$(BIN)/python scripts/validate_deploy.py --kustomize $(KUSTOMIZE)

.PHONY: dev-secrets
dev-secrets: $(STAMP) ## Random dev-only secrets for deploy/k8s/overlays/dev (git-ignored; kept when present)
	$(BIN)/python scripts/dev_secrets.py

.PHONY: bench-ingest
bench-ingest: $(STAMP) ## Bulk build and webhooks on SciFact against a plain sentence-transformers encode, one run (var/bench/ingest/ingest.md; INGEST_ARGS="--limit 500" for a quick one)
	$(BIN)/python scripts/bench_ingest.py --dataset $(SCIFACT) $(INGEST_ARGS)

.PHONY: bench-live-writes
bench-live-writes: $(STAMP) ## Searches beside back-to-back live writes, the writes on one thread vs widened while quiet (var/bench/live-writes/live-writes.md)
	$(BIN)/python scripts/bench_live_writes.py --dataset $(SCIFACT) $(LIVE_WRITES_ARGS)

.PHONY: lint
lint: $(STAMP) ## ruff (lint + format check), mypy --strict and the import layers (lint-imports)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy ragway ragway_tools services tests scripts loadtests
	# Layers and service independence: the contracts are in pyproject.toml.
	$(BIN)/lint-imports

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
lock: ## Re-resolve requirements.lock + requirements-llm.lock from pyproject.toml (needs the registry)
	rm -rf /tmp/ragway-lock && $(PYTHON) -m venv /tmp/ragway-lock
	/tmp/ragway-lock/bin/pip install --quiet -e '.[dev,llm,console]'
	# One resolution of [dev,llm,console], split: the llm extra's own packages go to $(LLM_LOCK).
	{ /tmp/ragway-lock/bin/pip freeze --exclude-editable | grep -v '^-e '; \
	  /tmp/ragway-lock/bin/pip freeze --all | grep '^setuptools=='; } > /tmp/ragway-lock/frozen.txt
	/tmp/ragway-lock/bin/python -m ragway_tools.llm_build split-lock /tmp/ragway-lock/frozen.txt

.PHONY: clean
clean: ## Remove run data (var/) and caches; keeps .venv
	rm -rf var .pytest_cache .mypy_cache .ruff_cache
