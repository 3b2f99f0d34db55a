#!/usr/bin/env bash
# scripts/nightly end to end with a one-line suite (triad tiny): a first night
# records and passes; then, over a history whose earlier nights were far
# faster (copies of a real result, scaled, with a step between them), the
# next night exits 1, and its dashboard is loaded in headless Chromium: the
# latest verdicts come first with the regression marked, one trend chart per
# series, the change point marked with its revision, no script and nothing
# fetched from the network.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"
nightly="$PERFLAB_SOURCE_DIR/scripts/nightly"
echo "triad --preset tiny --backend cpu   # the whole suite of this test" >"$tmp/suite.txt"

"$nightly" --perflab "$PERFLAB" --suite "$tmp/suite.txt" --out "$tmp/n1" --machine test-box >"$tmp/out.txt" 2>&1
rc=$?
[[ $rc -eq 0 ]] && pass "first night exits 0" || fail "first night exited $rc: $(cat "$tmp/out.txt")"
for f in dashboard.html perflab.prom history.sqlite; do
  [[ -s "$tmp/n1/$f" ]] && pass "first night wrote $f" || fail "first night did not write $f"
done

# Earlier nights: 12 at 0.01x the time, 12 at 0.02x (a change point at fake13), recorded first:
# far enough below the real nights that no swing of a shared machine's speed
# between them can make the second night look as fast as its baseline.
first=$(find "$tmp/n1/runs" -name result.json | head -n 1)
"$PYTHON" - "$first" "$tmp/past" <<'PY'
import copy, json, os, random, sys
doc, out = json.load(open(sys.argv[1])), sys.argv[2]
rng = random.Random(7)
for night in range(1, 25):
    d = copy.deepcopy(doc)
    scale = 0.01 if night <= 12 else 0.02
    d["created"] = f"2026-01-{night:02d}T03:00:00Z"
    d["environment"]["git_revision"] = f"fake{night:02d}"
    for r in d["runs"]:
        noise = scale * (1 + rng.gauss(0, 0.01))
        r["throughput_samples_per_s"] /= noise
        for k in ("mean", "min", "p50", "p90", "p99", "max"):
            r["iteration_ms"][k] *= noise
    os.makedirs(f"{out}/{night:02d}")
    json.dump(d, open(f"{out}/{night:02d}/result.json", "w"))
PY
for night in $(seq -w 1 24); do
  "$PERFLAB" history --db "$tmp/n2/history.sqlite" record "$tmp/past/$night" --machine test-box >/dev/null ||
    fail "record fake night $night"
done
"$nightly" --perflab "$PERFLAB" --suite "$tmp/suite.txt" --out "$tmp/n2" --machine test-box >"$tmp/out.txt" 2>&1
rc=$?
cat "$tmp/out.txt"
[[ $rc -eq 1 ]] && pass "a night far slower than its baseline exits 1" || fail "slow night exited $rc"
# Which metrics reach significance depends on this machine's noise in the
# real night's 5 runs; at least one of them must be named slower.
grep -q "^triad tiny .* slower$" "$tmp/out.txt" && pass "a triad metric named slower" || fail "no slower row"
"$nightly" --bogus >/dev/null 2>"$tmp/err.txt"
[[ $? -eq 2 && $(wc -l <"$tmp/err.txt") -eq 1 ]] && pass "unknown argument: exit 2, one line" || fail "unknown argument"

# The dashboard in headless Chromium.
html="$tmp/n2/dashboard.html"
if [[ ! -s "$html" ]] || grep -qE '<script|src=|href=|@import|url\(' "$html"; then
  fail "the dashboard is missing, has a script or fetches something"
else
  pass "no script, nothing fetched"
fi
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$CHROMIUM" ]]; then
  [[ -n "${CI:-}" ]] && fail "chromium is not installed (scripts/setup installs it) and CI is set" ||
    echo "SKIP: chromium is not installed: the dashboard was not loaded in a browser"
else
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --dump-dom "file://$html" >"$tmp/dom.html" 2>"$tmp/chromium.log" ||
    fail "chromium could not load the dashboard: $(tail -n 3 "$tmp/chromium.log")"
  "$PYTHON" - "$tmp/dom.html" <<'PY' && pass "dashboard DOM as expected" || fail "dashboard DOM"
import re, sys
dom = open(sys.argv[1]).read()
h2 = re.findall(r"<h2>([^<]*)</h2>", dom)
assert h2 == ["Latest verdicts", "Change points", "Trends"], h2
# triad: throughput and iteration time p50, p90, p99 -> 4 series, 4 charts.
assert dom.count("<svg ") == 4, dom.count("<svg ")
assert dom.count('<tr class="slower">') >= 1, "no slower row"
assert re.search(r'id="summary">Run 25 \(revision [^,]*, [^)]*\) against 10 earlier runs', dom), "summary line"
marker = re.findall(r'<g class="marker">.*?<text[^>]*>([^<]*)</text>', dom, re.S)
assert marker and all(m.startswith("fake13 ") for m in marker), marker
assert "<td class=\"text\">fake13</td>" in dom, "change point table names fake13"
PY
fi
finish
