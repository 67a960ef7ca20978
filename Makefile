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
# Timeouts per `go test` invocation; `make test` as a whole must stay well
# under CI's budget (20 minutes on 2 cores).
RACE_TIMEOUT  ?= 12m
TEST_TIMEOUT  ?= 12m
E2E_TIMEOUT   ?= 8m
FUZZTIME      ?= 30s
# -count=1: the e2e tests build the binary themselves, which go test's cache
# cannot see, so a cached pass could hide a broker change.
TESTFLAGS     ?= -count=1

.PHONY: help build run test deps e2e bench fuzz verify lint perf clean

help: ## list the targets
	@grep -E '^[a-z0-9]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/strata
	$(GO) build -ldflags '$(LDFLAGS)' -o $(STRATA) ./cmd/strata

run: build ## build, then run one broker on 127.0.0.1:9092 with data in ./data
	$(STRATA) server --listen $(LISTEN) --data-dir $(DATA_DIR)

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

perf: build ## compare strata with disk speed and NATS JetStream (minutes; not part of test)
	scripts/perf-compare.sh

clean: ## remove build outputs (bin/, e2e/kafkajs/node_modules); ./data is left alone
	rm -rf $(BIN) e2e/kafkajs/node_modules
	$(GO) clean -testcache
