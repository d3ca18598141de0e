# agentd: the two commands of the README's Quickstart are `make run` and `make test`.
GO        ?= go
STATICCHECK_VERSION := v0.8.2
BIN       := bin
FUZZTIME  ?= 30s

.PHONY: run build release image test lint unit interop-deps browser-deps screenshots bench bench-ab fuzz soak clean

# Releases are tagged vMAJOR.MINOR.PATCH (README: Releases). VERSION is the
# tag at HEAD (git describe), COMMIT the revision; both are stamped into
# the binary (internal/buildinfo) and printed by `agentd --version`.
VERSION   ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo v0.1.0-dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST      := dist
IMAGE     ?= ghcr.io/agentd/agentd
# Build tags of every binary agentd ships (build, release, image; read
# by scripts/size.sh, scripts/image.sh and cmd/agentd's TestReleaseBinary).
# grpcnotrace: grpc, linked through a2a-go's v0.3 client, Google's auth
# library and the OTLP exporter though agentd speaks no gRPC, otherwise
# imports golang.org/x/net/trace, whose /debug/requests pages use
# html/template; that turns off the linker's removal of unused methods
# for the whole program, 10 MiB of the binary (docs/size.md).
GOTAGS := grpcnotrace
# -trimpath, no build id, no VCS stamp, no cgo: the same source and Go
# version give the same bytes on any machine.
RELEASE_LDFLAGS := -s -w -buildid= -X github.com/agentd/agentd/internal/buildinfo.version=$(VERSION) -X github.com/agentd/agentd/internal/buildinfo.commit=$(COMMIT)

run: ## run the daemon in the foreground (AGENTD_HOME, default ~/.agentd)
	$(GO) run ./cmd/agentd start

build:
	$(GO) build -tags "$(GOTAGS)" -trimpath -ldflags "-s -w" -o $(BIN)/agentd ./cmd/agentd

release: ## stripped, reproducible binaries for linux and darwin on amd64 and arm64, with SHA256SUMS, in dist/
	rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
	  echo "agentd $(VERSION) $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -tags "$(GOTAGS)" -trimpath -buildvcs=false -ldflags "$(RELEASE_LDFLAGS)" \
	    -o $(DIST)/agentd-$(VERSION)-$$os-$$arch ./cmd/agentd; \
	done
	cd $(DIST) && sha256sum agentd-$(VERSION)-* > SHA256SUMS && cat SHA256SUMS

# The image needs no registry to build: FROM scratch, with the static
# linux binary, the build machine's CA certificates (Debian's
# ca-certificates) and deploy/image/config.toml copied in from a context
# made here (scripts/image.sh, docker or podman). `make test` runs
# scripts/image.sh check: the image built, run, probed and stopped.
image: ## the container image $(IMAGE):$(VERSION) (Dockerfile), for this machine's architecture
	VERSION=$(VERSION) COMMIT=$(COMMIT) IMAGE=$(IMAGE) GO=$(GO) GOTAGS=$(GOTAGS) ./scripts/image.sh build

interop-deps: ## install the pinned Node peers (package-lock.json)
	cd interop && npm ci --no-audit --no-fund --loglevel=error

browser-deps: ## Chromium for the dashboard's browser tests (Debian's chromium package)
	./scripts/chromium.sh

screenshots: interop-deps browser-deps ## rerun the dashboard's browser test, keeping its screenshots in docs/dashboard/
	AGENTD_INTEROP=1 AGENTD_DASHBOARD_SHOTS=$(CURDIR)/docs/dashboard $(GO) test -count=1 -run 'TestDashboardInBrowser|TestPrincipalsInBrowser' ./internal/webui/e2e/

$(BIN)/staticcheck:
	GOBIN=$(CURDIR)/$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(BIN)/staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(BIN)/staticcheck ./...
	@# go.mod must be tidy; go.sum is only reported. Its lines for test-only
	@# dependencies of our dependencies (google/pprof, via modernc.org/sqlite)
	@# come and go with what the module proxy serves on the day (-e tolerates a
	@# refused one): a fresh clone once failed here on a proxy change that
	@# altered nothing we build. A go.sum line the build needs is still enforced,
	@# by every go command's -mod=readonly default (vet and test above fail).
	@out=$$($(GO) mod tidy -e -diff 2>/dev/null); \
	  if printf '%s\n' "$$out" | grep -q '^+++ tidy/go.mod'; then echo "go.mod is not tidy:"; printf '%s\n' "$$out"; exit 1; fi; \
	  if [ -n "$$out" ]; then echo "note: go.sum differs from what the proxy gives tidy today (not an error):"; printf '%s\n' "$$out" | grep -E '^[-+][^-+]' || true; fi

# AGENTD_INTEROP=1 turns every "peer missing" skip into a failure, so CI
# cannot pass by skipping the real-peer tests. scripts/postgres.sh gives the
# PostgreSQL tests a server: the one in AGENTD_TEST_POSTGRES_URL or on
# 127.0.0.1:5432, else a throwaway cluster (installing Debian's postgresql
# when initdb is missing) that the trap stops however the tests end.
test: interop-deps browser-deps lint ## everything CI runs: lint, unit + race + interop tests, short fuzzing
	@set -e; pg=$$(./scripts/postgres.sh); eval "$$pg"; trap './scripts/postgres.sh stop' EXIT; \
	  set -x; \
	  AGENTD_INTEROP=1 $(GO) test -race -timeout 20m ./...; \
	  (cd deploy/check && $(GO) test -count=1 ./...); \
	  AGENTD_INTEROP=1 VERSION=$(VERSION) COMMIT=$(COMMIT) GO=$(GO) GOTAGS=$(GOTAGS) ./scripts/image.sh check; \
	  ./scripts/fuzz.sh 3s

unit: ## fast loop while developing: no lint, no Node peers
	$(GO) test -race ./...

# The bench's scenario 6 needs PostgreSQL: scripts/postgres.sh provides it
# as for `make test`.
bench: build interop-deps ## side-by-side benchmarks; writes docs/bench/
	@set -e; pg=$$(./scripts/postgres.sh); eval "$$pg"; trap './scripts/postgres.sh stop' EXIT; \
	  set -x; $(GO) run ./bench -out docs/bench

# A change to agentd measured against an earlier commit (REF, default
# HEAD: what the working tree changes), both builds in one run.
REF ?= HEAD
bench-ab: interop-deps ## gateway calls/s and CPU per call, this checkout against REF
	$(GO) run ./bench -ab $(REF)

soak: interop-deps ## long reliability runs (load, crash, faults); rewrites docs/reliability.md
	./scripts/soak.sh

fuzz: ## every fuzz target for FUZZTIME (default 30s) each
	./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf $(BIN) $(DIST)
