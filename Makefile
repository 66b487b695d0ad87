# Herald — build, run and test. Every package the project needs is installed from here.
SWIFT ?= $(shell command -v swift || echo /opt/swift/usr/bin/swift)
APT_PACKAGES := libssl-dev libsqlite3-dev libmicrohttpd-dev pkg-config openssl libpq-dev postgresql
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
# At most 16 Swift tests at once (swift-testing's own bound). Unbounded, the runner starts every
# test at once: hundreds of servers, PostgreSQL members and fake JWKS servers on 2 cores, the
# first test passes only after ~28 s, and the tests whose client waits 20 s on a slow handler
# (ServerLifecycleTests, ServerConcurrencyTests) time out: 4 of them failed one run in two here
# (and a CI run). 16 wide, the first passes after ~5 s and the whole run is shorter.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH ?= 16

.PHONY: deps docs-deps build release run test unit lint format check-imports bench clean fuzz fuzz-smoke test-sanitizers

## deps: install the Debian packages that are missing (apt-get update only when needed).
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## docs-deps: what the docs stage (Tests/Docs) runs the docs' snippets and config files with: nginx (the TLS
## site in front of the binary), sqlite3 (the backup commands), systemd-analyze (the unit), curl.
DOCS_PACKAGES := nginx sqlite3 systemd curl
docs-deps:
	@missing=""; \
	for p in $(DOCS_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## run: serve on 127.0.0.1:8080 with SQLite under ./data (Ctrl-C stops cleanly).
run: release
	mkdir -p data
	./.build/release/herald serve --database sqlite:./data/herald.db

## test: every test suite: a short fuzzing run, the Python interop stage (authlib + jwcrypto
## against the real binary), the OpenAPI conformance stage (schemathesis against the served
## document, Tests/Conformance), the browser stage (headless Debian chromium + Selenium through
## the Apple and Google web sign-ins and the admin console, Tests/Browser; installs chromium when missing), the docs
## stage (every curl and config snippet of docs/ against the binary, Tests/Docs), the failover stage (Patroni + etcd +
## two PostgreSQL members from Debian, two nodes under load through a switchover and a kill of the primary,
## Tests/Failover; installs patroni, etcd and haproxy when missing), then the Swift suites (unit, end-to-end over loopback).
test: deps docs-deps fuzz-smoke
	$(SWIFT) build --build-tests
	bash Tests/Interop/run.sh .build/debug/herald
	bash Tests/Conformance/run.sh .build/debug/herald
	bash Tests/Browser/run.sh .build/debug/herald
	bash Tests/Docs/run.sh .build/debug/herald
	bash Tests/Failover/run.sh .build/debug/herald
	HERALD_BINARY=$(CURDIR)/.build/debug/herald $(SWIFT) test --skip-build

## unit: the inner loop: build and run the Swift suites only (no apt, fuzzing, interop, conformance
## or browser stage; `make deps` once first). FILTER narrows it: `make unit FILTER=GrantsTests`.
unit:
	$(SWIFT) build --build-tests
	HERALD_BINARY=$(CURDIR)/.build/debug/herald $(SWIFT) test --skip-build $(if $(FILTER),--filter '$(FILTER)')

## lint: swift-format's rules (.swift-format) over every Swift file, no tabs or trailing
## whitespace, and every target's imports equal to its Package.swift dependencies. Runs in CI.
## The pretty-printer is off (--debug-disable-pretty-print): the tree aligns continuation lines
## under their opening bracket, which swift-format cannot express, so layout is not reflowed.
SWIFT_FORMAT ?= $(shell command -v swift-format || echo /opt/swift/usr/bin/swift-format)
SWIFT_FILES := Sources Tests fuzz/Harnesses
FORMAT_FLAGS := --configuration .swift-format --recursive --parallel --debug-disable-pretty-print
lint: check-imports
	$(SWIFT_FORMAT) lint --strict $(FORMAT_FLAGS) $(SWIFT_FILES)
	@if grep -rnP '\t|[ \t]+$$' --include='*.swift' $(SWIFT_FILES); then \
	  echo "lint: tabs or trailing whitespace in the lines above"; exit 1; fi

## check-imports: each target's `import` lines equal its dependencies in Package.swift.
check-imports:
	python3 scripts/check-imports.py

## format: apply swift-format's rules in place (the same configuration as lint).
format:
	$(SWIFT_FORMAT) format --in-place $(FORMAT_FLAGS) $(SWIFT_FILES)

## bench: release-build benchmarks: end-to-end scenarios (one node on SQLite, open-loop runs, and
## two nodes on PostgreSQL behind nginx) with issue #15's targets as target / measured / met, then
## HTTP overhead (see bench/README.md; figures are appended to bench/RESULTS.md). perf counts syncs.
BENCH_PACKAGES := wrk nginx linux-perf
bench: release
	@missing=""; \
	for p in $(BENCH_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	HERALD_BIN=.build/release/herald bash bench/run.sh

## fuzz: every libFuzzer harness for FUZZ_SECONDS (default 60) each; fails on any crash (fuzz/README.md).
FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash fuzz/run.sh

## fuzz-smoke: a short run of every harness (12 s each), part of `make test`.
fuzz-smoke: deps
	FUZZ_SECONDS=12 bash fuzz/run.sh

## test-sanitizers: the Swift suites under ThreadSanitizer, then AddressSanitizer with LeakSanitizer (own
## scratch paths; slow). Both stages always run, each prints one summary line, and the target fails if either
## failed (scripts/test-sanitizers.sh says what fails a stage). Suppressions (fuzz/sanitizers/*.supp) list checked
## false positives and toolchain-library leaks only, each leak with a reproduction in fuzz/sanitizers/repro/.
## SANITIZER_TEST_FAILURES=warn (CI) gates on sanitizer reports and crashes only.
test-sanitizers: deps
	SWIFT=$(SWIFT) bash scripts/test-sanitizers.sh

clean:
	rm -rf .build
