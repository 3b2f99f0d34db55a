#!/usr/bin/env bash
# End-to-end: a full disk. On a tiny tmpfs the MLLOG (4 KiB) or the result
# (12 KiB) cannot be written: one error line naming the file and "No space
# left on device", exit 1, and nothing left behind (no work folder, no
# half-written file). Needs to mount a tmpfs (root, as in CI); skips with
# the reason (exit 77) where mounting is not allowed.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"

mnt="$tmp/mnt"
mount_tmpfs_or_skip "$mnt" 4k

# full SIZE WHAT PATTERN: a run on a SIZE tmpfs fails on WHAT.
full() {
  local size=$1 what=$2 pattern=$3
  umount "$mnt" 2>/dev/null
  mount -t tmpfs -o "size=$size" tmpfs "$mnt" || { fail "$what: mount failed"; return; }
  "$PERFLAB" run transducer --iterations 2 --backend cpu --out "$mnt/out" >"$tmp/out.txt" 2>"$tmp/err.txt"
  local rc=$?
  local errors
  errors=$(grep -c "^perflab: error:" "$tmp/err.txt")
  if [[ $rc -ne 1 ]]; then
    fail "$what: exit $rc, expected 1: $(cat "$tmp/err.txt")"
  elif [[ $errors -ne 1 ]] || ! grep -qE "^perflab: error: $pattern.*No space left on device$" "$tmp/err.txt"; then
    fail "$what: error line: $(cat "$tmp/err.txt")"
  elif [[ -n "$(find "$mnt" -mindepth 1 -not -path "$mnt/out")" ]]; then
    fail "$what: left behind: $(find "$mnt" -mindepth 1)"
  else
    pass "$what: one line, exit 1, nothing left: $(grep '^perflab: error:' "$tmp/err.txt")"
  fi
}

full 4k "MLLOG write fails" "cannot write MLLOG file '.*run_0.log'"
full 12k "result write fails" "cannot write .*result.json"

finish
