# ontime — see README.md. The two commands: `make dev` and `make test`.
SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := help

GO ?= go

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# Tools are cached outside the repository, keyed by version, like the
# control plane (hack/kube-binaries.sh).
ONTIME_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ontime
# Every pinned tool is built with hack/lib.sh's tool_build_flags: no file
# paths, no symbol table, no DWARF (about a tenth of a cold build's CPU).
TOOL_BUILD_FLAGS := -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w"
GOLANGCI_LINT_VERSION := $(shell awk '$$1 == "require" && $$2 == "github.com/golangci/golangci-lint/v2" {print $$3}' hack/tools/golangci-lint/go.mod)
GOLANGCI_LINT := $(ONTIME_CACHE_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

$(GOLANGCI_LINT):
	@echo "==> building golangci-lint $(GOLANGCI_LINT_VERSION) (first time only, about 2 minutes; cached in $(@D))"
	cd hack/tools/golangci-lint && GOBIN=$(@D) $(GO) install $(TOOL_BUILD_FLAGS) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

HELM_VERSION := $(shell awk '$$1 == "require" && $$2 == "helm.sh/helm/v3" {print $$3}' hack/tools/helm/go.mod)
HELM := $(ONTIME_CACHE_DIR)/helm-$(HELM_VERSION)/helm

$(HELM):
	@echo "==> building helm $(HELM_VERSION) (first time only, about 3 minutes; cached in $(@D))"
	cd hack/tools/helm && GOBIN=$(@D) $(GO) install $(TOOL_BUILD_FLAGS) helm.sh/helm/v3/cmd/helm

# Helm 4 beside Helm 3: the real-node test installs and upgrades with both.
HELM4_VERSION := $(shell awk '$$1 == "require" && $$2 == "helm.sh/helm/v4" {print $$3}' hack/tools/helm4/go.mod)
HELM4 := $(ONTIME_CACHE_DIR)/helm-$(HELM4_VERSION)/helm

$(HELM4):
	@echo "==> building helm $(HELM4_VERSION) (first time only, about 3 minutes; cached in $(@D))"
	cd hack/tools/helm4 && GOBIN=$(@D) $(GO) install $(TOOL_BUILD_FLAGS) helm.sh/helm/v4/cmd/helm

CRANE_VERSION := $(shell awk '$$1 == "require" && $$2 == "github.com/google/go-containerregistry" {print $$3}' hack/tools/crane/go.mod)
CRANE := $(ONTIME_CACHE_DIR)/crane-$(CRANE_VERSION)/crane

$(CRANE):
	@echo "==> building crane $(CRANE_VERSION) (first time only; cached in $(@D))"
	cd hack/tools/crane && GOBIN=$(@D) $(GO) install $(TOOL_BUILD_FLAGS) github.com/google/go-containerregistry/cmd/crane

ACTIONLINT_VERSION := $(shell awk '$$1 == "require" && $$2 == "github.com/rhysd/actionlint" {print $$3}' hack/tools/actionlint/go.mod)
ACTIONLINT := $(ONTIME_CACHE_DIR)/actionlint-$(ACTIONLINT_VERSION)/actionlint

$(ACTIONLINT):
	@echo "==> building actionlint $(ACTIONLINT_VERSION) (first time only; cached in $(@D))"
	cd hack/tools/actionlint && GOBIN=$(@D) $(GO) install $(TOOL_BUILD_FLAGS) github.com/rhysd/actionlint/cmd/actionlint

HELM_DOCS_VERSION := $(shell awk '$$1 == "require" && $$2 == "github.com/norwoodj/helm-docs" {print $$3}' hack/tools/helm-docs/go.mod)
HELM_DOCS := $(ONTIME_CACHE_DIR)/helm-docs-$(HELM_DOCS_VERSION)/helm-docs

$(HELM_DOCS):
	@echo "==> building helm-docs $(HELM_DOCS_VERSION) (first time only; cached in $(@D))"
	cd hack/tools/helm-docs && GOBIN=$(@D) $(GO) install $(TOOL_BUILD_FLAGS) github.com/norwoodj/helm-docs/cmd/helm-docs

CRD_REF_DOCS_VERSION := $(shell awk '$$1 == "require" && $$2 == "github.com/elastic/crd-ref-docs" {print $$3}' hack/tools/crd-ref-docs/go.mod)
CRD_REF_DOCS := $(ONTIME_CACHE_DIR)/crd-ref-docs-$(CRD_REF_DOCS_VERSION)/crd-ref-docs

$(CRD_REF_DOCS):
	@echo "==> building crd-ref-docs $(CRD_REF_DOCS_VERSION) (first time only; cached in $(@D))"
	cd hack/tools/crd-ref-docs && GOBIN=$(@D) $(GO) install $(TOOL_BUILD_FLAGS) github.com/elastic/crd-ref-docs

CYCLONEDX_GOMOD_VERSION := $(shell awk '$$1 == "require" && $$2 == "github.com/CycloneDX/cyclonedx-gomod" {print $$3}' hack/tools/cyclonedx-gomod/go.mod)
CYCLONEDX_GOMOD := $(ONTIME_CACHE_DIR)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)/cyclonedx-gomod

$(CYCLONEDX_GOMOD):
	@echo "==> building cyclonedx-gomod $(CYCLONEDX_GOMOD_VERSION) (first time only; cached in $(@D))"
	cd hack/tools/cyclonedx-gomod && GOBIN=$(@D) $(GO) install $(TOOL_BUILD_FLAGS) github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod

.PHONY: build
build: ## Build bin/ontime.
	$(GO) build -o bin/ontime ./cmd/ontime

