#!/usr/bin/env bash
# End-to-end: interrupted invocations end in a state the user can trust.
# SIGINT during a time-to-train run and SIGTERM during a throughput run: the
# run in flight ends with run_stop "aborted" and the reason, the result is
# written (schema-valid, marked interrupted, no score), the folder is
# complete (no .partial left), one line says what happened, exit 128+signal.
# An interrupted sweep resumes and runs the interrupted run again. A second
# SIGINT ends the process at once; its work folder is removed by the next
# invocation in the same place, a live process's is not.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

# start OUT ARGS...: perflab run ARGS --out OUT in the background; sets $pid.
start() {
  local out=$1
  shift
  "$PERFLAB" "$@" --backend cpu --out "$out" >"$out.out" 2>"$out.err" &
  pid=$!
}

# wait_for GLOB: until a file matching GLOB exists (at most 300 s: a loaded
# machine), while the run started last ($pid) is alive.
wait_for() {
  for _ in $(seq 3000); do
    kill -0 "$pid" 2>/dev/null || { compgen -G "$1" >/dev/null; return; }
    compgen -G "$1" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# check_interrupted DIR SIGNAL: the one invocation folder under DIR holds a
# schema-valid result marked SIGNAL whose last run ended aborted by it.
check_interrupted() {
  "$PYTHON" - "$1" "$2" "$PERFLAB_SOURCE_DIR/docs/result.schema.json" <<'PY'
import json, pathlib, sys, jsonschema
out, signal, schema = pathlib.Path(sys.argv[1]), sys.argv[2], json.load(open(sys.argv[3]))
folders = [p for p in out.iterdir()]
assert len(folders) == 1 and not folders[0].name.startswith("."), folders  # complete, no .partial
result = json.loads((folders[0] / "result.json").read_text())
jsonschema.validate(result, schema)
assert result["interrupted"] == signal, result["interrupted"]
assert result["score"]["time_to_train_s"] is None and result["score"]["throughput_samples_per_s"] is None
last = result["runs"][-1]
assert last["status"] == "aborted" and last["reason"].startswith("interrupted by " + signal), last["reason"]
log = (folders[0] / last["log"]).read_text().splitlines()
stop = json.loads(log[-1].split(":::MLLOG ", 1)[1])
assert stop["key"] == "run_stop" and stop["metadata"]["status"] == "aborted", stop
assert (folders[0] / "report.md").exists()
PY
}

# SIGINT during time to train (3 seeds: the interrupt lands in the first).
start "$tmp/int" run dlrm --preset tiny --seeds 3
wait_for "$tmp/int/.*.partial-*/run_0.log" || fail "the run never started"
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc -eq 130 ]] && pass "SIGINT: exit 130" || fail "SIGINT: exit $rc: $(cat "$tmp/int.err")"
check_interrupted "$tmp/int" SIGINT && pass "SIGINT: complete folder, result marked, run_stop aborted" \
  || fail "SIGINT: $(ls -la "$tmp/int")"
[[ $(grep -c "^perflab: interrupted by SIGINT" "$tmp/int.err") -eq 1 ]] && pass "SIGINT: one line says so" \
  || fail "SIGINT: $(cat "$tmp/int.err")"

# SIGTERM (a scheduler's pre-kill signal) during a throughput run.
start "$tmp/term" run transducer --preset tiny --iterations 100000000
wait_for "$tmp/term/.*.partial-*/run_0.log" || fail "the throughput run never started"
sleep 0.5
kill -TERM "$pid"
wait "$pid"
rc=$?
[[ $rc -eq 143 ]] && pass "SIGTERM: exit 143" || fail "SIGTERM: exit $rc: $(cat "$tmp/term.err")"
check_interrupted "$tmp/term" SIGTERM && pass "SIGTERM: complete folder, result marked, run_stop aborted" \
  || fail "SIGTERM: $(ls -la "$tmp/term")"

# An interrupted sweep resumes: the interrupted run runs again, finished ones do not.
start "$tmp/sweep" run dlrm --preset tiny --mode throughput --iterations 2000 --set batch_size=256,512
wait_for "$tmp/sweep/*/runs/.*.partial-*/run_0.log" || fail "the sweep never started"
sleep 0.2
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc -eq 130 ]] && pass "sweep: SIGINT exits 130" || fail "sweep: exit $rc: $(cat "$tmp/sweep.err")"
interrupted=$(grep -l '"interrupted": "SIGINT"' "$tmp"/sweep/*/runs/*/result.json 2>/dev/null | head -n 1)
[[ -n "$interrupted" ]] && pass "sweep: the run in flight was kept, marked interrupted" \
  || fail "sweep: no interrupted run result: $(ls -R "$tmp/sweep")"
if "$PERFLAB" run dlrm --preset tiny --mode throughput --iterations 2000 --set batch_size=256,512 --backend cpu \
    --out "$tmp/sweep" >"$tmp/sweep2.out" 2>"$tmp/sweep2.err"; then
  if [[ -n "$interrupted" ]] && ! grep -q '"interrupted": "SIGINT"' "$interrupted" \
      && [[ $(grep -L '"interrupted": "SIGINT"' "$tmp"/sweep/*/runs/*/result.json | wc -l) -eq 2 ]]; then
    pass "sweep: resumed; the interrupted run ran again (not taken as finished)"
  else
    fail "sweep resume: $(cat "$tmp/sweep2.out")"
  fi
else
  fail "sweep resume failed: $(cat "$tmp/sweep2.err")"
fi

# A second SIGINT ends the process at once; the next run removes its work
# folder but keeps one of a live process.
start "$tmp/twice" run dlrm --preset tiny --seeds 3
wait_for "$tmp/twice/.*.partial-*/run_0.log" || fail "the run never started"
kill -INT "$pid"
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc -eq 130 ]] && pass "second SIGINT: exit 130 at once" || fail "second SIGINT: exit $rc"
mkdir -p "$tmp/twice/.live.partial-$$"
"$PERFLAB" run transducer --iterations 2 --backend cpu --out "$tmp/twice" >/dev/null 2>&1
left=$(find "$tmp/twice" -maxdepth 1 -name '.*.partial-*' -printf '%f\n')
[[ "$left" == ".live.partial-$$" ]] && pass "dead process's work folder removed, live one kept" \
  || fail "work folders left: $left"

finish
