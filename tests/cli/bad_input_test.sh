#!/usr/bin/env bash
# End-to-end: malformed input and impossible requests through the binary. Sweep
# files, counts, result files (rerun, report), .npy inputs (transducer loss)
# and Criteo TSV (data convert) each get one line naming the input and what
# is wrong, exit 2, and nothing written. The inputs of issue 13's
# hardening (counts and numbers out of range, oversized sweeps, text that
# is not UTF-8; docs/reliability.md) are here as users would meet them.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"
never="$tmp/never"

# nothing_written WHAT: the refused commands wrote nothing under $never.
nothing_written() {
  [[ ! -e "$never" || -z "$(ls -A "$never")" ]] && pass "$1: nothing written" || fail "$1 wrote $(ls -A "$never")"
}

# --- sweep files -----------------------------------------------------------
printf 'workload: dlrm\nseeds: 4294967297\n' >"$tmp/seeds.yaml"
expect 2 "seeds.yaml:2: seeds must be in \[1, 1000\], got 4294967297$" -- sweep "$tmp/seeds.yaml" --out "$never"
printf 'workload: dlrm\nthreads: 99999999999999999999\n' >"$tmp/threads.yaml"
expect 2 "threads.yaml:2: threads must be in \[1, 4096\], got 99999999999999999999$" -- sweep "$tmp/threads.yaml" --out "$never"
printf 'workload: dlrm\nparams:\n  batch_size: [%s]\n  embed_dim: [%s]\n' "$(seq -s, 1 101)" "$(seq -s, 1 100)" >"$tmp/huge.yaml"
expect 2 "huge.yaml:1: the sweep has 10100 points, more than 10000: split it into smaller sweeps$" -- sweep "$tmp/huge.yaml" --out "$never"
printf 'workload: dlrm\nname: ../escape\n' >"$tmp/name.yaml"
expect 2 "name.yaml:2: name '../escape' must be a folder name" -- sweep "$tmp/name.yaml" --out "$never"
printf 'workload: dlrm\nname: caf\xe9\n' >"$tmp/latin1.yaml"
expect 2 "latin1.yaml:2: name must be UTF-8 text \(found byte 0xe9\); save the file as UTF-8$" -- sweep "$tmp/latin1.yaml" --out "$never"
printf 'workload: [dlrm\n' >"$tmp/syntax.yaml"
expect 2 "syntax.yaml:[0-9]+: not valid YAML: " -- sweep "$tmp/syntax.yaml" --out "$never"
: >"$tmp/empty.yaml"
expect 2 "empty.yaml:1: the sweep file is empty$" -- sweep "$tmp/empty.yaml" --out "$never"
expect 2 "absent.yaml: no such file \(the sweep file\)$" -- sweep "$tmp/absent.yaml" --out "$never"
expect 2 ": is a folder, not a file \(the sweep file\)$" -- sweep "$tmp" --out "$never"
# A sweep whose runs take 2 ranks, started on one: refused before anything runs.
printf 'workload: triad\nname: pairs\nntasks: 2\n' >"$tmp/pairs.yaml"
expect 2 "sweep pairs: its runs take 2 rank\(s\) \(ntasks: 2\), this process has 1: start it with mpirun -np 2" \
  -- sweep "$tmp/pairs.yaml" --out "$never"
expect 2 "--ntasks 3 disagrees with the sweep file's ntasks: 2$" -- sweep "$tmp/pairs.yaml" --status --ntasks 3 --out "$never"
expect 2 "--ntasks goes with --launcher slurm or --status" -- sweep "$tmp/pairs.yaml" --ntasks 2 --out "$never"
nothing_written "bad sweep files"

# --- counts and comma lists on the command line -----------------------------
expect 2 "the sweep has 10100 points, more than 10000" -- run dlrm --set "batch_size=$(seq -s, 1 101)" \
  --set "embed_dim=$(seq -s, 1 100)" --out "$never"
expect 2 "--seeds: must be in \[1, 1000\], got 1001$" -- run dlrm --seeds 1001 --out "$never"
expect 2 "--threads: Value 5000 not in range 0 to [0-9]+" -- run dlrm --threads 5000 --out "$never"
expect 2 "--seed: 3 seeds from 18446744073709551614 pass 2\^64 - 1$" -- run dlrm --seeds 3 --seed 18446744073709551614 --out "$never"
expect 2 "perflab: error: .*--seeds" -- run dlrm --seeds 99999999999 --out "$never"
expect 2 "batch_size=1\\\\n2: not an integer" -- run dlrm --set "$(printf 'batch_size=1\n2')" --out "$never"
expect 2 "argument 4 is not valid UTF-8 \(byte 0xc9 at offset 14\)" -- run dlrm --set "$(printf 'bottom_mlp=64,\xc9')" --out "$never"
nothing_written "refused counts"

