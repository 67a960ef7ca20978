# Strata build, test and benchmark tiers. `make help` lists the targets.
#
# The same targets run on a developer's machine and in CI (.ci/run calls
# `make test` with CI=true). The one difference CI makes: an end-to-end test
# whose external tool (kcat, node, bin/minio, bin/promtool) is missing fails in CI and skips
# elsewhere.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

# Use the installed Go toolchain everywhere, never a downloaded one.
export GOTOOLCHAIN := local

GO        ?= go
MODULE    := github.com/strata-streaming/strata
BIN       := bin
STRATA    := $(BIN)/strata
DATA_DIR  ?= ./data
LISTEN    ?= 127.0.0.1:9092
# `strata version` prints VERSION and COMMIT (the toolchain's VCS stamp
# wins when present; GOFLAGS=-buildvcs=false turns it off) and the Go version.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# Packages under broker/ run with the race detector; the rest without.
RACE_PKGS   := ./broker/...
# Timeouts per `go test` invocation, with room for a loaded machine (a run
# beside other builds took over 12 minutes for e2e/ alone); on an idle
# 2-core machine `make test` takes about 10 minutes in all.
RACE_TIMEOUT  ?= 20m
TEST_TIMEOUT  ?= 20m
E2E_TIMEOUT   ?= 15m
FUZZTIME      ?= 30s
# -count=1: the e2e tests build the binary themselves, which go test's cache
# cannot see, so a cached pass could hide a broker change.
TESTFLAGS     ?= -count=1

.PHONY: help build run test deps e2e bench fuzz verify lint perf clean image package release

help: ## list the targets
	@grep -E '^[a-z0-9]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/strata
	$(GO) build -ldflags '$(LDFLAGS)' -o $(STRATA) ./cmd/strata

run: build ## build, then run one broker on 127.0.0.1:9092 with data in ./data, its schema registry on 127.0.0.1:8081
	$(STRATA) server --listen $(LISTEN) --data-dir $(DATA_DIR) --set schema.registry.enable=true

deps: ## install what the e2e, tiering, console, JDBC and deploy tests need (kcat, node, kafkajs, chromium, the console's npm packages, PostgreSQL, bin/minio, bin/promtool)
	scripts/install-test-deps.sh

# Both test runs always run; the target fails if either did.
test: deps ## vet, race tests on broker/, all other tests (e2e included)
	$(GO) vet ./...
	@status=0; \
	echo "$(GO) test -race -timeout $(RACE_TIMEOUT) $(TESTFLAGS) $(RACE_PKGS)"; \
	$(GO) test -race -timeout $(RACE_TIMEOUT) $(TESTFLAGS) $(RACE_PKGS) || status=1; \
	pkgs=$$($(GO) list ./... | grep -Ev '^$(MODULE)/broker(/|$$)'); \
	echo "$(GO) test -timeout $(TEST_TIMEOUT) $(TESTFLAGS) <every package outside broker/>"; \
	$(GO) test -timeout $(TEST_TIMEOUT) $(TESTFLAGS) $$pkgs || status=1; \
	exit $$status

e2e: deps ## end-to-end tests only (real processes, kcat, kafkajs)
	$(GO) test -timeout $(E2E_TIMEOUT) $(TESTFLAGS) ./e2e/...

bench: ## benchmarks of broker/ (compare runs with benchstat)
	$(GO) test -run='^$$' -bench=. -benchmem ./broker/... ./tiering/ ./streams/...

