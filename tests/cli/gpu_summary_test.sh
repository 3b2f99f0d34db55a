#!/usr/bin/env bash
# scripts/gpu-summary, which turns a GPU session's gpu-check folder into its
# summary, runs only on a lent GPU machine, where a crash costs the session's
# report. Here it reads (1) an empty folder and (2) one holding real results
# of this build's cpu runs relabelled as cuda (dlrm throughput fp32 and
# bf16, copies of the fp32 point as the epilogues and side-streams comparisons, the
# transducer, halo_conv fp32 and bf16), a Google Benchmark JSON of
# the lookup benchmark and a steps table: it must exit 0 and render every
# section, with "not measured" where nothing was measured.
set -uo pipefail
: "${PERFLAB:?}" "${PERFLAB_SOURCE_DIR:?}"
# shellcheck source=tests/cli/lib.bash
source "$(dirname "$0")/lib.bash"
summary="$PERFLAB_SOURCE_DIR/scripts/gpu-summary"

# (1) Nothing measured yet.
mkdir -p "$tmp/empty"
: >"$tmp/empty/steps.md"
if "$PYTHON" "$summary" "$tmp/empty" "$tmp/empty/steps.md" >"$tmp/empty.md" 2>"$tmp/empty.err" \
   && grep -q "^# perflab gpu-check" "$tmp/empty.md" && grep -q "No halo_conv results" "$tmp/empty.md" \
   && grep -A2 "lookups inside the interaction" "$tmp/empty.md" | grep -q "Not measured" \
   && grep -A2 "one pass or two" "$tmp/empty.md" | grep -q "Not measured"; then
  pass "empty folder: every section, nothing measured"
else
  fail "empty folder: $(cat "$tmp/empty.err") $(head -20 "$tmp/empty.md")"
fi

# (2) Real results, relabelled.
work="$tmp/work"
mkdir -p "$work/runs"
run() { (cd "$tmp" && "$PERFLAB" "$@" >>"$tmp/runs.txt" 2>&1) || fail "perflab $*: $(tail -3 "$tmp/runs.txt")"; }
run run dlrm --backend cpu --mode throughput --iterations 3 --warmup 1 --set precision=fp32,bf16 --out "$work/runs/dlrm"
run run transducer --backend cpu --iterations 2 --out "$work/runs/transducer"
run run halo_conv --backend cpu --set precision=fp32,bf16 --set partitions=1,2 --set halo=naive,overlap \
  --iterations 2 --out "$work/runs/halo"
"$PYTHON" - "$work" <<'PY'
import json, pathlib, sys
work = pathlib.Path(sys.argv[1])
def variant(r, path, folder, change):
    """A copy of result r, changed, in a sibling folder of its run's."""
    e = json.loads(json.dumps(r))
    change(e)
    out = path.parent.parent / folder / "result.json"
    out.parent.mkdir(parents=True)
    json.dump(e, open(out, "w"))
