#!/usr/bin/env bash
# End-to-end: the perflab binary as a user drives it. DLRM tiny reaches its
# target over 3 seeds, its logs pass the official compliance checker, its
# result validates against docs/result.schema.json; bad input gets one line
# and the documented exit code, and leaves nothing half-written.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

# --- the main job: dlrm tiny, 3 seeds, on the CPU -------------------------
out="$tmp/results"
if "$PERFLAB" run dlrm --preset tiny --backend cpu --seeds 3 --cuda-graphs on --out "$out" \
    >"$tmp/run.out" 2>"$tmp/run.err"; then
  pass "dlrm tiny 3 seeds exited 0"
else
  fail "dlrm tiny 3 seeds exited non-zero: $(cat "$tmp/run.err" "$tmp/run.out")"
fi
cat "$tmp/run.out"
dir=$(find "$out" -mindepth 1 -maxdepth 1 -type d -name 'dlrm-tiny-*' | head -n 1)
[[ -n "$dir" && -f "$dir/result.json" && -f "$dir/report.md" ]] && pass "result and report written" ||
  fail "no result folder under $out"
[[ -z "$(find "$out" -name '*.partial' -o -name '*.tmp.*')" ]] && pass "no partial files" ||
  fail "partial files left: $(find "$out" -name '*.partial' -o -name '*.tmp.*')"
grep -q "requested: on, in effect: off" "$tmp/run.err" && pass "toggle not in effect is reported" ||
  fail "--cuda-graphs on the cpu backend was not reported as not in effect"

if "$PYTHON" - "$dir/result.json" "$PERFLAB_SOURCE_DIR/docs/result.schema.json" <<'PY'
import json, sys
import jsonschema
result = json.load(open(sys.argv[1]))
jsonschema.validate(result, json.load(open(sys.argv[2])))
runs = result["runs"]
assert len(runs) == 3, f"{len(runs)} runs"
for r in runs:
    assert r["status"] == "success", r["reason"]
    assert r["quality_curve"][-1]["value"] >= result["quality"]["target"]
assert result["quality"]["ceiling"] > result["quality"]["target"]
assert result["score"]["time_to_train_s"] is not None
assert result["score"]["method"] == "olympic mean of 3"
t = result["toggles"]["cuda_graphs"]
assert t["requested"] and not t["in_effect"] and t["reason"], t
assert [r["seed"] for r in runs] == result["spec"]["seeds"]
# Each run's time to train is its log's run_stop - run_start, to the bit;
# each quality point's time is its eval_accuracy's stamp after run_start.
import os
for r in runs:
    stamps = {}
    for line in open(os.path.join(os.path.dirname(sys.argv[1]), r["log"])):
        e = json.loads(line.split(":::MLLOG ", 1)[1])
        stamps.setdefault(e["key"], []).append(e["time_ms"])
    start, stop = stamps["run_start"][0], stamps["run_stop"][0]
    assert r["time_to_train_s"] == (stop - start) / 1e3, (r["time_to_train_s"], start, stop)
    assert [q["elapsed_s"] for q in r["quality_curve"]] == [(t - start) / 1e3 for t in stamps["eval_accuracy"]]
PY
then pass "result.json validates against the schema and reached the target"; else fail "result.json check"; fi

if "$PERFLAB_SOURCE_DIR/scripts/compliance-check" "$dir"/run_*.log >"$tmp/cc.txt" 2>&1; then
  pass "all 3 logs pass the compliance checker"
else
  fail "compliance checker: $(cat "$tmp/cc.txt")"
fi
grep -q "olympic mean of 3" "$dir/report.md" && pass "report has the olympic mean" ||
  fail "report.md lacks the olympic mean"

# A diverging run (absurd learning rate): run_stop aborted with the reason, exit 1.
"$PERFLAB" run dlrm --set learning_rate=1000 --set max_epochs=1 --out "$tmp/nan" >"$tmp/nan.txt" 2>&1
rc=$?
nanlog=$(find "$tmp/nan" -name run_0.log | head -n 1)
if [[ $rc -eq 1 && -n "$nanlog" ]] && grep '"key": "run_stop"' "$nanlog" | grep -q '"status": "aborted", "reason": "training loss diverged (nan)'; then
  pass "NaN loss -> run_stop aborted with the reason, exit 1"
  grep '"key": "run_stop"' "$nanlog" | grep -qE 'first non-finite loss at iteration [0-9]+; first non-finite parameter: [a-z]' \
    && pass "NaN loss: the first iteration and the first non-finite tensor named" \
    || fail "NaN loss reason lacks the iteration or tensor: $(grep '"key": "run_stop"' "$nanlog")"
