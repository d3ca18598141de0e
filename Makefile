# agentd: the two commands of the README's Quickstart are `make run` and `make test`.
GO        ?= go
STATICCHECK_VERSION := v0.8.2
BIN       := bin
FUZZTIME  ?= 30s

.PHONY: run build test lint unit interop-deps bench fuzz soak clean

run: ## run the daemon in the foreground (AGENTD_HOME, default ~/.agentd)
	$(GO) run ./cmd/agentd start

build:
	$(GO) build -trimpath -o $(BIN)/agentd ./cmd/agentd

interop-deps: ## install the pinned Node peers (package-lock.json)
	cd interop && npm ci --no-audit --no-fund --loglevel=error

$(BIN)/staticcheck:
	GOBIN=$(CURDIR)/$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(BIN)/staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(BIN)/staticcheck ./...
	@# -e: the module proxy refuses one test-only dependency of modernc.org/sqlite (google/pprof), which tidy would otherwise need.
	$(GO) mod tidy -e -diff

# AGENTD_INTEROP=1 turns every "peer missing" skip into a failure, so CI
# cannot pass by skipping the real-peer tests.
test: interop-deps lint ## everything CI runs: lint, unit + race + interop tests, short fuzzing
	AGENTD_INTEROP=1 $(GO) test -race -timeout 20m ./...
	./scripts/fuzz.sh 3s

unit: ## fast loop while developing: no lint, no Node peers
	$(GO) test -race ./...

bench: build interop-deps ## side-by-side benchmarks; writes docs/bench/
	$(GO) run ./bench -out docs/bench

soak: interop-deps ## long reliability runs (load, crash, faults); rewrites docs/reliability.md
	./scripts/soak.sh

fuzz: ## every fuzz target for FUZZTIME (default 30s) each
	./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf $(BIN)
