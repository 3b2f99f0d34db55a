#!/usr/bin/env bash
# scripts/sass: the reading of a SASS listing (a fixture compiled from
# fixtures/sass_two_kernels.cu: one kernel stores each load before issuing
# the next, one has four loads in flight), its bad-input lines, and, where
# cuobjdump and nvdisasm are at hand (scripts/sass --install) and the build
# holds device code, a real object's kernels with their registers.
set -uo pipefail
: "${PERFLAB_SOURCE_DIR:?}"
source "$PERFLAB_SOURCE_DIR/tests/cli/lib.bash"
sass="$PERFLAB_SOURCE_DIR/scripts/sass"
fixture="$PERFLAB_SOURCE_DIR/tests/cli/fixtures/sass_two_kernels.sass"

# row KERNEL: the report's line for KERNEL from $tmp/out.txt, its columns
# (registers, stack bytes, spills, loads, waited, carried, deepest; the
# waited share left out).
row() { awk -v k="$1" '$NF == k { print $1, $2, $3, $4, $5, $7, $8 }' "$tmp/out.txt"; }

if "$sass" --from-sass "$fixture" >"$tmp/out.txt" 2>"$tmp/err.txt"; then
  [[ $(row one_at_a_time) == "- - 0 1 1 0 1" ]] &&
    pass "a load read before the next is issued: waited on at once, one deep" ||
    fail "one_at_a_time: '$(row one_at_a_time)'" "$(cat "$tmp/out.txt")"
  [[ $(row four_in_flight) == "- - 0 4 0 0 4" ]] && pass "four loads issued before any is read: none alone, four deep" ||
    fail "four_in_flight: '$(row four_in_flight)'" "$(cat "$tmp/out.txt")"
else
  fail "scripts/sass --from-sass exited $?: $(cat "$tmp/err.txt")"
fi
"$sass" --from-sass "$fixture" --kernel 'four' >"$tmp/out.txt" 2>&1
[[ -n $(row four_in_flight) && -z $(row one_at_a_time) ]] && pass "--kernel selects by name" ||
  fail "--kernel four" "$(cat "$tmp/out.txt")"
"$sass" --from-sass "$fixture" --kernel 'one_at' --loads >"$tmp/out.txt" 2>&1
grep -q "waited at once: LDG" "$tmp/out.txt" && pass "--loads lists the load waited on at once" ||
  fail "--loads" "$(cat "$tmp/out.txt")"

# A listing with code for two architectures reports each kernel once per
# architecture, not merged into one instruction stream.
{ cat "$fixture"; sed 's/sm_90/sm_100/g' "$fixture"; } >"$tmp/two_archs.sass"
"$sass" --from-sass "$tmp/two_archs.sass" >"$tmp/out.txt" 2>&1
[[ $(grep -c ' one_at_a_time \[sm_' "$tmp/out.txt") -eq 2 ]] && grep -q " one_at_a_time \[sm_90\]$" "$tmp/out.txt" &&
  grep -q "  1        1 (100%)       0       1  one_at_a_time \[sm_100\]$" "$tmp/out.txt" &&
  pass "two architectures: each kernel once per architecture" ||
  fail "two architectures" "$(cat "$tmp/out.txt")"

# --diff: a listing against itself is the same kernel for kernel (exit 0);
# against a copy with one instruction changed, that kernel differs (exit 3).
"$sass" --diff "$fixture" "$fixture" >"$tmp/out.txt" 2>&1
rc=$?
[[ $rc -eq 0 ]] && grep -q "^# 2 of 2 kernels the same" "$tmp/out.txt" && pass "--diff: a listing against itself" ||
  fail "--diff against itself: exit $rc" "$(cat "$tmp/out.txt")"
awk '/Function : _Z13one_at_a_time/ { f = 1 } f && /FADD/ && !done { sub(/FADD/, "FMUL"); done = 1 } { print }' \
  "$fixture" >"$tmp/changed.sass"
