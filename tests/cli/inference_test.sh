#!/usr/bin/env bash
# End-to-end: --mode inference (issue 28). DLRM served on the cpu backend
# through MLCommons LoadGen: Offline and Server performance runs write
# LoadGen's own logs beside the result, whose runs carry LoadGen's verdict,
# throughput and latencies (the result validates against the schema); an
# accuracy run logs a response per sample; the run's report, the sweep
# report, rerun and a sweep file's `inference:` settings work on it; bad
# settings, a workload that does not serve and several ranks get one line
# and exit 2 before anything runs. Short LoadGen tests (100-300 ms): what LoadGen
# measures is not asserted, only that it measured and perflab kept it.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$PERFLAB_SOURCE_DIR/tests/cli/lib.bash"
schema="$PERFLAB_SOURCE_DIR/docs/result.schema.json"
quick=(--backend cpu --min-duration-ms 100 --min-queries 32 --max-batch 64)

if ! "$PERFLAB" run dlrm --mode inference "${quick[@]}" --scenario offline --target-qps 50000 \
    --out "$tmp/offline" >"$tmp/offline.out" 2>"$tmp/offline.err"; then
  if grep -q "built without MLCommons LoadGen" "$tmp/offline.err"; then
    echo "skip: built without MLCommons LoadGen (scripts/setup fetches it)"
    exit 77
  fi
  fail "an offline inference run failed: $(cat "$tmp/offline.err")"
else
  pass "an offline inference run"
fi
grep -q "logs:   .*run_\*_loadgen/ (LoadGen's)" "$tmp/offline.out" && pass "the terminal points at LoadGen's logs" ||
  fail "no LoadGen log line: $(cat "$tmp/offline.out")"
grep -q "LoadGen Offline PerformanceOnly" "$tmp/offline.out" && pass "the summary says LoadGen's scenario and mode" ||
  fail "summary: $(cat "$tmp/offline.out")"
offline=$(find "$tmp/offline" -name result.json | head -n 1)
for f in mlperf_log_summary.txt mlperf_log_detail.txt mlperf_log_accuracy.json; do
  [[ -s "$(dirname "$offline")/run_0_loadgen/$f" || $f == mlperf_log_accuracy.json ]] &&
    pass "LoadGen wrote $f beside the result" || fail "no $f in $(dirname "$offline")/run_0_loadgen"
done
[[ ! -e "$(dirname "$offline")/run_0_loadgen/mlperf_log_trace.json" ]] &&
  pass "LoadGen's per-sample trace is off" || fail "LoadGen wrote its per-sample trace"
"$PERFLAB" run dlrm --mode inference "${quick[@]}" --scenario server --target-qps 2000 --latency-bound-ms 50 \
  --loadgen-trace --out "$tmp/traced" >"$tmp/traced.out" 2>&1 &&
  "$PYTHON" -c 'import json,sys; ev=json.load(open(sys.argv[1]))["traceEvents"]; assert any(e.get("name")=="IssueQuery" for e in ev), len(ev)' \
    "$(find "$tmp/traced" -name mlperf_log_trace.json | head -n 1)" &&
  pass "--loadgen-trace keeps LoadGen's trace, as JSON (its doubled quotes repaired)" ||
  fail "--loadgen-trace: $(cat "$tmp/traced.out")"
grep -q "## Runs" "$(dirname "$offline")/report.md" && grep -q "LoadGen verdict" "$(dirname "$offline")/report.md" &&
  pass "the run's report has LoadGen's verdicts" || fail "report: $(cat "$(dirname "$offline")/report.md")"

"$PERFLAB" run dlrm --mode inference "${quick[@]}" --scenario server --target-qps 2000 --latency-bound-ms 50 \
  --max-wait-ms 1 --seeds 2 --out "$tmp/server" >"$tmp/server.out" 2>"$tmp/server.err" &&
  pass "a server inference run, 2 seeds" || fail "server run: $(cat "$tmp/server.err")"