# The image: built from Go with go-containerregistry (hack/tools/image), no
# container engine. The version defaults to the commit's tag or hash; every
# timestamp in the image is the commit's time, so the same source gives the
# same digest.
IMAGE_DIR ?= dist/image
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_PLATFORMS := linux/amd64 linux/arm64
IMAGE_REVISION = $(shell git rev-parse HEAD 2>/dev/null)
IMAGE_CREATED = $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo 1970-01-01T00:00:00Z)
# The ontime version the binary reports (ontime version, ontime check).
VERSION_VARIABLE := github.com/ontime-dev/ontime/cmd/ontime/app.version
# A static binary with its own zone database; -trimpath and an empty build
# id make it the same wherever it is built.
BINARY_FLAGS = -trimpath -tags timetzdata -ldflags "-s -w -buildid= -X $(VERSION_VARIABLE)=$(VERSION)"
# ontime-wait, which EarlyStart pods copy and run: it reads RFC 3339 times
# with their offsets and needs no zone database.
WAIT_BINARY_FLAGS = -trimpath -ldflags "-s -w -buildid="

.PHONY: compile compile-clusters compile-image generate-tools
compile: compile-clusters compile-image ## Compile ontime and its dependencies as make test will (plain, with the race detector, the image's linux/amd64 and linux/arm64), discarding the output. Cached: seconds.
	$(GO) build -race ./...

# .ci/run builds this beside the control plane, and make test's first step
# builds nothing more before it starts the end-to-end tests.
compile-clusters: ## Compile what make test compiles before it starts its clusters: ontime, and the end-to-end, real-node and chaos tests (discarding the output).
	$(GO) build ./...
	$(GO) test -tags e2e,realnode,chaos -count=1 -run '^$$' ./test/e2e/ ./test/realnode/ ./test/chaos/ >/dev/null

compile-image: ## Compile the image's two binaries for each of its platforms (discarding the output).
	@for platform in $(IMAGE_PLATFORMS); do \
	  CGO_ENABLED=0 GOOS=$${platform%/*} GOARCH=$${platform#*/} $(GO) build $(BINARY_FLAGS) -o /dev/null ./cmd/ontime || exit 1; \
	  CGO_ENABLED=0 GOOS=$${platform%/*} GOARCH=$${platform#*/} $(GO) build $(WAIT_BINARY_FLAGS) -o /dev/null ./cmd/ontime-wait || exit 1; \
	done

# So is this, so that make test's first step, make verify-generated, takes
# seconds on a new machine too.
generate-tools: $(HELM_DOCS) $(CRD_REF_DOCS) ## Build what make generate runs (controller-gen, crd-ref-docs, helm-docs, hack/'s generators, the CLI reference's test), discarding the output.
	$(GO) build -modfile hack/tools/controller-gen/go.mod -o /dev/null sigs.k8s.io/controller-tools/cmd/controller-gen
	$(GO) build ./hack/crd-complete ./hack/chartdoc
	$(GO) test -count=1 -run '^$$' ./cmd/ontime/app/ >/dev/null

.PHONY: image
image: ## Build the controller image for linux/amd64 and linux/arm64 into $(IMAGE_DIR) (OCI layout, a tar of it, its digest): /ontime and EarlyStart's /ontime-wait; no Docker.
	@mkdir -p $(IMAGE_DIR)
	@for platform in $(IMAGE_PLATFORMS); do \
	  echo "==> building ontime and ontime-wait $(VERSION) for $$platform"; \
	  CGO_ENABLED=0 GOOS=$${platform%/*} GOARCH=$${platform#*/} $(GO) build $(BINARY_FLAGS) -o $(IMAGE_DIR)/ontime-$${platform%/*}-$${platform#*/} ./cmd/ontime || exit 1; \
	  CGO_ENABLED=0 GOOS=$${platform%/*} GOARCH=$${platform#*/} $(GO) build $(WAIT_BINARY_FLAGS) -o $(IMAGE_DIR)/ontime-wait-$${platform%/*}-$${platform#*/} ./cmd/ontime-wait || exit 1; \
	done
	@echo "==> assembling the image (hack/tools/image)"
	@cd hack/tools/image && $(GO) run . -out $(abspath $(IMAGE_DIR)) -version $(VERSION) -revision "$(IMAGE_REVISION)" -created $(IMAGE_CREATED) \
	  $(foreach platform,$(IMAGE_PLATFORMS),-binary $(platform)=$(abspath $(IMAGE_DIR))/ontime-$(subst /,-,$(platform)) -wait-binary $(platform)=$(abspath $(IMAGE_DIR))/ontime-wait-$(subst /,-,$(platform)))

# A release: everything a user installs, in $(DIST). make image builds the
# linux binaries the image holds; the CLI binaries are the same builds.
DIST ?= dist
CLI_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
# Archives are reproducible too: sorted, owned by root, dated at the commit.
ARCHIVE = tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=$(IMAGE_CREATED) -cf - -C $(1) $(2) | gzip -n > $(3)

