# Shared by the end-to-end script tests: a temp folder removed on exit,
# pass/fail counting, and expect() for the one-line error contract.
# (Not *.sh, so ctest does not take it for a test.) Source it after checking PERFLAB and PERFLAB_SOURCE_DIR.
PYTHON=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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

# finish: the count, and the exit status of the test.
finish() {
  echo "$failures failure(s)"
  [[ $failures -eq 0 ]]
}
