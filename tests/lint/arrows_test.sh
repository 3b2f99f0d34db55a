#!/usr/bin/env bash
# The layering of docs/ARCHITECTURE.md ("Build"), enforced on every
# project #include of every source file: a file's folder may include only
# its own folder and the folders its row of the table allows. Folders are
# the top-level ones, with harness/cli/ apart from harness/ and each
# workload apart from the others:
#
#   base/          nothing: the leaf (errors, text, JSON numbers, UTC time, seeded data)
#   kernels/       base
#   collectives/   base kernels
#   harness/       base kernels collectives
#   reports/       base kernels collectives harness
#   harness/cli/   base kernels collectives harness reports
#   workloads/X/   base kernels collectives harness (never reports/, the CLI or another workload:
#                  a workload's tables are a section in reports/, its commands register themselves)
#   tests/         anything (tests/support/ is theirs alone)
#
# Each include against the table fails, printed as file:line.
set -uo pipefail
: "${PERFLAB_SOURCE_DIR:?}"
cd "$PERFLAB_SOURCE_DIR" || exit 1
# shellcheck source=tests/cli/lib.bash disable=SC1091
source tests/cli/lib.bash

declare -A allowed=(
  [base]=""
  [kernels]="base"
  [collectives]="base kernels"
  [harness]="base kernels collectives"
  [reports]="base kernels collectives harness"
  [harness/cli]="base kernels collectives harness reports"
  [workloads]="base kernels collectives harness"
  [tests]="*"
)

# layer PATH: the table's row for a source path or an included path
# ("workloads/dlrm/model.h" -> "workloads/dlrm"; "harness/cli/app.h" ->
# "harness/cli"); empty for a path outside the project's folders.
layer() {
  case $1 in
    harness/cli/*) echo harness/cli ;;
    workloads/*/*) local rest=${1#workloads/}; echo "workloads/${rest%%/*}" ;;
    base/* | kernels/* | collectives/* | harness/* | reports/* | tests/*) echo "${1%%/*}" ;;
    *) echo "" ;;
  esac
}

# may FROM TO: whether layer FROM may include layer TO.
may() {
  local from=$1 to=$2 row
  [[ $from == "$to" ]] && return 0
  row=${allowed[${from%%/*}]-}
  [[ $from == harness/cli ]] && row=${allowed[harness/cli]}
  [[ $row == "*" ]] && return 0
  local ok
  for ok in $row; do
    [[ $to == "$ok" ]] && return 0
  done
  return 1
}

mapfile -t files < <(find base kernels collectives harness reports workloads tests -type f \
  \( -name '*.h' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) | sort)
[[ ${#files[@]} -gt 100 ]] || fail "only ${#files[@]} source files found"

bad=0
checked=0
while IFS=: read -r file line text; do
  included=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$text")
  to=$(layer "$included")
  [[ -z $to ]] && continue  # a library's header found on the include path
  from=$(layer "$file")
  checked=$((checked + 1))
  if ! may "$from" "$to"; then
    fail "$file:$line: #include \"$included\" ($from may include: ${allowed[${from%%/*}]:-nothing}${from:+, and itself})"
    bad=$((bad + 1))
  fi
done < <(grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${files[@]}")

# The table itself: the edges it forbids must really be caught (a table
# that allowed everything would pass anything).
may workloads/dlrm reports && fail "the table lets a workload include reports/"
may workloads/dlrm workloads/transducer && fail "the table lets a workload include another workload"
may kernels harness && fail "the table lets kernels/ include harness/"
may base kernels && fail "the table lets base/ include kernels/"
may harness harness/cli && fail "the table lets harness/ include the CLI"
may workloads/dlrm tests && fail "the table lets a workload include tests/"

[[ $bad -eq 0 ]] && pass "every #include follows the layering ($checked project includes in ${#files[@]} files)"
finish
