#!/usr/bin/env bash
# End-to-end `perflab history`: record nightly runs, list, check against the
# rolling baseline (exit 1 on a regression), a trend with its change point
# named by revision, the OpenMetrics export validated line by line, and the
# safety contract: a recorder killed with SIGKILL loses nothing it reported
# committed and leaves a database that opens; two concurrent recorders both
# succeed; damaged or foreign files get one line and a non-zero exit.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"
fake="$PYTHON $(dirname "$0")/fake_results.py"

# night DB N FACTOR: results of night N (revision revNN, created day N) recorded in DB.
night() {
  local day rev
  day=$(printf '%02d' "$2")
  rev=$(printf 'rev%02d' "$2")
  $fake "$tmp/n$1-$2" "$3" "$2" "$rev" nightly-host "2026-01-${day}T03:00:00Z" 5 &&
    "$PERFLAB" history --db "$tmp/$1.sqlite" record "$tmp/n$1-$2" >>"$tmp/$1.log"
}

# --- check: 11 quiet nights, then one 20% slower -----------------------------
for n in $(seq 1 11); do night check "$n" 1.0 || fail "record night $n"; done
"$PERFLAB" history --db "$tmp/check.sqlite" check >"$tmp/out.txt" 2>&1
rc=$?
[[ $rc -eq 0 ]] && pass "check after 11 quiet nights exits 0" || fail "check exited $rc: $(cat "$tmp/out.txt")"
grep -q "against 10 earlier runs" "$tmp/out.txt" && pass "baseline of 10 runs" || fail "baseline: $(head -1 "$tmp/out.txt")"
night check 12 1.2 || fail "record night 12"
"$PERFLAB" history --db "$tmp/check.sqlite" check >"$tmp/out.txt" 2>&1
rc=$?
[[ $rc -eq 1 ]] && pass "check after a 20% slower night exits 1" || fail "check exited $rc: $(cat "$tmp/out.txt")"
cat "$tmp/out.txt"
"$PERFLAB" history --db "$tmp/check.sqlite" list >"$tmp/out.txt"
[[ $(grep -c " rev[0-9]" "$tmp/out.txt") -eq 12 ]] && pass "list shows 12 runs" || fail "list: $(cat "$tmp/out.txt")"
[[ $("$PERFLAB" history --db "$tmp/check.sqlite" list --since 2026-01-11 | grep -c " rev[0-9]") -eq 2 ]] &&
  pass "list --since" || fail "list --since"

# --- trend: a 10% step at night 9 of 20 -------------------------------------
for n in $(seq 1 20); do
  f=1.0
  [[ $n -ge 9 ]] && f=1.1
  night trend "$n" "$f" || fail "record trend night $n"
done
"$PERFLAB" history --db "$tmp/trend.sqlite" trend time_to_train_s --point batch_size=256 >"$tmp/out.txt" 2>&1
cat "$tmp/out.txt"
grep -q " rev09 .* <- change +[0-9.]*% at rev09 " "$tmp/out.txt" && pass "change point at rev09" ||
  fail "no change point named rev09"
[[ $(grep -c "<- change" "$tmp/out.txt") -eq 1 ]] && pass "exactly one change point" || fail "change points: $(grep -c '<- change' "$tmp/out.txt")"
"$PERFLAB" history --db "$tmp/trend.sqlite" trend time_to_train_s --since 2026-01-19 >"$tmp/out.txt"
[[ $(grep -c " rev\(19\|20\) " "$tmp/out.txt") -eq 4 && $(grep -c " rev0" "$tmp/out.txt") -eq 0 ]] && pass "trend --since" ||
  fail "trend --since: $(cat "$tmp/out.txt")"
expect 2 "no series of metric 'nope'" -- history --db "$tmp/trend.sqlite" trend nope

# --- OpenMetrics --------------------------------------------------------------
"$PERFLAB" history --db "$tmp/trend.sqlite" export --openmetrics --out "$tmp/perflab.prom" &&
  "$PYTHON" - "$tmp/perflab.prom" <<'PY' && pass "OpenMetrics exposition valid" || fail "OpenMetrics exposition invalid"
