#!/usr/bin/env bash
# pyflakes over every Python file in the project (*.py and scripts with a
# python shebang): an undefined name or a missing import fails here, not at
# run time. scripts/gpu-summary and the PyTorch peers run only on a lent GPU
# machine, where such a crash costs the session's report and most of their
# paths are never taken on the CPU. Skips (77) without pyflakes3
# (scripts/setup installs it).
set -uo pipefail
: "${PERFLAB_SOURCE_DIR:?}"
cd "$PERFLAB_SOURCE_DIR" || exit 1
command -v pyflakes3 >/dev/null || { echo "skip: pyflakes3 not installed (scripts/setup installs it)"; exit 77; }
mapfile -t files < <({ git ls-files '*.py' 2>/dev/null || find . -name '*.py' -not -path './build*'
                       grep -rlE --exclude-dir='build*' --exclude-dir=.git --exclude-dir=.deps '^#!.*python' scripts tests workloads 2>/dev/null
                     } | sed 's|^\./||' | sort -u)
((${#files[@]} >= 5)) || { echo "FAIL: found only ${#files[@]} Python files: ${files[*]}"; exit 1; }
if ! out=$(pyflakes3 "${files[@]}" 2>&1); then
  echo "FAIL: pyflakes:"
  echo "$out"
  exit 1
fi
echo "ok: pyflakes clean over ${#files[@]} Python files: ${files[*]}"
