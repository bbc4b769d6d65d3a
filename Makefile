# ontime — see README.md. The two commands: `make dev` and `make test`.
SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := help

GO ?= go

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/ontime.
	$(GO) build -o bin/ontime ./cmd/ontime

.PHONY: kube-binaries
kube-binaries: ## Build the local control plane into ~/.cache/ontime (first time ~15 min).
	@hack/kube-binaries.sh >/dev/null

CONTROLLER_GEN = $(GO) run -modfile hack/tools/controller-gen/go.mod sigs.k8s.io/controller-tools/cmd/controller-gen

.PHONY: generate
generate: ## Regenerate deepcopy code, CRDs, RBAC and webhook manifests from the markers.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=ontime-controller paths=./internal/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./internal/webhook/... output:webhook:artifacts:config=config/webhook

.PHONY: test
test: kube-binaries ## go vet, unit tests (race detector on), envtest integration tests, full differential tests.
	$(GO) vet ./...
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh --print)" $(GO) test -race -short -count=1 ./...
	@echo "==> full-size schedule engine checks (differential vs robfig/cron, DST over every zone)"
	$(GO) test -count=1 -run 'Differential|DST' ./pkg/cron/

.PHONY: dev
dev: ## Run ontime on a local kwok cluster (ontime-dev) with the samples applied.
	@hack/dev.sh up

.PHONY: dev-down
dev-down: ## Stop the controller and delete the local cluster.
	@hack/dev.sh down

.PHONY: bench
bench: ## Schedule-engine benchmarks, ontime next to robfig/cron: the tables in docs/performance.md.
	$(GO) test -run XXX -bench . -benchmem -count 5 ./pkg/cron | tee bench.out
	$(GO) run ./hack/benchreport < bench.out