# The Prometheus text format (what node_exporter's textfile collector reads),
# checked line by line: HELP and TYPE before a family's samples, families
# contiguous, names and labels well formed, values floats, no timestamps,
# no duplicate series; "# EOF" last (OpenMetrics).
import re, sys
name_re = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
label_re = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
sample_re = re.compile(rf"^({name_re})\{{({label_re}(?:,{label_re})*)\}} (\S+)$")
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "" and lines[-2] == "# EOF", "must end with '# EOF' and a newline"
families, current, seen, samples = set(), None, set(), 0
for line in lines[:-2]:
    if line.startswith("# HELP "):
        name = line.split(" ")[2]
        assert re.fullmatch(name_re, name) and name not in families, line
        current = name
        families.add(name)
        continue
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split(" ")
        assert name == current and kind in ("gauge", "summary"), line
        continue
    m = sample_re.match(line)
    assert m, f"not a sample line: {line!r}"
    assert m.group(1) == current, f"sample outside its family: {line}"
    float(m.group(3))
    key = (m.group(1), m.group(2))
    assert key not in seen, f"duplicate series: {line}"
    seen.add(key)
    samples += 1
assert families >= {"perflab_time_to_train_seconds", "perflab_throughput_per_second",
                    "perflab_iteration_seconds"}, families
# Base units only (Prometheus' naming guide): no _ms, _min, _s suffix or token.
assert not any(re.search(r"_(ms|min|s)(_|$)", f) for f in families), families
assert samples == 10, samples
PY
# The official parsers: prometheus_client's strict OpenMetrics parser
# (scripts/setup installs it), and promtool's lint where it is installed
# (Debian's prometheus package).
"$PYTHON" - "$tmp/perflab.prom" <<'PY' && pass "prometheus_client parses the exposition" || fail "prometheus_client refused it"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
families = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
it = families["perflab_iteration_seconds"]
assert it.type == "summary", it.type
assert {s.labels["quantile"] for s in it.samples} == {"0.5", "0.9", "0.99"}, it.samples
assert all(0 < s.value < 10 for s in it.samples), it.samples  # seconds, not milliseconds
assert families["perflab_throughput_per_second"].type == "gauge"
PY
if command -v promtool >/dev/null; then
  if promtool check metrics <"$tmp/perflab.prom" >"$tmp/promtool.txt" 2>&1; then
    pass "promtool check metrics: no lint"
  else
    fail "promtool check metrics: $(cat "$tmp/promtool.txt")"
  fi
else
  echo "promtool not installed (Debian's prometheus package): its lint was not run"
fi
grep -q 'perflab_throughput_per_second{point="batch_size=512",point_id="[0-9a-f]*",machine="[0-9a-f]*",revision="rev20",unit="samples"}' \
  "$tmp/perflab.prom" && pass "latest revision labelled" || fail "labels: $(grep throughput "$tmp/perflab.prom")"