for path in list(work.rglob("result.json")):
    r = json.load(open(path))
    r["spec"]["backend"] = "cuda"
    if r["spec"]["workload"] == "halo_conv" and r["spec"]["params"].get("halo") == "overlap":
        r["runs"][0].setdefault("facts", {})["data_gradient"] = "4 of 4 calls as forward convolutions"
        r["runs"][0]["facts"]["data_gradient_fallback"] = "dx 1 planes from dy 3 planes (d_offset 1): cuDNN 91900 answered"
        r["runs"][0]["facts"]["convolution_calls"] = 7  # a step's, 2 of them staged through plane copies
        r["runs"][0]["facts"]["staged_calls"] = 2
    json.dump(r, open(path, "w"))
    # The dlrm-epilogues step's three runs, from the fp32 point: cuBLASLt's
    # epilogues at 1,000 samples/s, our own passes faster; the
    # dlrm-side-streams step's two: one stream at 1,000 samples/s; the
    # dlrm-dgrad-weights step's two: W as stored at 1,000 samples/s.
    if r["spec"]["workload"] == "dlrm" and r["spec"]["params"].get("precision") == "fp32":
        for param, name, sps in (("epilogues", "cublaslt", 1000.0), ("epilogues", "own_backward", 1100.0),
                                 ("epilogues", "own", 1250.0), ("side_streams", "off", 1000.0),
                                 ("side_streams", "on", 1300.0), ("dgrad_weights", "stored", 1000.0),
                                 ("dgrad_weights", "transposed", 1080.0), ("wgrad_dy", "stored", 1000.0),
                                 ("wgrad_dy", "transposed", 1030.0), ("dependent_launch", "off", 1000.0),
                                 ("dependent_launch", "on", 1040.0), ("wgrad_streams", "1", 1000.0),
                                 ("wgrad_streams", "2", 1070.0)):
            def choice(e, param=param, name=name, sps=sps):
                e["spec"]["params"][param] = name
                e["score"]["throughput_samples_per_s"] = sps
                if param == "dependent_launch" and name == "on":  # asked for where it could not be
                    e["runs"][0].setdefault("facts", {})["dependent_launch"] = {
                        "requested": True, "in_effect": False, "reason": "compute capability below 9.0"}
            variant(r, path, param + "-" + name, choice)
        # A tuned point: two layers' GEMMs as tuning timed them (ms a
        # launch, the kept candidate's), one layer without a data gradient
        # and a candidate that would not run (NaN, as the run writes null).
        def tuned(e):
            e["spec"]["params"]["gemm_algorithms"] = "tuned"
            e["runs"][0].setdefault("facts", {})["gemm_algorithms"] = [
                {"layer": "bottom 0 (16 -> 512)", "gemm": "forward", "candidate_median_ms": [0.0612, 0.0588], "chosen": 1},
                {"layer": "bottom 0 (16 -> 512)", "gemm": "wgrad", "candidate_median_ms": [0.0492, None], "chosen": 0},
                {"layer": "top 1 (1024 -> 1024)", "gemm": "forward", "candidate_median_ms": [0.3486], "chosen": 0},
                {"layer": "top 1 (1024 -> 1024)", "gemm": "wgrad", "candidate_median_ms": [0.6047], "chosen": 0},
                {"layer": "top 1 (1024 -> 1024)", "gemm": "dgrad", "candidate_median_ms": [0.4186, 0.4046], "chosen": 1}]
        variant(r, path, "tuned", tuned)
        # The dlrm-connections steps' two: the same point with the hardware
        # work queues set in the environment, 8 at 1,000 samples/s, 32 faster.
        for queues, sps in (("8", 1000.0), ("32", 1200.0)):
            def connections(e, queues=queues, sps=sps):
                e["environment"].setdefault("env", {})["CUDA_DEVICE_MAX_CONNECTIONS"] = queues
                e["score"]["throughput_samples_per_s"] = sps
            variant(r, path, "connections-" + queues, connections)
        # The dlrm-graph-memsets steps' two: memset nodes as captured at
        # 1,000 samples/s, as kernel nodes faster.
        for memsets, sps in (("nodes", 1000.0), ("kernels", 1040.0)):
            def graph_memsets(e, memsets=memsets, sps=sps):
                e["environment"].setdefault("env", {})["PERFLAB_GRAPH_MEMSETS"] = memsets
                e["score"]["throughput_samples_per_s"] = sps
            variant(r, path, "graph-memsets-" + memsets, graph_memsets)
