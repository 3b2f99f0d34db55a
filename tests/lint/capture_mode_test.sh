#!/usr/bin/env bash
# Every CUDA graph perflab captures (the harness's step graphs and the
# tests') is captured in one mode, thread-local, through one function,
# kernels/cuda/capture.h's begin_capture (its header says why: in global
# mode NCCL's own threads can invalidate a capture). A direct
# cudaStreamBeginCapture anywhere else fails here, whatever its mode.
set -uo pipefail
: "${PERFLAB_SOURCE_DIR:?}"
cd "$PERFLAB_SOURCE_DIR"
files=$(git ls-files '*.cc' '*.cu' '*.h' '*.cuh' 2>/dev/null || find . \( -name '*.cc' -o -name '*.cu' -o -name '*.h' -o -name '*.cuh' \) -not -path './build*' | sed 's|^\./||')
[[ -n "$files" ]] || { echo "FAIL: no sources found"; exit 1; }
direct=$(grep -nE 'cudaStreamBeginCapture|cuStreamBeginCapture' $files | grep -v '^kernels/cuda/capture\.h:' || true)
if [[ -n "$direct" ]]; then
  echo "FAIL: captures begun outside kernels/cuda/capture.h's begin_capture:"
  echo "$direct"
  exit 1
fi
grep -q 'kCaptureMode = cudaStreamCaptureModeThreadLocal;' kernels/cuda/capture.h ||
  { echo "FAIL: kernels/cuda/capture.h no longer captures thread-local"; exit 1; }
uses=$(grep -lE 'begin_capture\(' $files | wc -l)
echo "ok: every capture goes through kernels/cuda/capture.h (thread-local), used in $uses files"