server=$(find "$tmp/server" -name result.json | head -n 1)

if "$PYTHON" - "$offline" "$server" "$schema" <<'PY'; then
import json, sys
import jsonschema
schema = json.load(open(sys.argv[3]))
for path, scenario, runs in ((sys.argv[1], "Offline", 1), (sys.argv[2], "Server", 2)):
    d = json.load(open(path))
    jsonschema.validate(d, schema)
    assert d["kind"] == "inference", d["kind"]
    assert d["spec"]["mode"] == "inference"
    assert d["spec"]["inference"]["scenario"] == scenario.lower(), d["spec"]["inference"]
    assert len(d["runs"]) == runs
    for r in d["runs"]:
        inf = r["inference"]
        assert inf["scenario"] == scenario, inf["scenario"]
        assert inf["mode"] == "PerformanceOnly"
        assert inf["verdict"] in ("VALID", "INVALID")
        assert inf["samples_per_second"] > 0
        assert r["throughput_samples_per_s"] == inf["samples_per_second"]
        assert r["samples"] == inf["batches"]["samples"], (r["samples"], inf["batches"])
        assert r["measured_s"] > 0
        assert inf["batches"]["largest"] <= 64, inf["batches"]
        assert inf["batches"]["samples"] >= inf["query_count"] >= 1
        assert [p["percentile"] for p in inf["percentiles"]] == [50, 90, 95, 97, 99, 99.9]
        assert r["log"] == inf["loadgen_folder"] + "/mlperf_log_detail.txt"
    assert d["score"]["throughput_samples_per_s"] > 0
    if scenario == "Server":
        assert d["runs"][0]["inference"]["settings"]["max_wait_ms"] == 1
        assert "scheduled_samples_per_second" in d["runs"][0]["inference"]
PY
  pass "the results hold LoadGen's outcome per seed and validate"
else
  fail "inference results are wrong (above)"
fi

"$PERFLAB" run dlrm --mode inference "${quick[@]}" --scenario offline --loadgen-mode accuracy --target-qps 50000 \
  --out "$tmp/accuracy" >"$tmp/accuracy.out" 2>&1 || fail "an accuracy run: $(cat "$tmp/accuracy.out")"
accuracy=$(find "$tmp/accuracy" -name mlperf_log_accuracy.json | head -n 1)
if "$PYTHON" - "$accuracy" <<'PY'; then
import json, sys
entries = json.load(open(sys.argv[1]))
assert entries, "no response logged"
assert all(len(e["data"]) == 8 for e in entries), "a response is not one float"
assert len({e["qsl_idx"] for e in entries}) == len(entries), "a sample answered twice"
PY
  pass "an accuracy run logs one float per sample"
else
  fail "accuracy log: $(head -c 300 "$accuracy")"
fi

"$PERFLAB" report "$tmp/offline" "$tmp/server" --out "$tmp/report" >/dev/null 2>"$tmp/report.err" &&
  grep -q "## Inference per point" "$tmp/report/report.md" && pass "the sweep report has an inference table" ||
  fail "report: $(cat "$tmp/report.err") $(cat "$tmp/report/report.md")"

if "$PERFLAB" rerun "$server" --out "$tmp/rerun" >"$tmp/rerun.out" 2>&1; then
  rerun=$(find "$tmp/rerun" -name result.json | head -n 1)
  "$PYTHON" -c 'import json,sys; a=json.load(open(sys.argv[1]))["spec"]; b=json.load(open(sys.argv[2]))["spec"]
assert a["inference"] == b["inference"] and a["mode"] == b["mode"] == "inference", (a.get("inference"), b.get("inference"))' \
    "$server" "$rerun" && pass "rerun runs the same LoadGen settings" || fail "rerun changed the settings"
else
  fail "rerun: $(cat "$tmp/rerun.out")"
fi