json.dump({"benchmarks": [
    {"name": "BM_LookupAndInteraction/batch:8192/fused:0/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 2.0e6, "time_unit": "ns"},
    {"name": "BM_LookupAndInteraction/batch:8192/fused:1/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 1.6e6, "time_unit": "ns"},
    {"name": "BM_InteractionForward/batch:65536/fused:1/iterations:20/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 350.25, "time_unit": "us"},
    {"name": "BM_InteractionBackward/batch:65536/fused:1/iterations:20/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 9.1e5, "time_unit": "ns"},
    {"name": "BM_InteractionBackward/batch:65536/fused:1/iterations:20/manual_time_mean", "run_type": "aggregate",
     "aggregate_name": "mean", "real_time": 1.0e6, "time_unit": "ns"},
    {"name": "BM_InteractionForward/batch:512/fused:0/iterations:20/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 8000, "time_unit": "ns"}]}, open(work / "bench-lookup.json", "w"))
json.dump({"benchmarks": [
    {"name": "ReluBiasGrad/bf16/r512/c1024/one_pass/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 4000, "time_unit": "ns"},
    {"name": "ReluBiasGrad/bf16/r512/c1024/two_passes/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 5.7, "time_unit": "us"},
    {"name": "ReluBiasGrad/bf16/r512/c1024/two_passes/manual_time_mean", "run_type": "aggregate",
     "aggregate_name": "mean", "real_time": 9.9, "time_unit": "us"},
    {"name": "ReluBiasGrad/fp32/r16384/c256/two_passes/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 20, "time_unit": "us"}]}, open(work / "bench-relu-bias-grad.json", "w"))
# bench_cuda_graph: the plain graph, six branches, and the input pipeline
# between replays (a mean row, not a median, left out).
json.dump({"benchmarks": [
    {"name": "BM_GraphReplay/branches:0/between:0/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 4.5, "time_unit": "us"},
    {"name": "BM_GraphReplay/branches:6/between:0/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 9000, "time_unit": "ns"},
    {"name": "BM_GraphReplay/branches:6/between:2/manual_time_median", "run_type": "aggregate",
     "aggregate_name": "median", "real_time": 16.25, "time_unit": "us"},
    {"name": "BM_GraphReplay/branches:6/between:2/manual_time_mean", "run_type": "aggregate",
     "aggregate_name": "mean", "real_time": 99, "time_unit": "us"}]}, open(work / "bench-graph.json", "w"))
PY
# Nsight Compute's details page as CSV (gpu-check's ncu phase): two launches
# of one kernel in two duration units with thousands separators, one of
# another in ns (--csv's base units) with a single metric, a rule's row
# (named by its section's identifier, as ncu writes rule rows) after ncu's
# note that the rule lacked an optional metric (not a finding: skipped), the
# issue-slot rule's eligible warps for a kernel without a stall rule, ncu's
# own log line; and the raw page with two launches' stall samples.
"$PYTHON" - "$work/ncu-dlrm-bf16.csv" <<'PY'
import csv, sys
head = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
        "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name",
        "Rule Type", "Rule Description"]
sgd = "void perflab::kernels::cuda::(anonymous namespace)::sgd_tiles_kernel<__nv_bfloat16>(const unsigned int *, int)"
# (The second kernel's anonymous namespace as some ncu pages print it:
# 'unnamed>::', its '<unnamed>' cut.)
tc = ("void unnamed>::interaction_backward_tc_bf16_kernel"
      "<interaction_detail::LookupRows<__nv_bfloat16>, float>(const T1 *, T2, int)")
rows = []
def metric(i, kernel, section, name, unit, value):
    rows.append([i, 1, "perflab", "h", kernel, 1, 7, "(256, 1, 1)", "(832, 1, 1)", 0, "9.0", section, name, unit,
                 value, "", "", ""])
for i, (dur_unit, dur, sm, mem, dram, occ, cpi) in enumerate(
        [("usecond", "1,200.0", "40.0", "80", "70", "30", "20.5"), ("msecond", "1.3", "50.0", "90", "72", "32", "21.5")]):
    metric(i, sgd, "GPU Speed Of Light Throughput", "Duration", dur_unit, dur)
    metric(i, sgd, "GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", sm)
    metric(i, sgd, "GPU Speed Of Light Throughput", "Memory Throughput", "%", mem)
    metric(i, sgd, "GPU Speed Of Light Throughput", "DRAM Throughput", "%", dram)
    metric(i, sgd, "Occupancy", "Achieved Occupancy", "%", occ)
    metric(i, sgd, "Occupancy", "Theoretical Occupancy", "%", "37.5")
    metric(i, sgd, "Launch Statistics", "Registers Per Thread", "register/thread", "114")
    metric(i, sgd, "Warp State Statistics", "Warp Cycles Per Issued Instruction", "cycle", cpi)
    metric(i, sgd, "Scheduler Statistics", "Eligible Warps Per Scheduler", "warp", "0.40")
rows.append([0, 1, "perflab", "h", sgd, 1, 7, "(256, 1, 1)", "(832, 1, 1)", 0, "9.0", "WarpStateStats",
             "", "", "", "CPIStall", "WRN", "The optional metric smsp__pcsamp_sample_count could not be found. "
             "Collecting it as an additional metric could enable the rule to provide more guidance."])
rows.append([0, 1, "perflab", "h", sgd, 1, 7, "(256, 1, 1)", "(832, 1, 1)", 0, "9.0", "WarpStateStats",
             "", "", "", "CPIStall", "WRN", "On average, each warp of this kernel spends 15.2 cycles being stalled "
             "waiting for a scoreboard dependency on a L1TEX operation. This is 74% of the total."])
metric(2, tc, "GPU Speed Of Light Throughput", "Duration", "ns", "300500")
metric(2, tc, "Occupancy", "Achieved Occupancy", "%", "12")
rows.append([2, 1, "perflab", "h", tc, 1, 7, "(64, 1, 1)", "(8192, 1, 1)", 0, "9.0", "SchedulerStats",
             "", "", "", "IssueSlotUtilization", "OPT", "Every scheduler is capable of issuing one instruction per "
             "cycle. Out of the maximum of 16 warps per scheduler, this workload allocates an average of 3.81 active "
             "warps per scheduler, but only an average of 0.59 warps were eligible per cycle. Eligible warps are..."])
with open(sys.argv[1], "w", newline="") as f:
    f.write("==PROF== Disconnected from process 1\n")
    w = csv.writer(f, quoting=csv.QUOTE_ALL)
    w.writerow(head)
    w.writerows(rows)
stall = "smsp__pcsamp_warps_issue_stalled_"
raw_head = ["ID", "Kernel Name", "gpu__time_duration.sum", stall + "long_scoreboard", stall + "wait",
            stall + "selected", stall + "barrier"]
with open(sys.argv[1][:-len(".csv")] + "-raw.csv", "w", newline="") as f:
    w = csv.writer(f, quoting=csv.QUOTE_ALL)
    w.writerow(raw_head)
    w.writerow(["", "", "usecond", "", "", "", ""])  # the units row
    w.writerow([0, sgd, "1,200", "700", "200", "100", "0"])
    w.writerow([1, sgd, "1,300", "1,500", "300", "200", "0"])
PY
cat >"$work/steps.md" <<'STEPS'
| call | phase | step | result | time |
|---|---|---|---|---|
| 1 | dlrm | dlrm-all-on | ok | 30s |
STEPS
if "$PYTHON" "$summary" "$work" "$work/steps.md" >"$tmp/work.md" 2>"$tmp/work.err"; then
  sec() { grep -q "$1" "$tmp/work.md" || fail "no '$1' in the summary"; }
  sec "^## Halo convolution (cuda"
  sec "| 1x3x20x12x14->5 k3 bf16 |"
  sec "| 1x3x20x12x14->5 k3 fp32 |"
  sec "^| 1x3x20x12x14->5 k3 fp32 | 2 | overlap | [^|]* | [^|]* | 2 of 7 | "
  sec "^| 1x3x20x12x14->5 k3 fp32 | 2 | naive | [^|]* | [^|]* | - | "
  sec "| 8192 | 2.000 | 1.600 | 1.25x |"
  # The forward and backward alone: medians (not means), in us, a missing one "-".
  sec "| 512 | gathered | 8.0 | - |"
  sec "| 65536 | lookup inside | 350.2 | 910.0 |"
  sec "^| bf16 | 512 | 1024 | 4.00 | 5.70 | 1.43x | one pass |$"
  sec "^| fp32 | 16384 | 256 | - | 20.00 | - | two passes |$"
  sec "^## What a graph replay costs between replays (bench_cuda_graph)"
  sec "^| 0 | nothing | 4.50 | +0.00 |$"
  sec "^| 6 | nothing | 9.00 | +4.50 |$"
  sec "^| 6 | the input pipeline (two slots, an 88 KiB pinned copy on a copy stream) | 16.25 | +11.75 |$"
  sec "^## Nsight Compute: the DLRM kernels tuned without a GPU"
  sec "^## Kernels slower in the graph than launched one by one"
  sec "^| \`sgd_tiles_kernel\` | 2 | 1250.0 | 45.0 | 85.0 | 71.0 | 31.0 | 37.5 | 114.0 | 21.0 | 0.4 |$"
  sec "^| \`interaction_backward_tc_bf16_kernel\` | 1 | 300.5 | - | - | - | 12.0 | - | - | - | - |$"
  # Samples a launch: 700/1000 and 1500/2000 long scoreboard (median 72.5%), 20 and 15 wait (17.5%), 10 selected.
  sec "^- \`sgd_tiles_kernel\`: On average, each warp of this kernel spends 15.2 cycles being stalled waiting for a scoreboard dependency on a L1TEX operation. Stalls (% of samples, median a launch): long scoreboard 72.5, wait 17.5, selected 10.0.$"
  sec "^- \`interaction_backward_tc_bf16_kernel\`: Out of the maximum of 16 warps per scheduler, this workload allocates an average of 3.81 active warps per scheduler, but only an average of 0.59 warps were eligible per cycle.$"
  if grep -q "optional metric" "$tmp/work.md"; then fail "ncu's missing-metric note read as a finding"; fi
  sec "| fp32 | [0-9]* | 1,000 | 1,100 | 1,250 | 1.10x | 1.25x |"
  sec "| precision | batch | off | on | on x off |"
  sec "| fp32 | [0-9]* | 1,000 | 1,300 | 1.30x |"
  sec "^### cuBLASLt GEMMs timed alone at setup (gemm_algorithms=tuned or searched): the kept candidates"
  sec "^| fp32 | [0-9]* | [^|]*+tuned_gemms | bottom 0 (16 -> 512) | 58.8 | - | 49.2 | - | 0.84 |$"
  sec "^| fp32 | [0-9]* | [^|]*+tuned_gemms | top 1 (1024 -> 1024) | 348.6 | 404.6 | 604.7 | 1.16 | 1.73 |$"
  sec "^### Data-gradient GEMMs: W as stored (NN) against a transposed copy (TN) (dgrad_weights=...)"
  sec "| precision | batch | stored | transposed | transposed x stored |"
  sec "| fp32 | [0-9]* | 1,000 | 1,080 | 1.08x |"
  sec "^| fp32 | [0-9]* | [^|]*+dgrad_weights=transposed | 1,080 |"
  sec "^### Weight-gradient GEMMs of the wide layers: dz as stored against dz transposed (wgrad_dy=...)"
  sec "| fp32 | [0-9]* | 1,000 | 1,030 | 1.03x |"
  sec "^| fp32 | [0-9]* | [^|]*+wgrad_dy=transposed | 1,030 |"
  sec "^### Programmatic dependent launch of the step's own kernels (dependent_launch=...)"
  sec "| fp32 | [0-9]* | 1,000 | 1,040 | 1.04x |"
  sec "^| fp32 | [0-9]* | [^|]*+dependent_launch=on | 1,040 |"
  sec "^fp32 [0-9]*: on was not in effect (compute capability below 9.0): its row measures off twice.$"
  sec "^### Weight gradients on one stream or taking turns on two (wgrad_streams=...)"
  sec "| precision | batch | 1 | 2 | 2 x 1 |"
  sec "| fp32 | [0-9]* | 1,000 | 1,070 | 1.07x |"
  sec "^### Hardware work queues: CUDA_DEVICE_MAX_CONNECTIONS=8 (the default) against 32"
  sec "^| fp32 | [0-9]* | 1,000 | 1,200 | 1.20x |$"
  sec "^| fp32 | [0-9]* | [^|]*+CUDA_DEVICE_MAX_CONNECTIONS=32 | 1,200 |"
  sec "^### Memset nodes in the step's graph: as captured against as kernel nodes (PERFLAB_GRAPH_MEMSETS)"
  sec "^| fp32 | [0-9]* | 1,000 | 1,040 | 1.04x |$"
  sec "^| fp32 | [0-9]* | [^|]*+PERFLAB_GRAPH_MEMSETS=kernels | 1,040 |"
  sec "not measured"
  sec "| x floor | setup (s) | setup share | gate |"
  # The setup cells are the fp32 point's prepare_s + init_s and their share of its wall time.
  setup=$("$PYTHON" - "$work" <<'PY'
import glob, json, sys
for path in glob.glob(sys.argv[1] + "/runs/dlrm/*/runs/*/result.json"):
    r = json.load(open(path))
    if r["spec"]["params"].get("precision") == "fp32":
        setup = r["prepare_s"] + sum(x["init_s"] for x in r["runs"])
        wall = setup + sum(x["time_to_train_s"] for x in r["runs"])
        print(f"| {setup:.1f} | {setup / wall:.0%} | passed")
        break
PY
)
  [[ -n $setup ]] && grep -qF "$setup" "$tmp/work.md" || fail "no DLRM row with the setup cells '$setup'"
  sec "^- 1x3x20x12x14->5 k3 fp32, P=2, overlap, .*: 4 of 4 calls as forward convolutions; first: dx 1 planes"
  pass "relabelled results: exit 0, halo rows by precision, the lookup table, the epilogues, side-streams, dgrad-weights, wgrad-dy, dependent-launch and wgrad-streams tables"
else
  fail "gpu-summary on relabelled results: $(cat "$tmp/work.err")"
fi
# (3) gpu-check's record of an unfinished `all`: what is left follows the
# order the script wrote (state/order), peers-dlrm included.
mkdir -p "$work/state"
touch "$work/state/all"
echo "build tests dlrm dlrm-bf16 peers-dlrm transducer" >"$work/state/order"
printf '1\t0\t480\t540\tall\n' >"$work/state/call-1.tsv"
printf '1\tbuild\tok\t90\n1\ttests\tok\t70\n1\tdlrm\tok\t300\n1\tdlrm-bf16\tdeferred\t0\n' \
  >"$work/state/phases.tsv"
for p in build tests dlrm; do echo ok >"$work/state/done-$p"; done
if "$PYTHON" "$summary" "$work" "$work/steps.md" >"$tmp/state.md" 2>"$tmp/state.err" \
   && grep -q "^- \`all\`: not yet done: dlrm-bf16, peers-dlrm, transducer$" "$tmp/state.md" \
   && grep -q "^- call 1 (\`gpu-check all\`): 480 s of a 540 s budget: build ok (90 s), tests ok (70 s)" "$tmp/state.md"; then
  pass "an unfinished all: the calls and the phases left, in the script's order"
else
  fail "gpu-summary with a state: $(cat "$tmp/state.err") $(grep -E "^- (call|.all.)" "$tmp/state.md")"
fi
# (4) The DLRM best-toggles table and issue 22's PyTorch targets at the toggle
# matrix's batches only: a choice step's extra batch (2,048 in the
# interaction and epilogues steps) has no peer, and must not turn "met" into
# "not measured".
if "$PYTHON" - "$(dirname "$summary")" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from gpu_summary.dlrm import dlrm_section
def point(batch, sps, **choice):
    return {"kind": "throughput", "spec": {"workload": "dlrm", "backend": "cuda", "preset": "dle", "mode": "throughput",
                                           "params": dict({"batch_size": batch, "precision": "bf16"}, **choice)},
            "toggles": {t: {"requested": True, "in_effect": True} for t in ("fused", "cuda_graphs", "sync_free")},
            "score": {"throughput_samples_per_s": sps}, "runs": [{"correctness": {"passed": True}}]}
results = [point(512, 3.0e6), point(65536, 19.0e6), point(2048, 9.0e6, interaction="cuda_cores"),
           point(2048, 8.0e6, epilogues="cublaslt")]
peers = [{"workload": "dlrm", "batch": b, "precision": "bf16", "variant": v, "samples_per_s": 1.0e6}
         for b in (512, 65536) for v in ("eager", "compile-reduce-overhead")]
text, data = dlrm_section(results, peers)
assert sorted(data["ratios"]) == [("bf16", 512), ("bf16", 65536)], data["ratios"]
assert "| bf16 | 2048 | 9,000,000" not in text.split("### perflab (best toggles")[1].split("###")[0], text
PY
then
  pass "the best-toggles table and the peer ratios at the matrix's batches, not a choice step's 2,048"
else
  fail "a choice step's batch without a peer reached the best-toggles table"
fi
# The profile's busy share, concurrency and largest idle gaps in a point's
# facts, and their absence in a result from before them.
if "$PYTHON" - "$(dirname "$summary")" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from gpu_summary.kernels import busy_text, busy_waits_text, idle_text
gaps = {"idle_gaps": [{"before": "void perflab::dlrm::sgd_kernel<float>(long, float*)", "after": "memcpy HtoD",
                       "us_per_iteration": 7.25, "gaps_per_iteration": 1},
                      {"before": "memset", "after": "b", "us_per_iteration": 1.0, "gaps_per_iteration": 0.5}]}
assert idle_text(gaps) == ("Device idle, largest gaps per iteration: 7.2 us after `sgd_kernel<float>` before "
                           "`memcpy HtoD` (1 an iteration); 1.0 us after `memset` before `b` (0.5 an iteration)"), \
    idle_text(gaps)
assert idle_text({"idle_gaps": []}) == "" and idle_text({}) == ""
waits = {"busy_waits": [{"before": "void perflab::kernels::cuda::relu_bias_grad_kernel<float, 4, false>(long)",
                         "after": "void gemm_nn(int)", "beside": "void sgd_tiles_kernel<float, true>(int)",
                         "us_per_iteration": 268.3, "waits_per_iteration": 0.75}]}
assert busy_waits_text(waits).endswith(
    "largest per iteration: 268.3 us before `gemm_nn` after `relu_bias_grad_kernel<float, 4, false>`, beside "
    "`sgd_tiles_kernel<float, true>` (0.75 an iteration)"), busy_waits_text(waits)
assert busy_waits_text({"busy_waits": []}) == "" and busy_waits_text({}) == ""
assert busy_text({"busy_share": 0.89, "concurrency": 1.4504}) == \
    "device busy (kernels, copies, memsets) 89% of the window, 1.45 at a time", \
    busy_text({"busy_share": 0.89, "concurrency": 1.4504})
assert busy_text({"kernels_per_iteration": 44}) == "device busy not measured"
assert busy_text({"busy_share": 0.89, "concurrency": 1.45, "stalls": 1, "stall_us": 3919.4}).endswith(
    "(left out: 1 stall(s) longer than an iteration, 3,919.4 us)")
PY
then
  pass "the busy share, concurrency, idle gaps and busy waits of a profiled point"
else
  fail "the busy share or idle gap lines"
fi
# Kernels slower in the graph than eager: a graph point pairs with the eager
# point of the same parameters, fused and sync-free (not with one that
# differs in a parameter or in fused); a kernel is listed at 1.2x and 1 us
# over, the largest difference first; copies and memsets are left out.
if "$PYTHON" - "$(dirname "$summary")" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from gpu_summary.graphs import graph_pairs, graphs_section, slower_in_graph
def point(path, graphs, fused, rows, **params):
    toggles = {"cuda_graphs": graphs, "fused": fused, "sync_free": True}
    return {"_path": path, "kind": "throughput",
            "spec": {"workload": "dlrm", "backend": "cuda", "preset": "dle", "mode": "throughput",
                     "params": dict({"batch_size": 512, "precision": "bf16"}, **params)},
            "toggles": {t: {"requested": v, "in_effect": v} for t, v in toggles.items()},
            "runs": [{"iteration_ms": {"n": 40, "p50": 0.185 if graphs else 0.29},
                      "profile": {"rows": [dict(r, kind=r.get("kind", "kernel")) for r in rows]}}]}
k = lambda name, us: {"name": "void " + name + "(int)", "us_per_iteration": us}
graph = point("g/result.json", True, True, [k("a_kernel", 28.2), k("b_kernel", 5.0), k("c_kernel", 2.0),
                                            k("d_kernel", 16.8), {"name": "memset", "kind": "memset", "us_per_iteration": 9.0}])
eager = point("e/result.json", False, True, [k("a_kernel", 14.7), k("b_kernel", 4.5), k("c_kernel", 0.9),
                                            k("d_kernel", 11.7), {"name": "memset", "kind": "memset", "us_per_iteration": 1.0}])
unfused = point("f/result.json", False, False, [k("a_kernel", 1.0)])
# Decoys whose paths sort before the twin's (the first twin by path is kept):
# another parameter, sync-free off.
other = point("a/result.json", False, True, [k("a_kernel", 1.0)], epilogues="cublaslt")
synced = point("b/result.json", False, True, [k("a_kernel", 1.0)])
synced["toggles"]["sync_free"] = {"requested": False, "in_effect": False}
pairs = graph_pairs([unfused, other, synced, graph, eager])
assert len(pairs) == 1 and pairs[0][2] is eager, pairs
# A kernel run a different number of times an iteration is not compared.
twice = point("g2/result.json", True, True, [dict(k("a_kernel", 28.2), launches_per_iteration=2)])
once = point("e2/result.json", False, True, [dict(k("a_kernel", 14.7), launches_per_iteration=1)])
assert slower_in_graph(twice["runs"][0]["profile"], once["runs"][0]["profile"]) == []
rows = slower_in_graph(graph["runs"][0]["profile"], eager["runs"][0]["profile"])
assert [r[0] for r in rows] == ["void a_kernel(int)", "void d_kernel(int)", "void c_kernel(int)"], rows
text = graphs_section([graph, eager])
assert "| `a_kernel` | 28.2 | 14.7 | 1.92x |" in text, text
assert "graph 0.1850 ms, eager 0.2900 ms" in text and "3 kernel(s), 19.7 us per iteration more kernel time" in text, text
assert "b_kernel" not in text and "memset" not in text, text
assert "nothing compared" in graphs_section([graph, unfused]), graphs_section([graph, unfused])
PY
then
  pass "kernels slower in the graph: the eager twin, the rule, the order"
else
  fail "the graph-against-eager kernel table"
fi
# 2 dlrm points, 3 epilogue, 2 side-stream, 2 dgrad-weights, 2 wgrad-dy, 2 dependent-launch, 2 wgrad-streams,
# 1 tuned, 2 queue and 2 graph-memsets copies, 1 transducer run, 8 halo_conv points.
find "$work" -name result.json | wc -l | grep -qx 29 || fail "expected 29 results: $(find "$work" -name result.json | wc -l)"
finish
