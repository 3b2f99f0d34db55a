#!/usr/bin/env bash
# End-to-end: throughput mode. The transducer (loss and joint, padded and
# packed) and dlrm --mode throughput run timed iterations and pass their
# correctness gates; results validate against the schema with kind
# "throughput"; the MLLOG records the gate; bad requests get one line and
# exit 2 (1 for a missing device); a comma list makes a throughput sweep.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

# check_result DIR WHAT: schema-valid throughput result whose runs passed their gate.
check_result() {
  local dir=$1 what=$2
  if "$PYTHON" - "$dir/result.json" "$PERFLAB_SOURCE_DIR/docs/result.schema.json" "$dir" <<'PY'
import json, sys, jsonschema, pathlib
result = json.load(open(sys.argv[1]))
jsonschema.validate(result, json.load(open(sys.argv[2])))
assert result["kind"] == "throughput", result["kind"]
assert result["quality"]["target"] is None
assert result["score"]["throughput_samples_per_s"] > 0
for run in result["runs"]:
    assert run["status"] == "success", run["reason"]
    assert run["correctness"]["passed"] is True
    assert run["iteration_ms"]["n"] == result["spec"]["iterations"]
    log = (pathlib.Path(sys.argv[3]) / run["log"]).read_text()
    gate = [json.loads(l.split(":::MLLOG ", 1)[1]) for l in log.splitlines() if "perflab_correctness" in l]
    assert len(gate) == 1 and gate[0]["value"] is True, gate
    assert '"key": "run_stop"' in log.splitlines()[-1]
assert result["work"]["bytes_per_iteration"] > 0
PY
  then pass "$what: result valid, gate passed and logged"; else fail "$what: result check"; fi
}

run_one() {  # run_one NAME ARGS...: runs perflab run ARGS into $tmp/NAME
  local name=$1
  shift
  if "$PERFLAB" run "$@" --backend cpu --out "$tmp/$name" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
    check_result "$(ls -d "$tmp/$name"/*/)" "$name"
  else
    fail "$name exited non-zero: $(cat "$tmp/$name.err" "$tmp/$name.out")"
  fi
}

run_one loss-padded transducer --preset tiny --iterations 12 --seeds 3
run_one loss-packed transducer --preset tiny --set layout=packed --set reduction=sum --iterations 12
run_one joint-padded transducer --preset joint-tiny --iterations 8
run_one joint-packed transducer --preset joint-tiny --set layout=packed --iterations 8
run_one dlrm-throughput dlrm --preset tiny --mode throughput --iterations 20
run_one triad triad --iterations 20
grep -q "correctness gate" "$(ls -d "$tmp/loss-padded"/*/)/report.md" && pass "report shows the gate" \
  || fail "report.md lacks the correctness gate"
grep -q "^throughput: .* sequences/s (median of 3)" "$tmp/loss-padded.out" && pass "summary: median of 3 seeds" \
  || fail "summary line: $(cat "$tmp/loss-padded.out")"

# Toggles the CPU cannot honour are recorded, never silently ignored.
"$PERFLAB" run transducer --backend cpu --fused on --iterations 2 --out "$tmp/tog" >/dev/null 2>"$tmp/tog.err"
grep -q "fused: requested: on, in effect: off (the cpu backend runs the one reference implementation)" "$tmp/tog.err" \
  && pass "--fused on the cpu: not in effect, with the reason" || fail "toggle line: $(cat "$tmp/tog.err")"

# A comma list makes a throughput sweep whose report compares throughput.
if "$PERFLAB" run transducer --backend cpu --set layout=padded,packed --iterations 4 --out "$tmp/sweep" \
    >"$tmp/sweep.out" 2>&1; then
  grep -q "## Throughput per point" "$tmp"/sweep/*/report.md && pass "throughput sweep report" \
    || fail "sweep report has no throughput table: $(ls -R "$tmp/sweep")"
else
  fail "throughput sweep: $(cat "$tmp/sweep.out")"
fi

# A throughput sweep's runs are scored as throughput: every run's result
# carries the median samples/s (here one seed: its own rate), not a time.
if "$PERFLAB" run dlrm --preset tiny --backend cpu --mode throughput --iterations 10 --warmup 1 \
    --set batch_size=256,512 --out "$tmp/dsweep" >"$tmp/dsweep.out" 2>&1; then
  if "$PYTHON" - "$tmp/dsweep" <<'PY'
import json, pathlib, sys
results = sorted(pathlib.Path(sys.argv[1]).glob("*/runs/*/result.json"))
assert len(results) == 2, results
for path in results:
    r = json.loads(path.read_text())
    assert r["kind"] == "throughput", (path, r["kind"])
    score = r["score"]["throughput_samples_per_s"]
    rate = r["runs"][0]["throughput_samples_per_s"]
    assert score is not None and abs(score - rate) <= 1e-9 * rate, (path, score, rate)
    timed = r["spec"]["iterations"] * r["plan"]["global_batch_size"]
    assert abs(score * r["runs"][0]["measured_s"] - timed) <= 1e-6 * timed, (path, "not samples/s", score)
PY
  then pass "throughput sweep: each run scored as samples/s"
  else fail "throughput sweep scores: $(cat "$tmp"/dsweep/*/runs/*/result.json | head -c 2000)"
  fi
else
  fail "dlrm throughput sweep: $(cat "$tmp/dsweep.out")"
fi

expect 2 "transducer has no time-to-train mode; available: throughput" -- run transducer --mode time-to-train --backend cpu
expect 2 "--iterations: must be in \[1, 1000000000\], got 0" -- run transducer --iterations 0 --backend cpu
expect 2 "cpu backend computes fp32 logits only" -- run transducer --preset mlperf-bf16 --backend cpu --out "$tmp/never"
expect 2 "needs about .* GB of host memory" -- run transducer --backend cpu --set batch=4096 --set max_time=2000 --out "$tmp/never"
expect 2 "blank 29 is outside the vocabulary" -- run transducer --backend cpu --set blank=29 --out "$tmp/never"
[[ ! -e "$tmp/never" ]] || [[ -z "$(ls -A "$tmp/never")" ]] && pass "refused runs left nothing" \
  || fail "refused runs left $(ls -A "$tmp/never")"
if ! "$PERFLAB" env 2>/dev/null | grep -q '"available": true'; then
  expect 1 "--backend cuda: .*(no usable CUDA device|built without CUDA)" -- run transducer --backend cuda --out "$tmp/never"
fi

finish
