#!/usr/bin/env bash
# Runs the official mlperf_logging tools on a folder exported by
# `perflab export --mlperf` from a real `perflab run dlrm --preset tiny
# --seeds 3`, and asserts exactly what each tool makes of a custom benchmark:
#   passes:  compliance checker with perflab's rules (scripts/compliance-check),
#            system_desc_checker on systems/<system>.json,
#            package_checker (system description checked; dlrm skipped as not
#            an MLPerf 6.1 benchmark; "FOUND NO ERRORS"),
#            the result summarizer's log parsing and scoring functions
#            (time to train, olympic mean) agree with perflab's score,
#            the rcp_checker's log reader finds perflab's batch size and epochs;
#   cannot:  result_summarizer as a program (its compliance pass loads
#            training_6.1.0/open_dlrm.yaml, which does not exist),
#            rcp_checker as a program (no run count for "dlrm": KeyError).
# Environment (set by ctest): PERFLAB, PERFLAB_SOURCE_DIR, PYTHON. Exits 77
# (skip) when PERFLAB is unset or has no `export` command yet.
set -euo pipefail

src=${PERFLAB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=${PYTHON:-python3}
ruleset=6.1.0
if [[ -z ${PERFLAB:-} || ! -x ${PERFLAB:-} ]]; then
  echo "SKIP: PERFLAB is not set to the perflab binary"
  exit 77
fi
if ! "$PERFLAB" export --help >/dev/null 2>&1; then
  echo "SKIP: $PERFLAB has no 'export' command yet"
  exit 77
fi
if ! "$python" -c 'import mlperf_logging.package_checker' 2>/dev/null; then
  echo "FAIL: mlperf_logging is not installed for $python: $python -m pip install mlperf-logging"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok:   $1"; }
fail() {
  echo "FAIL: $1"
  [[ -n ${2:-} ]] && printf '%s\n' "$2" | tail -20 | sed 's/^/      /'
  failures=$((failures + 1))
}
# has NAME TEXT WORD...: TEXT contains every WORD.
has() {
  local name=$1 text=$2 word
  shift 2
  for word in "$@"; do
    if [[ $text != *"$word"* ]]; then
      fail "$name: no '$word' in the output" "$text"
      return
    fi
  done
  ok "$name"
}

"$PERFLAB" run dlrm --preset tiny --seeds 3 --out "$tmp/runs" >"$tmp/run.out" 2>&1 ||
  { fail "perflab run" "$(cat "$tmp/run.out")"; exit 1; }
run_dir=$(dirname "$(ls "$tmp"/runs/*/result.json)")

# The export and its layout.
rc=0
out=$("$PERFLAB" export --mlperf "$tmp/sub" "$tmp/runs" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || { fail "perflab export (exit $rc)" "$out"; exit 1; }
systems=("$tmp"/sub/systems/*.json)
system=$(basename "${systems[0]}" .json)
bench="$tmp/sub/results/$system/dlrm"
results=("$bench"/result_*.txt)
if [[ ${#systems[@]} -eq 1 && ${#results[@]} -eq 3 ]] &&
  cmp -s "$run_dir/run_0.log" "$bench/result_0.txt" &&
  cmp -s "$run_dir/run_2.log" "$bench/result_2.txt"; then
  ok "export layout: systems/$system.json, results/$system/dlrm/result_{0,1,2}.txt"
else
  fail "export layout" "$(cd "$tmp/sub" && find . | sort)"
fi
rc=0
out=$("$PERFLAB" export --mlperf "$tmp/sub" "$tmp/runs" 2>&1) || rc=$?
[[ $rc -eq 2 ]] && ok "export into a non-empty folder is refused (exit 2)" ||
  fail "export into a non-empty folder: exit $rc" "$out"

# 1. perflab's rules through the official compliance checker, per file.
rc=0
out=$("$python" "$src/scripts/compliance-check" "${results[@]}" 2>&1) || rc=$?
[[ $rc -eq 0 ]] && has "compliance checker with perflab rules, 3 files" "$out" SUCCESS ||
  fail "compliance checker (exit $rc)" "$out"

# 2. The system description checker.
out=$(cd "$tmp" && "$python" -m mlperf_logging.system_desc_checker "${systems[0]}" training \
  "$ruleset" --log_output "$tmp/sd.log" 2>&1; cat "$tmp/sd.log")
has "system_desc_checker" "$out" "System description checker passed for $system"

# 3. The package checker: exits 0 whatever it finds, so read its verdict.
out=$("$python" -m mlperf_logging.package_checker "$tmp/sub" training "$ruleset" \
  --log_output "$tmp/pc.log" 2>&1)
has "package_checker: systems pass, dlrm skipped, no errors" "$out" \
  "System description checker passed for $system" "Skipping benchmark: dlrm" \
  "PACKAGE CHECKER FOUND NO ERRORS"

# 4. The result summarizer as a program cannot score a custom benchmark.
rc=0
out=$(cd "$tmp" && "$python" -m mlperf_logging.result_summarizer "$tmp/sub" training "$ruleset" 2>&1) ||
  rc=$?
[[ $rc -ne 0 ]] && has "result_summarizer stops: no open_dlrm.yaml in its ruleset (expected)" \
  "$out" "open_dlrm.yaml" || fail "result_summarizer unexpectedly exited 0: update the README" "$out"

# 5. Its scoring functions on our logs agree with perflab's score, and the
#    rcp_checker's reader sees perflab's batch size and epochs.
cat >"$tmp/agree.py" <<'EOF'
import json, sys
from mlperf_logging.compliance_checker.mlp_parser import parse_file
from mlperf_logging.result_summarizer import result_summarizer as rs
from mlperf_logging.rcp_checker import rcp_checker
result, ruleset, files = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3:]
minutes, by_log = [], {}
for f in files:
    lines, failed = parse_file(f, ruleset=ruleset)
    assert not failed, (f, failed)
    minutes.append(rs._query_mlperf_strong_scaling_score(lines))
    by_log[f.rsplit("/", 1)[-1].replace("result_", "run_").replace(".txt", ".log")] = minutes[-1]
# perflab's time to train is the log's run_stop - run_start, read from the
# same two stamps: equal up to the summarizer's minutes arithmetic.
assert sorted(by_log) == sorted(r["log"] for r in result["runs"]), (sorted(by_log), result["runs"])
for run in result["runs"]:
    m = by_log[run["log"]]
    assert abs(m * 60 - run["time_to_train_s"]) < 1e-6, (run["log"], m * 60, run["time_to_train_s"])
official = rs._compute_olympic_average(minutes, 0, 1) * 60
ours = result["score"]["time_to_train_s"]
assert abs(official - ours) < 1e-6, (official, ours)
bs, epochs, bench = rcp_checker.get_submission_epochs(files, ruleset, False)
assert bench == "dlrm" and bs == result["plan"]["global_batch_size"], (bench, bs)
expect = [round(r["epochs"], 3) for r in result["runs"]]
assert epochs == expect, (epochs, expect)
print("official olympic mean %.3f s, perflab %.3f s; epochs %s" % (official, ours, epochs))
EOF
rc=0
out=$("$python" "$tmp/agree.py" "$run_dir/result.json" "$ruleset" "${results[@]}" 2>&1) || rc=$?
[[ $rc -eq 0 ]] && ok "summarizer scoring and rcp_checker reader agree: $out" ||
  fail "summarizer scoring / rcp_checker reader" "$out"

# 6. The rcp_checker as a program has no run count for a custom benchmark.
echo '{"dlrm_ref_256": {"Benchmark": "dlrm", "BS": 256, "Hyperparams": {},
  "Epochs to converge": [1, 1, 1]}}' >"$tmp/rcps.json"
rc=0
out=$(cd "$tmp" && "$python" -m mlperf_logging.rcp_checker "$bench" --rcp_version "$ruleset" \
  --custom_rcps "$tmp/rcps.json" 2>&1) || rc=$?
[[ $rc -ne 0 ]] && has "rcp_checker stops: KeyError 'dlrm' (expected)" "$out" "KeyError: 'dlrm'" ||
  fail "rcp_checker unexpectedly exited 0: update the README" "$out"

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all MLPerf tool checks behaved as expected"
