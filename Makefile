# upgradescope: `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

OPA   := go tool opa
REGAL := go tool -modfile=tools/regal/go.mod regal
# Custom packs are tested together with the built-in bundles, as a user runs `opa test`:
# testdata/policies/team-label fires on nearly every input, so a built-in test that lets
# custom findings into what it asserts fails here.
REGO  := policies/rules policies/kb examples/policies testdata/policies/team-label

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# make build stamps the version (the nearest tag, else the commit; -dirty with local changes)
# and the commit into the binary; `go run` says dev. Override either: make build VERSION=v0.3.0
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
BIN     ?= bin/upgradescope
LDFLAGS  = -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: build
build: ## build bin/upgradescope, stamped with the version and commit
	go build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/upgradescope

# Release artefacts go to dist/ (gitignored), every time in them the last commit's time.
DIST_DIR          ?= dist
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_PLATFORMS   ?= linux/amd64 linux/arm64
RELEASE_ENV        = VERSION=$(VERSION) COMMIT=$(COMMIT) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)

.PHONY: dist
dist: ## release builds: linux and darwin × amd64 and arm64 (PLATFORMS=linux/amd64 for one), SHA256SUMS and a CycloneDX SBOM in dist/
	$(RELEASE_ENV) DIST_DIR=$(DIST_DIR) hack/dist.sh

# One archive per platform, each loadable with `docker load -i` or `podman load -i` and tagged
# ghcr.io/upgradescope/upgradescope:$(VERSION); the binary inside is built as make dist builds it.
.PHONY: image
image: ## container image archives (no Docker engine): dist/upgradescope_<version>_linux_<arch>.image.tar
	@mkdir -p $(DIST_DIR)
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	  for p in $(IMAGE_PLATFORMS); do \
	    os=$${p%/*} arch=$${p#*/}; \
	    $(RELEASE_ENV) GOOS=$$os GOARCH=$$arch hack/build-static.sh "$$bin/$$os-$$arch" && \
	    go run ./tools/image -binary "$$bin/$$os-$$arch" -platform $$p \
	      -version $(VERSION) -revision "$(COMMIT)" -source-date-epoch $(SOURCE_DATE_EPOCH) \
	      -out $(DIST_DIR)/upgradescope_$(VERSION)_$${os}_$${arch}.image.tar && \
	    echo "wrote $(DIST_DIR)/upgradescope_$(VERSION)_$${os}_$${arch}.image.tar" || exit 1; \
	  done

.PHONY: test
test: vet go-test race rego-test rego-coverage rego-check rego-fmt regal kb-check registry-check features-check checks-check ## every check CI runs

.PHONY: vet
vet: ## go vet, gofmt and the layer rules (hack/layercheck: who may link OPA, who may import cmd/, methods per server type)
	go vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	go run ./hack/layercheck

.PHONY: go-test
go-test: ## Go tests: inventory, collectors, engine, outputs, CLI; ends with how many tests skipped and why
	@# never cached: integration tests read API servers the cache cannot see; cmd/upgradescope
	@# runs the dashboard in a browser besides serve and the agent, past go test's 10-minute default on a busy machine
	set -o pipefail; go test -count=1 -timeout 30m -json ./... | go run ./hack/testsummary

.PHONY: race
race: ## the race detector over the bundle poller, hot swap (policyset), bundle server, the fleet server and its store, and concurrent inventory parsing
	go test -race -count=1 ./agent ./bundles ./bundles/policyset ./fleet/server/...
	go test -race -count=1 -run TestParseIsSafeForConcurrentUse ./inventory

.PHONY: rego-test
rego-test: ## stock `opa test` on the rule packs with the example and fixture custom packs beside them
	$(OPA) test $(REGO)

.PHONY: rego-coverage
rego-coverage: ## Rego test coverage of policies/, reported; fails under 90%
	@out=$$(mktemp) && trap 'rm -f "$$out"' EXIT && \
	  { $(OPA) test --coverage --threshold 90 policies/rules policies/kb > "$$out" || \
	    { echo "Rego coverage below 90%: $$(grep -o '"coverage": [0-9.]*' "$$out" | tail -1)"; exit 1; }; } && \
	  echo "Rego coverage of policies/: $$(grep -o '"coverage": [0-9.]*' "$$out" | tail -1 | cut -d' ' -f2)%"