else
  fail "NaN loss run: exit $rc, $(cat "$tmp/nan.txt")"
fi

# rerun: the same spec again (the diverging run is the quickest to repeat).
nanresult=$(find "$tmp/nan" -name result.json | head -n 1)
"$PERFLAB" rerun "$nanresult" --out "$tmp/rerun" >/dev/null 2>&1
rerunresult=$(find "$tmp/rerun" -name result.json | head -n 1)
if [[ -n "$rerunresult" ]] && "$PYTHON" - "$nanresult" "$rerunresult" <<'PY'
import json, sys
a, b = (json.load(open(p))["spec"] for p in sys.argv[1:3])
for k in ("workload", "preset", "params", "backend", "seeds", "threads", "toggles_requested"):
    assert a[k] == b[k], (k, a[k], b[k])
PY
then pass "rerun repeats the recorded spec"; else fail "rerun"; fi

# A sweep from comma lists: 2 points; running it again reuses both.
sweep=(run dlrm --set batch_size=256,512 --set max_epochs=1 --set target_auc=0.6 --out "$tmp/sw")
"$PERFLAB" "${sweep[@]}" >"$tmp/sw1.txt" 2>&1 && grep -q "2 run(s), 2 run now, 0 reused" "$tmp/sw1.txt" &&
  pass "sweep ran 2 points" || fail "sweep: $(cat "$tmp/sw1.txt")"
"$PERFLAB" "${sweep[@]}" >"$tmp/sw2.txt" 2>&1 && grep -q "2 run(s), 0 run now, 2 reused" "$tmp/sw2.txt" &&
  pass "sweep resumed: nothing rerun" || fail "sweep resume: $(cat "$tmp/sw2.txt")"
[[ $(find "$tmp/sw" -name result.json | wc -l) -eq 2 ]] && pass "one result per run" || fail "sweep results"
printf 'workload: dlrm\nparams:\n  batch_size: [256, big]\n' >"$tmp/bad.yaml"
expect 2 "bad.yaml:3: dlrm: parameter batch_size=big: not an integer" -- sweep "$tmp/bad.yaml" --out "$tmp/badsweep"
[[ ! -e "$tmp/badsweep" ]] && pass "bad sweep file ran nothing" || fail "bad sweep file left $tmp/badsweep"

