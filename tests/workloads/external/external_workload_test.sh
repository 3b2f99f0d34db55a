#!/usr/bin/env bash
# End-to-end: external programs as workloads (workloads/external). A program
# that crashes, hangs past its timeout, writes a truncated log, no log, or
# an aborted run ends in one clear reason, a failed run recorded and the
# sweep going on; an interrupted sweep of a program resumes; the example
# trainer (numpy + mlperf_logging) sweeps a parameter list x fused on/off x 3
# seeds, its logs pass the compliance check, and its results go through the
# report's toggle matrix, compare, history and rerun; perflab's own DLRM run
# wrapped as a program trains to its target. Bad workload files get one
# line "file:line: reason" and exit 2.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$PERFLAB_SOURCE_DIR/tests/cli/lib.bash"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
here="$PERFLAB_SOURCE_DIR/tests/workloads/external"
examples="$PERFLAB_SOURCE_DIR/workloads/external/examples"
schema="$PERFLAB_SOURCE_DIR/docs/result.schema.json"

# --- every way a program can fail, in one sweep ------------------------------
if "$PERFLAB" run "$here/fake.workload.yaml" --set mode=ok,aborted,crash,hang,truncate,nolog \
    --out "$tmp/fail" >"$tmp/fail.out" 2>"$tmp/fail.err"; then
  fail "a sweep with failed runs exited 0"
else
  pass "a sweep with failed runs exited non-zero ($?)"
fi
grep -q "6 run(s), 6 run now, 0 reused from earlier, 5 missed the target" "$tmp/fail.out" &&
  pass "the sweep went on past each failure" || fail "not every point ran: $(cat "$tmp/fail.out" "$tmp/fail.err")"
[[ -z "$(find "$tmp/fail" -name '.*.partial-*')" ]] && pass "no work folder left" ||
  fail "work folders left: $(find "$tmp/fail" -name '.*.partial-*')"
if "$PYTHON" - "$tmp/fail" "$schema" <<'PY'; then
import glob, json, sys
import jsonschema
schema = json.load(open(sys.argv[2]))
want = {
    "ok": ("success", "eval_accuracy 0.81 >= target 0.8"),
    "aborted": ("aborted", "its run_stop status is aborted"),
    "crash": ("aborted", "the program was killed by SIGSEGV"),
    "hang": ("aborted", "the program timed out after"),
    "truncate": ("aborted", "its log has no run_stop and a bad line"),
    "nolog": ("aborted", "the program wrote no :::MLLOG line"),
}
seen = set()
for path in glob.glob(sys.argv[1] + "/*/runs/*/result.json"):
    d = json.load(open(path))
    jsonschema.validate(d, schema)
    mode = d["spec"]["params"]["mode"]
    run = d["runs"][0]
    status, reason = want[mode]
    assert run["status"] == status, (mode, run["status"], run["reason"])
    assert run["reason"].startswith(reason), (mode, run["reason"])
    assert "\n" not in run["reason"], (mode, run["reason"])
    p = run["program"]
    assert p["command"][1:3] == [mode, "1"], p["command"]
    assert ("NCCL_COLLNET_ENABLE", "0") in p["env"].items(), p["env"]  # sharp off maps to an env var
    if mode == "crash":
        assert p["signal"] == "SIGSEGV" and p["exit_status"] is None, p
    if mode == "hang":
        assert p["timed_out"] and p["wall_s"] >= 8, p
    if mode == "ok":
        assert d["plan"]["global_batch_size"] == 32 and d["plan"]["train_samples"] == 1000, d["plan"]
        assert p["submission"] == {"submission_benchmark": "fake", "submission_org": "perflab-tests"}, p
        assert [q["value"] for q in run["quality_curve"]] == [0.5, 0.81], run["quality_curve"]
        assert run["time_to_train_s"] == 1.49, run["time_to_train_s"]  # run_start +10 ms .. run_stop +1500 ms
        assert d["score"]["time_to_train_s"] is not None
    else:
        assert d["score"]["time_to_train_s"] is None, d["score"]
    seen.add(mode)
