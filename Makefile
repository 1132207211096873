# starsim — the two set-up commands are `make run` and `make test`.
GO        ?= go
BIN       := bin/starsim
FUZZTIME  ?= 30s
PKGS      := ./...

.PHONY: all build run demo test lint bench fuzz clean pgo figures

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

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Each fuzz target for FUZZTIME (go test -fuzz takes one target at a time).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./platforms
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./platforms/netsim
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./calibrate
	$(GO) test -run '^$$' -fuzz '^FuzzReadCSV$$' -fuzztime $(FUZZTIME) ./calibrate
	$(GO) test -run '^$$' -fuzz '^FuzzParsePerfModel$$' -fuzztime $(FUZZTIME) ./calibrate/starpu
	$(GO) test -run '^$$' -fuzz '^FuzzParseBus$$' -fuzztime $(FUZZTIME) ./calibrate/starpu
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/bytesize
	$(GO) test -run '^$$' -fuzz '^FuzzReadPaje$$' -fuzztime $(FUZZTIME) ./traces

clean:
	rm -rf bin
