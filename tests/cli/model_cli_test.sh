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

# all_to_all: one estimate per size (NCCL's point-to-point), 8 x H100 at
# 256 MiB: 8.4 + 3.4 us, then 7/8 of the buffer over 370.8 GB/s of NVLink.
if "$PERFLAB" model --op all_to_all --link h100 --sizes 1M..256M -f 16 >"$tmp/a2a.txt" 2>"$tmp/err.txt"; then
  grep -q '^# perflab model: all_to_all, 1 node x 8 H100 (8 GPUs), link h100$' "$tmp/a2a.txt" &&
    grep -Eq '^ +268435456 +645\.24 +416\.02 +364\.02 +234881024 +0$' "$tmp/a2a.txt" &&
    pass "all_to_all table" || fail "all_to_all table: $(cat "$tmp/a2a.txt")"
else
  fail "all_to_all exited $?: $(cat "$tmp/err.txt")"
fi
"$PERFLAB" model --op all_to_all --nodes 64 --link h100-ndr --sizes 64M --json >"$tmp/a2a.json" &&
  "$PYTHON" - "$tmp/a2a.json" <<'PY' && pass "all_to_all JSON at 64 nodes" || fail "all_to_all JSON: $(head -c 400 "$tmp/a2a.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["op"] == "all_to_all" and doc["ranks"] == 512, doc
p = doc["rows"][0]["predictions"]["P2P"]
# 504 of 512 shares of 64 MiB through one 50 GB/s NIC rail; 63 rounds of remote peers.
assert abs(p["network_bytes"] - 67108864 * 504 / 512) < 1, p
assert abs(p["latency_us"] - (8.4 + 3.4 + 63 * 17)) < 1e-9, p
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
expect 2 "--op: 'alltogether' is not all_reduce, all_gather, reduce_scatter, broadcast or all_to_all$" -- model --op alltogether
expect 2 "--op all_to_all: NCCL runs it as point-to-point sends, with no algorithm or protocol to choose" \
  -- model --op all_to_all --algo ring
expect 2 "--op all_to_all: --calibrate and --html cover the collective algorithms only$" \
  -- model --op all_to_all --html "$never"
expect 2 "--algo: 'butterfly' is not ring, tree" -- model --algo butterfly
expect 2 "--proto: 'LL64' is not LL, LL128 or SIMPLE$" -- model --proto LL64
expect 2 "link preset 'h100' is one node \(no network\); for 4 nodes use h100-hdr or h100-ndr$" -- model --nodes 4
expect 2 "--algo: no requested algorithm runs all_reduce on 1 nodes x 8 GPUs \(COLLNET_CHAIN: CollNet needs SHARP" \
  -- model --algo sharp --html "$never"
expect 2 "absent.csv: no such file$" -- model --calibrate "$tmp/absent.csv" --html "$never"
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