assert seen == set(want), seen
PY
  pass "each failure recorded with its reason, schema-valid"
else
  fail "the failed runs' results"
fi
dir=$(compgen -G "$tmp/fail/fake-sweep-*" | head -n 1)
crash=$(grep -l '"crash"' "$dir"/runs/*/result.json | head -n 1)
[[ -s "$(dirname "$crash")/run_0.out" && -f "$(dirname "$crash")/run_0.err" ]] &&
  pass "the program's output is kept beside its log" || fail "no run_0.out / run_0.err for the crash"

# The default compliance check on a log of a benchmark MLPerf has no rules
# for (the example trainer's, without its own rules): not checked, with the
# reason, and the run stands. The fake trainer's log, which misses keys the
# common rules require, fails the same check.
if "$PYTHON" -c 'import mlperf_logging, numpy' 2>/dev/null; then
  mkdir -p "$tmp/cc"
  cp "$here/fake_trainer.sh" "$examples/logreg_train.py" "$tmp/cc/"
  grep -v '^compliance:' "$examples/logreg.workload.yaml" >"$tmp/cc/logreg.workload.yaml"
  grep -v '^compliance:' "$here/fake.workload.yaml" >"$tmp/cc/fake.workload.yaml"
  "$PERFLAB" run "$tmp/cc/logreg.workload.yaml" --out "$tmp/cc/out" >/dev/null 2>"$tmp/cc.err"
  "$PERFLAB" run "$tmp/cc/fake.workload.yaml" --out "$tmp/cc/out" >/dev/null 2>>"$tmp/cc.err"
  if "$PYTHON" - "$tmp/cc/out" <<'PY'; then
import glob, json, sys
(logreg,) = [json.load(open(p))["runs"][0] for p in glob.glob(sys.argv[1] + "/logreg-*/result.json")]
assert logreg["status"] == "success", logreg["reason"]
c = logreg["program"]["compliance"]
assert c["status"] == "not checked" and "no file for this log's submission_benchmark" in c["detail"], c
(fake,) = [json.load(open(p))["runs"][0] for p in glob.glob(sys.argv[1] + "/fake-*/result.json")]
assert fake["status"] == "aborted" and fake["program"]["compliance"]["status"] == "failed", fake["program"]
assert fake["reason"].startswith("its log failed the compliance check: WARNING"), fake["reason"]
PY
    pass "the official checker: a non-MLPerf benchmark is not checked (with the reason), a log missing keys fails"
  else
    fail "default compliance: $(cat "$tmp/cc.err")"
  fi
fi

# A program started under mpirun by its own command: perflab runs mpirun
# once; rank 0 writes the log.
if command -v mpirun >/dev/null; then
  mkdir -p "$tmp/mpi"
  cp "$here/fake_trainer.sh" "$tmp/mpi/"
  cat >"$tmp/mpi/two.workload.yaml" <<'YAML'
command: [mpirun, -np, "2", sh, -c, 'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec "$0" ok "$1" /none; fi',
          "{workload_dir}/fake_trainer.sh", "{seed}"]
quality: {key: eval_accuracy, target: 0.8}
compliance: off
YAML
  if "$PERFLAB" run "$tmp/mpi/two.workload.yaml" --seeds 2 --out "$tmp/mpi/out" >/dev/null 2>"$tmp/mpi.err" &&
      "$PYTHON" -c 'import json, sys; runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 2 and all(r["status"] == "success" for r in runs), runs' "$(compgen -G "$tmp/mpi/out/two-*/result.json" | head -n 1)"; then
    pass "a program under mpirun (2 ranks, started by its command): 2 seeds succeeded"
  else
    fail "mpirun program: $(cat "$tmp/mpi.err") $(cat "$tmp"/mpi/out/two-*/run_0.err 2>/dev/null)"
  fi
fi

# --- one-line errors -----------------------------------------------------------
expect 2 "maps no fused toggle" -- run "$here/fake.workload.yaml" --fused on --out "$tmp/x"
expect 2 "nothing.workload.yaml: no such file" -- \
  run "$tmp/nothing.workload.yaml" --out "$tmp/x"
printf 'summary: no command\nparams: []\n' >"$tmp/nocmd.workload.yaml"
expect 2 "nocmd.workload.yaml:1: the workload file has no command" -- run "$tmp/nocmd.workload.yaml" --out "$tmp/x"
printf 'command: [sh, -c, "exit 0"]\ncomand: typo\n' >"$tmp/typo.workload.yaml"
expect 2 "typo.workload.yaml:2: the workload file: unknown key 'comand'" -- run "$tmp/typo.workload.yaml" --out "$tmp/x"
printf 'command: [sh, "{sede}"]\n' >"$tmp/ph.workload.yaml"
expect 2 "ph.workload.yaml:1: .*unknown placeholder \{sede\}" -- run "$tmp/ph.workload.yaml" --out "$tmp/x"
printf 'command: [no-such-program-here]\n' >"$tmp/np.workload.yaml"
expect 2 "'no-such-program-here' is not an executable found on PATH" -- run "$tmp/np.workload.yaml" --out "$tmp/x"
expect 2 "parameter mode=sideways: not a valid choice" -- run "$here/fake.workload.yaml" --set mode=sideways --out "$tmp/x"
expect 2 "fake has no throughput mode; available: time-to-train" -- \
  run "$here/fake.workload.yaml" --mode throughput --out "$tmp/x"
if command -v mpirun >/dev/null; then
  expect_ranks 2 "fake is an external program, which perflab starts once per run" -- \
    run "$here/fake.workload.yaml" --out "$tmp/x"
fi
[[ ! -e "$tmp/x" || -z "$(ls -A "$tmp/x")" ]] && pass "refused runs wrote nothing" || fail "refused runs wrote $(ls -A "$tmp/x")"

# --- an interrupted sweep resumes -----------------------------------------------
# The wait mode blocks until the gate file exists, so the interruption always
# lands inside a run; a copy of the workload file with a long timeout, so a
# slow machine cannot turn the wait into a timeout.
mkdir -p "$tmp/slow"
cp "$here/fake_trainer.sh" "$tmp/slow/"
sed 's/^timeout: .*/timeout: 300/' "$here/fake.workload.yaml" >"$tmp/slow/fake.workload.yaml"
cat >"$tmp/slow/sweep.yaml" <<EOF
name: resume
workload: fake.workload.yaml
params: {mode: [ok, wait], gate: ["$tmp/gate"]}
seeds: 3
EOF
"$PERFLAB" sweep "$tmp/slow/sweep.yaml" --out "$tmp/res" >"$tmp/res1.out" 2>"$tmp/res1.err" &
pid=$!
for _ in $(seq 3000); do  # 300 s at most, while the sweep runs
  kill -0 "$pid" 2>/dev/null || break
  n=$(compgen -G "$tmp/res/resume/runs/*/result.json" | wc -l)
  [[ $n -ge 3 ]] && compgen -G "$tmp/res/resume/runs/.*.partial-*/run_0.out" >/dev/null && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc -ne 0 ]] && pass "interrupted sweep exited $rc" || fail "interrupted sweep exited 0"
