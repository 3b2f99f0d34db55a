#!/usr/bin/env bash
# MLPerf result folders scored by perflab against mlperf_logging's own
# result summarizer, on a small results folder built here by hand:
#   results/sysA/dlrm_dcnv2/result_{0..9}.txt   10 runs, one aborted, batch
#       55296: the RCPs the package ships for training 5.1.0 apply, so the
#       score is normalised (the runs converge faster than the RCP mean but
#       within its allowed speedup);
#   results/sysA/unet3d/result_{0..11}.txt      12 runs, two aborted: unet3d
#       drops 4 scores from each end; no RCP file for it;
#   training_results_v4.0/sub/results/sysB/unet3d  40 runs, three aborted,
#       no --rcps: the package's training 4.0.0 RCPs, where unet3d's RCP mean,
#       submission mean and allowed failures all drop 4 from each end.
# The official numbers: the summarizer's _compute_strong_score_standalone
# (raw olympic mean), then the rcp_checker's check_directory with
# set_scaling, as the summarizer runs it, and the standalone score again
# (now scaled). One step is replaced: the summarizer first runs the
# compliance checker on each log, which hand-made logs of real benchmarks
# cannot pass; the replacement drops a run whose run_stop status is not
# "success", which is what the compliance failure of a non-converged run
# does. perflab (history record and report) must print the same raw and
# normalised scores (to the 6 decimals it prints).
set -uo pipefail
: "${PERFLAB:?}"
PY=${PYTHON:-python3}
if ! "$PY" -c "import mlperf_logging.result_summarizer.result_summarizer" 2>/dev/null; then
  [[ -n "${CI:-}" ]] && { echo "FAIL: mlperf_logging is not installed (scripts/setup installs it) and CI is set"; exit 1; }
  echo "SKIP: mlperf_logging is not installed"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rcps=$("$PY" -c "import mlperf_logging.rcp_checker as r, os; print(os.path.join(os.path.dirname(r.__file__), 'training_5.1.0'))")

"$PY" - "$tmp/sub/results/sysA" <<'PY'
import json, os, sys
root = sys.argv[1]

def log(path, benchmark, batch, minutes, epochs, status):
    t0 = 1_700_000_000_000
    lines = []
    def ev(t, key, value, **meta):
        meta = {"file": "train.py", "lineno": 1, **meta}
        lines.append("[0] :::MLLOG " + json.dumps({"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME",
                                                    "key": key, "value": value, "metadata": meta}))
    ev(t0 - 5000, "submission_benchmark", benchmark)
    ev(t0 - 4000, "global_batch_size", batch)
    ev(t0, "run_start", None)
    for k in range(1, 5):
        ev(t0 + k * 1000, "eval_accuracy", 0.8, epoch_num=round(epochs * k / 4, 4))
    ev(t0 + round(minutes * 60000), "run_stop", None, status=status)
    lines.insert(3, "some other output line without the token")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write("\n".join(lines) + "\n")

dlrm = [(11.2, 0.75), (10.8, 0.7), (12.5, 0.8), (11.9, 0.75), (10.1, 0.7), (13.4, 0.8), (11.0, 0.75), (12.2, 0.75),
        (10.6, 0.7), (9.0, 0.7)]
for i, (m, e) in enumerate(dlrm):
    log(f"{root}/dlrm_dcnv2/result_{i}.txt", "dlrm_dcnv2", 55296, m, e, "aborted" if i == 9 else "success")
for i in range(12):
    log(f"{root}/unet3d/result_{i}.txt", "unet3d", 56, 20 + (i * 7) % 11 * 0.37, 1000 + i, "aborted" if i in (3, 8) else "success")
PY

"$PERFLAB" history --db "$tmp/h.sqlite" record "$tmp/sub" --rcps "$rcps" --revision r1 >"$tmp/perflab.txt" 2>&1 ||
  { echo "FAIL: perflab history record exited $?: $(cat "$tmp/perflab.txt")"; exit 1; }
cat "$tmp/perflab.txt"
"$PERFLAB" report "$tmp/sub" --rcps "$rcps" --out "$tmp/report" >"$tmp/report.txt" 2>&1 ||
  { echo "FAIL: perflab report exited $?: $(cat "$tmp/report.txt")"; exit 1; }
grep -q "^| sysA | dlrm_dcnv2 | 10 | 1 | [0-9.]* | [0-9.]* | RCP check passed" "$tmp/report/mlperf.md" ||
  { echo "FAIL: report/mlperf.md has no dlrm_dcnv2 row: $(cat "$tmp/report/mlperf.md")"; exit 1; }