"$sass" --diff "$fixture" "$tmp/changed.sass" >"$tmp/out.txt" 2>&1
rc=$?
[[ $rc -eq 3 ]] && grep -q "^differs  one_at_a_time: 32 -> 32 instructions; FADD 1->0, FMUL 0->1" "$tmp/out.txt" &&
  grep -q "^same  four_in_flight" "$tmp/out.txt" &&
  pass "--diff: one changed instruction, its kernel differs, exit 3" ||
  fail "--diff against a changed copy: exit $rc" "$(cat "$tmp/out.txt")"

# Spills: local loads and stores in the code are counted (here a padding
# NOP made a local store; the stack bytes come from the object, so a
# listing shows "-"), and --diff names the change.
awk '/Function : _Z13one_at_a_time/ { f = 1 } f && /NOP;/ && !done { sub(/NOP;/, "STL [R1+0x4], R5 ;"); done = 1 } { print }' \
  "$fixture" >"$tmp/spilled.sass"
"$sass" --from-sass "$tmp/spilled.sass" >"$tmp/out.txt" 2>&1
[[ $(row one_at_a_time) == "- - 1 1 1 0 1" && $(row four_in_flight) == "- - 0 4 0 0 4" ]] &&
  pass "a local store is counted as a spill" || fail "spills" "$(cat "$tmp/out.txt")"
"$sass" --diff "$fixture" "$tmp/spilled.sass" >"$tmp/out.txt" 2>&1
grep -q "^differs  one_at_a_time: .*; spills 0 -> 1" "$tmp/out.txt" && pass "--diff names a change in spills" ||
  fail "--diff with a spill" "$(cat "$tmp/out.txt")"

# Bad input: one line on stderr, exit 2, nothing on stdout.
bad() {  # bad PATTERN ARGS...
  local pattern=$1
  shift
  "$sass" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"
  local rc=$?
  if [[ $rc -eq 2 && $(wc -l <"$tmp/err.txt") -eq 1 && ! -s "$tmp/out.txt" ]] && grep -q -- "$pattern" "$tmp/err.txt"; then
    pass "scripts/sass $*: exit 2, '$(cat "$tmp/err.txt")'"
  else
    fail "scripts/sass $*: exit $rc" "$(cat "$tmp/out.txt" "$tmp/err.txt")"
  fi
}
bad "no such file" --from-sass "$tmp/missing.sass"
printf 'not a listing\n' >"$tmp/plain.txt"
bad "not a cuobjdump -sass listing" --from-sass "$tmp/plain.txt"
bad "no kernel matching" --from-sass "$fixture" --kernel nothing_like_this
bad "not a regular expression" --from-sass "$fixture" --kernel '('
bad "expected a .cu source or an object file" "$PERFLAB_SOURCE_DIR/README.md"
bad "no such object file" "$tmp/missing.o"
bad "give no sources with it" --from-sass "$fixture" kernels/cuda/sgd.cu
bad "give nothing else to read" --diff "$fixture" "$fixture" kernels/cuda/sgd.cu
bad "no such file" --diff "$fixture" "$tmp/missing.sass"

# A real object, when the tools and device code are here: any failure but
# the tools' absence is a failure (a renamed kernel, an unreadable listing).
object=$(find "$PERFLAB_SOURCE_DIR"/build* -name embedding_update.cu.o 2>/dev/null | head -n 1)
if [[ -z $object ]]; then
  echo "skip: the real object (no embedding_update.cu.o: built without CUDA)"
elif "$sass" "$object" --kernel sgd_tiles >"$tmp/out.txt" 2>"$tmp/err.txt"; then
  # Four instances: fp32 and bf16 gradients, each in both column layouts.
  awk '$0 ~ /sgd_tiles_kernel</ && $1 ~ /^[0-9]+$/ && $2 == 0 && $3 == 0 { n++ } END { exit n == 4 ? 0 : 1 }' \
    "$tmp/out.txt" && pass "embedding_update.cu.o: the four sgd_tiles_kernel instances, registers read, no spills" ||
    fail "scripts/sass on $object" "$(cat "$tmp/out.txt")"
elif grep -q "run scripts/sass --install" "$tmp/err.txt"; then
  echo "skip: the real object (no cuobjdump and nvdisasm here: scripts/sass --install)"
else
  fail "scripts/sass on $object" "$(cat "$tmp/err.txt")"
fi

((failures == 0)) || exit 1