# Every `func FuzzXxx(*testing.F)` in a _test.go file of the module, each for
# FUZZTIME. Found with grep so new targets join without editing this file.
fuzz: ## run every Fuzz target for FUZZTIME (default 30s) each
	@targets=$$(grep -rlE --include='*_test.go' --exclude-dir=node_modules --exclude-dir=bin --exclude-dir=data \
		'^func Fuzz[A-Za-z0-9_]*\(' . | sort || true); \
	n=0; \
	for file in $$targets; do \
		dir=$$(dirname "$$file"); \
		for name in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$$file"); do \
			echo "fuzz: $$dir $$name for $(FUZZTIME)"; \
			$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "./$${dir#./}"; \
			n=$$((n + 1)); \
		done; \
	done; \
	echo "fuzz: $$n targets done"

verify: ## gofmt clean, go vet, go.mod/go.sum tidy (checked, never rewritten)
	@unformatted=$$(find . -name '*.go' -not -path './bin/*' -not -path '*/node_modules/*' -not -path './data/*' -print0 | xargs -0 -r gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cp go.mod go.sum "$$tmp/"; \
	if ! $(GO) mod tidy -diff > "$$tmp/tidy.diff"; then \
		echo "go mod tidy would change go.mod/go.sum:"; cat "$$tmp/tidy.diff"; exit 1; fi; \
	cmp -s go.mod "$$tmp/go.mod" && cmp -s go.sum "$$tmp/go.sum" || { echo "go.mod/go.sum changed during verify"; exit 1; }; \
	echo "verify: gofmt, vet and go mod tidy clean"

lint: verify ## same as verify

# Release builds: static (no cgo), no local paths, no symbol tables.
RELEASE_LDFLAGS := -s -w $(LDFLAGS)
# File and image timestamps: the commit's time, so one commit builds the same
# image and .deb every time.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH
# The image's and the package's architecture (default: this machine's).
ARCH      ?= $(shell $(GO) env GOARCH)
IMAGE_TAR := $(BIN)/strata-image.tar
# Debian versions start with a digit: v1.2.3 -> 1.2.3, an untagged commit
# abc1234-dirty -> 0.0.0~gitabc1234.dirty (sorts before any release).
PKG_VERSION ?= $(shell echo '$(VERSION)' | sed -E -e 's/^v([0-9])/\1/' -e 't' -e 's/^/0.0.0~git/' | tr - .)
STRATA_UNIT   ?= deploy/systemd/strata.service
STRATA_CONFIG ?= deploy/systemd/server.properties
DIST      := dist
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

# bin/linux-ARCH/strata: the static binary the image and the .deb carry.
.PHONY: $(BIN)/linux-$(ARCH)/strata
$(BIN)/linux-$(ARCH)/strata:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) $(GO) build -trimpath -ldflags '$(RELEASE_LDFLAGS)' -o $@ ./cmd/strata

image: $(BIN)/linux-$(ARCH)/strata ## container image without a Docker engine: bin/strata-image.tar (docker-archive: `docker load -i`)
	$(GO) run ./deploy/docker/ocibuild --binary $< --arch $(ARCH) --version '$(VERSION)' --revision '$(COMMIT)' --out $(IMAGE_TAR)

package: $(BIN)/linux-$(ARCH)/strata ## .deb with /usr/bin/strata, the systemd unit and /etc/strata/server.properties into dist/ (nfpm)
	@for f in $(STRATA_UNIT) $(STRATA_CONFIG); do [ -f "$$f" ] || { \
		echo "package: $$f is missing (deploy/systemd holds the unit and the example configuration; or set STRATA_UNIT= / STRATA_CONFIG=)"; exit 1; }; done
	scripts/install-nfpm.sh
	mkdir -p $(DIST)
	PKG_VERSION='$(PKG_VERSION)' PKG_ARCH=$(ARCH) STRATA_BINARY=$< STRATA_UNIT=$(STRATA_UNIT) STRATA_CONFIG=$(STRATA_CONFIG) \
		$(BIN)/nfpm package --config deploy/nfpm/nfpm.yaml --packager deb --target $(DIST)/

release: ## binaries for linux and darwin (amd64, arm64), SHA256SUMS, the image and the .deb (and the Helm chart with bin/helm) in a fresh dist/
	rm -rf $(DIST)
	$(MAKE) image package
	for platform in $(RELEASE_PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; \
		echo "release: strata-$(VERSION)-$$os-$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(RELEASE_LDFLAGS)' -o $(DIST)/strata-$(VERSION)-$$os-$$arch ./cmd/strata; \
	done
	cp $(IMAGE_TAR) $(DIST)/strata-image-$(VERSION)-linux-$(ARCH).tar
	if [ -x $(BIN)/helm ] && [ -f deploy/helm/strata/Chart.yaml ]; then $(BIN)/helm package deploy/helm/strata --destination $(DIST); \
	else echo "release: no bin/helm or deploy/helm/strata: chart not packaged"; fi
	cd $(DIST) && rm -f SHA256SUMS && sha256sum -- * > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS
	@echo "release: $(DIST)/"; ls -l $(DIST)

perf: build ## one run side by side: strata vs disk, page cache, loopback TCP, NATS JetStream, and the OMB workloads on one node and three (10 minutes; not part of test)
	scripts/perf-compare.sh

clean: ## remove build outputs (bin/, dist/, e2e/kafkajs/node_modules, e2e/iceberg/node_modules); ./data is left alone
	rm -rf $(BIN) $(DIST) e2e/kafkajs/node_modules e2e/iceberg/node_modules
	$(GO) clean -testcache
