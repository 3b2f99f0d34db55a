#!/usr/bin/env bash
# Sync-free is proven by counting host synchronisations around each training
# iteration (kernels/cuda/host_sync.h counts the ones made through its
# wrappers). This check keeps that count honest: in the CUDA operators and
# the CUDA workload runs, every synchronising runtime call made directly
# (not through the counted wrappers) must say on its line why it is outside
# the iteration ("// sync outside the iteration: ..."). A new, unmarked one
# fails here.
set -uo pipefail
: "${PERFLAB_SOURCE_DIR:?}"
cd "$PERFLAB_SOURCE_DIR"
pattern='cuda(StreamSynchronize|DeviceSynchronize|EventSynchronize|StreamQuery|EventQuery)\(|cudaMemcpy\(|cudaMemcpyAsync\([^;]*DeviceToHost|cudaMemcpy2D\('
files=$(ls kernels/cuda/*.cu kernels/cuda/*.cc kernels/cuda/*.h kernels/cuda/*.cuh workloads/*/cuda_*.cc workloads/*/cuda_*.cu 2>/dev/null \
  | grep -v '^kernels/cuda/host_sync\.cc$')
[[ -n "$files" ]] || { echo "no CUDA sources found"; exit 1; }
bad=$(grep -nE "$pattern" $files | grep -v "sync outside the iteration: " || true)
marked=$(grep -nE "$pattern" $files | grep -c "sync outside the iteration: " || true)
if [[ -n "$bad" ]]; then
  echo "FAIL: synchronising calls outside kernels/cuda/host_sync.h's counted wrappers, unmarked:"
  echo "$bad"
  exit 1
fi
echo "ok: $marked marked synchronising calls outside the iteration, none unmarked, in $(echo "$files" | wc -w) files"
