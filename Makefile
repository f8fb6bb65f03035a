# txnscope: `make test` is the one command that runs every check CI runs.
SHELL := /bin/bash
GO ?= go
# 2 s a target keeps the 29 targets to about a minute and a half of the
# 10-minute CI; `make fuzz-long` gives each 5 minutes.
FUZZTIME ?= 2s
PKGS := ./...
TOOLS := chromium kcat tshark node npm
# kafkajs 2.2.4, which internal/difftest's client tests drive through node,
# lives outside the repository; the tests look here ($TXNSCOPE_NPM, else
# $TMPDIR/txnscope-npm).
NPMDIR := $(or $(TXNSCOPE_NPM),$(or $(TMPDIR),/tmp)/txnscope-npm)

.PHONY: test deps vet templ-check contract-check staticcheck unit fuzz fuzz-long bench run summary screenshots
UNITLOG := $(or $(TMPDIR),/tmp)/txnscope-unit.log
FUZZLOG := $(or $(TMPDIR),/tmp)/txnscope-fuzz-count.log

test: deps vet templ-check contract-check staticcheck unit fuzz summary

# Install the programs the tests drive (Debian packages), once.
deps:
	@missing=""; for t in $(TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		pkgs=$$(echo "$$missing" | sed 's/\bnode\b/nodejs/'); \
		apt-get update -qq && apt-get install -y -qq $$pkgs >/dev/null; \
	else \
		echo "missing:$$missing. Run as root, or: sudo apt-get install -y chromium kcat tshark nodejs npm"; \
		echo "(tests that need them skip, or fail when CI=true)"; \
	fi
	@if /usr/bin/python3 -c 'import kafka, snappy, lz4.frame, zstandard' >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing kafka-python 2.0 and its codecs (Debian packages)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq python3-kafka python3-snappy python3-lz4 python3-zstandard >/dev/null; \
	else \
		echo "missing kafka-python: sudo apt-get install -y python3-kafka python3-snappy python3-lz4 python3-zstandard"; \
	fi
	@if grep -qs '"version": "2.2.4"' $(NPMDIR)/node_modules/kafkajs/package.json; then exit 0; fi; \
	if command -v npm >/dev/null 2>&1; then \
		echo "installing kafkajs@2.2.4 into $(NPMDIR)"; \
		npm install --prefix $(NPMDIR) --no-audit --no-fund --silent kafkajs@2.2.4; \
	else \
		echo "npm missing: the kafkajs client tests skip (or fail when CI=true)"; \
	fi

vet:
	$(GO) vet $(PKGS)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

# templ output is committed; regenerating must change nothing.
templ-check:
	@if [ -n "$$(git ls-files '*.templ')" ]; then \
		$(GO) tool templ generate && git diff --exit-code -- '*_templ.go'; \
	fi

# static/js/contract.js is generated from the Go constants the browser
# shares (internal/gencontract) and committed; regenerating must change nothing.
contract-check:
	$(GO) generate ./static && git diff --exit-code -- static/js/contract.js

staticcheck:
	$(GO) tool staticcheck $(PKGS)

# -vet=off: go test's own vet pass runs a subset of the analyzers that `make
# vet` has just run on the same packages, test files included.
unit:
	set -o pipefail; $(GO) test -race -count=1 -vet=off -timeout 20m -json $(PKGS) | tee $(UNITLOG).json | $(GO) run ./internal/testtool/summarize

# Each fuzz target for FUZZTIME, one at a time (go test allows one -fuzz
# target per package and run). The fuzz runs use Go 1.27.3, fetched by the go
# command from the module proxy (76 MB, once per machine): Go 1.26's fuzz
# coordinator can fail a run with "context deadline exceeded" at the
# -fuzztime deadline with no failing input (golang/go#75804: ctx's deadline
# fires before its child fuzzCtx is cancelled), and CI failed on it twice in a
# row; 1.27's coordinator treats ctx.Err() as a normal stop. Everything else
# builds with the machine's Go.
FUZZGO ?= env GOTOOLCHAIN=go1.27.3 $(GO)
# The targets are found in the test files' source (func FuzzX(), not with
# `go test -list`, which built every package's tests once more only to list
# them: about a minute and a half of CI). Each package's fuzz-instrumented
# test binary is built once (`go test -c -fuzz`) and run once per target, in
# the package's directory (its testdata/fuzz corpus): `go test -fuzz` per
# target linked the binary again each time, 20 links for 11 packages.
# The cache directory is a fresh one per run, as on CI, not GOCACHE/fuzz: on
# a developer's machine that one keeps every interesting input of earlier runs
# (FuzzWindowsEqualFullPass: 473), and a short run only replayed them. What
# a run must keep, a failing input, go test writes to testdata/fuzz.
# Each new interesting input is shrunk for at most FUZZMINIMIZE (go test's
# default is 60 s): the seeds of the segment and capture targets are whole
# files of kilobytes, and shrinking each input they grow took most of a
# 90-second run, which then executed a few hundred inputs.
FUZZMINIMIZE ?= 5s
FUZZBIN := $(or $(TMPDIR),/tmp)/txnscope-fuzz-bin
fuzz:
	@: > $(FUZZLOG); set -e; rm -rf $(FUZZBIN); mkdir -p $(FUZZBIN); fuzzcache=$(FUZZBIN)/cache; \
	$(GO) list -f '{{.ImportPath}} {{.Dir}}' $(PKGS) | while read pkg dir; do \
		targets=$$(cat $$dir/*_test.go 2>/dev/null | grep -o '^func Fuzz[A-Za-z0-9_]*(' | sed 's/^func //; s/($$//'); \
		[ -n "$$targets" ] || continue; \
		bin=$(FUZZBIN)/$$(echo $$pkg | tr / _).test; \
		$(FUZZGO) test -c -fuzz . -o $$bin $$pkg >/tmp/txnscope-fuzz.log 2>&1 || { cat /tmp/txnscope-fuzz.log; exit 1; }; \
		for f in $$targets; do \
			echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
			(cd $$dir && $$bin -test.paniconexit0 -test.run '^$$' -test.fuzz "^$$f$$" -test.fuzztime $(FUZZTIME) -test.fuzzminimizetime $(FUZZMINIMIZE) -test.fuzzcachedir $$fuzzcache/$$pkg) >/tmp/txnscope-fuzz.log 2>&1 || { cat /tmp/txnscope-fuzz.log; exit 1; }; \
			echo "  $$(grep -o 'execs: [0-9]*' /tmp/txnscope-fuzz.log | tail -1), $$(grep -o 'new interesting: [0-9]*' /tmp/txnscope-fuzz.log | tail -1)"; \
			echo "$$pkg $$f" >> $(FUZZLOG); \
		done; \
	done; rm -rf $(FUZZBIN)

# One closing line for whoever reads the log: tests and fuzz targets run.
summary:
	@$(GO) run ./internal/testtool/summarize -fuzz $(FUZZLOG) < $(UNITLOG).json

fuzz-long:
	$(MAKE) fuzz FUZZTIME=5m

bench:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./txnindex ./internal/difftest ./loader

run:
	$(GO) run ./cmd/server

# Rewrite the committed pictures in docs/screenshots from the browser tests
# and the timeline benchmark (a plain `go test` writes them to
# $TMPDIR/txnscope-screenshots instead, so that a test run leaves the
# checkout clean). CI=true: a missing Chromium fails rather than skipping
# and leaving old pictures in place. Review the PNGs' diff with the code's.
SCREENSHOT_PKG := ./e2e
screenshots: deps
	CI=true TXNSCOPE_UPDATE_SCREENSHOTS=1 $(GO) test -count=1 -timeout 30m $(SCREENSHOT_PKG)
	CI=true TXNSCOPE_UPDATE_SCREENSHOTS=1 $(GO) test -count=1 -run '^$$' -bench 'WebTimeline1M' -benchtime 1x -timeout 30m $(SCREENSHOT_PKG)
	git status --short -- docs/screenshots
