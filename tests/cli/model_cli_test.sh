#!/usr/bin/env bash
# End-to-end: `perflab model` (the collectives workload's command). A good
# request prints the nccl-tests-style table, the sentence and (with --html)
# a self-contained chart page; --json is valid JSON; --calibrate reads a
# points file and reports the fit; bad input (unknown preset, nodes <= 0, a
# bad size, an algorithm that cannot run, a bad points file) is one line on
# stderr and exit 2, with nothing written.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

# --- good requests ---------------------------------------------------------
if "$PERFLAB" model --nodes 1 --gpus-per-node 8 --link h100 --sizes 1M..256M --html "$tmp/m.html" \
    >"$tmp/out.txt" 2>"$tmp/err.txt"; then
  pass "model on 8 x H100 ran"
else
  fail "model on 8 x H100 exited $?: $(cat "$tmp/err.txt")"
fi
grep -q '^# at 1 node x 8 H100, 256 MiB all_reduce: tree 1.81 ms, ring 1.32 ms, NVLS 983 us; best NVLS$' "$tmp/out.txt" &&
  pass "the sentence" || fail "no sentence: $(tail -n 3 "$tmp/out.txt")"
grep -q '^# crossover: ring -> NVLS between 1 MiB and 2 MiB$' "$tmp/out.txt" && pass "the crossover" ||
  fail "no crossover: $(cat "$tmp/out.txt")"
rows=$(grep -vc '^#' "$tmp/out.txt")
[[ $rows -eq 9 ]] && pass "9 size rows" || fail "$rows size rows, expected 9"
[[ ! -s "$tmp/err.txt" ]] && pass "nothing on stderr" || fail "stderr: $(cat "$tmp/err.txt")"
grep -q '<svg' "$tmp/m.html" && grep -q '>256M</text>' "$tmp/m.html" && pass "HTML chart with size ticks" ||
  fail "HTML chart missing"

"$PERFLAB" model --nodes 64 --link h100-ndr-sharp --sizes 256M --algo ring,tree,sharp --json >"$tmp/m.json" &&
  "$PYTHON" - "$tmp/m.json" <<'PY' && pass "JSON at 64 nodes" || fail "JSON at 64 nodes: $(head -c 400 "$tmp/m.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["ranks"] == 512 and doc["algorithms"] == ["RING", "TREE", "COLLNET_CHAIN"], doc["algorithms"]
row = doc["rows"][0]
assert row["bytes"] == 268435456 and row["best"] == "COLLNET_CHAIN", row
assert doc["summary"].startswith("at 64 nodes x 8 H100, 256 MiB all_reduce: ring "), doc["summary"]
PY

printf 'op,nranks,nnodes,bytes,time_us,algorithm\n# made up: twice the latency, 1.25 x the transfer\n' >"$tmp/points.csv"
printf 'all_reduce,16,2,%s,%s,ring\n' 1024 40 1048576 60 67108864 1500 268435456 5800 >>"$tmp/points.csv"
if "$PERFLAB" model --nodes 4 --link h100-ndr --sizes 1M --calibrate "$tmp/points.csv" >"$tmp/cal.txt" 2>"$tmp/err.txt"; then
  grep -q '^  all_reduce     RING                4 ' "$tmp/cal.txt" && grep -q ', calibrated$' "$tmp/cal.txt" &&
    pass "calibration reported and applied" || fail "calibration: $(cat "$tmp/cal.txt")"
else
  fail "calibrate exited $?: $(cat "$tmp/err.txt")"
fi

# --- bad input: one line, exit 2, nothing written ----------------------------
never="$tmp/never.html"
expect 2 "--link: unknown preset 'a100' \(one of: h100, h100-hdr, " -- model --link a100 --html "$never"
expect 2 "--nodes must be at least 1, got 0$" -- model --nodes 0 --html "$never"
expect 2 "--nodes must be at least 1, got -3$" -- model --nodes=-3 --html "$never"
expect 2 "--gpus-per-node must be in \[1, 72\], got 0$" -- model --gpus-per-node 0 --html "$never"
expect 2 "size: '8Q' is not a size in bytes" -- model --sizes 8Q --html "$never"
expect 2 "size: '0' is not a size in bytes" -- model --sizes 0..1K --html "$never"
expect 2 "sizes '8K..1K': 8192 is larger than 1024$" -- model --sizes 8K..1K --html "$never"
expect 2 "size step factor must be at least 2, got 1$" -- model -f 1 --html "$never"
expect 2 "--op: 'all_to_all' is not all_reduce, all_gather, reduce_scatter or broadcast$" -- model --op all_to_all
expect 2 "--algo: 'butterfly' is not ring, tree" -- model --algo butterfly
expect 2 "--proto: 'LL64' is not LL, LL128 or SIMPLE$" -- model --proto LL64
expect 2 "link preset 'h100' is one node \(no network\); for 4 nodes use h100-hdr or h100-ndr$" -- model --nodes 4
expect 2 "--algo: no requested algorithm runs all_reduce on 1 nodes x 8 GPUs \(COLLNET_CHAIN: CollNet needs SHARP" \
  -- model --algo sharp --html "$never"
expect 2 "absent.csv: cannot read the measurements file$" -- model --calibrate "$tmp/absent.csv" --html "$never"
printf 'op,nranks,nnodes,bytes,time_us,algorithm\nall_reduce,16,2,1024,40,sharp\n' >"$tmp/sharp.csv"
expect 2 "sharp.csv:2: all_reduce COLLNET_CHAIN on 2 nodes x 8 GPUs with preset 'h100-ndr': CollNet needs SHARP" \
  -- model --link h100-ndr --calibrate "$tmp/sharp.csv" --html "$never"
expect 2 "perflab: error: .*--nodes" -- model --nodes many
# The collectives benchmark's own results calibrate too, but only NCCL's:
# a host (single-rank) run is refused with the reason.
if (cd "$tmp" && "$PERFLAB" run collectives --set bytes=4096 --iterations 2 --out coll >/dev/null 2>&1); then
  expect 2 "measured on the single communicator; the model is NCCL's" -- model --calibrate "$tmp/coll" --html "$never"
else
  fail "collectives run for calibration"
fi
[[ ! -e "$never" ]] && pass "refused requests wrote nothing" || fail "a refused request wrote $never"
finish
