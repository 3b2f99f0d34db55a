#!/usr/bin/env bash
# End-to-end: the halo convolution. Both variants on 2 slabs of one
# process and on 2 MPI ranks pass their gate against the unpartitioned
# convolution and record the variant as it ran with its parts timed alone;
# overlap on slabs too thin to pay is recorded as not in effect; bf16
# (emulated) passes its gate; bad input gets one line and exit 2.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# check_results DIR RANKS PARTITIONS OVERLAP RESULTS: every result valid, gates passed, facts as expected.
check_results() {
  "$PYTHON" - "$@" "$PERFLAB_SOURCE_DIR/docs/result.schema.json" <<'PY'
import json, pathlib, sys, jsonschema
folder, ranks, partitions, overlap, count, schema = sys.argv[1:]
schema = json.load(open(schema))
paths = sorted(pathlib.Path(folder).rglob("result.json"))
assert len(paths) == int(count), (len(paths), paths)
for path in paths:
    r = json.load(open(path))
    jsonschema.validate(r, schema)
    d = r["plan"]["data"]
    assert d["ranks"] == int(ranks) and d["partitions"] == int(partitions), (path, d)
    for run in r["runs"]:
        assert run["correctness"]["passed"], run["correctness"]
        assert "unpartitioned convolution" in run["correctness"]["detail"], run["correctness"]
        f = run["facts"]
        requested = r["spec"]["params"]["halo"]
        if requested == "overlap":
            assert f["overlap"].startswith(overlap), f
            assert f["halo"] == ("overlap" if overlap == "in effect" else "naive"), f
        else:
            assert f["overlap"] == "not requested" and f["halo"] == "naive", f
        parts = {p["name"]: p for p in run["parts"]}  # timed alone by the harness
        assert parts["transfer"]["ms"] > 0 and parts["compute"]["ms"] > 0 and f["halo_bytes_per_step"] > 0, (f, parts)
        assert all(p["repetitions"] == 3 and p["clock"] == "host clock" for p in parts.values()), parts
        assert run["throughput_samples_per_s"] > 0, run
PY
}

# One process, 2 slabs: both variants.
if (cd "$tmp" && "$PERFLAB" run halo_conv --backend cpu --set halo=naive,overlap --set partitions=2 --iterations 3 \
      --out one >"$tmp/one.txt" 2>"$tmp/one.err"); then
  if check_results "$tmp/one" 1 2 "in effect" 2; then pass "one process, 2 slabs: naive and overlap pass the gate"; else fail "one process: results"; fi
  report=$(find "$tmp/one" -name report.md -path "*sweep*" | head -1)
  if [[ -n $report ]] && grep -q "^## Halo convolution" "$report" && grep -cE "^\| 1x3x20x12x14 -> 5, k=3, train \| cpu \| 2 \| 1 \| (naive|overlap) \|" "$report" | grep -qx 2 \
     && grep -q "exposed transfer" "${report%.md}.html"; then
    pass "sweep report: halo convolution table (2 rows) and the stacked chart"
  else
    fail "sweep report: $(cat "$report" 2>/dev/null | tail -8)"
  fi
else
  fail "one process run: $(cat "$tmp/one.err")"
fi

# Slabs of 5 planes with k = 3: overlap cannot pay, said so.
if (cd "$tmp" && "$PERFLAB" run halo_conv --backend cpu --set partitions=4 --iterations 2 --out thin >"$tmp/thin.txt" 2>"$tmp/thin.err"); then
  if check_results "$tmp/thin" 1 4 "requested, not in effect: slabs of 5 plane(s)" 1; then
    pass "thin slabs: overlap requested, not in effect, with the reason"
  else
    fail "thin slabs: results"
  fi
else
  fail "thin slabs run: $(cat "$tmp/thin.err")"
fi

# The hybrid scheme: two split levels and a gathered bottleneck, every part timed.
if (cd "$tmp" && "$PERFLAB" run halo_conv --backend cpu --set scheme=hybrid --set partitions=2 --iterations 2 --out hybrid \
      >"$tmp/hybrid.txt" 2>"$tmp/hybrid.err") && "$PYTHON" - "$tmp/hybrid" <<'PY'
import json, pathlib, sys
[path] = pathlib.Path(sys.argv[1]).rglob("result.json")
r = json.load(open(path))
run = r["runs"][0]
assert run["correctness"]["passed"] and "bottleneck" in run["correctness"]["detail"], run["correctness"]
f = run["facts"]
parts = [p["name"] for p in run["parts"] if p["ms"] > 0]
assert f["scheme"] == "hybrid" and parts[:2] == ["level1", "level2"] and "bottleneck" in parts, (f, run["parts"])
assert r["plan"]["data"]["scheme"] == "hybrid", r["plan"]["data"]
PY
then
  if grep -q "alone: level1 .* gather .* bottleneck .* split" "$tmp/hybrid.txt"; then pass "hybrid scheme: gate and parts"; else fail "hybrid console: $(cat "$tmp/hybrid.txt")"; fi