if "$PYTHON" - "$tmp/res/resume/runs" <<'PY'; then
import glob, json, sys
done = interrupted = 0
for path in glob.glob(sys.argv[1] + "/*/result.json"):
    d = json.load(open(path))
    if d["interrupted"]:
        interrupted += 1
        run = d["runs"][0]
        assert d["spec"]["params"]["mode"] == "wait", d["spec"]
        assert run["status"] == "aborted" and run["reason"].startswith("interrupted by SIGINT"), run["reason"]
        assert run["program"]["signal"] == "SIGTERM", run["program"]
    else:
        done += 1
        assert d["spec"]["params"]["mode"] == "ok" and d["runs"][0]["status"] == "success"
assert (done, interrupted) == (3, 1), (done, interrupted)
PY
  pass "3 finished runs kept, the run in flight recorded as interrupted (its program stopped)"
else
  fail "after the interruption: $(cat "$tmp/res1.out" "$tmp/res1.err")"
fi
touch "$tmp/gate"
if "$PERFLAB" sweep "$tmp/slow/sweep.yaml" --out "$tmp/res" >"$tmp/res2.out" 2>"$tmp/res2.err"; then
  pass "resumed sweep exited 0"
else
  fail "resumed sweep: $(cat "$tmp/res2.err")"