cat >"$tmp/inference.yaml" <<EOF
name: serve
workload: dlrm
backend: cpu
mode: inference
inference: {scenario: server, target_qps: 2000, latency_bound_ms: 50, min_duration_ms: 100, min_query_count: 32,
            max_batch: 32, max_wait_ms: 1}
EOF
"$PERFLAB" sweep "$tmp/inference.yaml" --out "$tmp/sweep" >"$tmp/sweep.out" 2>&1 &&
  [[ -n "$(find "$tmp/sweep" -path '*run_0_loadgen/mlperf_log_detail.txt')" ]] &&
  pass "a sweep file's inference settings run" || fail "sweep: $(cat "$tmp/sweep.out")"
# The hot-row cache (placement=hot_cache): a Server run with the cache on,
# learning online (lru) while rows are updated, records the engine's
# counters; a sweep over the cache's capacity gives the report's serving
# table, one row per capacity, and its hit-rate chart.
"$PERFLAB" run dlrm --mode inference "${quick[@]}" --scenario server --target-qps 2000 --latency-bound-ms 50 \
  --max-wait-ms 1 --set placement=hot_cache --set cache_capacity=2% --set cache_policy=lru --set update_rate=2000 \
  --out "$tmp/cached" >"$tmp/cached.out" 2>&1 && pass "a server run with the hot-row cache and updates" ||
  fail "cached run: $(cat "$tmp/cached.out")"
grep -q "^serving (seed 1): hot_cache on cpu (.* rows, lru), hit rate .*%; .* updates applied" "$tmp/cached.out" &&
  pass "the terminal says the cache's hit rate and the updates applied" || fail "terminal: $(cat "$tmp/cached.out")"
cached=$(find "$tmp/cached" -name result.json | head -n 1)
if "$PYTHON" - "$cached" "$offline" "$schema" <<'PY'; then
import json, sys
import jsonschema
schema = json.load(open(sys.argv[3]))
d = json.load(open(sys.argv[1]))
jsonschema.validate(d, schema)
assert d["spec"]["params"]["placement"] == "hot_cache"
r = d["runs"][0]
e = r["inference"]["engine"]
c = e["counters"]
assert e["placement"] == "hot_cache" and e["placement_in_effect"].startswith("cpu backend"), e
assert e["cache"]["policy"] == "lru" and e["cache"]["ways"] == 32 and e["cache"]["rows"] <= e["cache"]["sets"] * 32, e
assert e["cache"]["rows"] >= 1 and e["cache"]["prefilled"] <= e["cache"]["rows"], e["cache"]
assert c["samples"] == r["samples"], (c["samples"], r["samples"])
assert c["lookups"] == 26 * c["samples"], c
assert 0 < c["hits"] < c["lookups"], c
assert abs(c["hit_rate"] - c["hits"] / c["lookups"]) < 1e-12
assert len(c["table_hit_rate"]) == 26
misses = c["lookups"] - c["hits"]
assert abs(c["host_embedding_bytes_per_sample"] * c["samples"] - misses * c["row_bytes"]) < 1e-6 * misses * c["row_bytes"]
# Updates arrive at 2000 rows/s while LoadGen runs: never more than that rate allows.
assert 0 <= c["updates"]["applied"] <= 2000 * r["measured_s"] + 1, (c["updates"], r["measured_s"])
assert set(c["time_s"]) == {"updates", "copies", "lookup", "insert", "dense"}
# Each sample copies its 13 dense floats and 26 int32 ids; the cache holds at most its rows.
assert c["input_bytes_per_sample"] == (13 + 26) * 4, c["input_bytes_per_sample"]
assert 0 <= e["cache"]["occupied_at_end"] <= e["cache"]["rows"], e["cache"]
assert c["updates"]["left_unapplied"] >= 0 and c["inserted"] >= 0, c
assert abs(c["time_per_batch_ms"]["dense"] - 1e3 * c["time_s"]["dense"] / c["batches"]) < 1e-9 * max(1.0, c["time_per_batch_ms"]["dense"])
# Without a cache every row is read from the host tables.
o = json.load(open(sys.argv[2]))["runs"][0]["inference"]["engine"]
assert o["placement"] == "all_device" and o["counters"]["hits"] == 0
assert o["counters"]["host_embedding_bytes_per_sample"] == 26 * o["counters"]["row_bytes"]
PY
  pass "the cached run's engine record adds up and validates"