for f in "$PERFLAB_SOURCE_DIR"/workloads/*/sweeps/*.yaml; do
  "$PERFLAB" sweep "$f" --dry-run --out "$tmp/dry" >"$tmp/dry.txt" 2>&1 && [[ ! -e "$tmp/dry" ]] &&
    pass "shipped sweep file $(basename "$f") parses" || fail "sweep file $f: $(cat "$tmp/dry.txt")"
done

# --- the other commands -----------------------------------------------------
"$PERFLAB" --version | grep -qE '^perflab [0-9]+\.[0-9]+\.[0-9]+' && pass "--version" || fail "--version"
"$PERFLAB" list >"$tmp/list.txt" 2>&1 && grep -q "Workload dlrm" "$tmp/list.txt" &&
  grep -q "batch_size" "$tmp/list.txt" && grep -q "tiny" "$tmp/list.txt" &&
  grep -qE "cuda +(available|not available)" "$tmp/list.txt" && pass "list" || fail "list: $(cat "$tmp/list.txt")"
"$PERFLAB" env --json | "$PYTHON" -c 'import json,sys; e=json.load(sys.stdin); assert "cuda" in e and "cpu_model" in e' &&
  pass "env --json" || fail "env --json"

# --- bad input: one line, exit 2 ------------------------------------------
expect 2 "unknown workload 'nosuch'; valid workloads: .*dlrm" -- run nosuch
expect 2 "unknown parameter 'bach_size'; valid parameters: .*batch_size" -- run dlrm --set bach_size=1
expect 2 "batch_size=12x: not an integer" -- run dlrm --set batch_size=12x
expect 2 "unknown preset 'huge'; valid presets: tiny, small, dle" -- run dlrm --preset huge
expect 2 "--cuda-graphs: 'maybe' is not a valid value; valid values: on, off" -- run dlrm --cuda-graphs maybe
expect 2 "--backend: 'tpu' is not a valid value; valid values: auto, cpu, cuda" -- run dlrm --backend tpu
expect 2 "target_auc .* is above the best AUC" -- run dlrm --set target_auc=0.99 --out "$tmp/never"
expect 2 "dlrm: 1000000000 training and .* needs about 160.0 GB of host memory, more than 75% of the .* GB here; reduce train_samples" -- run dlrm --set train_samples=1000000000 --out "$tmp/never"
[[ ! -e "$tmp/never" || -z "$(ls -A "$tmp/never")" ]] && pass "rejected run left nothing" || fail "rejected run wrote $(ls -A "$tmp/never")"
expect 2 "perflab: error: " -- run
expect 2 "perflab: error: " -- frobnicate

# --backend cuda without a device: one clear line, exit 1.
if "$PERFLAB" list | grep -qE "cuda +not available"; then
  expect 1 "--backend cuda: .*(no usable CUDA device|built without CUDA).*; run on the CPU with --backend cpu" -- run dlrm --backend cuda
else
  echo "skip: a CUDA device is present, so the no-device message cannot be checked here"
fi

# Unwritable --out: a path below a regular file.
touch "$tmp/afile"
expect 1 "cannot create output directory" -- run dlrm --out "$tmp/afile/sub"

# --- Criteo TSV conversion ------------------------------------------------
"$PYTHON" - "$tmp/train.tsv" "$tmp/test.tsv" <<'PY'
import random, sys
rng = random.Random(7)
for path, n in ((sys.argv[1], 600), (sys.argv[2], 200)):
    with open(path, "w") as f:
        for i in range(n):
            ints = [str(rng.randint(0, 50)) if rng.random() > 0.1 else "" for _ in range(13)]
            cats = [f"{rng.randint(0, 30):08x}" if rng.random() > 0.1 else "" for _ in range(26)]
            label = 1 if int(cats[0] or "0", 16) % 3 == 0 else 0
            f.write("\t".join([str(label)] + ints + cats) + "\n")
PY
if "$PERFLAB" data convert --input "$tmp/train.tsv" --test "$tmp/test.tsv" --output "$tmp/criteo" \
    --max-table-size 64 >"$tmp/conv.txt" 2>&1 && [[ -f "$tmp/criteo/feature_spec.yaml" ]]; then
  pass "data convert wrote a feature spec"
else
  fail "data convert: $(cat "$tmp/conv.txt")"
fi
if "$PERFLAB" run dlrm --set data="$tmp/criteo/feature_spec.yaml" --set batch_size=32 \
    --set max_epochs=2 --set target_auc=0.5 --out "$tmp/criteo-run" >"$tmp/crun.txt" 2>&1; then
  pass "dlrm trains on converted Criteo data"
else
  fail "dlrm on converted data: $(cat "$tmp/crun.txt")"
fi
sed '3s/^[01]\t/7\t/' "$tmp/train.tsv" >"$tmp/bad.tsv"
expect 2 "bad.tsv:3: .*label" -- data convert --input "$tmp/bad.tsv" --eval-fraction 0.2 --output "$tmp/badout"
[[ ! -e "$tmp/badout" ]] && pass "failed conversion left no output" || fail "failed conversion left $tmp/badout"

# --- RNN-T loss on .npy files, against an independent NumPy recursion ------
mkdir -p "$tmp/rnnt"
if "$PYTHON" "$PERFLAB_SOURCE_DIR/tests/cli/rnnt_npy_check.py" "$PERFLAB" "$tmp/rnnt" >"$tmp/rnnt.txt" 2>&1; then
  pass "$(tail -n 1 "$tmp/rnnt.txt")"
else
  fail "rnnt npy cross-check: $(cat "$tmp/rnnt.txt")"
fi
expect 2 "logits must be <f4 or <f8, are <i4" -- transducer loss --logits "$tmp/rnnt/labels.npy" \
  --labels "$tmp/rnnt/labels.npy" --logit-lengths "$tmp/rnnt/t.npy" --label-lengths "$tmp/rnnt/u.npy" --out "$tmp/rnnt/bad"

finish
