#!/usr/bin/env bash
# End-to-end: a history database on a read-only mount (issue 24: every read
# command failed with "attempt to write a readonly database"). list, trend,
# check, export and dashboard read it as an immutable file and leave it
# byte for byte as it was; record refuses with one line. Needs to mount a
# tmpfs (root, as in CI); skips with the reason (exit 77) where it cannot.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

mnt="$tmp/mnt"
mount_tmpfs_or_skip "$mnt" 8m

for i in 1 2 3; do
  "$PERFLAB" run triad --backend cpu --threads 1 --out "$tmp/results" >/dev/null 2>&1 || fail "triad run $i failed"
  "$PERFLAB" history --db "$mnt/h.sqlite" record "$tmp/results" >/dev/null 2>"$tmp/rec.err" ||
    fail "record $i: $(cat "$tmp/rec.err")"
done
before=$(md5sum <"$mnt/h.sqlite")
mount -o remount,ro "$mnt" || { fail "remount read-only failed"; finish; exit; }

for command in "list" "trend throughput" "check" "export --openmetrics" "dashboard --out $tmp/dash.html"; do
  # shellcheck disable=SC2086
  if "$PERFLAB" history --db "$mnt/h.sqlite" $command >"$tmp/out.txt" 2>"$tmp/err.txt"; then
    pass "read-only database: history $command"
  else
    fail "read-only database: history $command: $(cat "$tmp/err.txt")"
  fi
done
[[ "$(md5sum <"$mnt/h.sqlite")" == "$before" ]] && pass "read-only database unchanged" ||
  fail "the read-only database changed"
[[ -z "$(ls -A "$mnt" | grep -v '^h.sqlite$')" ]] && pass "no -wal or -shm file beside it" ||
  fail "left beside it: $(ls -A "$mnt")"
expect 1 "Read-only file system" -- history --db "$mnt/h.sqlite" record "$tmp/results"

finish
