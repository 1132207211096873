# starsim — the two set-up commands are `make run` and `make test`.
GO        ?= go
BIN       := bin/starsim
FUZZTIME  ?= 30s
PKGS      := ./...

.PHONY: all build run demo test lint bench bench-peer fuzz clean pgo figures peerdiff

all: build

build:
	$(GO) build -o $(BIN) ./cmd/starsim

# Main job on the built-in defaults: predict a tiled Cholesky (N=38400,
# 960 tiles) under dmdas on the embedded 2-socket, 4-GPU calibration.
run: build
	./$(BIN) run --app cholesky --n 38400 --sched dmdas

# The fluid-network demo: 16 transfers on a 4-GPU PCI star.
demo: build
	./$(BIN) netsim --demo --table

# lint + every test (fuzz targets run their seed corpus). Tests that need
# ../shared or SimGrid skip cleanly when those are absent.
test: lint
	$(GO) test -count=1 $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Regenerates cmd/starsim/default.pgo (profile-guided optimization of the
# CLI, which go build applies by itself) from runs on ../shared's attila.
pgo:
	./tools/pgo/profile.sh

# Regenerates the README's figures (docs/figures) and their manifest;
# TestFigures fails when they are stale. Needs ../shared.
figures:
	$(GO) test -count=1 -run '^TestFigures$$' ./cmd/starsim -args -figures

# Differential runs against the peer, StarPU over the real SimGrid
# (../shared/peer/build-peer.sh builds it): see tools/peerdiff and
# docs/fidelity.md. Not part of `make test`. Example:
#   make peerdiff PEERDIFF_FLAGS="--host attila --app lu --sched dmdar --n 57600 --trace"
PEERDIFF_FLAGS ?= --host attila --n 19200
peerdiff: build
	$(GO) run ./tools/peerdiff $(PEERDIFF_FLAGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# starsim against its peer, StarPU over SimGrid (built by
# ../shared/peer/build-peer.sh into PEER_PREFIX, default /tmp/starpu-peer),
# alternately on attila Cholesky N=76800 dmda GPU-only: ratios of wall and
# CPU time, peak RSS (tools/benchpeer). Not part of test: minutes.
PAIRS ?= 3
bench-peer: build
	./tools/benchpeer/benchpeer.sh --pairs $(PAIRS)

# Every fuzz target of the repository (found by name, so a new reader's
# FuzzX is run without being listed here), each for FUZZTIME; the fuzzer
# spends at most FUZZMINTIME minimizing an input it finds interesting (its
# default, 60s, would stall the larger corpora).
FUZZMINTIME ?= 5s
fuzz:
	@set -e; for f in $$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go'); do \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "== ./$$(dirname $$f) $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./$$(dirname $$f); \
	  done; \
	done

clean:
	rm -rf bin