.PHONY: release
release: $(HELM) $(CYCLONEDX_GOMOD) ## Write every release artifact for VERSION=vX.Y.Z and REGISTRY into $(DIST): its notes (its dated section of CHANGELOG.md), install.yaml (image by digest), the image, the chart, CLI binaries, kubectl-ontime and its krew manifest, an SBOM of each binary, SHA256SUMS.
	@[[ "$(VERSION)" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$ ]] || { echo "VERSION=$(VERSION): a release needs a semantic version such as v0.1.0" >&2; exit 1; }
	rm -rf $(DIST) && mkdir -p $(DIST)
	$(GO) run ./hack/releasenotes -version $(VERSION) > $(DIST)/release-notes.md
	$(MAKE) --no-print-directory image VERSION=$(VERSION) IMAGE_DIR=$(DIST)/image
	cp $(DIST)/image/ontime-image.tar $(DIST)/ontime-image-$(VERSION).tar
	cp $(DIST)/image/ontime-wait-linux-* $(DIST)/
	$(MAKE) --no-print-directory install-yaml chart-package VERSION=$(VERSION) DIST=$(DIST) IMAGE_DIR=$(DIST)/image
	@echo "==> CLI binaries and the kubectl plugin"
	@for platform in $(CLI_PLATFORMS); do \
	  os=$${platform%/*} arch=$${platform#*/}; \
	  if [[ -f $(DIST)/image/ontime-$$os-$$arch ]]; then cp $(DIST)/image/ontime-$$os-$$arch $(DIST)/; \
	  else echo "==> building ontime $(VERSION) for $$platform"; \
	    CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(BINARY_FLAGS) -o $(DIST)/ontime-$$os-$$arch ./cmd/ontime || exit 1; fi; \
	  plugin=$(DIST)/plugin-$$os-$$arch; mkdir -p $$plugin; \
	  cp $(DIST)/ontime-$$os-$$arch $$plugin/kubectl-ontime; cp LICENSE $$plugin/; \
	  $(call ARCHIVE,$$plugin,kubectl-ontime LICENSE,$(DIST)/kubectl-ontime-$$os-$$arch.tar.gz); rm -rf $$plugin; \
	done
	$(GO) run ./hack/krew-manifest -version $(VERSION) -dir $(DIST) > $(DIST)/ontime.krew.yaml
	$(MAKE) --no-print-directory sbom VERSION=$(VERSION) DIST=$(DIST)
	cd $(DIST) && sha256sum install.yaml ontime-*.tgz ontime-image-$(VERSION).tar ontime-linux-* ontime-darwin-* ontime-wait-linux-* kubectl-ontime-*.tar.gz ontime.krew.yaml > SHA256SUMS
	@echo "==> $(DIST): image $(IMAGE_REPOSITORY)@$$(cat $(DIST)/image/digest)"; ls $(DIST)

# The binaries make sbom describes: the release's CLI binaries and the
# image's ontime-wait; the image holds its platform's linux ontime and
# ontime-wait.
SBOM_BINARIES ?= $(foreach platform,$(CLI_PLATFORMS),$(DIST)/ontime-$(subst /,-,$(platform))) \
  $(foreach platform,$(IMAGE_PLATFORMS),$(DIST)/ontime-wait-$(subst /,-,$(platform)))

.PHONY: sbom
# Without a timestamp or a random serial number, the same binary gives the
# same SBOM. -licenses reads each module's license from the module cache
# (go mod download); the main module's own is LICENSE, Apache-2.0.
sbom: $(CYCLONEDX_GOMOD) ## Write a CycloneDX SBOM beside each of SBOM_BINARIES (BINARY.cdx.json): its modules, versions, hashes and licenses, from the binary's build information.
	@echo "==> SBOMs (cyclonedx-gomod $(CYCLONEDX_GOMOD_VERSION)) of $(SBOM_BINARIES)"
	@for binary in $(SBOM_BINARIES); do \
	  $(CYCLONEDX_GOMOD) bin -json -noserial -notimestamp -licenses -version $(VERSION) -output $$binary.cdx.json $$binary 2>$$binary.cdx.log || { cat $$binary.cdx.log >&2; exit 1; }; \
	  rm -f $$binary.cdx.log; \
	done

# Where a release is published: the image is $(REGISTRY)/ontime, the chart
# oci://$(REGISTRY)/charts/ontime. install.yaml and the packaged chart name
# the image there, by digest.
REGISTRY ?= ghcr.io/ontime-dev
IMAGE_REPOSITORY = $(REGISTRY)/ontime
CHART_VERSION = $(VERSION:v%=%)
CHART_PACKAGE = $(DIST)/ontime-$(CHART_VERSION).tgz
# The chart to package: another directory only in tests (the real-node
# upgrade publishes a chart whose CRD has one more field).
CHART ?= charts/ontime
# Helm speaks plain HTTP only when told; crane does on its own to loopback.
HELM_PLAIN_HTTP = $(if $(filter 127.0.0.1:% localhost:% [::1]:%,$(REGISTRY)),--plain-http)

.PHONY: install-yaml
install-yaml: $(HELM) ## Write $(DIST)/install.yaml alone: the chart rendered for VERSION with the image of $(IMAGE_DIR) in REGISTRY, by digest.
	@echo "==> install.yaml: the chart rendered with $(IMAGE_REPOSITORY) by digest"
	@mkdir -p $(DIST)
	{ echo "# ontime $(VERSION): kubectl apply --server-side -f install.yaml (docs/install.md)"; \
	  $(HELM) template ontime $(CHART) --kube-version $(CHART_KUBE_VERSION) --namespace ontime-system --include-crds \
	    --set image.repository=$(IMAGE_REPOSITORY) --set image.tag=$(VERSION) --set image.digest=$$(cat $(IMAGE_DIR)/digest) --set namespace.create=true; \
	} > $(DIST)/install.yaml

