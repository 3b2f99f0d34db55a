#!/usr/bin/env bash
# The dependency arrows, checked on every #include (docs/ARCHITECTURE.md,
# Build):
#   kernels/                      may include harness/error.h and no other
#                                 harness/, workloads/ or reports/ header;
#   harness/ (outside cli/), reports/  include no workloads/ header;
#   harness/cli/                  includes no workloads/ header either (a
#                                 workload's commands register themselves,
#                                 harness/cli/command_registry.h);
#   harness/error.h               includes no project header (it is the
#                                 leaf that kernels may include).
# Each include against the arrows fails, printed as file:line.
set -uo pipefail
: "${PERFLAB_SOURCE_DIR:?}"
cd "$PERFLAB_SOURCE_DIR" || exit 1
# shellcheck source=tests/cli/lib.bash disable=SC1091
source tests/cli/lib.bash

# sources DIR... [-- PRUNE...]: the C++ and CUDA files under DIR, sorted,
# leaving out the folders PRUNE.
sources() {
  local dirs=() prune=()
  while [[ $# -gt 0 && $1 != -- ]]; do dirs+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  for p in "$@"; do prune+=(-path "$p" -prune -o); done
  find "${dirs[@]}" "${prune[@]}" -type f \
    \( -name '*.h' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) \
    -print | sort
}

# check RULE FORBIDDEN ALLOWED FILE...: every include in FILE... whose path
# matches FORBIDDEN (an ERE on the path, e.g. '(harness|workloads)/') and not
# ALLOWED ('' for none) fails as "file:line: #include ... (RULE)".
check() {
  local rule=$1 forbidden=$2 allowed=$3
  shift 3
  if [[ $# -eq 0 ]]; then
    fail "$rule: no sources found"
    return
  fi
  local hits
  hits=$(grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"](\\.\\./)*${forbidden}" "$@" || true)
  if [[ -n $allowed && -n $hits ]]; then
    hits=$(grep -vE "^[^:]+:[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"](\\.\\./)*${allowed}[>\"]" <<<"$hits" || true)
  fi
  if [[ -z $hits ]]; then
    pass "$rule ($# files)"
    return
  fi
  local file line text
  while IFS=: read -r file line text; do
    fail "$file:$line: ${text#"${text%%[![:space:]]*}"} ($rule)"
  done <<<"$hits"
}

mapfile -t kernels < <(sources kernels)
mapfile -t harness < <(sources harness reports -- harness/cli)
mapfile -t cli < <(sources harness/cli)

check "kernels/ includes, of harness/, workloads/ and reports/, only harness/error.h" \
  '(harness|workloads|reports)/' 'harness/error\.h' "${kernels[@]}"
check "harness/ and reports/ include no workloads/ header" \
  'workloads/' '' "${harness[@]}"
check "harness/cli/ includes no workloads/ header: workload commands register themselves" \
  'workloads/' '' "${cli[@]}"
check "harness/error.h includes no project header" \
  '(harness|kernels|workloads|reports|collectives|tests)/' '' harness/error.h
finish