# --- result files: rerun refuses, report skips with one line ---------------
if "$PERFLAB" run transducer --iterations 2 --backend cpu --out "$tmp/res" >/dev/null 2>"$tmp/res.err"; then
  good=$(find "$tmp/res" -name result.json | head -n 1)
  # edit KEY=PYTHON-EXPRESSION...: a copy of the good result with fields changed.
  edit() {
    local out=$1
    shift
    "$PYTHON" - "$good" "$out" "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for change in sys.argv[3:]:
    exec(change, {"doc": doc})
open(sys.argv[2], "w").write(json.dumps(doc))
PY
  }
  edit "$tmp/version.json" 'doc["schema_version"] = 4294967298'
  expect 2 "version.json: not a perflab result: schema_version 4294967298 \(this perflab reads 1 to 2\)$" -- rerun "$tmp/version.json" --out "$never"
  edit "$tmp/threads.json" 'doc["spec"]["threads"] = 1e300'
  expect 2 "threads.json: not a perflab result: spec.threads is 1e\+300, not a count$" -- rerun "$tmp/threads.json" --out "$never"
  edit "$tmp/seeds.json" 'doc["spec"]["seeds"] = [1e300]'
  expect 2 "seeds.json: not a perflab result: spec.seeds has 1e\+300, not an unsigned integer$" -- rerun "$tmp/seeds.json" --out "$never"
  edit "$tmp/ranks.json" 'doc["spec"]["ranks"] = 2'
  expect 2 "ranks.json ran on 2 rank\(s\), this process has 1: rerun it under mpirun -np 2" -- rerun "$tmp/ranks.json" --out "$never"
  edit "$tmp/badranks.json" 'doc["spec"]["ranks"] = 0'
  expect 2 "badranks.json: result spec is malformed: ranks is 0, not an integer in \[1, 4096\]$" -- rerun "$tmp/badranks.json" --out "$never"
  printf '{"schema_version": 2, "spec": ' >"$tmp/cut.json"
  expect 2 "cut.json: not valid JSON$" -- rerun "$tmp/cut.json" --out "$never"
  expect 2 "absent.json: no such file$" -- rerun "$tmp/absent.json" --out "$never"
  nothing_written "refused reruns"

  mkdir -p "$tmp/counts"
  edit "$tmp/counts/result.json" 'doc["runs"][0]["iterations"] = 1e300'
  if "$PERFLAB" report "$tmp/counts" "$good" --out "$tmp/report" >"$tmp/report.out" 2>"$tmp/report.err"; then
    if [[ $(wc -l <"$tmp/report.err") -eq 1 ]] &&
        grep -q "^perflab: skipped .*counts/result.json: not a perflab result: run.iterations is out of range or not an integer (1e+300)$" "$tmp/report.err" &&
        grep -q "counts/result.json" "$tmp/report/report.md"; then
      pass "report: a result with 1e300 iterations is skipped with one line and listed; the rest reported"
    else
      fail "report with a 1e300 count: $(cat "$tmp/report.err")"
    fi
  else
    fail "report with a 1e300 count exited non-zero: $(cat "$tmp/report.err")"
  fi
else
  fail "no result to edit: $(cat "$tmp/res.err")"
fi