# Without --rcps: the package's own RCPs, for the version the path names
# (training_results_v5.1 -> training_5.1.0): the same scores as given
# explicitly; --rcps none: raw scores only.
mkdir -p "$tmp/training_results_v5.1" && cp -r "$tmp/sub" "$tmp/training_results_v5.1/sub"
"$PERFLAB" report "$tmp/training_results_v5.1/sub" --out "$tmp/report_default" >"$tmp/default.txt" 2>&1 ||
  { echo "FAIL: perflab report without --rcps exited $?: $(cat "$tmp/default.txt")"; exit 1; }
cat "$tmp/default.txt"
grep -q "training_5.1.0 RCPs (the version the results' path names)" "$tmp/default.txt" ||
  { echo "FAIL: the default RCPs are not named: $(cat "$tmp/default.txt")"; exit 1; }
"$PERFLAB" report "$tmp/sub" --rcps none --out "$tmp/report_none" >"$tmp/none.txt" 2>&1 ||
  { echo "FAIL: perflab report --rcps none exited $?: $(cat "$tmp/none.txt")"; exit 1; }
if grep -q "normalised" "$tmp/none.txt"; then echo "FAIL: --rcps none normalised: $(cat "$tmp/none.txt")"; exit 1; fi

"$PY" - "$tmp/sub/results/sysA" "$tmp/perflab.txt" "$tmp/report.txt" "$tmp/default.txt" <<'PY'
import re, sys
from mlperf_logging.compliance_checker.mlp_parser import parse_file
from mlperf_logging.rcp_checker import rcp_checker
from mlperf_logging.result_summarizer import result_summarizer as rs

def read_without_compliance(result_file, usage, ruleset):
    loglines, failed = parse_file(result_file, ruleset=ruleset)
    if failed:
        raise ValueError("Parse error")
    stop = [l for l in loglines if l.key == "run_stop"]
    if not stop or stop[0].value["metadata"].get("status") != "success":
        raise ValueError("Compliance check failed")
    return loglines
rs._read_result_file = read_without_compliance

def scores(path):
    ours = {}
    for line in open(path):
        m = re.match(r"(\S+) on sysA: .*?olympic mean ([0-9.]+) min(?:; normalised ([0-9.]+) min)?", line)
        if m:
            ours[m.group(1)] = (float(m.group(2)), float(m.group(3)) if m.group(3) else None)
    return ours
ours = scores(sys.argv[2])
ok = scores(sys.argv[3]) == ours  # perflab report prints the same scores as history record
if not ok:
    print("FAIL: perflab report and history record disagree")
if scores(sys.argv[4]) != ours:
    print(f"FAIL: without --rcps the scores differ: {scores(sys.argv[4])} vs {ours}"); ok = False
for bench in ("dlrm_dcnv2", "unet3d"):
    folder = f"{sys.argv[1]}/{bench}"
    raw, _, _ = rs._compute_strong_score_standalone(bench, "sysA", False, folder, "training", "5.1.0")
    try:  # As the summarizer: a benchmark without RCPs keeps scaling 1.
        passed, msg, factor = rcp_checker.check_directory(folder, "training", "5.1.0", False, False,
                                                           rcp_pass="pruned_rcps", set_scaling=True)
    except FileNotFoundError:
        passed, msg = None, "no RCP file"

    scaled, _, scaling = rs._compute_strong_score_standalone(bench, "sysA", False, folder, "training", "5.1.0")
    mine = ours.get(bench)
    print(f"{bench}: summarizer raw {raw:.6f} min, normalised {scaled:.6f} min (scaling {scaling:.6f}, "
          f"rcp: {passed} {msg}); perflab {mine}")
    if mine is None or abs(mine[0] - raw) > 1e-6:
        print(f"FAIL: {bench}: raw olympic mean differs"); ok = False
    expected_norm = scaled if bench == "dlrm_dcnv2" else None
    if bench == "dlrm_dcnv2" and not (scaling > 1):
        print("FAIL: the test's dlrm runs should be normalised (scaling > 1)"); ok = False
    if (mine[1] is None) != (expected_norm is None) or (expected_norm and abs(mine[1] - expected_norm) > 1e-6):
        print(f"FAIL: {bench}: normalised score differs"); ok = False
sys.exit(0 if ok else 1)
PY
rc=$?

