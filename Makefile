# txnscope: `make test` is the one command that runs every check CI runs.
SHELL := /bin/bash
GO ?= go
FUZZTIME ?= 5s
PKGS := ./...
TOOLS := chromium kcat tshark

.PHONY: test deps vet templ-check contract-check staticcheck unit fuzz fuzz-long bench run summary
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
		apt-get update -qq && apt-get install -y -qq chromium kcat tshark >/dev/null; \
	else \
		echo "missing:$$missing. Run as root, or: sudo apt-get install -y chromium kcat tshark"; \
		echo "(tests that need them skip, or fail when CI=true)"; \
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

unit:
	set -o pipefail; $(GO) test -race -count=1 -timeout 20m -json $(PKGS) | tee $(UNITLOG).json | $(GO) run ./internal/testtool/summarize

# Each fuzz target for FUZZTIME, one at a time (go test allows one -fuzz
# target per package and run). Go 1.26's fuzz coordinator can report
# "context deadline exceeded" at the -fuzztime boundary with no failing
# input (golang/go#75804, fixed in Go 1.27): such a run is repeated once; a
# run that writes a failing input always fails.
fuzz:
	@: > $(FUZZLOG); set -e; for pkg in $$($(GO) list $(PKGS)); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
			if ! $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >/tmp/txnscope-fuzz.log 2>&1; then \
				if grep -q 'context deadline exceeded' /tmp/txnscope-fuzz.log && ! grep -q 'Failing input written' /tmp/txnscope-fuzz.log; then \
					echo "  (go's fuzzer stopped mid-minimization at the deadline, a toolchain quirk: running $$f again)"; \
					$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >/tmp/txnscope-fuzz.log 2>&1 || { cat /tmp/txnscope-fuzz.log; exit 1; }; \
				else cat /tmp/txnscope-fuzz.log; exit 1; fi; \
			fi; \
			echo "$$pkg $$f" >> $(FUZZLOG); \
		done; \
	done

# One closing line for whoever reads the log: tests and fuzz targets run.
summary:
	@$(GO) run ./internal/testtool/summarize -fuzz $(FUZZLOG) < $(UNITLOG).json

fuzz-long:
	$(MAKE) fuzz FUZZTIME=5m

bench:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./txnindex ./internal/difftest ./loader

run:
	$(GO) run ./cmd/server