fi
grep -q "6 run(s), 3 run now, 3 reused from earlier, 0 missed the target" "$tmp/res2.out" &&
  pass "the resumed sweep reused the 3 finished runs and ran the rest" || fail "resume: $(cat "$tmp/res2.out" "$tmp/res2.err")"

# --- the example trainer: a sweep, its compliance, toggles, compare, history ---
if ! "$PYTHON" -c 'import numpy, mlperf_logging' 2>/dev/null; then
  fail "numpy and mlperf_logging are needed for the example (scripts/setup installs them)"
else
  if "$PERFLAB" sweep "$examples/logreg-sweep.yaml" --out "$tmp/lr" >"$tmp/lr.out" 2>"$tmp/lr.err"; then
    pass "the example sweep exited 0"
  else
    fail "the example sweep: $(cat "$tmp/lr.err")"
  fi
  grep -q "12 run(s), 12 run now, 0 reused from earlier, 0 missed the target" "$tmp/lr.out" &&
    pass "2 batch sizes x fused on/off x 3 seeds reached the target" || fail "example sweep: $(cat "$tmp/lr.out" "$tmp/lr.err")"
  "$PERFLAB" sweep "$examples/logreg-sweep.yaml" --out "$tmp/lr" >"$tmp/lr-again.out" 2>&1 &&
    grep -q "12 run(s), 0 run now, 12 reused from earlier" "$tmp/lr-again.out" &&
    pass "the example sweep again: every run reused" || fail "example sweep again: $(cat "$tmp/lr-again.out")"
  if "$PYTHON" - "$tmp/lr/logreg-sweep" "$schema" <<'PY'; then
import glob, json, sys
import jsonschema
schema = json.load(open(sys.argv[2]))
files = glob.glob(sys.argv[1] + "/runs/*/result.json")
assert len(files) == 12, len(files)
for path in files:
    d = json.load(open(path))
    jsonschema.validate(d, schema)
    run = d["runs"][0]
    p = run["program"]
    assert p["compliance"]["status"] == "passed", p["compliance"]
    assert p["log_source"] == "file", p
    assert ("--fused" in p["command"]) == d["spec"]["toggles_requested"]["fused"], p["command"]
    fused = d["toggles"]["fused"]
    if fused["requested"]:
        assert fused["in_effect"] and "cannot see whether it honoured it" in fused["reason"], fused
    assert d["spec"]["workload"] == "logreg" and d["spec"]["workload_file"].endswith("logreg.workload.yaml")
    assert d["plan"]["global_batch_size"] == d["spec"]["params"]["batch"], d["plan"]
    assert run["quality_curve"] and run["quality_curve"][-1]["value"] >= 0.96, run["quality_curve"]