.PHONY: chart-package
chart-package: $(HELM) ## Write $(DIST)/ontime-X.Y.Z.tgz: the chart for VERSION whose default image is the one of $(IMAGE_DIR) in REGISTRY, by digest.
	@echo "==> the chart $(CHART_VERSION), its image $(IMAGE_REPOSITORY) by digest"
	rm -rf $(DIST)/chart && mkdir -p $(DIST)/chart
	$(HELM) package $(CHART) --version $(CHART_VERSION) --app-version $(VERSION) --destination $(DIST)/chart >/dev/null
	tar -xzf $(DIST)/chart/ontime-$(CHART_VERSION).tgz -C $(DIST)/chart
	@# The packaged values name the release's image, so that helm install
	@# from the registry needs no --set; the repository's stay generic.
	awk -v repository=$(IMAGE_REPOSITORY) -v digest=$$(cat $(IMAGE_DIR)/digest) \
	  '/^[^ #]/ {block = $$1} block == "image:" && /^  repository: / {$$0 = "  repository: " repository; n++} \
	   block == "image:" && /^  digest: / {$$0 = "  digest: " digest; n++} {print} END {exit n != 2}' \
	  $(DIST)/chart/ontime/values.yaml > $(DIST)/chart/values.yaml || { echo "charts/ontime/values.yaml: image.repository or image.digest not found" >&2; exit 1; }
	mv $(DIST)/chart/values.yaml $(DIST)/chart/ontime/values.yaml
	@# Artifact Hub's list of the chart's images: the same image.
	awk -v image=$(IMAGE_REPOSITORY):$(VERSION)@$$(cat $(IMAGE_DIR)/digest) \
	  '/^      image: / {$$0 = "      image: " image; n++} {print} END {exit n != 1}' \
	  $(DIST)/chart/ontime/Chart.yaml > $(DIST)/chart/Chart.yaml || { echo "charts/ontime/Chart.yaml: the artifacthub.io/images entry not found" >&2; exit 1; }
	mv $(DIST)/chart/Chart.yaml $(DIST)/chart/ontime/Chart.yaml
	@# helm package stamps the time into the archive; repacked like the
	@# other archives, the chart is reproducible too.
	$(call ARCHIVE,$(DIST)/chart,ontime,$(CHART_PACKAGE))
	rm -rf $(DIST)/chart

.PHONY: publish
publish: $(HELM) $(CRANE) ## Push what make release wrote for VERSION to REGISTRY: the image (tag VERSION, checked by digest), then the chart as an OCI artifact.
	@[[ -f $(IMAGE_DIR)/digest && -f $(CHART_PACKAGE) && -f $(DIST)/install.yaml ]] || { echo "publish: no $(IMAGE_DIR)/digest, $(CHART_PACKAGE) or $(DIST)/install.yaml: make release VERSION=$(VERSION) REGISTRY=$(REGISTRY) first" >&2; exit 1; }
	@grep -q "image: $(IMAGE_REPOSITORY):$(VERSION)@$$(cat $(IMAGE_DIR)/digest)" $(DIST)/install.yaml || { echo "publish: $(DIST)/install.yaml does not name $(IMAGE_REPOSITORY):$(VERSION)@$$(cat $(IMAGE_DIR)/digest): make release with REGISTRY=$(REGISTRY)" >&2; exit 1; }
	@# Read whole, then searched: grep -q in a pipe would end tar early,
	@# and pipefail would take tar's SIGPIPE for a failure.
	@values=$$(tar -xzOf $(CHART_PACKAGE) ontime/values.yaml) && grep -q "^  digest: $$(cat $(IMAGE_DIR)/digest)$$" <<<"$$values" && \
	  grep -q "^  repository: $(IMAGE_REPOSITORY)$$" <<<"$$values" || { echo "publish: $(CHART_PACKAGE) does not default to $(IMAGE_REPOSITORY)@$$(cat $(IMAGE_DIR)/digest): make release with REGISTRY=$(REGISTRY)" >&2; exit 1; }
	@chart=$$(tar -xzOf $(CHART_PACKAGE) ontime/Chart.yaml) && grep -q "^      image: $(IMAGE_REPOSITORY):$(VERSION)@$$(cat $(IMAGE_DIR)/digest)$$" <<<"$$chart" || { echo "publish: $(CHART_PACKAGE)'s artifacthub.io/images does not name $(IMAGE_REPOSITORY):$(VERSION)@$$(cat $(IMAGE_DIR)/digest)" >&2; exit 1; }
	@echo "==> pushing the image to $(IMAGE_REPOSITORY):$(VERSION)"
	@pushed=$$($(CRANE) push --index $(IMAGE_DIR)/oci $(IMAGE_REPOSITORY):$(VERSION)) && echo "$$pushed" && \
	  [[ $$pushed == "$(IMAGE_REPOSITORY)@$$(cat $(IMAGE_DIR)/digest)" ]] || { echo "publish: the registry holds another digest than $(IMAGE_DIR)/digest" >&2; exit 1; }
	@echo "==> pushing the chart to oci://$(REGISTRY)/charts"
	$(HELM) push $(CHART_PACKAGE) oci://$(REGISTRY)/charts $(HELM_PLAIN_HTTP)

.PHONY: kube-binaries
kube-binaries: ## Build the local control plane into ~/.cache/ontime (first time ~15 min).
	@hack/kube-binaries.sh >/dev/null

.PHONY: node-binaries
node-binaries: kube-binaries ## Build the real node's kubelet and kube-proxy into the same cache (hack/real-node.sh; first time ~3 min).
	@hack/kube-binaries.sh --node >/dev/null

# The second release make test runs the envtest suites against: the
# oldest of make compat's matrix.
COMPAT_OLDEST := $(shell grep -v '^\#' test/compat/versions | head -n 1)

.PHONY: compat-binaries
compat-binaries: ## Build etcd, kube-apiserver and kubectl (envtest's assets) of the oldest release of the version matrix, for make test's second envtest pass (first time ~10 min; make compat builds the rest).
	@ONTIME_KUBE_VERSION=$(COMPAT_OLDEST) hack/kube-binaries.sh --envtest >/dev/null

.PHONY: compat
compat: kube-binaries ## The envtest suites and a kwok end-to-end test on every release of test/compat/versions; writes test/compat/results.tsv, the table of docs/install.md and the chart's kubeVersion (first run builds 3 control planes, ~45 min).
	hack/compat.sh

.PHONY: autoscaler
autoscaler: ## Build Karpenter's kwok provider, the local cluster's node autoscaler (first time ~2 min).
	@hack/karpenter.sh build >/dev/null

CONTROLLER_GEN = $(GO) run -modfile hack/tools/controller-gen/go.mod sigs.k8s.io/controller-tools/cmd/controller-gen

