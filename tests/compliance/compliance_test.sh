#!/usr/bin/env bash
# Proves perflab's rules files with the official MLPerf compliance checker:
# a good DLRM log passes, and logs broken in the ways that matter fail.
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
else
  echo "# PERFLAB not set: the end-to-end run was not checked"
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
