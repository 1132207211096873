#!/bin/bash
# run.sh BIN DIR HOST N SCHED NCPU|default [ARGS...]: one simulated run of a
# build.sh binary on the sampling directory DIR (copied, never written) for
# HOST; prints "sim_ms gflops" as the example reports them. Every other
# STARPU_* variable is cleared; ARGS go to the example (e.g. -no-prio).
set -u
bin=$1 dir=$2 host=$3 n=$4 sched=$5 ncpu=$6; shift 6
prefix=${PEER_PREFIX:-/tmp/starpu-peer}
tmp=$(mktemp -d /tmp/peer13-run.XXXXXX); trap 'rm -rf "$tmp"' EXIT
cp -r "$dir" "$tmp/sampling"; mkdir -p "$tmp/home"
for v in $(env | sed -n 's/^\(STARPU_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export LD_LIBRARY_PATH=$prefix/lib HOME=$tmp/home
export STARPU_PERF_MODEL_DIR=$tmp/sampling STARPU_HOSTNAME=$host STARPU_SCHED=$sched STARPU_CALIBRATE=0 STARPU_FXT_TRACE=0
[ "$ncpu" = default ] || export STARPU_NCPU=$ncpu
"$bin" -size "$n" -nblocks $((n / 960)) "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" || { tail -5 "$tmp/err.txt" >&2; exit 1; }
awk -v n="$n" '$1==n && NF>=3 {print $2, $3}' "$tmp/out.txt" | tail -1
