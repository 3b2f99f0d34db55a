#!/usr/bin/env bash
# End-to-end: processes sharing one results folder never lose or replace
# each other's results (issue 24). Eight `perflab run`s started together
# into one --out each get a folder of their own (names are per second; the
# folder is reserved with mkdir), every result present and schema-valid.
# Three `perflab sweep`s of one file started together share the work: each
# run key is run once, by the process holding its lock, and the others
# reuse it; every run folder is complete and nothing partial is left.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

# valid_results DIR COUNT: DIR holds exactly COUNT folders, none hidden, each
# with a schema-valid result.json of a successful run.
valid_results() {
  "$PYTHON" - "$1" "$2" "$PERFLAB_SOURCE_DIR/docs/result.schema.json" <<'PY'
import json, pathlib, sys, jsonschema
folder, count, schema = pathlib.Path(sys.argv[1]), int(sys.argv[2]), json.load(open(sys.argv[3]))
entries = sorted(p for p in folder.iterdir() if p.is_dir())
hidden = [p.name for p in entries if p.name.startswith(".")]
assert not hidden, f"partial folders left: {hidden}"
assert len(entries) == count, f"{len(entries)} folders, expected {count}: {[p.name for p in entries]}"
for p in entries:
    result = json.loads((p / "result.json").read_text())
    jsonschema.validate(result, schema)
    assert all(r["status"] == "success" for r in result["runs"]), p
PY
}

# together COUNT NAME ARGS...: COUNT `perflab ARGS` started at once, output in
# $tmp/NAME<i>.out and .err; waits for all; $status is the last non-zero exit.
together() {
  local count=$1 name=$2
  shift 2
  local pids=()
  for i in $(seq "$count"); do
    "$PERFLAB" "$@" >"$tmp/$name$i.out" 2>"$tmp/$name$i.err" &
    pids+=($!)
  done
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
}

# Eight runs into one folder at once.
together 8 run run triad --backend cpu --threads 1 --out "$tmp/runs"
[[ $status -eq 0 ]] && pass "8 concurrent runs: all exit 0" || fail "8 concurrent runs: exit $status: $(cat "$tmp"/run*.err)"
if msg=$(valid_results "$tmp/runs" 8 2>&1); then
  pass "8 concurrent runs: 8 folders, each result valid"
else
  fail "8 concurrent runs: $msg"
fi

# Three sweeps of one file at once.
cat >"$tmp/conc.yaml" <<'YAML'
name: conc
workload: triad
preset: tiny
params:
  elements: [1000, 2000]
seeds: 2
YAML
together 3 sweep sweep "$tmp/conc.yaml" --out "$tmp/sweeps"
[[ $status -eq 0 ]] && pass "3 concurrent sweeps: all exit 0" || fail "3 concurrent sweeps: exit $status: $(cat "$tmp"/sweep*.err)"
if msg=$(valid_results "$tmp/sweeps/conc/runs" 4 2>&1); then
  pass "3 concurrent sweeps: 4 run folders, each result valid"
else
  fail "3 concurrent sweeps: $msg"
fi
# "sweep conc: 4 run(s), N run now, M reused from earlier, ...": every run
# key ran once in all, and was reused by the two other sweeps.
ran=0
reused=0
for i in 1 2 3; do
  line=$(grep "^sweep conc:" "$tmp/sweep$i.out")
  ran=$((ran + $(sed -E 's/.* ([0-9]+) run now.*/\1/' <<<"$line")))
  reused=$((reused + $(sed -E 's/.* ([0-9]+) reused.*/\1/' <<<"$line")))
done
[[ $ran -eq 4 && $reused -eq 8 ]] && pass "3 concurrent sweeps: 4 runs in all, 8 reused" ||
  fail "3 concurrent sweeps: $ran runs and $reused reused in all, expected 4 and 8: $(cat "$tmp"/sweep*.out)"

finish
