#!/bin/bash
# outputs.sh BIN OUTDIR: runs `BIN run --json` (with and without --check) on
# 16 fixed configurations (4 StarPU hosts, Cholesky and LU, 8 schedulers,
# GPU memory limits, the embedded calibration) and writes each output to
# OUTDIR. A refactoring that must not change results is checked by running
# it for the old and the new binary and comparing the directories:
#   diff -r OLD NEW
# Run from the repository root, with ../shared beside it.
set -u
BIN=$1
OUT=$2
mkdir -p "$OUT"
S=../shared/calibrations/starpu-sampling
i=0
run() {
	i=$((i + 1))
	"$BIN" run --json "$@" >"$OUT/$i.json" 2>&1
	"$BIN" run --json --check "$@" >"$OUT/$i.check.json" 2>&1
}
run --starpu $S --host attila --ncpu 0 --n 19200 --sched dmda
run --starpu $S --host attila --ncpu 0 --n 57600 --sched dmda
run --starpu $S --host attila --ncpu 0 --n 76800 --sched dmda
run --starpu $S --host attila --ncpu 0 --n 76800 --sched dmdar
run --starpu $S --host attila --ncpu 0 --n 67200 --sched dmdas
run --starpu $S --host attila --n 28800 --sched dmdas
run --starpu $S --host mirage --n 28800 --sched dmdar --app lu
run --starpu $S --host hannibal --n 19200 --sched eager
run --starpu $S --host hannibal-pitch --n 19200 --sched dmda
run --starpu $S --host attila --n 19200 --sched ws
run --starpu $S --host attila --n 19200 --sched lws --app lu
run --starpu $S --host attila --n 19200 --sched prio
run --starpu $S --host attila --ncpu 0 --n 38400 --sched dmda --gpu-mem 104857600
run --starpu $S --host mirage --ncpu 0 --n 38400 --sched dmdas --gpu-mem 524288000 --app lu
run --n 38400 --sched dmdas
run --n 19200 --sched random --seed 7 --durations histogram
