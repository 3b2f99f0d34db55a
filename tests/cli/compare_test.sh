#!/usr/bin/env bash
# End-to-end `perflab compare`: a 20% slower candidate exits 1 and is named
# "slower" in every format; an unchanged one exits 0; three repetitions are
# stated as too few; bad input is one line and exit 2.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"
fake="$PYTHON $(dirname "$0")/fake_results.py"

$fake "$tmp/base" 1.0 1 && $fake "$tmp/same" 1.0 2 && $fake "$tmp/slow" 1.2 3 && $fake "$tmp/few" 1.2 4 rev0 h t 3 &&
  $fake "$tmp/few_base" 1.0 5 rev0 h t 3

"$PERFLAB" compare "$tmp/base" "$tmp/slow" >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
[[ $rc -eq 1 ]] && pass "20% slower candidate exits 1" || fail "20% slower candidate exited $rc: $(cat "$tmp/err.txt")"
cat "$tmp/out.txt"
n=$(grep -c " slower$" "$tmp/out.txt")
# 2 points x (time to train, throughput, iteration p50, p90, p99).
[[ $n -eq 10 ]] && pass "10 metrics slower" || fail "expected 10 slower rows, found $n"
grep -q "^geomean time ratio: +20" "$tmp/out.txt" && pass "geomean row" || fail "no geomean +20% row"

"$PERFLAB" compare "$tmp/base" "$tmp/same" >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
[[ $rc -eq 0 ]] && pass "unchanged candidate exits 0" || fail "unchanged candidate exited $rc: $(cat "$tmp/out.txt")"
grep -q " slower$\| faster$" "$tmp/out.txt" && fail "an unchanged candidate got a verdict" || pass "no verdicts A/A"

"$PERFLAB" compare "$tmp/base" "$tmp/slow" --json >"$tmp/out.json"
"$PYTHON" - "$tmp/out.json" <<'PY' && pass "--json" || fail "--json"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["regressed"] is True
assert len(doc["rows"]) == 10 and all(r["verdict"] == "slower" for r in doc["rows"])
assert abs(doc["geomean_time_ratio"] - 1.2) < 0.02, doc["geomean_time_ratio"]
assert all(r["test"] == "exact" and r["p_value"] < 0.01 for r in doc["rows"])
PY
"$PERFLAB" compare "$tmp/base" "$tmp/slow" --markdown >"$tmp/out.md"
grep -q "^| point | metric | base | candidate | change | p | n | verdict |$" "$tmp/out.md" && pass "--markdown" ||
  fail "--markdown header: $(head -2 "$tmp/out.md")"
"$PERFLAB" compare "$tmp/base" "$tmp/slow" --threshold 25 >/dev/null
[[ $? -eq 0 ]] && pass "--threshold 25 turns +20% into no change" || fail "--threshold 25 still regressed"

"$PERFLAB" compare "$tmp/few_base" "$tmp/few" >"$tmp/out.txt"
rc=$?
[[ $rc -eq 0 ]] && grep -q "too few repetitions" "$tmp/out.txt" && grep -q "3 vs 3 repetitions" "$tmp/out.txt" &&
  pass "3 repetitions stated as too few" || fail "3 repetitions: exit $rc, $(cat "$tmp/out.txt")"

# MLPerf result folders (results/<system>/<benchmark>/result_*.txt) and single MLLOG files.
"$PYTHON" - "$tmp" <<'PY'
import json, os, sys
for name, scale in (("mlperf_base", 1.0), ("mlperf_slow", 1.2)):
    for i in range(6):
        d = f"{sys.argv[1]}/{name}/results/sysA/resnet"
        os.makedirs(d, exist_ok=True)
        minutes = scale * (30 + i * 0.2)
        ev = lambda t, k, v, **m: ":::MLLOG " + json.dumps({"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME",
                                                           "key": k, "value": v, "metadata": m})
        open(f"{d}/result_{i}.txt", "w").write("\n".join([ev(0, "submission_benchmark", "resnet"), ev(1000, "run_start", None),
                                                          ev(1000 + minutes * 60000, "run_stop", None, status="success")]))
PY
"$PERFLAB" compare "$tmp/mlperf_base" "$tmp/mlperf_slow" >"$tmp/out.txt" 2>&1
rc=$?
[[ $rc -eq 1 ]] && grep -q "^resnet on sysA  time_to_train_min (min) .* slower$" "$tmp/out.txt" &&
  grep -q "^BASE resnet on sysA: 6 runs, 0 failed; olympic mean 30.500000 min" "$tmp/out.txt" &&
  pass "MLPerf result folders compared: slower, scores printed" || fail "MLPerf folders: exit $rc, $(cat "$tmp/out.txt")"
"$PERFLAB" compare "$tmp/mlperf_base/results/sysA/resnet/result_0.txt" "$tmp/mlperf_slow/results/sysA/resnet/result_0.txt" \
  >"$tmp/out.txt" 2>&1
rc=$?
[[ $rc -eq 0 ]] && grep -q "too few repetitions" "$tmp/out.txt" && pass "single MLLOG files: one run each, too few" ||
  fail "single MLLOG files: exit $rc, $(cat "$tmp/out.txt")"

# Across versions: the candidate's build added a parameter (here at its
# default), so no key is equal; the points still pair, and the note says so.
cp -r "$tmp/slow" "$tmp/newer"
"$PYTHON" - "$tmp/newer" <<'PY'
import glob, json, sys
for path in glob.glob(sys.argv[1] + "/**/result.json", recursive=True):
    doc = json.load(open(path))
    doc["spec"]["params"]["epilogues"] = "auto"
    json.dump(doc, open(path, "w"))
PY
"$PERFLAB" compare "$tmp/base" "$tmp/newer" >"$tmp/out.txt" 2>&1
rc=$?
[[ $rc -eq 1 ]] && [[ $(grep -c " slower$" "$tmp/out.txt") -eq 10 ]] &&
  grep -q "paired across versions: epilogues=auto only in the candidate" "$tmp/out.txt" &&
  pass "a parameter a newer build added at its default: the points pair, and the note says so" ||
  fail "across versions: exit $rc, $(cat "$tmp/out.txt")"

mkdir -p "$tmp/empty"
expect 2 "absent: no such file or folder$" -- compare "$tmp/absent" "$tmp/base"
expect 2 "CANDIDATE \(.*empty\): no perflab result with a metric found$" -- compare "$tmp/base" "$tmp/empty"
expect 2 "--threshold: must be a percentage in \[0, 1000\), got -1$" -- compare "$tmp/base" "$tmp/slow" --threshold -1
finish