.PHONY: generate
generate: $(HELM_DOCS) $(CRD_REF_DOCS) ## Regenerate deepcopy code, CRDs, RBAC and webhook manifests from the markers.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(GO) run ./hack/crd-complete config/crd/bases/*.yaml
	$(CONTROLLER_GEN) rbac:roleName=controller paths=./internal/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./internal/webhook/... output:webhook:artifacts:config=config/webhook
	@# The references: the API's from the CRD, the CLI's from the commands.
	@mkdir -p docs/reference
	$(CRD_REF_DOCS) --log-level ERROR --source-path ./api/v1alpha1 --config hack/crd-ref-docs/config.yaml --renderer markdown \
		--output-path docs/reference/api.md.new
	{ sed -n '1p' docs/reference/api.md.new; echo; cat hack/crd-ref-docs/header.md; sed '1d' docs/reference/api.md.new; } > docs/reference/api.md
	rm docs/reference/api.md.new
	$(GO) test -count=1 -run '^TestCLIReference$$' ./cmd/ontime/app/ -args -update-reference >/dev/null
	@# docs/architecture.md's files and functions one run enters, measured.
	$(GO) test -count=1 -run '^TestOneRunsMeasuredPath$$' ./test/runpath/ -args -update-path >/dev/null
	@# The chart's values.schema.json and README (helm-docs' values table) from values.yaml.
	$(GO) run ./hack/chartdoc charts/ontime
	$(HELM_DOCS) --log-level warning --chart-search-root charts --template-files README.md.gotmpl --sort-values-order file
	@# make dev runs the controller on the host: the same webhook, called at localhost.
	@{ echo "# Generated by make generate from config/webhook/manifests.yaml: the webhook"; \
	   echo "# of a controller running on the host (make dev), called at localhost."; \
	   awk '/^    service:$$/ {svc=1; next} svc && /^      path: / {print "    url: https://localhost:9443" $$2; svc=0; next} svc {next} \
	        {sub(/name: validating-webhook-configuration/, "name: ontime-validating-webhook-configuration"); \
	         sub(/name: mutating-webhook-configuration/, "name: ontime-mutating-webhook-configuration"); print}' config/webhook/manifests.yaml; \
	 } > config/dev/webhook.yaml
	@sed 's/name: mutating-webhook-configuration/name: ontime-mutating-webhook-configuration/' config/webhook/patches/job-match-conditions.yaml > config/dev/job-match-conditions.yaml
	@sed 's/name: validating-webhook-configuration/name: ontime-validating-webhook-configuration/' config/webhook/patches/cronjob-match-conditions.yaml > config/dev/cronjob-match-conditions.yaml
	@# The chart renders config/'s CRD, RBAC, webhook and Prometheus assets
	@# from these copies (a chart cannot read files outside its directory).
	@mkdir -p charts/ontime/crds charts/ontime/files/prometheus
	@cp config/crd/bases/*.yaml charts/ontime/crds/
	@cp config/rbac/role.yaml config/rbac/aggregated_roles.yaml charts/ontime/files/
	@cp config/webhook/manifests.yaml charts/ontime/files/webhook.yaml
	@cp config/webhook/patches/job-match-conditions.yaml config/webhook/patches/cronjob-match-conditions.yaml charts/ontime/files/
	@cp config/prometheus/rules.yaml config/prometheus/dashboard.json charts/ontime/files/prometheus/

.PHONY: runpath
runpath: ## Measure the files and functions of ontime's that one run's reconcile enters, and fail if docs/architecture.md's list differs (make generate rewrites it).
	$(GO) test -count=1 -v -run '^TestOneRunsMeasuredPath$$' ./test/runpath/

.PHONY: verify-generated
verify-generated: ## Fail if generated code or manifests are out of date.
	@hack/verify-generated.sh

.PHONY: tools
tools: $(GOLANGCI_LINT) $(HELM) $(HELM4) $(CRANE) $(ACTIONLINT) $(CYCLONEDX_GOMOD) $(HELM_DOCS) $(CRD_REF_DOCS) ## Build the pinned golangci-lint, Helm 3 and 4, crane, actionlint, cyclonedx-gomod, helm-docs and crd-ref-docs into the cache.

.PHONY: helm
helm: $(HELM) ## Build the pinned Helm (hack/tools/helm) into the cache and print its path.
	@echo $(HELM)

.PHONY: helm4
helm4: $(HELM4) ## Build the pinned Helm 4 (hack/tools/helm4) into the cache and print its path.
	@echo $(HELM4)

.PHONY: crane
crane: $(CRANE) ## Build the pinned crane (hack/tools/crane) into the cache and print its path.
	@echo $(CRANE)

# Every file in charts/ontime/ci is a case of the chart's values matrix.
CHART_VALUES := $(wildcard charts/ontime/ci/*-values.yaml)
# helm template and lint render for this Kubernetes version (helm's own
# default, 1.20, is below the chart's kubeVersion): the oldest supported,
# the first release of make compat's matrix.
CHART_KUBE_VERSION := $(COMPAT_OLDEST)

.PHONY: chart
chart: $(HELM) $(HELM4) ## helm lint and helm template over the values matrix (charts/ontime/ci), with Helm 3 and Helm 4; the Prometheus rules and dashboard parsed by Prometheus' own packages.
	@for values in $(CHART_VALUES); do \
	  echo "==> helm lint and template: $$values"; \
	  for helm in $(HELM) $(HELM4); do \
	    $$helm lint --strict --quiet --kube-version $(CHART_KUBE_VERSION) charts/ontime -f $$values >/dev/null || exit 1; \
	    $$helm template ontime charts/ontime --kube-version $(CHART_KUBE_VERSION) --namespace ontime-system --include-crds -f $$values >/dev/null || exit 1; \
	  done; \
	done
	@echo "==> values.schema.json refuses a value the chart does not have, and one of the wrong type"
	@for bad in replica=3 podAntiAffinity=sometimes webhook.timeoutSeconds=soon; do \
	  if $(HELM) template ontime charts/ontime --kube-version $(CHART_KUBE_VERSION) --set $$bad >/dev/null 2>&1; then echo "helm template --set $$bad was accepted" >&2; exit 1; fi; \
	done
	@echo "==> hostNetwork with replicas that may share a node is refused"
	@out=$$($(HELM) template ontime charts/ontime --kube-version $(CHART_KUBE_VERSION) --set hostNetwork=true 2>&1 >/dev/null) && { echo "helm template --set hostNetwork=true was accepted" >&2; exit 1; }; \
	case "$$out" in *"set podAntiAffinity: hard"*) ;; *) echo "helm template --set hostNetwork=true was refused, but not for its soft anti-affinity: $$out" >&2; exit 1 ;; esac
	@$(HELM) template ontime charts/ontime --kube-version $(CHART_KUBE_VERSION) --set hostNetwork=true --set replicas=1 >/dev/null
	@$(HELM) template ontime charts/ontime --kube-version $(CHART_KUBE_VERSION) --set controller.logLevel=2 --set resources.limits.cpu=1 --set metrics.dashboard.labels.team=a >/dev/null
	@echo "==> Prometheus rules and dashboard (hack/tools/promcheck)"
	@cd hack/tools/promcheck && $(GO) run . -rules $(abspath config/prometheus/rules.yaml) -dashboard $(abspath config/prometheus/dashboard.json)
	@echo "==> the start objective's burn-rate alerts, evaluated on example series (hack/tools/promcheck's rule tests)"
	@cd hack/tools/promcheck && $(GO) test -count=1 ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) $(ACTIONLINT) ## golangci-lint with .golangci.yml (gofmt, goimports, errorlint, gocyclo, revive, misspell, …); actionlint over .github/workflows.
	$(GOLANGCI_LINT) run ./...
	$(ACTIONLINT) -no-color

.PHONY: unit
unit: vet unit-tests ## The edit-test loop (under 2 minutes warm): go vet, the unit tests, 100 seeds of each interleaving exploration; no API server, no race detector, no e2e, no full-size engine checks.
# The edit loop explores 100 seeds of each interleaving exploration
# (testenv.SeedCount); make integration and make test, CI, explore -short's
# counts (the controllers' 2000, the backfill's and the groups' 300 each).
unit: export ONTIME_EXPLORE_SEEDS := 100
# It links each test binary without the race detector, which would take it
# past 2 minutes; make integration and make test run every unit test again
# with it.
unit: TEST_RACE :=

.PHONY: integration
integration: ## The unit tests and the envtest suites (build tag integration: a real kube-apiserver and etcd per package), as make test runs them (about 6 minutes warm).
	@$(MAKE) --no-print-directory unit-tests TEST_TAGS=integration

.PHONY: vet
vet:
	$(GO) vet -tags e2e,chaos,bench,image,realnode,integration ./...

# make test runs the tests without go vet: lint's govet runs the same
# analyzers.
.PHONY: unit-tests
# The tests' build tags: none for the unit tests; integration adds the
# envtest suites, the tests that start a kube-apiserver.
TEST_TAGS ?=
# The race detector for every package but the interleaving explorations.
TEST_RACE ?= -race
# The interleaving explorations (the controllers', the backfill's, the
# concurrency groups') run one goroutine at a time by design: they run
# without the race detector, which would make their thousands of seeds ten
# times slower, and beside the other packages, whose envtest suites leave a
# core idle while their API servers start (their output follows theirs).
INTERLEAVING := ./internal/controller/interleaving/ ./internal/controller/backfill/ ./internal/controller/concurrencygroup/
INTERLEAVING_LOG := bin/interleaving-test.log
unit-tests: kube-binaries
	@mkdir -p bin
	@KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh --print)" $(GO) test -tags "$(TEST_TAGS)" -short -count=1 -timeout 30m $(INTERLEAVING) >$(INTERLEAVING_LOG) 2>&1 & explored=$$!; \
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh --print)" $(GO) test -tags "$(TEST_TAGS)" $(TEST_RACE) -short -count=1 $$($(GO) list ./... | grep -v -e /internal/controller/interleaving -e /internal/controller/backfill -e /internal/controller/concurrencygroup); tested=$$?; \
	wait $$explored; interleavings=$$?; cat $(INTERLEAVING_LOG); \
	test $$tested -eq 0 && test $$interleavings -eq 0

.PHONY: test
# Where make test's background tests write their exit codes.
BACKGROUND_DIR := bin/test-background
# What make test runs at the lowest CPU priority.
IDLE := nice -n 19
# What the real node's test waits for ([tools], [compat]) runs a little
# above the lowest priority: still far below the timing tests (where one
# of them wants a core, a nice-10 process gets about a tenth of it, a
# nice-19 one a seventieth), but with seven times the share of the
# foreground, which nothing waits for. At the foreground's priority, on a
# new machine, the real node waited minutes for them after the chaos run.
BEFORE_REAL_NODE := nice -n 10
# make test checks the generated files first, then starts the tests that
# mostly wait on the clock in the background, each on a cluster of its
# own, one after the other: the end-to-end tests, the real node's, the
# short chaos run. Each bounds lateness, and none kept its bound beside
# another: the real node's containers measure EarlyStart to 2 s and a
# held start to 6 s, and measured the first 2.4 s beside three busy
# clusters, the second 4.8 s beside the chaos run (2.4 s alone); the
# chaos run, beside the end-to-end tests, measured its skew outside
# outages at 2.06 s (bound 2 s).
# The ones that mostly compute (lint, unit and envtest, chart,
# engine checks) run meanwhile in the foreground at the lowest CPU
# priority: they take only what the clusters leave idle and never make a
# run late; on a cold machine the linters are built there too, at that
# priority (what the real node needs built is [tools]'s). Then the
# image test, which mostly compiles, starts in the background at that
# priority, and the burst test, a timing test on its own API server, runs
# once the end-to-end tests have ended. If a foreground step fails, make
# stops; the background tests finish and clean up on their own.
# lead: Auto against Karpenter is not here: its 24 minutes of waiting on
# the autoscaler were the floor of a warm run (make e2e-lead; the
# learning itself is checked by TestAutoLeadAdapts and, on envtest,
# TestAutoLeadSharedInItsPool).
test: kube-binaries autoscaler ## Everything CI runs: generated files, lint, unit and envtest, the chart and alert rules, full schedule-engine checks, the image and its SBOM, e2e, the real node, a short chaos run.
	@# Before anything reads config/ and charts/: make generate rewrites them.
	@$(MAKE) --no-print-directory verify-generated
	@echo "==> compiling the end-to-end, real-node and chaos tests and the ontime binary once, for the background tests"
	@$(MAKE) --no-print-directory compile-clusters
	@rm -rf $(BACKGROUND_DIR)
	@echo "==> in the background, [e2e] end-to-end on local kwok clusters, side by side: next to native CronJobs, warm-up with Karpenter, EarlyStart under its consolidation, catch-up after 5 minutes down, a concurrency group of ScheduledJobs and CronJobs, and one whose CronJob runs while ontime is down (about 12 minutes)"
	@hack/background.sh start $(BACKGROUND_DIR) e2e $(GO) test -tags e2e -count=1 -parallel 4 -timeout 30m -v ./test/e2e/
	@# Only the real node's test needs these, a quarter of an hour later:
	@# on a new machine they build here, in the CPU the end-to-end tests
	@# leave idle, instead of before them (cached: seconds).
	@echo "==> in the background at a low CPU priority, [tools]: the real node's kubelet and kube-proxy, Helm 3 and 4, crane, the image's binaries (built once, cached)"
	@hack/background.sh start $(BACKGROUND_DIR) tools $(BEFORE_REAL_NODE) $(MAKE) --no-print-directory -j2 node-binaries $(HELM) $(HELM4) $(CRANE) compile-image
	@echo "==> in the background at a low CPU priority, [compat]: the envtest suites once more, on Kubernetes $(COMPAT_OLDEST), the oldest release of the matrix (make compat runs every one); on a new machine its control plane is built first, in the time e2e and chaos leave idle"
	@hack/background.sh start $(BACKGROUND_DIR) compat $(BEFORE_REAL_NODE) hack/compat.sh --envtest-only $(COMPAT_OLDEST)
	@echo "==> in the background once [e2e] has ended, [chaos] short: leader killed every 30 s, kube-apiserver and etcd killed once; 0 duplicated and 0 lost runs (about 5 minutes)"
	@hack/background.sh start $(BACKGROUND_DIR) chaos --after e2e $(GO) test -tags chaos -count=1 -timeout 20m -v -run '^(TestForbidStart|TestForbidOverlaps|TestChaos)$$' ./test/chaos/ -args -n 60 -duration 3m -kill-every 30s -long-down 0
	@echo "==> in the background once [chaos], [compat] and [tools] have ended, [real-node] (kubelet, containerd, runc): published to a registry on loopback and installed from it, into namespaces that enforce the restricted Pod Security Standard: docs/getting-started.md run, Helm with real runs, leader killed, upgraded; install.yaml with ontime check on broken installs; an image the registry lacks (about 7 minutes)"
	@# Not beside [compat]: its etcd writes to disk, which no nice level
	@# holds back, made containerd start EarlyStart containers 3 to 18 s
	@# late beside the real node's measured minutes (2026-11-29). On a new
	@# machine [compat] builds 1.34's etcd, kube-apiserver and kubectl
	@# first (about 11 minutes at nice 10), past e2e's end: chaos goes
	@# before the real node so that the build ends during it. [tools]
	@# compiles its image's binaries before it starts; 40 minutes leaves
	@# room for a slow machine (about 7.5 minutes here).
	@hack/background.sh start $(BACKGROUND_DIR) real-node --after chaos,compat,tools $(GO) test -tags realnode -count=1 -timeout 40m -v ./test/realnode/
	@echo "==> meanwhile, at the lowest CPU priority: lint, unit and envtest, chart"
	$(IDLE) $(MAKE) --no-print-directory lint unit-tests TEST_TAGS=integration
	@hack/background.sh wait $(BACKGROUND_DIR) tools
	$(IDLE) $(MAKE) --no-print-directory chart
	@echo "==> full-size schedule engine checks (differential vs robfig/cron, DST over every zone) and balancer sequences"
	$(IDLE) $(GO) test -count=1 -run 'Differential|DST' ./pkg/cron/
	$(IDLE) $(GO) test -count=1 -run 'RandomSequences' ./internal/spread/
	@echo "==> in the background at the lowest CPU priority, [image]: make image twice, the same digest; user, entrypoint, labels, ontime version inside; make sbom twice, the same SBOM"
	@hack/background.sh start $(BACKGROUND_DIR) image $(IDLE) $(GO) test -tags image -count=1 -timeout 20m -v ./test/image/
	@echo "==> waiting for [e2e]"
	@hack/background.sh wait $(BACKGROUND_DIR) e2e
	@echo "==> timing: the burst test, where its order of events means something (-short skips it)"
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh --print)" $(GO) test -tags integration -count=1 -run '^TestBurstCreatesJobsBeforeStatus$$' ./internal/controller/scheduledjob/
	@echo "==> waiting for [compat], [chaos], [real-node] and [image]"
	@hack/background.sh wait $(BACKGROUND_DIR) compat chaos real-node image

.PHONY: e2e
e2e: kube-binaries autoscaler ## Only the end-to-end tests (kwok clusters, side by side; about 10 minutes).
	$(GO) test -tags e2e -count=1 -parallel 4 -timeout 30m -v ./test/e2e/

.PHONY: e2e-lead
e2e-lead: kube-binaries autoscaler ## lead: Auto against Karpenter whose provisioning delay goes 30s → 60s → 25s, beside a fixed lead (about 24 minutes; LEAD=full: 60s → 120s → 30s, about 50).
	$(GO) test -tags e2e,lead -count=1 -timeout 70m -v -run '^TestAutoLeadAgainstKarpenter$(if $(filter full,$(LEAD)),,Quick)$$' ./test/e2e/

.PHONY: e2e-real-node
e2e-real-node: kube-binaries node-binaries $(HELM) $(HELM4) $(CRANE) ## Only the real-node test: ontime published to a registry on loopback and installed from it as users do, on a kubelet with containerd and runc (root; about 6 minutes).
	$(GO) test -tags realnode -count=1 -timeout 20m -v ./test/realnode/

.PHONY: dev
dev: ## Run ontime on a local kwok cluster (ontime-dev) with the samples applied; IN_CLUSTER=1 runs it from its image on a real node (root); KUEUE=1 also starts Kueue.
	@hack/dev.sh up

.PHONY: dev-down
dev-down: ## Stop the controller, the real node if any, and delete the local cluster.
	@hack/dev.sh down

# The benchmarks on a local cluster are Go tests behind the bench tag
# (test/bench), on the shared framework in test/framework.
BENCH = $(GO) test -tags bench -count=1 -timeout 0 -v

.PHONY: bench
bench: ## Schedule-engine benchmarks, ontime next to robfig/cron: the tables in docs/performance.md.
	$(GO) test -run XXX -bench . -benchmem -count 5 ./pkg/cron | tee bench.out
	$(GO) run ./test/bench/report < bench.out

.PHONY: bench-controller
bench-controller: kube-binaries ## ScheduledJobs vs CronJobs on a kwok cluster (N=100, 1000), then spreading at N=1000 (about an hour).
	$(BENCH) ./test/bench/controller/ -args -n 100,1000
	$(BENCH) ./test/bench/controller/ -args -spread 1000 -periods 1

.PHONY: bench-burst
bench-burst: kube-binaries ## N runs due at one instant (N = 1000, 5000, 10000): the bare-client floor, ontime, and kube-controller-manager's CronJob controller at its defaults and with ontime's limits, each in a fresh cluster of the same settings; then API requests per run at N = 100 in steady state, ontime next to kube-controller-manager (about 90 minutes).
	$(BENCH) ./test/bench/burst/ -args -n 1000,5000,10000
	$(BENCH) ./test/bench/controller/ -args -n 100

.PHONY: bench-spread
bench-spread: kube-binaries ## Spreading only: 1000 ScheduledJobs on */5, H/5 hashed and balanced, and the bare-client floor (about 40 minutes).
	$(BENCH) ./test/bench/controller/ -args -spread 1000 -periods 1