.PHONY: rego-check
rego-check: ## stock `opa check --strict`
	$(OPA) check --strict $(REGO)

.PHONY: rego-fmt
rego-fmt: ## `opa fmt` leaves the rule packs unchanged
	$(OPA) fmt --fail -l $(REGO)

.PHONY: regal
regal: ## Regal lint (its own go.mod, tools/regal)
	$(REGAL) lint $(REGO)

.PHONY: kb
kb: ## regenerate the API lifecycle data from k8s.io/api
	go run ./tools/genkb -out policies/kb/upgradescope/kb

.PHONY: kb-check
kb-check: ## fail when the committed knowledge base differs from a fresh generation
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  go run ./tools/genkb -out "$$tmp" && \
	  for d in apis apiindex groups meta; do diff -r "$$tmp/$$d" "policies/kb/upgradescope/kb/$$d" || exit 1; done && \
	  echo "knowledge base is current"

.PHONY: features
features: ## regenerate the feature gate table from the Kubernetes source (tools/genfeatures/sources.json, through the Go module proxy)
	go run ./tools/genfeatures -out policies/kb/upgradescope/kb

.PHONY: features-check
features-check: ## fail when the committed feature gate table differs from a fresh generation
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  go run ./tools/genfeatures -q -out "$$tmp" && \
	  diff -r "$$tmp/featuregates" policies/kb/upgradescope/kb/featuregates && \
	  echo "feature gate table is current"

.PHONY: registry
registry: ## compile kb/registry/*.yaml, kb/registry/behaviours/*.yaml and kb/registry/nodes/ into the bundle's data
	go run ./tools/genregistry -out policies/kb/upgradescope/kb

.PHONY: registry-check
registry-check: ## fail when the compiled add-on and behaviour data differ from kb/registry/
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  go run ./tools/genregistry -out "$$tmp" && \
	  for d in addons addonindex providers behaviours probes nodes; do diff -r "$$tmp/$$d" "policies/kb/upgradescope/kb/$$d" || exit 1; done && \
	  echo "registry data is current"

.PHONY: checks
checks: ## regenerate docs/checks.md, the table of check families, from the built-in packs' METADATA
	go run ./tools/genchecks -out docs/checks.md

.PHONY: checks-check
checks-check: ## fail when docs/checks.md differs from a fresh generation (or a family breaks the convention)
	@tmp=$$(mktemp) && trap 'rm -f "$$tmp"' EXIT && \
	  go run ./tools/genchecks -out "$$tmp" && \
	  { diff -u docs/checks.md "$$tmp" || { echo "docs/checks.md is stale: run make checks"; exit 1; }; } && \
	  echo "docs/checks.md is current"

.PHONY: chart-rbac
chart-rbac: ## regenerate the chart's ClusterRole reads from the built-in bundles (after make kb or make registry); a Go test fails on drift
	go generate ./deploy/chart

.PHONY: kube-install kube-up kube-down
kube-install: ## build etcd and kube-apiserver from source (cached under ~/.cache/upgradescope-kube; ~20 min cold)
	hack/kube-env.sh install

kube-up: ## start a real etcd + kube-apiserver on loopback; `hack/kube-env.sh env` prints its KUBECONFIG
	hack/kube-env.sh start

kube-down: ## stop it and remove its data
	hack/kube-env.sh stop

.PHONY: pg-up pg-down
pg-up: ## start a throwaway PostgreSQL on 127.0.0.1:15432; eval `hack/pg-env.sh env` to point the tests at it
	hack/pg-env.sh install start

pg-down: ## stop it and remove its data
	hack/pg-env.sh stop

.PHONY: bench-live
bench-live: build ## scan a synthetic cluster on a real API server (500 releases, 5,000 flagged objects, 2,000 pods)
	hack/with-kube.sh go run ./hack/benchlive -bin bin/upgradescope

