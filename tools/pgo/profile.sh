#!/bin/bash
# profile.sh: regenerates cmd/starsim/default.pgo, the CPU profile that
# `go build` uses for profile-guided optimization of the CLI (inlining and
# devirtualization of hot calls: about 4 % fewer instructions for attila
# Cholesky N=76800 under dmda and dmdar). Run from the repository root,
# with ../shared beside it, after changes to the hot paths: a stale profile
# still builds, it only optimizes less. Results do not depend on it
# (tools/regress/outputs.sh compares a build with and without).
set -eu
S=../shared/calibrations/starpu-sampling
[ -d "$S" ] || { echo "profile.sh: $S not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/starsim" ./cmd/starsim
i=0
prof() {
	i=$((i + 1))
	"$tmp/starsim" run --cpuprofile "$tmp/$i.prof" "$@" >/dev/null
}
for r in 1 2 3; do
	for s in dmda dmdar dmdas; do
		prof --starpu $S --host attila --ncpu 0 --n 76800 --sched $s
	done
	prof --n 57600 --sched dmda
	prof --starpu $S --host mirage --n 38400 --app lu --sched dmdar
done
go tool pprof -proto "$tmp"/*.prof >cmd/starsim/default.pgo
echo "wrote cmd/starsim/default.pgo from $i runs"