PY
    pass "every example run passed the compliance check, toggles and plan recorded"
  else
    fail "the example results"
  fi
  grep -q "## Toggle matrix: logreg" "$tmp/lr/logreg-sweep/report.md" && grep -q "| fused | 3 | 3 |" "$tmp/lr/logreg-sweep/report.md" &&
    pass "the sweep report compares fused on and off" || fail "no toggle matrix in $(cat "$tmp/lr/logreg-sweep/report.md")"
  grep -q "## Time to train" "$tmp/lr/logreg-sweep/report.md" && ! grep -q "## Throughput per point" "$tmp/lr/logreg-sweep/report.md" &&
    pass "the sweep report scores time to train" || fail "the sweep report: $(head -20 "$tmp/lr/logreg-sweep/report.md")"

  # Two sets of the same points (the sweep run again into another folder):
  # compare pairs every point; its verdict depends on the machine, so only
  # what it read is checked.
  "$PERFLAB" sweep "$examples/logreg-sweep.yaml" --out "$tmp/lr2" >/dev/null 2>"$tmp/lr2.err" ||
    fail "the second example sweep: $(cat "$tmp/lr2.err")"
  "$PERFLAB" compare "$tmp/lr/logreg-sweep" "$tmp/lr2/logreg-sweep" --json >"$tmp/cmp.json" 2>"$tmp/cmp.err"
  rc=$?
  if [[ $rc -le 1 ]] && "$PYTHON" - "$tmp/cmp.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
labels = {r["point"] for r in rows}
assert any("fused=on" in l for l in labels) and any("fused=off" in l for l in labels), labels
assert {r["metric"] for r in rows} >= {"time_to_train_s"}, {r["metric"] for r in rows}
assert not d["only_base"] and not d["only_candidate"], d
PY
    pass "compare paired the external points of both sweeps (exit $rc)"
  else
    fail "compare: exit $rc $(cat "$tmp/cmp.err") $(head -c 600 "$tmp/cmp.json")"
  fi
  if "$PERFLAB" history --db "$tmp/h.db" record "$tmp/lr/logreg-sweep" >"$tmp/h.out" 2>&1 &&
      "$PERFLAB" history --db "$tmp/h.db" export --openmetrics >"$tmp/hl.out" 2>&1 &&
      grep -q '^perflab_time_to_train_seconds{point="batch=32 fused=on"' "$tmp/hl.out"; then
    pass "history recorded the external results"
  else
    fail "history: $(cat "$tmp/h.out" "$tmp/hl.out")"
  fi
  one=$(compgen -G "$tmp/lr/logreg-sweep/runs/*/result.json" | head -n 1)
  if (cd "$tmp" && "$PERFLAB" rerun "$one" --out "$tmp/again" >"$tmp/rerun.out" 2>"$tmp/rerun.err") &&
      grep -q '"workload_file"' "$(compgen -G "$tmp/again/logreg-*/result.json" | head -n 1)"; then
    pass "rerun of an external result ran its workload file again (from another folder)"
  else
    fail "rerun: $(cat "$tmp/rerun.err")"
  fi
fi

# --- perflab's own DLRM run as an external program ---------------------------------
if "$PERFLAB" run "$examples/perflab-dlrm.workload.yaml" --out "$tmp/wrap" >"$tmp/wrap.out" 2>"$tmp/wrap.err"; then
  pass "the wrapped perflab run dlrm reached its target"
else
  fail "wrapped dlrm: $(cat "$tmp/wrap.err" "$tmp/wrap.out")"
fi
if "$PYTHON" - "$(compgen -G "$tmp/wrap/perflab-dlrm-*/result.json" | head -n 1)" "$schema" <<'PY'; then
import json, sys
import jsonschema
d = json.load(open(sys.argv[1]))
jsonschema.validate(d, json.load(open(sys.argv[2])))
run = d["runs"][0]
assert run["status"] == "success", run["reason"]
assert run["program"]["log_source"] == "output", run["program"]
assert run["program"]["compliance"]["status"] == "passed", run["program"]["compliance"]
assert run["program"]["submission"]["submission_benchmark"] == "dlrm", run["program"]["submission"]
assert run["program"]["throughput_source"] == "samples over run time"
assert run["throughput_samples_per_s"] > 0 and run["epochs"] > 0
PY
  pass "its log was read from its output and passed perflab's rules"
else
  fail "the wrapped dlrm result"
fi

[[ $failures -eq 0 ]] || exit 1
