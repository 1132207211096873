#!/bin/bash
# outputs.sh BIN OUTDIR: runs BIN on fixed configurations and writes every
# output to OUTDIR, so that a refactoring that must not change results is
# checked by running it for the old and the new binary and comparing:
#   diff -r OLD NEW
#
# - OUTDIR/N.json, N.check.json: `run --json` (with and without --check) on
#   16 configurations (4 StarPU hosts, Cholesky and LU, 8 schedulers, GPU
#   memory limits, the embedded calibration);
# - OUTDIR/sched/: `run --json` of every scheduler on a hybrid machine;
# - OUTDIR/work/: traces (Paje, Chrome, tasks.rec/data.rec), decision logs,
#   utilization series, panels (SVG), the StarPU 1.3 graph, the parity
#   options, replays (of starsim's traces and of the native StarPU trace),
#   comparisons (text, JSON, SVG), sweeps (CSV, JSON, SVG) and netsim.
#
# The work/ commands run inside OUTDIR/work with relative output paths and
# absolute input paths, so both binaries get identical command lines (which
# the trace headers record) and nothing needs stripping. Every command's
# stdout and stderr are kept (NAME.out), with its exit status.
# Run from the repository root, with ../shared beside it.
set -u
BIN=$(realpath "$1")
OUT=$2
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
S=$(realpath ../shared/calibrations/starpu-sampling)
NATIVE=$(realpath ../shared/reference/native-cpu-trace)
# attila under StarPU 1.3's model names, for the 1.3 graphs: at a fixed
# path, which outputs name (so two runs of this script must not overlap).
S13=/tmp/starsim-regress-attila13
rm -rf "$S13"
tools/peer13/rename13.sh "$S" attila "$S13" >/dev/null
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

# Every scheduler, hybrid attila (9 CPU + 3 GPU workers), both apps.
mkdir -p "$OUT/sched"
for s in eager prio random ws lws dm dmda dmdap dmdar dmdas dmdasd heft; do
	for app in cholesky lu; do
		"$BIN" run --json --check --starpu $S --host attila --n 19200 --app $app --sched $s >"$OUT/sched/$s-$app.json" 2>&1
	done
done

mkdir -p "$OUT/work"
cd "$OUT/work" || exit 1
# w NAME ARGS...: runs BIN ARGS in work/, keeping stdout+stderr and the status.
w() {
	local name=$1
	shift
	"$BIN" "$@" >"$name.out" 2>&1
	echo "exit $?" >>"$name.out"
}
w t1 run --starpu $S --host attila --n 19200 --sched dmdas --trace-paje t1.paje --trace-chrome t1.json --trace-rec rec1 \
	--explain ex1.jsonl --sample-interval 0.01 --json --plot t1.svg
w t2 run --starpu $S --host mirage --ncpu 0 --n 28800 --app lu --sched dmdar --gpu-mem 400MiB --trace-paje t2.paje \
	--trace-chrome t2.json --trace-rec rec2 --explain ex2.jsonl
w t3 run --n 9600 --sched ws --durations normal --seed 3 --trace-rec rec3 --trace-chrome t3.json --trace-paje t3.paje
w t4 run --starpu $S --host attila --n 9600 --sched lws --trace-rec rec4 --trace-chrome t4.json
w t5 run --starpu $S --host attila --ncpu 0 --n 28800 --sched dmda --gpu-mem 300MiB --explain ex5.jsonl --explain-task 40
w t6 run --starpu $S --host mirage --n 19200 --sched dmdasd --double --app lu --trace-rec rec6 --check
w t7 run --starpu $S13 --host attila --n 19200 --sched dmdas --trace-rec rec7
w t8 run --starpu $S13 --host attila --n 19200 --sched dmda --app lu --json
w t9 run --starpu $S --host attila --ncpu 0 --n 38400 --sched dmdas --no-prefetch --no-starpu-transfer-factor \
	--no-starpu-hidden-holes --gpu-mem 500MiB --json
w t10 run --starpu $S --host attila --n 19200 --sched dmda --sched-alpha 0.5 --sched-beta 2 --sched-gamma 10 --json
w t11 run --starpu $S --host mirage --n 19200 --sched dmdas --gpus 5 --pci-bw-scale 0.5 --json
w t12 run --n 9600 --sched random --seed 11 --durations normal --explain - --json
w t13 run --n 9600 --sched eager --no-prio --trace-paje t13.paje
w r1 replay rec1 --starpu $S --host attila --sched dmdas --json --trace-rec rrec1
w r2 replay rec1/tasks.rec --starpu $S --host attila --sched dmda --static-workerid --trace-chrome r2.json
w r3 replay $NATIVE --starpu $NATIVE/sampling --host nativecpu --sched dmda --trace-rec rnat --trace-paje rnat.paje
w r4 replay rec2 --starpu $S --host mirage --ncpu 0 --sched dmdas --gpu-mem 400MiB --json
w r5 replay rec7 --starpu $S --host attila --sched lws
w r6 replay rec6 --starpu $S --host mirage --sched dmdas --trace-paje r6.paje
w c1 compare rec1 t1.json
w c2 compare --json t1.paje rec1
w c3 compare $NATIVE rnat
w c4 compare --json $NATIVE/paje.trace rnat.paje
w c5 compare --plot c5.svg rec3 t3.json
w c6 compare rec3 t3.paje
w s1 sweep --starpu $S --host attila,mirage --ncpu 0 --n 9600:28800:9600 --sched dmda,dmdas,lws -j 2 --csv s1.csv \
	--json s1.json --sample-interval 0.05 --plot s1.svg
w s2 sweep --n 9600,19200 --sched dmda,dmdar --gpus 1,2 --app cholesky,lu -j 1 --csv s2.csv --plot s2.svg
w s3 sweep --starpu $S --host attila --n 19200 --sched dmdas --gpu-mem 300MiB,600MiB --pci-bw-scale 1,2 --csv s3.csv --shard 1/2
w n1 netsim --demo
w n2 netsim --demo --table
