#!/bin/bash
# rename13.sh DIR HOST OUT: copies HOST's calibration from the sampling
# directory DIR into OUT under StarPU 1.3's model names (chol_model_11/21/22,
# starpu_Xlu_lu_model_11/12/21/22, BLAS suffixes kept; SYRK's model, which
# 1.3 lacks, left out): a real machine's numbers as StarPU 1.3 names them.
set -euo pipefail
dir=$1 host=$2 out=$3
mkdir -p "$out/bus" "$out/codelets/45"
cp "$dir"/bus/"$host".* "$out/bus/"
for f in "$dir"/codelets/45/*."$host"; do
  b=$(basename "$f")
  case $b in chol_model_syrk*) continue;; esac
  n=$(echo "$b" | sed 's/chol_model_potrf/chol_model_11/;s/chol_model_trsm/chol_model_21/;s/chol_model_gemm/chol_model_22/;s/lu_model_getrf/lu_model_11/;s/lu_model_trsm_ll/lu_model_12/;s/lu_model_trsm_ru/lu_model_21/;s/lu_model_gemm/lu_model_22/')
  cp "$f" "$out/codelets/45/$n"
done
