#!/usr/bin/env bash
# End-to-end: dlrm on several ranks (cpu backend, MPI). Under mpirun -np 2
# the tiny preset trains to its target with the tables placed on ranks (the
# placement printed and recorded), rank 0 alone writes one result, its log
# passes the compliance checker, and SHARP is reported requested but not in
# effect, with the reason. With 3 ranks (26 tables and a batch of 256, both
# split unevenly) the hybrid embedding runs timed iterations with overlap
# off, records its frequency threshold and frequent categories, and moves
# fewer all-to-all bytes than model parallel would. A batch smaller than
# the ranks gets one error line.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI's own allocations at MPI_Init read as leaks under ASan (see collectives_test.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if ! command -v mpirun >/dev/null; then
  echo "mpirun not found: this test needs Open MPI (scripts/setup)"
  exit 77
fi

# --- time to train on 2 ranks ----------------------------------------------
if (cd "$tmp" && mpirun -np 2 "$PERFLAB" run dlrm --preset tiny --threads 1 --sharp on --out ttt \
      >"$tmp/ttt.txt" 2>"$tmp/ttt.err"); then
  pass "2 ranks: dlrm tiny exited 0"
else
  fail "2 ranks: dlrm tiny exited non-zero: $(cat "$tmp/ttt.err" "$tmp/ttt.txt")"
fi
cat "$tmp/ttt.txt"
grep -q "^2 ranks, placement: rank 0: tables .* rows); rank 1: tables" "$tmp/ttt.txt" &&
  pass "the placement is printed" || fail "no placement line in: $(cat "$tmp/ttt.txt")"
results=$(find "$tmp/ttt" -name result.json | wc -l)
[[ $results -eq 1 ]] && pass "one result (rank 0 writes)" || fail "$results result files, expected 1"
dir=$(dirname "$(find "$tmp/ttt" -name result.json | head -n 1)")
if "$PYTHON" - "$dir/result.json" "$PERFLAB_SOURCE_DIR/docs/result.schema.json" <<'PY'
import json, sys
import jsonschema
result = json.load(open(sys.argv[1]))
jsonschema.validate(result, json.load(open(sys.argv[2])))
run = result["runs"][0]
assert run["status"] == "success", run["reason"]
assert run["quality_curve"][-1]["value"] >= result["quality"]["target"]
data = result["plan"]["data"]
assert data["ranks"] == 2 and data["embedding"] == "model_parallel", data
ranks = data["placement"]["ranks"]
tables = sorted(t for r in ranks for t in r["tables"])
assert tables == list(range(26)), tables
sizes = data["table_sizes"]
for r in ranks:
    assert r["rows"] == sum(sizes[t] for t in r["tables"]), r
# Balanced: the two ranks' rows within the largest table of each other.
assert abs(ranks[0]["rows"] - ranks[1]["rows"]) <= max(sizes), ranks
assert data["batch_split"]["local_batch"] == [128, 128], data["batch_split"]
# Every rank sends its tables' rows for the other rank's 128 samples, 16 floats each.
b = data["all_to_all_bytes_per_iteration"]
assert b["forward"] == 128 * 26 * 16 * 4 and b["backward"] == b["forward"], b
# The projection at 8, 64 and 512 GPUs: weak scaling at 128 samples per GPU.
proj = data["projection"]
assert proj["per_gpu_batch"] == 128 and [s["gpus"] for s in proj["scales"]] == [8, 64, 512], proj
for s in proj["scales"]:
    assert s["all_to_all_bytes"] == 128 * 26 * 16 * 4 and s["global_batch"] == 128 * s["gpus"], s
    assert 0 < s["sharp_communication_us"] <= s["communication_us"], s
sharp = result["toggles"]["sharp"]
assert sharp["requested"] and not sharp["in_effect"] and "gradient all-reduce runs over MPI" in sharp["reason"], sharp
PY
then pass "2 ranks: result validates, reached the target, placement and bytes recorded, SHARP not in effect"; else fail "2-rank result check"; fi
if "$PERFLAB_SOURCE_DIR/scripts/compliance-check" "$dir"/run_*.log >"$tmp/cc.txt" 2>&1; then
  pass "2 ranks: the log passes the compliance checker"
else
  fail "compliance checker: $(cat "$tmp/cc.txt")"
fi
grep -q "## Ranks" "$dir/report.md" && pass "report.md has the ranks section" || fail "report.md lacks ## Ranks"
grep -q "^| 512 | 64 x 8 (h100-ndr) | 65536 | 208.0 KiB / 208.0 KiB | " "$dir/report.md" &&
  pass "report.md projects to 512 GPUs" || fail "no 512-GPU projection row in report.md"

# --- hybrid embedding, 3 ranks, timed iterations, overlap off -------------
if (cd "$tmp" && mpirun -np 3 "$PERFLAB" run dlrm --preset tiny --threads 1 --mode throughput --iterations 20 \
      --warmup 2 --set embedding=hybrid --set overlap=off --out hybrid >"$tmp/hybrid.txt" 2>"$tmp/hybrid.err"); then
  pass "3 ranks: hybrid throughput run exited 0"
else
  fail "3 ranks: hybrid run exited non-zero: $(cat "$tmp/hybrid.err" "$tmp/hybrid.txt")"
fi
if "$PYTHON" - "$(find "$tmp/hybrid" -name result.json | head -n 1)" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
run = result["runs"][0]
assert run["status"] == "success", run["reason"]
data = result["plan"]["data"]
assert data["ranks"] == 3 and data["embedding"] == "hybrid" and data["overlap"] is False, data
assert data["batch_split"]["local_batch"] == [85, 85, 86], data["batch_split"]
h = data["hybrid"]
assert h["threshold_count"] == 524288 // 256, h   # seen once per global batch on average
assert 0 < h["frequent_categories"] < sum(data["table_sizes"]), h
assert 0 < h["frequent_lookup_share"] < 1, h
hybrid, mp = data["all_to_all_bytes_per_iteration"], data["model_parallel_all_to_all_bytes_per_iteration"]
assert 0 < hybrid["total"] < mp["total"], (hybrid, mp)
assert abs(data["all_to_all_reduction"] - (1 - hybrid["total"] / mp["total"])) < 1e-9, data
facts = run["facts"]
assert facts["overlap"] is False and facts["exposed_communication_ms_per_iteration"] > 0, facts
[part] = [p for p in run["parts"] if p["name"] == "exposed communication"]  # the harness's per-part table
# One sample per training iteration after the warm-up.
assert part["ms"] > 0 and part["repetitions"] == run["iterations"] - result["spec"]["warmup_iterations"], (part, run["iterations"])
PY
then pass "3 ranks: hybrid records its threshold, frequent set, fewer bytes and exposed communication"; else fail "hybrid result check"; fi

# --- bad input: one line, exit 2, under mpirun ----------------------------
expect_ranks 2 "batch_size 1 cannot be split over 2 ranks" -- run dlrm --set batch_size=1 --out bad
expect_ranks 2 "the cpu backend emulates bf16 on one rank, not 2" -- run dlrm --set precision=bf16 --backend cpu --out bad
finish
