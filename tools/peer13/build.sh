#!/bin/bash
# build.sh [PEER_PREFIX] [OUT]: compiles StarPU 1.3's cholesky_implicit and
# lu_implicit_example_float (../shared/peer/starpu-1.3-examples) against the
# peer StarPU over SimGrid (../shared/peer/build-peer.sh, default
# /tmp/starpu-peer), into OUT (default /tmp/peer13): OUT/chol13, OUT/lu13.
# The peer's runtime then runs StarPU 1.3's task graphs, priorities and model
# symbols (chol_model_11/21/22, starpu_slu_lu_model_11/12/21/22), to check
# starsim's 1.3 graphs. Run from the repository root, with ../shared beside it.
set -euo pipefail
prefix=${1:-/tmp/starpu-peer}
out=${2:-/tmp/peer13}
ex=../shared/peer/starpu-1.3-examples
[ -d "$ex" ] || { echo "build.sh: $ex not found" >&2; exit 2; }
[ -f "$prefix/lib/pkgconfig/starpu-1.4.pc" ] || { echo "build.sh: no peer in $prefix (../shared/peer/build-peer.sh)" >&2; exit 2; }
src=$(mktemp -d); trap 'rm -rf "$src"' EXIT
tar -xzf ../shared/peer/starpu-3f3cc82a6.tar.gz -C "$src" examples/common examples/sched_ctx_utils
mkdir -p "$src/examples/cholesky" "$src/examples/lu" "$out"
cp "$ex"/cholesky/* "$src/examples/cholesky/"; cp "$ex"/lu/* "$src/examples/lu/"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cflags="-O2 -w -I$src/examples $(pkg-config --cflags starpu-1.4)"
libs="$(pkg-config --libs starpu-1.4) -lm"
(cd "$src/examples/cholesky" && gcc $cflags cholesky_implicit.c cholesky_kernels.c cholesky_models.c \
  ../common/blas.c ../sched_ctx_utils/sched_ctx_utils.c -o "$out/chol13" $libs)
(cd "$src/examples/lu" && gcc $cflags lu_example_float.c slu_implicit.c slu_kernels.c ../common/blas.c -o "$out/lu13" $libs)
echo "built $out/chol13 $out/lu13"
