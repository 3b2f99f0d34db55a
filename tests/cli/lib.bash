# Shared by the end-to-end script tests: a temp folder removed on exit,
# pass/fail counting, and expect() for the one-line error contract.
# (Not *.sh, so ctest does not take it for a test.) Source it after checking PERFLAB and PERFLAB_SOURCE_DIR.
PYTHON=${PYTHON:-python3}
tmp=$(mktemp -d)

# LLVM's libomp (the asan build's OpenMP runtime) registers each process in
# /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid> and removes it when the process
# ends normally. A process killed first (SLURM's cancelled steps, mpirun's
# aborted ranks, a timeout) leaves its file; a later process given the same
# pid reads it before main, and one that was killed between creating and
# sizing it left an empty file, whose read is a SIGBUS: the asan suite's rare
# crash before main (docs/reliability.md). The files of processes that no
# longer exist are removed when a script test ends.
clean_openmp_registrations() {
  local f pid
  for f in /dev/shm/__KMP_REGISTERED_LIB_*; do
    [[ -e $f ]] || continue
    pid=${f#/dev/shm/__KMP_REGISTERED_LIB_}
    pid=${pid%%_*}
    [[ -d /proc/$pid ]] || rm -f "$f" 2>/dev/null
  done
  return 0
}
trap 'rm -rf "$tmp"; clean_openmp_registrations' EXIT
failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE PATTERN -- ARGS...: exit code CODE, exactly one stderr line matching PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 3
  "$PERFLAB" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err.txt")
  if [[ $rc -ne $code ]]; then
    fail "perflab $* exited $rc, expected $code: $(cat "$tmp/err.txt")"
  elif [[ $lines -ne 1 ]]; then
    fail "perflab $* wrote $lines lines to stderr, expected 1: $(cat "$tmp/err.txt")"
  elif ! grep -qE -- "$pattern" "$tmp/err.txt"; then
    fail "perflab $*: stderr '$(cat "$tmp/err.txt")' does not match '$pattern'"
  else
    pass "perflab $* -> $code: $(cat "$tmp/err.txt")"
  fi
}

# expect_ranks NP PATTERN -- ARGS...: under mpirun -np NP (in $tmp), a
# non-zero exit and exactly one "perflab: error:" line, matching PATTERN
# (a usage error is said once, by rank 0).
expect_ranks() {
  local np=$1 pattern=$2
  shift 3
  (cd "$tmp" && mpirun -np "$np" "$PERFLAB" "$@" >"$tmp/ranks_out.txt" 2>"$tmp/ranks_err.txt")
  local rc=$?
  local lines
  lines=$(grep -c "^perflab: error:" "$tmp/ranks_err.txt")
  if [[ $rc -ne 0 && $lines -eq 1 ]] && grep -qE -- "$pattern" "$tmp/ranks_err.txt"; then
    pass "$np ranks: perflab $* -> one error line, exit $rc"
  else
    fail "$np ranks: perflab $*: exit $rc, $lines error lines: $(cat "$tmp/ranks_err.txt")"
  fi
}

# mount_tmpfs_or_skip DIR SIZE: a tmpfs of SIZE at DIR, unmounted (and $tmp
# removed) on exit; where mounting is not allowed (it needs root, as in CI),
# the test skips with the reason (exit 77).
mount_tmpfs_or_skip() {
  local dir=$1 size=$2
  mkdir -p "$dir"
  if ! mount -t tmpfs -o "size=$size" tmpfs "$dir" 2>"$tmp/mount.err"; then
    echo "skip: cannot mount a tmpfs here: $(cat "$tmp/mount.err")"
    exit 77
  fi
  # shellcheck disable=SC2064
  trap "umount '$dir' 2>/dev/null; rm -rf '$tmp'" EXIT
}

# finish: the count, and the exit status of the test.
finish() {
  echo "$failures failure(s)"
  [[ $failures -eq 0 ]]
}