else
  fail "engine record is wrong (above)"
fi
grep -q "## DLRM serving" "$(dirname "$cached")/report.md" && pass "the run's report has the serving section" ||
  fail "no serving section: $(cat "$(dirname "$cached")/report.md")"

cat >"$tmp/capacity.yaml" <<EOF
name: capacity
workload: dlrm
backend: cpu
mode: inference
params: {placement: hot_cache, cache_policy: lfu, cache_capacity: ["0.5%", "2%", "8%"]}
inference: {scenario: offline, target_qps: 50000, min_duration_ms: 100, min_query_count: 32, max_batch: 64}
EOF
if "$PERFLAB" sweep "$tmp/capacity.yaml" --out "$tmp/capacity" >"$tmp/capacity.out" 2>&1 &&
  "$PERFLAB" report "$tmp/capacity" "$tmp/offline" --out "$tmp/capacity-report" >/dev/null 2>&1; then
  md="$tmp/capacity-report/report.md"
  [[ $(grep -c "^| cpu | offline | 1.05 | 50000 | hot_cache | " "$md") == 3 ]] &&
    grep -q "^| cpu | offline | 1.05 | 50000 | all_device | " "$md" &&
    pass "the sweep report's serving table has one row per capacity and the uncached point" ||
    fail "serving table: $(grep -A8 "DLRM serving" "$md")"
  [[ $(grep -cE "^\| cpu \| offline \| 1.05 \| 50000 \| (hot_cache|all_device) \| .* \| [0-9]+\.[0-9]{2}x \|" "$md") == 4 ]] &&
    pass "each point is compared with the cpu backend's all_device point" || fail "no comparison: $(grep "offline" "$md")"
  grep -q "Hot-row cache: hit rate and p99 latency by capacity" "$tmp/capacity-report/report.html" &&
    pass "the HTML report charts hit rate and p99 by capacity" || fail "no capacity chart in the HTML report"
else
  fail "capacity sweep: $(cat "$tmp/capacity.out")"
fi

# Serving what training produced: save_model writes each seed's model,
# serve_model serves it; a checkpoint of another shape is refused.
"$PERFLAB" run dlrm --backend cpu --set save_model="$tmp/models/dlrm-{seed}.ckpt" --out "$tmp/trained" \
  >"$tmp/trained.out" 2>&1 && [[ -s "$tmp/models/dlrm-1.ckpt" ]] && pass "a training run saves its model" ||
  fail "save_model: $(cat "$tmp/trained.out") $(ls "$tmp/models" 2>&1)"
"$PERFLAB" run dlrm --mode inference "${quick[@]}" --scenario offline --target-qps 50000 \
  --set serve_model="$tmp/models/dlrm-1.ckpt" --out "$tmp/served" >"$tmp/served.out" 2>&1 &&
  "$PYTHON" -c 'import json,sys; e=json.load(open(sys.argv[1]))["runs"][0]["inference"]["engine"]
assert e["model"] == sys.argv[2], e["model"]' "$(find "$tmp/served" -name result.json | head -n 1)" \
    "$tmp/models/dlrm-1.ckpt" && pass "an inference run serves the saved model" ||
  fail "serve_model: $(cat "$tmp/served.out")"
expect 2 "serve_model=.*: the checkpoint's bottom_mlp is \\[64,32,16\\], this model's is \\[64,32,8\\]: it does not match" -- \
  run dlrm --mode inference --backend cpu --set embed_dim=8 --set bottom_mlp=64-32-8 \
  --set serve_model="$tmp/models/dlrm-1.ckpt" --out "$tmp/never-serve"