# --- .npy inputs -------------------------------------------------------------
mkdir -p "$tmp/npy"
"$PYTHON" - "$tmp/npy" <<'PY'
import struct, sys
def npy(path, header, data=b""):
    header = header + " " * (-(10 + len(header) + 1) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
d = sys.argv[1]
npy(d + "/lengths.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", struct.pack("<i", 1))
npy(d + "/huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999999999, 999999999999999999), }")
npy(d + "/short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }", b"\0" * 16)
open(d + "/text.npy", "w").write("0\t1\t2\n")
# One sequence (T = 1, U = 1, V = 2): a NaN logit, and logits too large for
# fp32's log-softmax (the loss came out "-nan" and 0, with exit 0).
npy(d + "/labels.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1), }", struct.pack("<i", 0))
npy(d + "/nan.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }",
    struct.pack("<4f", 0.5, float("nan"), 0.1, 0.2))
npy(d + "/big.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", struct.pack("<4f", *[3e38] * 4))
PY
loss() { echo transducer loss --logits "$1" --labels "$tmp/npy/lengths.npy" --logit-lengths "$tmp/npy/lengths.npy" \
  --label-lengths "$tmp/npy/lengths.npy" --out "$never"; }
# shellcheck disable=SC2046
expect 2 "text.npy: not a .npy file \(bad magic\)$" -- $(loss "$tmp/npy/text.npy")
# shellcheck disable=SC2046
expect 2 "huge.npy: bad .npy header: shape too large$" -- $(loss "$tmp/npy/huge.npy")
# shellcheck disable=SC2046
expect 2 "short.npy: truncated .npy data: the shape needs 4000000000 bytes, the file holds 16$" -- $(loss "$tmp/npy/short.npy")
expect 2 "nan.npy: logit 1 \(flat index\) is nan; the loss needs finite logits$" -- transducer loss \
  --logits "$tmp/npy/nan.npy" --labels "$tmp/npy/labels.npy" --logit-lengths "$tmp/npy/lengths.npy" \
  --label-lengths "$tmp/npy/lengths.npy" --out "$never"
expect 2 "big.npy: logit 0 \(flat index\) is 3e\+38, beyond ±65536, where fp32 log-softmax loses the loss" -- \
  transducer loss --logits "$tmp/npy/big.npy" --labels "$tmp/npy/labels.npy" --logit-lengths "$tmp/npy/lengths.npy" \
  --label-lengths "$tmp/npy/lengths.npy" --out "$never"
nothing_written "refused .npy inputs"

# --- Criteo TSV ----------------------------------------------------------------
"$PYTHON" - "$tmp" <<'PY'
import sys
d = sys.argv[1]
row = "\t".join(["1"] + ["3"] * 13 + ["68fd1e64"] * 26)
open(d + "/long.tsv", "w").write(row + "\n" + "0" * (2 << 20) + "\n")
open(d + "/fields.tsv", "w").write(row + "\n" + row + "\t\n")
PY
expect 2 "long.tsv:2: line longer than 1048576 bytes$" -- data convert --input "$tmp/long.tsv" --eval-fraction 0.5 --output "$never/a"
expect 2 "fields.tsv:2: expected 40 tab-separated fields, found 41$" -- data convert --input "$tmp/fields.tsv" --eval-fraction 0.5 --output "$never/b"
nothing_written "refused TSV files"

# --- values that used to pass silently (issue 24) -----------------------------
expect 2 "--seed: '-1' is not an integer in \[0, 2\^64 - 1\]" -- run triad --seed -1 --out "$never"
expect 2 "--seed: '18446744073709551616' is not an integer" -- run triad --seed 18446744073709551616 --out "$never"
for value in true 1 ""; do
  expect 2 "--fused: '$value' is not a valid value; valid values: on, off" -- run triad --fused "$value" --out "$never"
done
expect 2 "parameter elements= 5: not an integer" -- run triad --set "elements= 5" --out "$never"
expect 2 "parameter elements=\+5: not an integer" -- run triad --set "elements=+5" --out "$never"
expect 2 "--since: 'garbage' is not a UTC time" -- history --db "$never/h.sqlite" list --since garbage
: >"$tmp/empty.tsv"
expect 2 "convert: the train split has no rows" -- data convert --input "$tmp/empty.tsv" --eval-fraction 0.5 --output "$never/conv"
nothing_written "refused values"
"$PERFLAB" run triad --fused ON --out "$tmp/upper" >/dev/null 2>&1 && pass "--fused ON is on (any case)" ||
  fail "--fused ON was refused"
"$PERFLAB" run triad --out "$tmp/upper" --fused >/dev/null 2>&1 && pass "a bare --fused is on" || fail "a bare --fused was refused"
expect 2 "--division: bogus not in \{closed,open\}" -- export --mlperf "$never/ex" "$tmp/upper" --division bogus
for runs in 0 -1 1e9; do
  expect 2 "--submission-runs: Value $runs not in range 1 to 1000" -- rcp check "$tmp/none.json" "$tmp/upper" --submission-runs "$runs"
done

finish
