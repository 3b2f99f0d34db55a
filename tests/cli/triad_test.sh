#!/usr/bin/env bash
# The triad workload's own command and report section, end to end: `perflab
# triad elements` sizes the arrays by STREAM's rule; a run prints STREAM's
# Triad line; bad input is one line and exit 2.
set -uo pipefail
: "${PERFLAB:?}"
# shellcheck source=tests/cli/lib.bash disable=SC1091
source "$(dirname "$0")/lib.bash"

out=$("$PERFLAB" triad elements --cache 1048576 2>&1)
if grep -q "^elements: 524288 (each array 4194304 bytes: 4 x the 1048576 bytes" <<<"$out"; then
  pass "triad elements: 4 x a 1 MiB cache is 524288 doubles per array"
else
  fail "triad elements --cache 1048576 printed: $out"
fi
expect 2 "--cache: Value 0 not in range 1 to" -- triad elements --cache 0
expect 2 "A subcommand is required" -- triad
expect 2 "more than the 4294967296 triad's elements parameter allows" -- triad elements --cache 17179869184

out=$("$PERFLAB" run triad --iterations 5 --out "$tmp/r" 2>&1)
if grep -qE "^Triad: +[0-9]+\.[0-9] +[0-9]+\.[0-9]{6} +[0-9]+\.[0-9]{6} +[0-9]+\.[0-9]{6}$" <<<"$out" &&
  grep -q "^Function    Best Rate MB/s  Avg time     Min time     Max time$" <<<"$out"; then
  pass "perflab run triad prints STREAM's Triad line"
else
  fail "no STREAM lines after perflab run triad: $out"
fi
finish
