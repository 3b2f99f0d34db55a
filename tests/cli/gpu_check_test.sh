#!/usr/bin/env bash
# scripts/gpu-check's orchestration without a GPU: bad phases are refused in
# one line with exit 2 and nothing written, and --plan says what a call would
# run, in order, from the record an earlier call left (nothing run, built or
# written). A GPU session is rare; a phase list that refuses a valid phase
# (as `gpu-check peers` was, once) must fail here, not on the device.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"
check="$PERFLAB_SOURCE_DIR/scripts/gpu-check"
export OUT="$tmp/out" GPU_CHECK_WORK="$tmp/work" BUILD_DIR="$tmp/build"
# The caller's own gpu-check settings (this test runs inside gpu-check's cpu-tests phase) must not leak in.
unset GPU_CHECK_RESTART GPU_CHECK_RESUME

for bad in "bogus" "all peers"; do
  # shellcheck disable=SC2086
  "$check" $bad >"$tmp/o.txt" 2>"$tmp/e.txt"
  rc=$?
  if [[ $rc -eq 2 && $(wc -l <"$tmp/e.txt") -eq 1 && ! -e $OUT && ! -e $GPU_CHECK_WORK ]]; then
    pass "gpu-check $bad: exit 2, one line, nothing written ($(cat "$tmp/e.txt"))"
  else
    fail "gpu-check $bad: exit $rc, $(cat "$tmp/e.txt"), out: $(ls "$OUT" 2>&1)"
  fi
done

# Every phase the usage names is accepted, and planned alone (after the
# build, which is missing here).
phases=$(awk '/^#   scripts\/gpu-check PHASE\.\.\./ { sub(/.*phases: /, ""); print; getline; sub(/^# */, ""); print }' "$check")
[[ $(wc -w <<<"$phases") -ge 14 ]] || fail "could not read the phases from the usage: '$phases'"
for p in $phases; do
  plan=$("$check" --plan "$p" 2>"$tmp/e.txt")
  rc=$?
  want="build"$'\n'"$p"
  [[ $p == build ]] && want=build
  [[ $rc -eq 0 && $plan == "$want" ]] || fail "gpu-check --plan $p: exit $rc, '$plan', $(cat "$tmp/e.txt")"
done
pass "every phase of the usage accepted: $(tr '\n' ' ' <<<"$phases")"

# A fresh `all`: every phase, Nsight Compute, the halo and the quick sanitizer right after the DLRM phases, the peers
# and the settled DLRM comparisons last.
plan=$("$check" --plan | tr '\n' ' ')
rest="ncu halo_conv sanitize-quick transducer serve sanitize cpu-tests peers-dlrm peers dlrm-settled "
expected="build tests dlrm dlrm-bf16 $rest"
[[ $plan == "$expected" ]] && pass "a fresh all plans: $plan" || fail "a fresh all plans '$plan'"
[[ ! -e $OUT && ! -e $GPU_CHECK_WORK ]] && pass "--plan wrote nothing" || fail "--plan wrote $(ls "$OUT" "$GPU_CHECK_WORK" 2>&1)"

# An `all` whose first call did build, tests and dlrm: the rest, in order;
# on a fresh machine (no binary) the build first again.
mkdir -p "$GPU_CHECK_WORK/state" "$BUILD_DIR/bin"
touch "$GPU_CHECK_WORK/state/all"
for p in build tests dlrm; do echo ok >"$GPU_CHECK_WORK/state/done-$p"; done
plan=$("$check" --plan all | tr '\n' ' ')
[[ $plan == "build dlrm-bf16 $rest" ]] &&
  pass "a resumed all on a fresh machine: $plan" || fail "resumed all, no binary: '$plan'"
printf '#!/bin/sh\n' >"$BUILD_DIR/bin/perflab"
chmod +x "$BUILD_DIR/bin/perflab"
plan=$("$check" --plan all | tr '\n' ' ')
[[ $plan == "dlrm-bf16 $rest" ]] &&
  pass "a resumed all on the warm machine: $plan" || fail "resumed all, built: '$plan'"
plan=$(GPU_CHECK_RESTART=1 "$check" --plan | wc -l)
[[ $plan -eq 14 ]] && pass "GPU_CHECK_RESTART=1 plans every phase" || fail "restart plans $plan phases"
# A fresh machine given the first call's tarball (GPU_CHECK_RESUME, no work
# folder): planned from the record inside it, which stays packed.
tar -C "$tmp" -czf "$tmp/call1.tar.gz" work
plan=$(GPU_CHECK_WORK="$tmp/fresh" GPU_CHECK_RESUME="$tmp/call1.tar.gz" "$check" --plan | tr '\n' ' ')
[[ $plan == "dlrm-bf16 $rest" && ! -e $tmp/fresh ]] &&
  pass "a resumed all from a tarball: $plan" || fail "resumed all from a tarball: '$plan'"
plan=$("$check" --plan serve peers-dlrm | tr '\n' ' ')
[[ $plan == "peers-dlrm serve " ]] && pass "explicit phases in the script's order: $plan" || fail "explicit: '$plan'"
[[ $(ls "$GPU_CHECK_WORK/state" | wc -l) -eq 4 ]] || fail "--plan changed the record: $(ls "$GPU_CHECK_WORK/state")"

# The call itself, with no time to start any phase (a 1 s budget): it defers
# exactly the phases --plan named, in the same order, writes its summary and
# record, and exits 3 (phases left for another call).
plan=$("$check" --plan all | tr '\n' ' ')
GPU_CHECK_BUDGET=1 "$check" all >"$tmp/call.txt" 2>&1
rc=$?
deferred=$(awk -F'\t' '$3 == "deferred" { printf "%s ", $2 }' "$GPU_CHECK_WORK/state/phases.tsv" 2>/dev/null)
if [[ $rc -eq 3 && $deferred == "$plan" && -s $OUT/summary.md && -s $OUT/gpu-check.tar.gz ]]; then
  pass "a call with no time left defers what --plan named: $deferred"
else
  fail "call with no time: exit $rc, deferred '$deferred', plan '$plan': $(tail -5 "$tmp/call.txt")"
fi
finish
