#!/usr/bin/env bash
# The CUDA microbenchmarks (bin/bench_cuda_*, kernels/bench/cuda_bench_main.h)
# behave alike: asked to list their benchmarks, without a usable device each
# prints one line naming itself and why, and exits 1, writing nothing to
# stdout; with one each lists its benchmarks and exits 0. Skips (77) when the
# build has no CUDA benchmarks.
set -uo pipefail
: "${PERFLAB:?}"
# shellcheck source=tests/cli/lib.bash disable=SC1091
source "$(dirname "$0")/lib.bash"

bin=$(dirname "$PERFLAB")
shopt -s nullglob
benches=("$bin"/bench_cuda_*)
((${#benches[@]})) || { echo "skipped: no bench_cuda_* beside $PERFLAB (a build without CUDA)"; exit 77; }

for b in "${benches[@]}"; do
  name=$(basename "$b")
  "$b" --benchmark_list_tests=true >"$tmp/out.txt" 2>"$tmp/err.txt"
  rc=$?
  if [[ $rc -eq 1 ]]; then
    if [[ $(wc -l <"$tmp/err.txt") -eq 1 && ! -s $tmp/out.txt ]] &&
      grep -q "^$name: no usable CUDA device: " "$tmp/err.txt"; then
      pass "$name without a device: one line, exit 1 ($(cat "$tmp/err.txt"))"
    else
      fail "$name exited 1 with stderr '$(cat "$tmp/err.txt")' and stdout '$(head -3 "$tmp/out.txt")'"
    fi
  elif [[ $rc -eq 0 && -s $tmp/out.txt ]]; then
    pass "$name with a device lists $(wc -l <"$tmp/out.txt") benchmarks"
  else
    fail "$name --benchmark_list_tests=true exited $rc: $(head -3 "$tmp/err.txt")"
  fi
done
finish
