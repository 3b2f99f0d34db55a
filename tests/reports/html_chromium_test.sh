#!/usr/bin/env bash
# Renders a sweep report with `perflab report` and loads its HTML page in
# headless Chromium: the DOM must hold the expected charts (<svg>), tables and
# headings, and a screenshot must be produced. Inputs are four small result
# documents written here (a batch-size sweep 256/512/1024 and cuda_graphs at
# 512) plus one invalid file, so no training runs are needed.
#
# Environment: PERFLAB (the binary), PYTHON (python3). PERFLAB_SCREENSHOT: a
# path to keep the screenshot at, for a person to look at.
# Exit 77 (skip) only when chromium is absent and CI is not set.
set -euo pipefail

: "${PERFLAB:?PERFLAB must name the perflab binary}"
PY=${PYTHON:-python3}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$CHROMIUM" ]]; then
  if [[ -n "${CI:-}" ]]; then
    echo "FAIL: chromium is not installed (scripts/setup installs it) and CI is set" >&2
    exit 1
  fi
  echo "SKIP: chromium is not installed" >&2
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$PY" - "$tmp/results" <<'EOF'
import json, os, sys

root = sys.argv[1]

def result(batch, lr, toggles_on, times, epochs, failed=()):
    ipe = 65536 // batch
    runs = []
    for i, (t, e) in enumerate(zip(times, epochs)):
        curve = [{"epoch": 0.25 * (k + 1), "samples": 16384 * (k + 1),
                  "value": 0.70 + 0.0105 * (k + 1) * (1 + 0.02 * i), "train_loss": 0.5,
                  "elapsed_s": t * (k + 1) / 4} for k in range(4)]
        ok = i not in failed
        runs.append({"seed": i + 1, "status": "success" if ok else "aborted",
                     "reason": "" if ok else "target not reached in 8 epochs", "init_s": 0.1,
                     "time_to_train_s": t, "train_s": 0.8 * t, "eval_s": 0.2 * t,
                     "iterations": int(e * ipe), "samples": int(e * ipe) * batch, "epochs": e,
                     "throughput_samples_per_s": batch * 1000 / (1.0 + batch / 256),
                     "iteration_ms": {k: 1.0 + batch / 256 for k in
                                      ("mean", "min", "p50", "p90", "p99", "max")} | {"n": 100},
                     "quality_curve": curve, "log": f"run_{i}.log"})
    names = ("cuda_graphs", "sharp", "sync_free", "fused")
    toggles = {n: {"requested": n in toggles_on, "in_effect": False} for n in names}
    for n in toggles_on:
        toggles[n]["reason"] = "the cpu backend launches no CUDA work to capture"
    return {
        "schema_version": 1, "created": "2026-01-01T00:00:00Z", "kind": "time_to_train",
        "spec": {"workload": "dlrm", "preset": "tiny", "overrides": {},
                 "params": {"batch_size": batch, "learning_rate": lr, "data": "synthetic"},
                 "backend_requested": "cpu", "backend": "cpu",
                 "toggles_requested": {n: n in toggles_on for n in names},
                 "seeds": [r["seed"] for r in runs], "threads": 2, "warmup_iterations": 5},
        "environment": {"perflab_version": "test", "git_revision": "test", "cpu_model": "test",
                        "logical_cores": 2, "compiler": "test", "openblas": "test",
                        "cuda": None},
        "toggles": toggles,
        "plan": {"train_samples": 65536, "eval_samples": 16384, "global_batch_size": batch,
                 "iterations_per_epoch": ipe, "max_epochs": 8, "eval_interval_epochs": 0.25,
                 "precision": "fp32", "hyperparameters": {}, "data": {}},
        "quality": {"metric": "AUC", "target": 0.74, "ceiling": 0.76},
        "prepare_s": 1.0, "runs": runs,
        "score": {"time_to_train_s": None, "method": "test", "reason": "test"}}

docs = {
    "b256": result(256, 1.0, [], [30, 32, 35], [1.0, 1.25, 1.5]),
    "b512": result(512, 2.0, [], [20, 22, 21], [1.5, 1.75, 1.5]),
    "b1024": result(1024, 4.0, [], [25, 40, 27], [2.5, 3.0, 2.75], failed=(1,)),
    "b512-graphs": result(512, 2.0, ["cuda_graphs"], [19, 20, 18], [1.5, 1.5, 1.75]),
}
for name, doc in docs.items():
    os.makedirs(os.path.join(root, name))
    with open(os.path.join(root, name, "result.json"), "w") as f:
        json.dump(doc, f)
os.makedirs(os.path.join(root, "broken"))
with open(os.path.join(root, "broken", "result.json"), "w") as f:
    f.write("{ not json")
EOF

# Skipped files are reported (on stderr), not fatal.
"$PERFLAB" report "$tmp/results" --out "$tmp/report" 2> "$tmp/stderr" || {
  echo "FAIL: perflab report exited $?" >&2
  cat "$tmp/stderr" >&2
  exit 1
}
grep -q "broken/result.json" "$tmp/stderr" || {
  echo "FAIL: the invalid file was not reported on stderr" >&2
  exit 1
}
for f in report.md report.csv report.json report.html; do
  [[ -s "$tmp/report/$f" ]] || { echo "FAIL: $f missing or empty" >&2; exit 1; }
done

timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --dump-dom \
  "file://$tmp/report/report.html" > "$tmp/dom.html" 2> "$tmp/chromium.log" || {
  echo "FAIL: chromium could not load the report" >&2
  tail -5 "$tmp/chromium.log" >&2
  exit 1
}

fail=0
expect_count() {  # what, pattern, expected
  local n
  n=$({ grep -o "$2" "$tmp/dom.html" || true; } | wc -l)
  if [[ "$n" -ne "$3" ]]; then
    echo "FAIL: $1: expected $3, found $n" >&2
    fail=1
  fi
}
expect_text() {
  grep -qF "$1" "$tmp/dom.html" || { echo "FAIL: no '$1' in the DOM" >&2; fail=1; }
}
# 4 quality-curve charts, 1 toggle-matrix chart, 1 batch-size chart.
expect_count "<svg> charts" "<svg " 6
# Points, toggle matrix, batch sweep.
expect_count "tables" "<table" 3
expect_count "best batch rows" '<tr class="best">' 1
expect_count "scripts" "<script" 0
expect_text "<h2>Time to train per point</h2>"
expect_text "<h2>Toggle matrix: dlrm preset=tiny batch_size=512 learning_rate=2.0</h2>"
expect_text "<h2>Batch-size sweep: dlrm preset=tiny cuda_graphs=off</h2>"
expect_text "<h2>Skipped files</h2>"

shot=${PERFLAB_SCREENSHOT:-$tmp/report.png}
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1200,2600 --screenshot="$shot" "file://$tmp/report/report.html" \
  > "$tmp/chromium.log" 2>&1 || true
if [[ ! -s "$shot" ]]; then
  echo "FAIL: no screenshot written" >&2
  fail=1
fi
[[ $fail -eq 0 ]] && echo "html_chromium_test: ok"
exit $fail