# unet3d, whose olympic means drop 4 from each end (the RCP mean, the
# submission's epochs, and the allowed failures): 40 runs at batch 56, under
# a path naming training 4.0 (whose package RCPs have unet3d), converging a
# little faster than the RCP mean, so the score is normalised. perflab's
# default RCPs must give the rcp_checker's factor and the summarizer's score.
"$PY" - "$tmp/training_results_v4.0/sub/results/sysB/unet3d" <<'PY' || rc=1
import json, os, sys
import numpy as np
from mlperf_logging.rcp_checker import rcp_checker
folder = sys.argv[1]
rcps = json.load(open(os.path.join(os.path.dirname(rcp_checker.__file__), "training_4.0.0", "rcps_unet3d.json")))
ref = sorted(next(v for v in rcps.values() if v["BS"] == 56)["Epochs to converge"])
mean = float(np.mean(ref[4:-4]))
os.makedirs(folder, exist_ok=True)
t0 = 1_700_000_000_000
for i in range(40):
    status = "aborted" if i in (5, 17, 30) else "success"
    epochs = round(mean * (0.985 + 0.0007 * ((i * 13) % 29)))
    minutes = 20 + ((i * 7) % 11) * 0.37
    lines = []
    def ev(t, key, value, **meta):
        lines.append(":::MLLOG " + json.dumps({"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME",
                                               "key": key, "value": value, "metadata": {"file": "t.py", "lineno": 1, **meta}}))
    ev(t0 - 5000, "submission_benchmark", "unet3d")
    ev(t0 - 4000, "global_batch_size", 56)
    ev(t0, "run_start", None)
    ev(t0 + 1000, "eval_accuracy", 0.91, epoch_num=epochs)
    ev(t0 + round(minutes * 60000), "run_stop", None, status=status)
    open(f"{folder}/result_{i}.txt", "w").write("\n".join(lines) + "\n")
PY
"$PERFLAB" report "$tmp/training_results_v4.0/sub" --out "$tmp/report_unet3d" >"$tmp/unet3d.txt" 2>&1 ||
  { echo "FAIL: perflab report (unet3d) exited $?: $(cat "$tmp/unet3d.txt")"; rc=1; }
cat "$tmp/unet3d.txt"
"$PY" - "$tmp/training_results_v4.0/sub/results/sysB/unet3d" "$tmp/unet3d.txt" <<'PY' || rc=1
import re, sys
from mlperf_logging.compliance_checker.mlp_parser import parse_file
from mlperf_logging.rcp_checker import rcp_checker
from mlperf_logging.result_summarizer import result_summarizer as rs

def read_without_compliance(result_file, usage, ruleset):
    loglines, failed = parse_file(result_file, ruleset=ruleset)
    stop = [l for l in loglines if l.key == "run_stop"]
    if failed or not stop or stop[0].value["metadata"].get("status") != "success":
        raise ValueError("Compliance check failed")
    return loglines
rs._read_result_file = read_without_compliance
folder = sys.argv[1]
raw, _, _ = rs._compute_strong_score_standalone("unet3d", "sysB", False, folder, "training", "4.0.0")
passed, msg, factor = rcp_checker.check_directory(folder, "training", "4.0.0", False, False,
                                                   rcp_pass="pruned_rcps", set_scaling=True)
scaled, _, scaling = rs._compute_strong_score_standalone("unet3d", "sysB", False, folder, "training", "4.0.0")
m = re.search(r"unet3d on sysB: .*?olympic mean ([0-9.]+) min; normalised ([0-9.]+) min \(RCP factor ([0-9.]+)\)",
              open(sys.argv[2]).read())
print(f"unet3d: summarizer raw {raw:.6f}, normalised {scaled:.6f} (factor {scaling:.6f}, rcp {passed} {msg}); perflab "
      f"{m.groups() if m else None}")
ok = bool(m) and passed and scaling > 1
ok = ok and abs(float(m.group(1)) - raw) < 1e-6 and abs(float(m.group(3)) - scaling) < 1e-6
ok = ok and abs(float(m.group(2)) - scaled) <= 1e-3 * scaled  # within 0.1% (the issue's bound); printed to 6 decimals
if not ok:
    print("FAIL: unet3d: perflab's default-RCP score differs from the summarizer's")
sys.exit(0 if ok else 1)
PY
[[ $rc -eq 0 ]] && echo "mlperf_summarizer_test: ok"
exit $rc