# The workload checks its parameters after --out exists: it stays empty.
expect 2 "dlrm: cache_capacity=0: not a positive number" -- run dlrm --mode inference --backend cpu \
  --set placement=hot_cache --set cache_capacity=0 --out "$tmp/never-serve"
expect 2 "parameter cache_policy=fifo: not a valid choice" -- run dlrm --mode inference --backend cpu \
  --set placement=hot_cache --set cache_policy=fifo --out "$tmp/never-serve"
expect 2 "dlrm: a hot-row cache of 17179869184 rows needs about .* GB of host memory, more than 75% of the .* GB here; reduce cache_capacity" -- \
  run dlrm --mode inference --backend cpu --set placement=hot_cache --set cache_capacity=1TiB --out "$tmp/never-serve"
expect 2 "dlrm: placement applies to --mode inference" -- run dlrm --backend cpu \
  --set placement=host --out "$tmp/never-serve"
[[ ! -e "$tmp/never-serve" || -z "$(ls -A "$tmp/never-serve")" ]] && pass "nothing written for refused serving parameters" ||
  fail "refused serving parameters wrote $(ls -A "$tmp/never-serve")"

# A Server sweep over its target rate: one point per target, and the
# report's peak table (which target is VALID depends on the machine: only
# that the table holds the point and its two targets is asserted).
cat >"$tmp/peak.yaml" <<EOF
name: peak
workload: dlrm
backend: cpu
mode: inference
inference: {scenario: server, target_qps: [500, 1000000], latency_bound_ms: 50, min_duration_ms: 100,
            min_query_count: 32, max_batch: 32, max_wait_ms: 1}
EOF
if "$PERFLAB" sweep "$tmp/peak.yaml" --out "$tmp/peak" >"$tmp/peak.out" 2>&1; then
  [[ $(find "$tmp/peak" -path '*run_0_loadgen/mlperf_log_detail.txt' | wc -l) == 2 ]] &&
    grep -q "^| cpu | all_device | - | 2 | 1e+06 | " "$tmp/peak/peak/report.md" &&
    pass "a sweep over target_qps runs each target and reports the highest VALID one" ||
    fail "peak table: $(grep -A6 "highest target" "$tmp/peak/peak/report.md")"
else
  fail "target sweep: $(cat "$tmp/peak.out")"
fi
cat >"$tmp/peak-train.yaml" <<EOF
workload: dlrm
inference: {target_qps: [500, 1000]}
EOF
expect 2 "peak-train.yaml:2: inference.target_qps lists targets to sweep: set mode: inference" -- \
  sweep "$tmp/peak-train.yaml" --out "$tmp/never"

cat >"$tmp/bad.yaml" <<EOF
workload: dlrm
mode: inference
inference: {scenario: server, latency_bound_ms: 0}
EOF
expect 2 "bad.yaml:3: inference.latency_bound_ms must be a positive finite number" -- sweep "$tmp/bad.yaml" --out "$tmp/never"

expect 2 "--latency-bound-ms must be a positive number, got 0" -- run dlrm --mode inference --backend cpu \
  --scenario server --latency-bound-ms 0 --out "$tmp/never"
expect 2 "--scenario: 'multistream' is not a valid value" -- run dlrm --mode inference --backend cpu \
  --scenario multistream --out "$tmp/never"
expect 2 "--max-batch must be at least 1" -- run dlrm --mode inference --backend cpu --max-batch 0 --out "$tmp/never"
expect 2 "transducer has no inference mode" -- run transducer --mode inference --out "$tmp/never"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
expect_ranks 2 "--mode inference runs on one process" -- run dlrm --mode inference --backend cpu --out "$tmp/never"
[[ ! -e "$tmp/never" ]] && pass "nothing written for refused runs" || fail "refused runs wrote $tmp/never"

finish