# BENCH_SIZES=2000,20000,100000,500000 adds the 500k corpora (about 1 GiB of disk);
# BENCH_PEER='pluto=/tmp/pluto-bin detect-files -d {dir}' runs another tool interleaved.
BENCH_SIZES ?= 2000,20000,100000
BENCH_PEER ?=

.PHONY: bench
bench: build ## scan the classic and many-images corpora at 2k/20k/100k objects (wall, CPU, RSS); benchmark engine.Evaluate and a kb activation; MCP answers within 4 KB at 100k objects, and their cost; the chart advisor on 200 releases; an audit log read (MB/s) and a webhook batch counted
	go run ./hack/bench -bin bin/upgradescope -dir hack/.bench -shapes classic,many-images -sizes $(BENCH_SIZES) -runs 3 $(if $(BENCH_PEER),-peer '$(BENCH_PEER)')
	go test -run '^$$' -bench 'Evaluate|Activate' -benchmem -count 3 ./engine
	UPGRADESCOPE_MCP_CORPUS_OBJECTS=100000 go test -count=1 -run TestEveryToolsFirstAnswerFitsAtTheWorstShapes ./mcpserver
	go test -run '^$$' -bench MCP -benchmem -count 3 ./mcpserver
	go test -run '^$$' -bench Advise200 -benchtime 3x -count 3 ./charts/advisor
	go test -run '^$$' -bench VersionsFrom5000EntryIndex -benchtime 20x ./charts/repo
	go test -run '^$$' -bench ReadAuditLog -benchmem -count 3 ./collectors/audit
	go test -run '^$$' -bench AuditBatch400 -benchtime 20x -count 3 ./fleet/server

.PHONY: bench-serve
bench-serve: build ## the fleet server: 32 agents pushing 500-namespace inventories, fleet reads of 1,000 clusters, 16 × 20 MiB pushes (SQLite)
	go run ./hack/loadserve -agents 32 -namespaces 500 -targets 1.36,1.37 -duration 60s -readers 1 -read-interval 1s
	go run ./hack/loadserve -seed-clusters 1000 -seed-history 30 -seed-targets 4 -agents 0 -readers 4 -duration 30s
	go run ./hack/loadserve -big 16
	go test -run '^$$' -bench 'IngestCluster500|Fleet' ./fleet/server

# Minimization is off: OPA's goroutines make coverage vary between runs, and the fuzzer then
# spends its time minimizing inputs that are not new (about 1 exec a second instead of 200).
FUZZTIME ?= 60s
FUZZ     := ./kb/probe:FuzzParsePath ./kb/probe:FuzzRender ./kb/probe:FuzzStrictInvalidFollowsKEP4858 ./fleet/push:FuzzSplitEnvelope ./collectors/files:FuzzDecodeFile ./collectors/files:FuzzLineScanRecordsWhatAParseRecords ./collectors/files:FuzzWhatKubectlReadsIsRecorded ./collectors/files:FuzzPreflightReadsWhatAFullParseReads ./collectors/files:FuzzExcludeMatchesAsPathMatch ./inventory:FuzzParse ./inventory:FuzzParseVersionMatchesTheRegexp ./bundles:FuzzRead ./config:FuzzParse ./convert:FuzzConvertNeverPanics ./fix:FuzzPatchReadsAsTheConversion ./fix:FuzzHeadReadsWhatAParseReads ./mcpserver:FuzzClipBoundsWhatJSONWrites ./collectors/audit:FuzzAuditRead ./collectors/audit:FuzzProvider

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (60s): manifests, inventories, bundles, suppression files, conversions, MCP answers' strings, audit logs
	@for t in $(FUZZ); do \
		echo "== $${t%%:*} $${t##*:}"; \
		go test $${t%%:*} -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 0 -parallel 1 || exit 1; \
	done

.PHONY: bench-gitops
bench-gitops: ## read 1,000 Applications, 1,000 HelmReleases and 500 OCIRepositories on a real API server; requests per read
	hack/with-kube.sh go test -run '^$$' -bench GitOpsScale -benchtime 5x ./collectors/gitops
