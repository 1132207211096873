#!/bin/bash
# benchpeer.sh: times starsim and its peer (StarPU over SimGrid, built by
# ../shared/peer/build-peer.sh) on the same configuration, alternately, and
# prints each pair and the ratio peer/starsim (median, min and max) of wall
# time and of CPU time (user+sys, the figure that a loaded machine perturbs
# least), with each side's peak RSS. Run from the repository root after
# `make build`; `make bench-peer` does both. Not part of `make test`: the
# peer takes about a minute a run.
#
# usage: benchpeer.sh [--pairs N] [--host H] [--app A] [--n N] [--sched S]
#                     [--ncpu K] [--block B] [--prefix PEER_PREFIX]
# Defaults: 3 pairs of attila Cholesky N=76800 dmda GPU-only (--ncpu 0),
# block 960, the peer in $PEER_PREFIX or /tmp/starpu-peer.
set -u
pairs=3 host=attila app=cholesky n=76800 sched=dmda ncpu=0 block=960
prefix=${PEER_PREFIX:-/tmp/starpu-peer}
while [ $# -gt 0 ]; do
	case $1 in
	--pairs) pairs=$2 ;; --host) host=$2 ;; --app) app=$2 ;; --n) n=$2 ;; --sched) sched=$2 ;;
	--ncpu) ncpu=$2 ;; --block) block=$2 ;; --prefix) prefix=$2 ;;
	*)
		sed -n 11,14p "$0" >&2
		exit 2
		;;
	esac
	shift 2
done
case $pairs in '' | *[!0-9]* | 0)
	echo "benchpeer: --pairs wants a count >= 1, not '$pairs'" >&2
	exit 2
	;;
esac
S=../shared/calibrations/starpu-sampling
PEER=../shared/peer/run-peer.sh
BIN=bin/starsim
for f in "$S" "$PEER" "$BIN"; do
	[ -e "$f" ] || {
		echo "benchpeer: $f not found (run from the repository root, after make build, with ../shared beside it)" >&2
		exit 2
	}
done
[ -d "$prefix/lib" ] || {
	echo "benchpeer: no peer in $prefix (build it with ../shared/peer/build-peer.sh, or set PEER_PREFIX)" >&2
	exit 2
}
S=$(realpath "$S")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# timed FILE CMD...: runs CMD under /usr/bin/time -v, its output to
# FILE.out, and prints "wall cpu rss_kb" (seconds, seconds, KiB).
timed() {
	local f=$1
	shift
	/usr/bin/time -v -o "$f.time" "$@" >"$f.out" 2>"$f.err" || {
		echo "benchpeer: failed: $*" >&2
		tail -5 "$f.err" >&2
		exit 1
	}
	awk -F': ' '
		/Elapsed \(wall clock\)/ { k = split($2, a, ":"); w = 0; for (i = 1; i <= k; i++) w = w * 60 + a[i] }
		/User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident set size/ { r = $2 }
		END { printf "%.3f %.3f %d\n", w, u + s, r }' "$f.time"
}

ncpuflag=(--ncpu "$ncpu")
[ "$ncpu" = default ] && ncpuflag=()
peerncpu=$ncpu
echo "benchpeer: $host $app N=$n block=$block $sched ncpu=$ncpu, $pairs pairs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %10s %10s %10s %10s %10s %10s %9s %9s\n' pair star_wall star_cpu star_MB peer_wall peer_cpu peer_MB wall_x cpu_x
for p in $(seq 1 "$pairs"); do
	read -r sw sc sr < <(timed "$tmp/s$p" "$BIN" run --starpu "$S" --host "$host" --app "$app" --n "$n" --block "$block" --sched "$sched" "${ncpuflag[@]}")
	read -r pw pc pr < <(timed "$tmp/p$p" "$PEER" --starpu "$S" --host "$host" --app "$app" --n "$n" --block "$block" --sched "$sched" --ncpu "$peerncpu" --prefix "$prefix")
	[ -n "$sw" ] && [ -n "$pw" ] || exit 1
	# The peer's own row (run-peer.sh) times the simulator binary alone,
	# without the copy of the sampling directory: its wall time and RSS
	# are the peer's figures; CPU time is the wrapper's (a few ms more).
	pw=$(cut -f10 "$tmp/p$p.out")
	pr=$(cut -f11 "$tmp/p$p.out")
	echo "$p $sw $sc $sr $pw $pc $pr" >>"$tmp/rows"
	awk '{ printf "%-5s %10.3f %10.3f %10.1f %10.2f %10.2f %10.1f %9.1f %9.1f\n", $1, $2, $3, $4 / 1024, $5, $6, $7 / 1024, $5 / $2, $6 / $3 }' <<<"$p $sw $sc $sr $pw $pc $pr"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# median / min / max of column c's ratio over the pairs.
stats() {
	awk -v a="$1" -v b="$2" '{ print $a / $b }' "$tmp/rows" | sort -g | awk '
		{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "median %.1fx (min %.1fx, max %.1fx)", m, v[1], v[NR] }'
}
echo "peer/starsim wall: $(stats 5 2)"
echo "peer/starsim cpu:  $(stats 6 3)"
