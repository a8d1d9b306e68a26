# Courier — see README.md. Every target works on a fresh machine with Go;
# the tests need Redis (see DEVELOPERS.md: Docker, REDIS_ADDR or redis-server).

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
BIN      := bin/courier
# golangci-lint is built from the module proxy the first time (a few
# minutes), then cached by the go command.
GOLANGCI := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

.PHONY: help build run test test-short chaos chaos-short fuzz bench image lint fmt clean

help: ## list the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-z-]+:.*## / { printf "  %-11s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## build bin/courier
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/courier

run: build ## run the daemon in dev mode (embedded store; nothing persists)
	$(BIN) dev

test: ## every test, Redis integration tests included, under the race detector; then make chaos-short
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME_TEST) -fuzzminimizetime 200x ./internal/api/
	@$(MAKE) --no-print-directory chaos-short

test-short: ## unit tests only: skips everything that needs Redis
	$(GO) test -short -count=1 ./...

# The chaos suite (internal/chaos) needs redis-server and redis-cli on PATH;
# it builds courier itself. Scenarios marked known failing (issue 12) are
# shown as FAIL but do not fail the short run; the full run fails on them.
chaos: ## the chaos suite, full run (about 8 min): every fault under load, one table of lost and duplicated jobs
	$(GO) run ./cmd/chaos

chaos-short: ## the chaos suite's short run (under 3 min; part of make test and CI)
	$(GO) run ./cmd/chaos -short -allow-known

# make test fuzzes for a count of runs, not a duration: with a duration,
# Go 1.26's fuzz coordinator can fail the target with a bare "context
# deadline exceeded" when -fuzztime ends (golang/go#75804, fixed in 1.27).
# 20000 runs take about 5 s here.
FUZZTIME      ?= 60s
FUZZTIME_TEST ?= 20000x

fuzz: ## fuzz the HTTP API's request decoding for FUZZTIME (default 60s)
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/api/

bench: build ## courier bench against REDIS_ADDR (default 127.0.0.1:6379)
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode throughput --n 200000
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode latency
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode delayed
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode idle
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode api --batch 1000
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode api --batch 100

image: ## container image courier:local without a registry (.ci/image); with one, `docker build .` works too
	bash .ci/image

lint: ## gofmt, go vet, golangci-lint (.golangci.yml: layering, habits, checks)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed: make fmt'; exit 1; }
	$(GO) vet ./...
	$(GO) run $(GOLANGCI) run ./...

fmt: ## gofmt and goimports every Go file
	gofmt -w $$(git ls-files '*.go')
	$(GO) run $(GOLANGCI) fmt ./...

clean: ## remove bin/
	rm -rf bin
