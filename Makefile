# Courier — see README.md. Every target works on a fresh machine with Go.
# make test installs the rest it needs first (make setup, .ci/setup:
# redis-server and redis-cli, promtool, Chromium, gcc for the race
# detector; with apt-get, as root) or names what is missing and how to get
# it (DEVELOPERS.md, "Tests and Redis").

GO       ?= go
# The repository holds five Go modules (DEVELOPERS.md, "Modules"): the
# library users import (.), the daemon and its tools (cmd), the test kit
# users import in their tests (worker/workertest, with the embedded store),
# the library's tests that need what users must not inherit
# (worker/internal/testmod), and the asynq adapter (asynqcompat), which
# alone requires asynq.
MODULES  := . cmd worker/workertest worker/internal/testmod asynqcompat
# each runs its argument in every module: $(call each,$(GO) vet ./...)
each      = set -e; for m in $(MODULES); do echo "[$$m] $(1)"; (cd $$m && $(1)); done
# The release number is written once, worker.Version (worker/version.go);
# the build stamps the revision beside it: courier version prints
# "courier 0.1.0 (a448b88) go1.26.8 linux/amd64".
REVISION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.revision=$(REVISION)
# grpcnotrace: gRPC (the OTLP exporter's transport) leaves out
# golang.org/x/net/trace, which registers /debug/requests and /debug/events
# on http.DefaultServeMux (never served by courier) and weighs 130 KB.
BUILDTAGS := grpcnotrace
BIN      := bin/courier
# golangci-lint is built from the module proxy the first time (a few
# minutes), then cached by the go command.
GOLANGCI := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
# gosec, the security analyser, likewise from the module proxy.
GOSEC    := github.com/securego/gosec/v2/cmd/gosec@v2.30.0
# What gosec leaves out, and why (the rest of its rules apply to every
# package that goes into the courier binary or the library):
# - G104 (unchecked errors): errcheck, in golangci-lint, owns that rule; the
#   errors it lets pass are ignored on purpose (a response body's Close).
# - internal/testkit, cmd/internal/chaos, cmd/chaos: test infrastructure, never
#   in the binary or the library; it starts the redis-server and courier
#   processes it builds (G204), writes and reads its own temporary files
#   (G301, G302, G304) and draws random loads (G404).
# - _test.go files (gosec's default): the same reasons.
# A finding that is the intended behaviour carries "#nosec Gxxx -- why" at
# its line.
GOSEC_FLAGS := -quiet -exclude=G104 -exclude-dir=internal/testkit -exclude-dir=cmd/internal/chaos -exclude-dir=chaos

.PHONY: help setup build run test test-short chaos chaos-short fuzz bench image lint gosec fmt clean screenshots

help: ## list the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-z-]+:.*## / { printf "  %-11s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## build bin/courier
	cd cmd && CGO_ENABLED=0 $(GO) build -trimpath -tags $(BUILDTAGS) -ldflags '$(LDFLAGS)' -o ../$(BIN) ./courier

run: build ## run the daemon in dev mode (embedded store; nothing persists)
	$(BIN) dev

# When .ci/setup cannot install what is missing (not root, no apt-get),
# make stops before any recipe runs, with the one line that says what is
# missing and the command that provides it.
setup_problem = $(shell bash .ci/setup --why-not)

setup: ## install what make test needs when missing (.ci/setup: Redis, promtool, Chromium, gcc; apt-get as root), else say what
	$(if $(setup_problem),$(error $(setup_problem)))
	@bash .ci/setup

test: setup ## every test, Redis integration tests included, under the race detector; then make chaos-short
	@$(call each,$(GO) vet ./...)
	@$(call each,$(GO) test -race -count=1 -timeout 20m ./...)
	cd cmd && $(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME_TEST) -fuzzminimizetime 200x ./internal/api/
	@$(MAKE) --no-print-directory chaos-short

test-short: ## unit tests only: skips everything that needs Redis (needs nothing but Go)
	@$(call each,$(GO) test -short -count=1 ./...)

# The chaos suite (cmd/internal/chaos) needs redis-server and redis-cli on PATH;
# it builds courier itself. Scenarios marked known failing (issue 12) are
# shown as FAIL but do not fail the short run; the full run fails on them.
# The composition model (worker/model_test.go) runs 2 seeds of 60 steps on
# single Redis and on a Cluster in make test; make chaos runs its long run:
# 50 seeds of 200 steps on each (about 20 minutes here).
MODEL_SEEDS ?= 50
MODEL_STEPS ?= 200

chaos: setup ## the chaos suite, full run (about 8 min), then the composition model's long run (about 20 min)
	cd cmd && $(GO) run ./chaos
	COURIER_MODEL_SEEDS=$(MODEL_SEEDS) COURIER_MODEL_STEPS=$(MODEL_STEPS) $(GO) test -count=1 -timeout 120m -run '^TestCompositionModel$$' ./worker/

chaos-short: ## the chaos suite's short run (under 3 min; part of make test and CI)
	cd cmd && $(GO) run ./chaos -short -allow-known

# make test fuzzes for a count of runs, not a duration: with a duration,
# Go 1.26's fuzz coordinator can fail the target with a bare "context
# deadline exceeded" when -fuzztime ends (golang/go#75804, fixed in 1.27).
# 20000 runs take about 5 s here.
FUZZTIME      ?= 60s
FUZZTIME_TEST ?= 20000x

# The browser tests of the web UI (cmd/courier/ui_test.go) write a
# screenshot of each page to docs/ when COURIER_UI_SCREENSHOTS names it;
# they need Redis (as make test) and Chromium (Debian's chromium package).
screenshots: setup ## regenerate the web UI's screenshots in docs/ (docs/web-ui.md) with headless Chromium
	@mkdir -p docs
	cd cmd && COURIER_UI_SCREENSHOTS=$(CURDIR)/docs $(GO) test -count=1 -run '^TestUIInBrowser$$' ./courier/

fuzz: ## fuzz the HTTP API's request decoding for FUZZTIME (default 60s)
	cd cmd && $(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/api/

bench: build ## courier bench against REDIS_ADDR (default 127.0.0.1:6379)
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode throughput --n 200000
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode latency
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode delayed
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode idle
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode api --batch 1000
	$(BIN) bench --redis $${REDIS_ADDR:-127.0.0.1:6379} --mode api --batch 100

image: ## container image courier:local without a registry (.ci/image); with one, `docker build .` works too
	bash .ci/image

lint: ## gofmt, go vet, golangci-lint (.golangci.yml: layering, habits, checks), gosec
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed: make fmt'; exit 1; }
	@$(call each,$(GO) vet ./...)
	@$(call each,$(GO) run $(GOLANGCI) run --config $(CURDIR)/.golangci.yml ./...)
	@$(MAKE) --no-print-directory gosec

gosec: ## the security analyser gosec (exclusions and their reasons: see GOSEC_FLAGS)
	@$(call each,$(GO) run $(GOSEC) $(GOSEC_FLAGS) ./...)

fmt: ## gofmt and goimports every Go file
	gofmt -w $$(git ls-files '*.go')
	@$(call each,$(GO) run $(GOLANGCI) fmt --config $(CURDIR)/.golangci.yml ./...)

clean: ## remove bin/
	rm -rf bin