else
  fail "hybrid run: $(cat "$tmp/hybrid.err")"
fi

# precision=bf16 on the cpu backend: bf16 numbers emulated, its gate at
# bf16's tolerance; the sweep report keeps its rows apart from fp32's.
if (cd "$tmp" && "$PERFLAB" run halo_conv --backend cpu --set precision=fp32,bf16 --set partitions=2 --iterations 2 \
      --out bf16 >"$tmp/bf16.txt" 2>"$tmp/bf16.err") && "$PYTHON" - "$tmp/bf16" <<'PY'
import json, pathlib, sys
results = [json.load(open(p)) for p in pathlib.Path(sys.argv[1]).rglob("result.json")]
assert len(results) == 2, len(results)
[r] = [x for x in results if x["spec"]["params"]["precision"] == "bf16"]
run = r["runs"][0]
assert run["correctness"]["passed"] and "tolerance 0.03125" in run["correctness"]["detail"], run["correctness"]
assert run["facts"]["math"].startswith("bf16 (emulated"), run["facts"]
assert r["plan"]["data"]["precision"] == "bf16" and r["plan"]["precision"] == "bf16", r["plan"]
PY
then
  report=$(find "$tmp/bf16" -name report.md -path "*sweep*" | head -1)
  if [[ -n $report ]] && grep -qE "^\| 1x3x20x12x14 -> 5, k=3, train, bf16 \| cpu \| 2 \|" "$report" \
     && grep -qE "^\| 1x3x20x12x14 -> 5, k=3, train \| cpu \| 2 \|" "$report"; then
    pass "precision=bf16 on the cpu backend: emulated, gate at bf16's tolerance, its own report row"
  else
    fail "bf16 sweep report: $(grep '^| 1x3x20' "$report" 2>/dev/null)"
  fi
else
  fail "bf16 run: $(cat "$tmp/bf16.err")"
fi

# Bad input: one line, exit 2.
expect 2 "^perflab: error: halo_conv: scheme=hybrid computes in fp32 only" -- run halo_conv --set scheme=hybrid --set precision=bf16 --out "$tmp/bad"
expect 2 "^perflab: error: halo_conv: kernel must be odd \(1, 3, 5 or 7\), not 4" -- run halo_conv --set kernel=4 --out "$tmp/bad"
expect 2 "^perflab: error: 21 partitions \(1 rank\(s\) x partitions=21\) but depth is 20 planes" -- run halo_conv --set partitions=21 --out "$tmp/bad"
expect 2 "^perflab: error: depth 20 in 10 partitions gives slabs of 2 plane\(s\), thinner than the halo of 3 planes" -- run halo_conv --set partitions=10 --set kernel=7 --out "$tmp/bad"

export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if ! command -v mpirun >/dev/null; then
  echo "mpirun not found: the multi-rank half of this test needs Open MPI (scripts/setup)"
  finish
  exit
fi

expect 2 "^perflab: error: scheme=hybrid, level 2 \(half resolution\): 6 partitions" -- run halo_conv --set scheme=hybrid --set partitions=6 --set depth=6 --out "$tmp/bad"

# Two ranks, one slab each: halos over MPI, both variants.
if (cd "$tmp" && mpirun -np 2 "$PERFLAB" run halo_conv --backend cpu --set halo=naive,overlap --iterations 3 \
      --out two >"$tmp/two.txt" 2>"$tmp/two.err"); then
  if check_results "$tmp/two" 2 2 "in effect" 2; then pass "2 ranks: naive and overlap pass the gate"; else fail "2 ranks: results"; fi
else
  fail "2-rank run: $(cat "$tmp/two.err")"
fi

# Three ranks, the hybrid scheme: the bottleneck gathered over MPI.
# tiny's bottleneck: 5 planes of 3x3, 20 channels, in slabs of 2, 2, 1: the ranks
# receive 3 + 3 + 4 planes, of the input and of the output gradient, in fp32.
if (cd "$tmp" && mpirun -np 3 "$PERFLAB" run halo_conv --backend cpu --set scheme=hybrid --set halo=naive --iterations 2 \
      --out three >"$tmp/three.txt" 2>"$tmp/three.err") && grep -q "gather" "$tmp/three.txt" \
   && "$PYTHON" -c "import json,glob,sys; r=json.load(open(glob.glob(sys.argv[1]+'/**/result.json',recursive=True)[0])); f=r['runs'][0]['facts']; assert r['runs'][0]['correctness']['passed'] and f['ranks']==3 and f['gather_bytes_per_step']>0, f; assert f['gather_bytes_per_step'] == (3+3+4)*20*3*3*4*2, f" "$tmp/three"; then
  pass "3 ranks, hybrid: gathered bottleneck passes the gate"
else
  fail "3 ranks, hybrid: $(cat "$tmp/three.err" "$tmp/three.txt")"
fi
finish