.PHONY: bench-scale
bench-scale: kube-binaries ## Memory, CPU, skew and restart time with 100 and 10,000 ScheduledJobs, kube-controller-manager with as many CronJobs, and the owned-Jobs cache (about 80 minutes).
	$(BENCH) ./test/bench/scale/ -args -n 100,10000
	$(BENCH) ./test/bench/scale/ -args -n 10000 -controllers ontime -others 10000 -ontime-flags '--job-cache=owned --cronjob-warmup=false'
	$(BENCH) ./test/bench/scale/ -args -n 10000 -controllers ontime -others 10000 -ontime-flags '--job-cache=owned --cronjob-warmup=false --crowded-minute-threshold=0'

.PHONY: chaos
chaos: kube-binaries ## Faults for 10 minutes (leader killed every 20 s, kube-apiserver and etcd once, then kube-apiserver 45 s across a minute) under 200 ScheduledJobs: 0 duplicated, 0 lost, skew p99 ≤ 2 s, runs past their deadline missed as CronJob's, the rest within 2 s of the API answering; then 6 minutes of graceful stops just before every other minute: no run over 1 s later than in the minutes between; then 10 minutes of a concurrency group of 5 shared by 50 ScheduledJobs, leader killed every 20 s: never over 5 running, 0 duplicated.
	$(GO) test -tags chaos -count=1 -timeout 40m -v -run '^(TestForbidStart|TestForbidOverlaps|TestChaos)$$' ./test/chaos/ -args -n 200 -duration 10m -kill-every 20s
	$(GO) test -tags chaos -count=1 -timeout 30m -v -run '^TestGracefulHandover$$' ./test/chaos/ -args -n 200 -duration 6m
	$(GO) test -tags chaos -count=1 -timeout 30m -v -run '^TestGroupChaos$$' ./test/chaos/ -args -duration 10m -kill-every 20s

# Go's native fuzzing, one target at a time (go test -fuzz takes one).
FUZZTIME ?= 1m

.PHONY: fuzz
fuzz: ## Each fuzz target for FUZZTIME (default 1m): the schedule parser, every kind's validation, ontime convert's input, the CronJob Jobs' group mutator, every kind's admission handler; make unit runs their seed corpora.
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/cron/
	$(GO) test -run '^$$' -fuzz '^FuzzValidate$$' -fuzztime $(FUZZTIME) ./internal/validation/
	$(GO) test -run '^$$' -fuzz '^FuzzFile$$' -fuzztime $(FUZZTIME) ./internal/convert/
	$(GO) test -run '^$$' -fuzz '^FuzzJobGroupMutator$$' -fuzztime $(FUZZTIME) ./internal/webhook/
	$(GO) test -run '^$$' -fuzz '^FuzzAdmission$$' -fuzztime $(FUZZTIME) ./internal/webhook/

.PHONY: bench-warmup
bench-warmup: kube-binaries autoscaler ## Warm-up against Karpenter (N=20, 100; D=60s; lead 90s): start lateness, nodes, cost (about an hour).
	$(BENCH) ./test/bench/warmup/ -args -n 20,100 -delay 60s -lead 90s
