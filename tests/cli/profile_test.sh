#!/usr/bin/env bash
# End-to-end `--profile` without a GPU: refused off the GPU, outside
# throughput mode and with a bad value, in one line and exit 2, from the
# command line and a sweep file. Then the rest of the path a profiled run's
# result takes, on a real CPU result given the golden kernel table
# (tests/harness/fixtures/dlrm_like.profile.json): it validates against
# docs/result.schema.json, `perflab report` shows the kernel table, and
# `perflab compare` names the kernel that got slower, in every format.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

expect 2 "^perflab: error: --profile kernels: profiling records a GPU's kernels \(CUPTI\) and this run is on the cpu backend" \
  -- run triad --backend cpu --profile kernels --out "$tmp/refused"
expect 2 "--profile trace: .* on the cpu backend \(auto: " -- run triad --profile trace --out "$tmp/refused"
expect 2 "--profile: 'sometimes' is not a valid value; valid values: off, kernels, trace" \
  -- run triad --backend cpu --profile sometimes --out "$tmp/refused"
cat >"$tmp/sweep.yaml" <<'EOF'
workload: triad
profile: sometimes
EOF
expect 2 "sweep.yaml:2: .*profile 'sometimes' is not valid" -- sweep "$tmp/sweep.yaml"
[[ ! -e "$tmp/refused" ]] && pass "a refused run leaves no folder" || fail "a refused run left $(ls "$tmp/refused")"

# A real throughput result (CPU), then a base and a candidate profiled by hand.
if ! "$PERFLAB" run triad --backend cpu --mode throughput --set elements=4096 --iterations 5 --seeds 2 --out "$tmp/runs" \
    >"$tmp/run.txt" 2>&1; then
  fail "triad throughput run: $(cat "$tmp/run.txt")"
  finish
  exit
fi
result=$(find "$tmp/runs" -name result.json | head -n 1)
"$PYTHON" - "$result" "$PERFLAB_SOURCE_DIR" "$tmp" <<'PY' && pass "profiled copies" || fail "profiled copies"
import copy, json, os, sys
result, src, tmp = sys.argv[1:]
doc = json.load(open(result))
golden = json.load(open(os.path.join(src, "tests/harness/fixtures/dlrm_like.profile.json")))
slower = copy.deepcopy(golden)
slower["rows"] = [r for r in slower["rows"] if r["kind"] != "memset"]
for r in slower["rows"]:
    if "interaction_forward_kernel" in r["name"]:
        r["us_per_iteration"] = 12.0
for name, profile in (("base", golden), ("candidate", slower)):
    d = copy.deepcopy(doc)
    for run in d["runs"]:
        run["profile"] = profile
    os.makedirs(os.path.join(tmp, name))
    json.dump(d, open(os.path.join(tmp, name, "result.json"), "w"), indent=1)
PY
if "$PYTHON" - "$tmp/base/result.json" "$PERFLAB_SOURCE_DIR/docs/result.schema.json" <<'PY'; then
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
PY
  pass "a profiled result follows docs/result.schema.json"
else
  fail "a profiled result does not follow the schema"
fi

if "$PERFLAB" report "$tmp/base/result.json" >"$tmp/report.txt" 2>"$tmp/report.err"; then
  # The sweep-style report of one result; its run table is the per-invocation one.
  pass "report reads a profiled result"
else
  fail "report: $(cat "$tmp/report.err")"
fi

"$PERFLAB" compare "$tmp/base" "$tmp/candidate" >"$tmp/cmp.txt" 2>"$tmp/cmp.err"
cat "$tmp/cmp.txt"
if grep -q "^kernels (profiled points" "$tmp/cmp.txt" &&
   grep -qE "^ +8\.0 +12\.0 +\+50\.0% +\+4\.0  void perflab::kernels::cuda::interaction_forward_kernel<32>\(\.\.\.\)$" "$tmp/cmp.txt"; then
  pass "compare names the kernel that got slower first, by how much"
else
  fail "compare's kernel section: $(cat "$tmp/cmp.txt" "$tmp/cmp.err")"
fi
grep -q "gone" "$tmp/cmp.txt" && pass "a kernel that went away is named" || fail "no 'gone' kernel"
"$PERFLAB" compare "$tmp/base" "$tmp/candidate" --markdown >"$tmp/cmp.md" 2>/dev/null
grep -q "^## Kernels (profiled points)" "$tmp/cmp.md" && pass "--markdown has the kernel section" ||
  fail "--markdown: $(cat "$tmp/cmp.md")"
"$PERFLAB" compare "$tmp/base" "$tmp/candidate" --json >"$tmp/cmp.json" 2>/dev/null
"$PYTHON" - "$tmp/cmp.json" <<'PY' && pass "--json has the kernel changes" || fail "--json kernels: $(cat "$tmp/cmp.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
point = doc["kernels"]["points"][0]
top = point["kernels"][0]
assert "interaction_forward_kernel" in top["kernel"], top
assert abs(top["change"] - 0.5) < 1e-12 and top["delta_us_per_iteration"] == 4.0, top
assert point["base_runs"] == 2 and point["candidate_runs"] == 2, point
PY

# A damaged profile: the file is skipped with one line naming it and the
# field (reports read what they can), and compare, left with nothing, exits 2.
"$PYTHON" - "$tmp/base/result.json" "$tmp/damaged/result.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
d["runs"][0]["profile"]["rows"][0]["us_per_iteration"] = "slow"
os.makedirs(os.path.dirname(sys.argv[2]))
json.dump(d, open(sys.argv[2], "w"))
PY
"$PERFLAB" report "$tmp/damaged/result.json" >/dev/null 2>"$tmp/damaged.err"
grep -q "skipped .*damaged/result.json: not a perflab result: profile.rows\[0\].us_per_iteration: not a number" \
  "$tmp/damaged.err" && pass "report skips a damaged profile, naming the field" || fail "report: $(cat "$tmp/damaged.err")"
"$PERFLAB" compare "$tmp/damaged" "$tmp/base" >/dev/null 2>"$tmp/damaged.err"
rc=$?
[[ $rc -eq 2 ]] && grep -q "profile.rows\[0\].us_per_iteration" "$tmp/damaged.err" &&
  pass "compare with only a damaged base exits 2, naming the field" || fail "compare damaged: $rc $(cat "$tmp/damaged.err")"
finish
