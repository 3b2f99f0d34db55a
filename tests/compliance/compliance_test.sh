#!/usr/bin/env bash
# Proves perflab's rules files with the official MLPerf compliance checker:
# a good DLRM log passes, and logs broken in the ways that matter fail; the
# throughput log of every workload passes the throughput ruleset (chosen
# from the log's perflab_mode), and fails it when its gate failed or it
# claims an evaluation.
#  1. tests/compliance/fixtures/dlrm_tiny_good.log (written by MllogWriter in
#     the runner's event order) and copies of it mutated one way each;
#  2. when PERFLAB is set, the log of a real `perflab run dlrm --preset tiny`
#     and the same mutations of it.
# Environment (set by ctest): PERFLAB (the binary), PERFLAB_SOURCE_DIR,
# PYTHON (an interpreter with mlperf-logging; CI installs it, so a missing
# package fails this test rather than skipping it).
set -euo pipefail

src=${PERFLAB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=${PYTHON:-python3}
check=("$python" "$src/scripts/compliance-check")
fixture="$src/tests/compliance/fixtures/dlrm_tiny_good.log"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

if ! "$python" -c 'import mlperf_logging.compliance_checker' 2>/dev/null; then
  echo "FAIL: mlperf_logging is not installed for $python: $python -m pip install mlperf-logging"
  exit 1
fi

# expect CODE WORD NAME LOG [WHY]: compliance-check must exit CODE and print
# WORD (and WHY, the finding that shows it failed for the right reason).
expect() {
  local code=$1 word=$2 name=$3 log=$4 why=${5:-} out rc=0
  out=$("${check[@]}" "$log" 2>&1) || rc=$?
  if [[ $rc -eq $code && $out == *"$word"* && $out == *"$why"* ]]; then
    echo "ok:   $name (exit $rc)"
  else
    echo "FAIL: $name: expected exit $code, '$word' and '$why'; got exit $rc:"
    printf '%s\n' "$out" | sed 's/^/      /'
    failures=$((failures + 1))
  fi
}

# The tiny preset's target, read from the rules file's BEGIN code.
tiny_target=$("$python" - "$src/workloads/dlrm/rules/dlrm.yaml" <<'EOF'
import sys, yaml
begin = [r["BEGIN"] for r in yaml.load(open(sys.argv[1]), Loader=yaml.BaseLoader) if "BEGIN" in r]
s = {}
exec(begin[0]["CODE"], {"s": s})
print(s["targets"]["tiny"])
EOF
)

# mutate LOG OUT KIND: writes a copy of LOG broken one way.
mutate() {
  "$python" - "$1" "$2" "$3" "$tiny_target" <<'EOF'
import json, sys
src, dst, kind, target = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
token = ":::MLLOG "
out = []
for line in open(src):
    at = line.find(token)
    if at < 0:
        out.append(line)
        continue
    event = json.loads(line[at + len(token):])
    key = event["key"]
    if kind == "no_run_stop" and key == "run_stop":
        continue
    if kind == "below_target" and key == "eval_accuracy":
        event["value"] = min(event["value"], target - 0.001)
    if kind == "at_target" and key == "eval_accuracy":
        event["value"] = min(event["value"], target)
    if kind == "aborted" and key == "run_stop":
        event["metadata"]["status"] = "aborted"
        event["metadata"]["reason"] = "max_epochs reached"
    if kind == "no_epoch_num" and key == "eval_accuracy":
        event["metadata"].pop("epoch_num", None)
    if kind == "unknown_preset" and key == "perflab_preset":
        event["value"] = "no_such_preset"
    if kind == "no_cache_clear" and key == "cache_clear":
        continue
    if kind == "run_before_init_stop" and key == "init_stop":
        continue
    if kind == "run_before_init_stop" and key == "run_start":
        out.append(line)
        event["key"], event["event_type"] = "init_stop", "INTERVAL_END"
    if kind == "bad_precision" and key == "lowest_numerical_precision_in_linear":
        event["value"] = "fp33"
    if kind == "no_benchmark" and key == "submission_benchmark":
        continue
    if kind == "other_benchmark" and key == "submission_benchmark":
        event["value"] = "no_such_workload"
    if kind == "gate_failed" and key == "perflab_correctness":
        event["value"] = False
    if kind == "gate_failed" and key == "run_stop":
        event["metadata"]["status"] = "aborted"
    if kind == "no_gate" and key == "perflab_correctness":
        continue
    if kind == "with_eval" and key == "run_stop":
        extra = dict(event, key="eval_accuracy", event_type="POINT_IN_TIME", value=0.9,
                     metadata={"epoch_num": 1})
        out.append(line[:at] + token + json.dumps(extra) + "\n")
    if kind == "no_mode" and key == "perflab_mode":
        continue
    if kind == "bad_mode" and key == "perflab_mode":
        event["value"] = "sprint"
    out.append(line[:at] + token + json.dumps(event) + "\n")
open(dst, "w").writelines(out)
EOF
}

# The cases every good log must meet.
check_log() {
  local name=$1 log=$2
  expect 0 SUCCESS "$name passes" "$log"
  mutate "$log" "$tmp/no_run_stop.log" no_run_stop
  expect 1 FAILED "$name without run_stop fails" "$tmp/no_run_stop.log" \
    "occurrence of 'run_stop' but found 0"
  mutate "$log" "$tmp/below.log" below_target
  expect 1 FAILED "$name with every eval_accuracy below $tiny_target fails" "$tmp/below.log" \
    "Failed checks for eval_accuracy"
  mutate "$log" "$tmp/aborted.log" aborted
  expect 1 FAILED "$name with run_stop status aborted fails" "$tmp/aborted.log" \
    "get('status') == 'success'"
}

echo "# fixture (tiny target $tiny_target)"
check_log fixture "$fixture"
# kind and the finding it must produce.
declare -A why=(
  [no_epoch_num]="failed test: 'epoch_num' in v['metadata']"
  [unknown_preset]="failed test: v['value'] in s['targets']"
  [no_cache_clear]="occurrence of 'cache_clear' but found 0"
  [run_before_init_stop]="failed test: not s['run_started']"
  [bad_precision]="failed test: v['value'] in s['precisions']"
)
for kind in "${!why[@]}"; do
  mutate "$fixture" "$tmp/$kind.log" "$kind"
  expect 1 FAILED "fixture: $kind fails" "$tmp/$kind.log" "${why[$kind]}"
done
mutate "$fixture" "$tmp/at_target.log" at_target
expect 0 SUCCESS "fixture: best eval_accuracy exactly at the target passes" "$tmp/at_target.log"
mutate "$fixture" "$tmp/no_benchmark.log" no_benchmark
expect 2 "no submission_benchmark" "fixture: no submission_benchmark is a usage error" \
  "$tmp/no_benchmark.log"
mutate "$fixture" "$tmp/other_benchmark.log" other_benchmark
expect 2 "no rules for benchmark" "fixture: a benchmark without rules is a usage error" \
  "$tmp/other_benchmark.log"
expect 2 "no such file" "a missing log is a usage error" "$tmp/missing.log"

if [[ -n ${PERFLAB:-} ]]; then
  echo "# perflab run dlrm --preset tiny"
  if ! "$PERFLAB" run dlrm --preset tiny --backend cpu --seeds 1 --out "$tmp/out" \
    >"$tmp/run.out" 2>&1; then
    echo "FAIL: perflab run failed:"
    sed 's/^/      /' "$tmp/run.out"
    exit 1
  fi
  mapfile -t logs < <(find "$tmp/out" -name 'run_*.log')
  if [[ ${#logs[@]} -ne 1 ]]; then
    echo "FAIL: expected one run_*.log under --out, found ${#logs[@]}"
    exit 1
  fi
  check_log "perflab run" "${logs[0]}"

  echo "# every workload's throughput log"
  runs=(
    "triad:run triad --backend cpu --mode throughput --iterations 3"
    "dlrm:run dlrm --preset tiny --backend cpu --mode throughput --iterations 3"
    "transducer:run transducer --backend cpu --iterations 2"
    "collectives:run collectives --backend cpu --iterations 2"
    "collectives-int32:run collectives --backend cpu --iterations 2 --set dtype=int32"
    "halo_conv:run halo_conv --backend cpu --iterations 2"
  )
  for entry in "${runs[@]}"; do
    name=${entry%%:*}
    read -r -a args <<<"${entry#*:}"
    if ! "$PERFLAB" "${args[@]}" --out "$tmp/tp-$name" >"$tmp/tp.out" 2>&1; then
      echo "FAIL: perflab ${args[*]}:"
      sed 's/^/      /' "$tmp/tp.out"
      failures=$((failures + 1))
      continue
    fi
    log=$(find "$tmp/tp-$name" -name 'run_0.log' | head -n 1)
    expect 0 "SUCCESS (throughput)" "$name throughput log passes" "$log"
  done
  log=$(find "$tmp/tp-dlrm" -name 'run_0.log' | head -n 1)
  mutate "$log" "$tmp/gate_failed.log" gate_failed
  expect 1 "FAILED (throughput)" "a throughput log whose gate failed fails" "$tmp/gate_failed.log" \
    "failed test: v['value'] is True"
  mutate "$log" "$tmp/no_gate.log" no_gate
  expect 1 "FAILED (throughput)" "a throughput log without its gate fails" "$tmp/no_gate.log" \
    "occurrence of 'perflab_correctness' but found 0"
  mutate "$log" "$tmp/with_eval.log" with_eval
  expect 1 "FAILED (throughput)" "a throughput log that claims an evaluation fails" "$tmp/with_eval.log" \
    "CHECK for 'eval_accuracy' failed"
  mutate "$log" "$tmp/no_mode.log" no_mode
  expect 1 "FAILED (time-to-train)" "without perflab_mode a log is time to train (and this one fails it)" \
    "$tmp/no_mode.log" "occurrence of 'eval_accuracy' but found 0"
  mutate "$log" "$tmp/bad_mode.log" bad_mode
  expect 2 "perflab_mode \"sprint\" is not one of" "an unknown perflab_mode is a usage error" "$tmp/bad_mode.log"
else
  echo "# PERFLAB not set: the end-to-end run was not checked"
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
