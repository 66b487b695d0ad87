# Herald — build, run and test. Every package the project needs is installed from here.
SWIFT ?= $(shell command -v swift || echo /opt/swift/usr/bin/swift)
APT_PACKAGES := libssl-dev libsqlite3-dev libmicrohttpd-dev pkg-config openssl
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: deps build release run test bench clean

## deps: install the Debian packages that are missing (apt-get update only when needed).
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
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

## test: every test suite: the Python interop stage (authlib + jwcrypto against the real
## binary), then the Swift suites (unit, end-to-end over loopback).
test: deps
	$(SWIFT) build --build-tests
	bash Tests/Interop/run.sh .build/debug/herald
	$(SWIFT) test --skip-build

## bench: release-build benchmarks: end-to-end scenarios with targets, then HTTP overhead
## (see bench/README.md; figures are appended to bench/RESULTS.md).
bench: release
	DEBIAN_FRONTEND=noninteractive; dpkg -s wrk >/dev/null 2>&1 || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq wrk)
	HERALD_BIN=.build/release/herald bash bench/run.sh

clean:
	rm -rf .build