# --- safety: SIGKILL mid-recording -------------------------------------------
$fake "$tmp/big" 1.0 1 rev0 nightly-host 2026-02-01T00:00:00Z 5
for delay in 0.2 0.5 0.9; do
  rm -f "$tmp/kill.sqlite"* "$tmp/kill.log"
  # The loop and the recorder it runs share a process group of their own
  # (setsid), killed in one call: the recorder running now dies mid-write or
  # not, and no later one starts. (Killing the pid the loop had written
  # raced with the loop: a recorder started after the pid was read went on
  # recording after the database was listed.)
  rm -f "$tmp/loop.pgid"
  setsid bash -c 'echo $$ >"$4.tmp" && mv "$4.tmp" "$4"
    for _ in $(seq 1 200); do "$0" history --db "$1" record "$2" >>"$3" || break; done' \
    "$PERFLAB" "$tmp/kill.sqlite" "$tmp/big" "$tmp/kill.log" "$tmp/loop.pgid" &
  loop=$!
  for _ in $(seq 1000); do [[ -s "$tmp/loop.pgid" ]] && break; sleep 0.01; done
  sleep "$delay"
  kill -KILL -- -"$(cat "$tmp/loop.pgid")" 2>/dev/null  # the session leader's pid is its group's id
  wait "$loop" 2>/dev/null
  reported=$(grep -c "^recorded run" "$tmp/kill.log" 2>/dev/null || true)
  if ! "$PERFLAB" history --db "$tmp/kill.sqlite" list >"$tmp/out.txt" 2>"$tmp/err.txt"; then
    if [[ $reported -eq 0 && ! -s "$tmp/kill.sqlite" ]]; then pass "killed before anything: nothing to open"; continue; fi
    fail "after SIGKILL at ${delay}s the database does not open: $(cat "$tmp/err.txt")"
    continue
  fi
  listed=$(grep -c " rev0 " "$tmp/out.txt")
  ok=1
  while read -r _ _ id _; do
    grep -q "^ *${id%:} " "$tmp/out.txt" || ok=0
  done <"$tmp/kill.log"
  integrity=$("$PYTHON" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])" "$tmp/kill.sqlite")
  if [[ $ok -eq 1 && $listed -ge $reported && $integrity == ok ]]; then
    pass "SIGKILL after ${delay}s: $reported reported, $listed in the database, integrity ok"
  else
    fail "SIGKILL after ${delay}s: $reported reported, $listed listed, ids ok=$ok, integrity $integrity"
  fi
done

# --- safety: two concurrent recorders ----------------------------------------
rm -f "$tmp/conc.sqlite"*
recorder() {
  local i
  for i in $(seq 1 15); do "$PERFLAB" history --db "$tmp/conc.sqlite" record "$tmp/big" >/dev/null 2>>"$tmp/conc$1.err" || return 1; done
}
recorder 1 &
a=$!
recorder 2 &
b=$!
wait $a
ra=$?
wait $b
rb=$?
runs=$("$PERFLAB" history --db "$tmp/conc.sqlite" list | grep -c " rev0 ")
[[ $ra -eq 0 && $rb -eq 0 && $runs -eq 30 ]] && pass "two concurrent recorders: both succeeded, 30 runs" ||
  fail "concurrent recorders: exits $ra $rb, $runs runs: $(cat "$tmp"/conc*.err)"

# --- safety: files that are not a history database ---------------------------
head -c 3000 /dev/urandom >"$tmp/random.sqlite"
printf 'SQLite format 3\0 but then garbage, not a database at all %04000d' 0 >"$tmp/header.sqlite"
expect 2 "random.sqlite: not a perflab history database" -- history --db "$tmp/random.sqlite" list
"$PERFLAB" history --db "$tmp/header.sqlite" list >/dev/null 2>"$tmp/err.txt"
rc=$?
[[ $rc -ne 0 && $(wc -l <"$tmp/err.txt") -eq 1 ]] && pass "damaged header -> exit $rc: $(cat "$tmp/err.txt")" ||
  fail "damaged header: exit $rc, $(cat "$tmp/err.txt")"
"$PYTHON" -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table notes(x)'); c.commit()" "$tmp/foreign.sqlite"
expect 2 "foreign.sqlite: not a perflab history database \(an SQLite database of another application\)$" -- \
  history --db "$tmp/foreign.sqlite" record "$tmp/big"
cp "$tmp/check.sqlite" "$tmp/cut.sqlite"
truncate -s 6000 "$tmp/cut.sqlite"
"$PERFLAB" history --db "$tmp/cut.sqlite" check >/dev/null 2>"$tmp/err.txt"
rc=$?
[[ $rc -ne 0 && $rc -lt 128 && $(wc -l <"$tmp/err.txt") -eq 1 ]] && pass "truncated database -> exit $rc: $(cat "$tmp/err.txt")" ||
  fail "truncated database: exit $rc, $(cat "$tmp/err.txt")"
expect 2 "absent.sqlite: no such history database" -- history --db "$tmp/absent.sqlite" list
finish
