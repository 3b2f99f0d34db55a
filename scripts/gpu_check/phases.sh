# gpu-check's other phases: build, tests, the CPU suite, the sanitizers, benchmarks,
# transducer, collectives, halo_conv, ncu, serve and the PyTorch peers.
# Sourced by scripts/gpu-check, which sets what they use ($build, $work,
# $runs, $perflab, $iters, $batches, $quick, $mode, ...) and runs each as
# phase_NAME through run_phase. Not a program of its own.
# shellcheck shell=bash disable=SC2154,SC2317


phase_build() {
  # A fresh configure: a cache from an earlier call may hold other packages' paths.
  rm -f "$build/CMakeCache.txt"
  # Warnings do not stop the build here: the device image's compiler (GCC 13
  # in /opt/gcc on the first H200 run) warns where CI's does not, and CI's
  # -Werror build is the gate. They are counted in the steps table instead.
  step -t 120 configure cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPERFLAB_CUDA=ON \
    -DPERFLAB_WERROR="${GPU_CHECK_WERROR:-OFF}" "${extra[@]}" || return 1
  step build cmake --build "$build" -j "$(nproc)" || return 1
  local warnings
  warnings=$(grep -c "warning:" "$work/build.log")
  ((warnings == 0)) || row "build: $warnings compiler warnings (build.log)" "see log" "-"
}

phase_tests() {
  # On a GPU machine a skipped GPU test is a failure of the check.
  step -t 240 gpu-tests ctest --test-dir "$build" -L gpu --output-on-failure -j 8 \
    --timeout "${GPU_CHECK_GPU_TEST_TIMEOUT:-90}"
  if grep -qE "\*\*\*Skipped|\[  SKIPPED \]" "$work/gpu-tests.log" 2>/dev/null; then
    row "gpu tests skipped on a GPU machine" FAILED "-"
  fi
  # A cuDNN test failed: once more with cuDNN's own log (errors and
  # warnings: why each engine refused), and which NVRTC the loader finds.
  if grep -qE "(Conv3dCuda|HaloConvCuda).*Failed" "$work/gpu-tests.log" 2>/dev/null; then
    { echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; echo "wheel NVRTC: ${nvrtc_dirs:-none}";
      ldconfig -p 2>/dev/null | grep -E "libnvrtc|libcudnn" || true; } >"$work/cudnn-libraries.txt"
    CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG="$work/cudnn-conv3d.log" \
      step -t 90 cudnn-log ctest --test-dir "$build" -R "Conv3dCuda" --output-on-failure --timeout 60
    for f in cudnn-libraries.txt cudnn-conv3d.log; do
      [[ -f "$work/$f" ]] && head -c 2000000 "$work/$f" >"$OUT/$f"
    done
  fi
}

re_escape() {  # a test name as a literal in ctest's -R/-E regular expressions
  # shellcheck disable=SC2001
  sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$1"
}
# The CPU suite (CI runs it too), each test under a limit, each test's time
# in the log: on the first H100 run it outlasted a 10-minute call, and which
# test hung was not known.
phase_cpu_tests() {
  local jobs=${GPU_CHECK_CPU_JOBS:-$(nproc)} t
  # Open MPI refuses root unless told; the device runs commands as root.
  if (($(id -u) == 0)); then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
  # Tests with their own TIMEOUT property (the script tests: 900 s, MPI: 300 s)
  # ignore ctest's --timeout: they run one by one afterwards, under our limit.
  local own=()
  if ctest --test-dir "$build" -N --show-only=json-v1 >"$work/ctest-tests.json" 2>/dev/null; then
    mapfile -t own < <(python3 -c '
import json, sys
own = []
for t in json.load(open(sys.argv[1])).get("tests", []):
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    labels = props.get("LABELS") or []
    if "TIMEOUT" in props and "gpu" not in labels:
        # the ones known to be long (training to a target, SLURM, MPI) last
        slow = [l for l in ("trains-to-target", "mpi", "slurm") if l in labels]
        own.append((len(slow), t["name"]))
for _, name in sorted(own):
    print(name)
' "$work/ctest-tests.json" 2>/dev/null)
  fi
  local exclude=() junit=() names=()
  for t in "${own[@]}"; do names+=("$(re_escape "$t")"); done
  ((${#names[@]})) && exclude=(-E "^($(IFS='|'; echo "${names[*]}"))\$")
  ctest --help 2>/dev/null | grep -q -- --output-junit && junit=(--output-junit "$work/cpu-tests.junit.xml")
  step -t 300 cpu-tests ctest --test-dir "$build" -LE gpu "${exclude[@]}" -j "$jobs" \
    --timeout "${GPU_CHECK_TEST_TIMEOUT:-90}" --output-on-failure "${junit[@]}"
  # Two at a time by default (they are RUN_SERIAL in CI: each uses every core).
  local lanes=${GPU_CHECK_LONG_TEST_JOBS:-2}
  for t in "${own[@]}"; do
    while (($(jobs -rp | wc -l) >= lanes)); do wait -n; done
    step -t "${GPU_CHECK_LONG_TEST_TIMEOUT:-150}" "cpu-test-$t" ctest --test-dir "$build" \
      -R "^$(re_escape "$t")\$" --output-on-failure &
  done
  wait
}

# sanitize_over JOBS LIMIT "TOOLS" BINARY...: each tool over each test
# binary under compute-sanitizer, JOBS at a time, each within LIMIT s.
sanitize_over() {
  local lanes=$1 limit=$2 tools=$3 tool t
  shift 3
  if ! command -v compute-sanitizer >/dev/null; then
    row "sanitize: compute-sanitizer not found" FAILED "-"
    return 0
  fi
  for tool in $tools; do
    for t in "$@"; do
      [[ -x $t ]] || continue
      while (($(jobs -rp | wc -l) >= lanes)); do wait -n; done
      step -t "$limit" "sanitize-$tool-$(basename "$t")" compute-sanitizer --tool "$tool" --error-exitcode 9 "$t" &
    done
  done
  wait
}

# The GPU test binaries under compute-sanitizer: memcheck over all of them
# first, then racecheck, then synccheck; a few at a time, each with a limit.
phase_sanitize() {
  sanitize_over "${GPU_CHECK_SANITIZE_JOBS:-4}" "${GPU_CHECK_SANITIZE_TIMEOUT:-120}" "memcheck racecheck synccheck" \
    "$build"/tests/*_cuda_test
}

# memcheck and racecheck over the GPU tests of the kernels changed since the
# sanitizers last ran (never over these: the sanitize phase sits behind the
# measurements), six at a time, each within 150 s (at 32e4a50 four of them
# passed the 60 s this had been: bias_act's and the embedding update's tests
# run 20,001-row problems, slow under the sanitizers).
phase_sanitize_quick() {
  local t binaries=()
  for t in interaction_cuda_test interaction_lookup_cuda_test embedding_update_cuda_test logit_head_cuda_test \
           bias_act_cuda_test transpose_cuda_test dependent_launch_cuda_test graph_memsets_cuda_test; do
    binaries+=("$build/tests/$t")
  done
  sanitize_over 6 "${GPU_CHECK_SANITIZE_QUICK_TIMEOUT:-150}" "memcheck racecheck" "${binaries[@]}"
}

# Microbenchmarks (CUDA events, manual time).
phase_bench() {
  local reps=5 b name
  [[ $quick == 1 ]] && reps=2
  for b in "$build"/bin/bench_cuda_*; do
    [[ -x "$b" ]] || continue
    name=$(basename "$b")
    step "$name" "$b" --benchmark_out="$work/$name.json" --benchmark_out_format=json \
      --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true
  done
}

# The transducer loss at MLPerf shapes (T=279, U+1=126, V=1024), padded and
# packed, fused (traced) and unfused, fp32 then bf16, at batches 16 and 64
# (inputs drawn on the device: setup should be a few percent of a point's
# wall time, issue 27's target). Explicit runs of the phase add batch 64
# with sync-free off, batch 192, the small vocabulary, the joint and graphs.
phase_transducer() {
  local tr=(run transducer --backend cuda --iterations "$iters" --warmup 5 --out "$runs/transducer")
  # shellcheck disable=SC2054
  local mlperf=(--set layout=padded,packed --set batch="$rnnt_batches")
  step rnnt-mlperf-fused "$perflab" "${tr[@]}" --preset mlperf "${mlperf[@]}" --fused on --sync-free on "${pt[@]}"
  step rnnt-mlperf-unfused "$perflab" "${tr[@]}" --preset mlperf "${mlperf[@]}" --fused off --sync-free on "${pk[@]}"
  step rnnt-mlperf-bf16 "$perflab" "${tr[@]}" --preset mlperf-bf16 "${mlperf[@]}" --fused on,off --sync-free on "${pk[@]}"
  [[ $mode == all ]] && return 0
  step rnnt-mlperf-b64 "$perflab" "${tr[@]}" --preset mlperf --set layout=padded,packed --set batch=64 \
    --fused on,off --sync-free on,off "${pk[@]}"
  step rnnt-mlperf-b192 "$perflab" "${tr[@]}" --preset mlperf --set layout=packed --set batch=192 --fused on,off \
    --sync-free on "${pk[@]}"
  step rnnt-small-vocab "$perflab" "${tr[@]}" --preset small-vocab --set layout=padded,packed --fused on,off \
    --sync-free on "${pk[@]}"
  step joint-mlperf "$perflab" "${tr[@]}" --preset joint-mlperf --set layout=padded,packed --set dtype=fp32,bf16 \
    --fused on,off \
    --sync-free on "${pk[@]}"
  step rnnt-graphs "$perflab" "${tr[@]}" --preset small-vocab --set layout=packed --fused on --sync-free on \
    --cuda-graphs on,off "${pk[@]}"
}

# Collectives: NCCL on one GPU (one rank), nccl-tests' sizes. Every op with
# graph capture on and off (capture must cut small-message latency), then
# SHARP requested on and off: on one GPU its verdict must read off, with the
# reason, in the result and the table. NCCL's debug log lands beside the
# results (nccl-debug-*.log).
phase_collectives() {
  local coll=(run collectives --backend cuda --iterations 10 --sync-free on --out "$runs/collectives")
  step nccl-ops "$perflab" "${coll[@]}" -b 8 -e 256M -f 4 -n 20 \
    --set op=all_reduce,all_gather,reduce_scatter,all_to_all,broadcast,reduce,sendrecv --set in_place=0 \
    --cuda-graphs on,off
  step nccl-types "$perflab" "${coll[@]}" -b 1K -e 64M -f 64 --set dtype=float,half,bfloat16,int32,double
  step nccl-sharp "$perflab" "${coll[@]}" -b 8 -e 64M -f 8 --sharp on,off
}

# halo_conv: P slabs on P streams of one GPU against one partition. The 3D
# U-Net shapes, naive and overlapped, 1 to 4 slabs (overlap hides >= 90% of
# the halo transfer; P slabs cost <= 1.15x one partition), fp32 (TF32) and
# bf16; then graphs on and off, and sync-free off (the host waits for each
# exchange).
phase_halo_conv() {
  # Profiled: where an overlapped step's time goes (the data-gradient
  # fallback's forward convolutions and flips among it).
  local halo=(run halo_conv --backend cuda --iterations 20 --warmup 5 --out "$runs/halo_conv" "${pk[@]}")
  step halo-unet1 "$perflab" "${halo[@]}" --preset unet_level1 --set partitions=1,2,4 --set halo=naive,overlap \
    --sync-free on
  # bf16 storage (issue 27): half the halo's bytes, bf16 tensor cores.
  step halo-unet1-bf16 "$perflab" "${halo[@]}" --preset unet_level1 --set partitions=1,4 \
    --set halo=naive,overlap --set precision=bf16 --sync-free on
  [[ $mode == all ]] && return 0  # all: the overlap figure and bf16 only (issue 27)
  step halo-deep "$perflab" "${halo[@]}" --preset unet_deep --set partitions=1,2,4 --set halo=naive,overlap \
    --sync-free on
  step halo-toggles "$perflab" "${halo[@]}" --preset unet_deep --set partitions=2 --sync-free on,off \
    --cuda-graphs on,off
}

# Nsight Compute on the DLRM kernels this project tunes without a GPU
# (issue 22; docs/profiling.md): speed of light, occupancy, warp states and
# launch statistics of every launch of one steady-state step, bf16 at DLE
# batch 16,384, all toggles on but graphs (their nodes replay too, but a
# plain launch sequence is simpler to select). --clock-control none leaves
# the clocks alone (METHOD.md). The report is kept (ncu-dlrm-bf16.ncu-rep)
# and its details page exported as CSV, which gpu-summary tabulates: a
# kernel's stall picture, which scripts/sass can only guess at.
phase_ncu() {
  if ! command -v ncu >/dev/null; then
    row "ncu: not found" FAILED "-"
    return 0
  fi
  # Nothing of an earlier call's profiles left for gpu-summary to read,
  # should this call not reach them all.
  rm -rf "$work/ncu-run" "$work/ncu-dlrm-bf16.ncu-rep" "$work/ncu-dlrm-bf16.csv" "$work/ncu-dlrm-bf16-raw.csv" \
    "$work/ncu-run-512" "$work/ncu-dlrm-bf16-512.ncu-rep" "$work/ncu-dlrm-bf16-512.csv" "$work/ncu-dlrm-bf16-512-raw.csv" \
    "$work/ncu-run-tf32" "$work/ncu-dlrm-tf32-65536.ncu-rep" "$work/ncu-dlrm-tf32-65536.csv" \
    "$work/ncu-dlrm-tf32-65536-raw.csv"
  # The step's own kernels by name (cuBLASLt's and CUB's left out: not
  # ours to tune); 40 launches from the 300th matching one (about 11 a
  # step): past the first steps, more than three steps' worth. --warmup 0:
  # no warm-up iteration, so perflab's own CUPTI launch count stays off
  # beside ncu's collection. SchedulerStats: the stall rule (CPIStall)
  # hangs off its IssueSlotUtilization rule.
  # (.* around each name: whether ncu matches the whole name or a part.)
  ncu_dlrm ncu-dlrm-bf16 ncu-run 150 \
    'regex:.*(sgd_tiles_kernel|interaction_(forward|backward)|logit_head_kernel|relu_bias_grad|bias_act_kernel|scheduled_lr_kernel).*' \
    300 40 65 16384 bf16
  # The same at batch 512, the step issue 22 wants at 0.15 ms: there a
  # handful of blocks a SM run each kernel, so a kernel's time is one
  # block's chain of round trips (latency), which the 16,384 point cannot
  # show. Its critical path's own kernels: the interaction (CUDA cores at
  # 512 under interaction=auto), the fused head, the dReLU + bias
  # gradients, and beside them the update's sort, its SGD and the dense
  # SGDs. About 19 matching launches a step: 60 from the 300th.
  ncu_dlrm ncu-dlrm-bf16-512 ncu-run-512 120 \
    'regex:.*(sgd_tiles_kernel|sort_per_table_kernel|sgd_kernel|interaction_(forward|backward)|logit_(head|rows)_kernel|relu_bias_grad|scheduled_lr_kernel).*' \
    300 60 65 512 bf16
  # TF32 at batch 65,536, the step issue 22 wants within 3x its floor (3.11x
  # with tuned GEMMs at 1590d6a). Our kernels on its critical path: the
  # CUDA-core interaction (auto's TF32 pick; 0.66 + 1.12-1.24 ms of a 6.2 ms
  # step there, 3.0x and 2.8x their floors, never profiled by counters),
  # the dReLU + bias gradients and the embedding update (which the bottom
  # MLP's backward waited behind). About 10 matching launches a step: 30
  # from the 100th, a handful of iterations.
  ncu_dlrm ncu-dlrm-tf32-65536 ncu-run-tf32 150 \
    'regex:.*(sgd_tiles_kernel|interaction_(forward|backward)|relu_bias_grad|logit_head_kernel).*' \
    100 30 16 65536 fp32
}

# ncu_dlrm NAME RUN LIMIT KERNELS SKIP COUNT ITERATIONS BATCH PRECISION: one
# Nsight Compute profile of a DLRM dle run (all toggles on but graphs:
# their nodes replay too, but a plain launch sequence is simpler to select),
# COUNT launches of the KERNELS regex from the SKIP-th, kept as
# $work/NAME.ncu-rep; then its details page (what the sections show, the
# rules' findings) and raw page (every metric collected: gpu-summary takes
# the stall reasons from it) as NAME.csv and NAME-raw.csv, from the report,
# no device needed. The run's result goes to $work/RUN, beside runs/, not
# in it: timings taken under ncu's replay must not join gpu-summary's tables.
ncu_dlrm() {
  local name=$1 run=$2 limit=$3 kernels=$4 skip=$5 count=$6 iterations=$7 batch=$8 precision=$9
  step -t "$limit" "$name" ncu --clock-control none --kernel-name "$kernels" --launch-skip "$skip" \
    --launch-count "$count" \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats \
    --export "$work/$name" \
    "$perflab" run dlrm --preset dle --backend cuda --mode throughput --iterations "$iterations" --warmup 0 \
    --set train_samples=524288 --set eval_samples=16384 --set batch_size="$batch" --set precision="$precision" \
    --fused on --cuda-graphs off --sync-free on --out "$work/$run"
  step -t 30 "$name-csv" bash -c 'ncu --import "$1" --csv --page details >"$2" &&
    ncu --import "$1" --csv --page raw >"$3"' _ \
    "$work/$name.ncu-rep" "$work/$name.csv" "$work/$name-raw.csv"
}

# DLRM serving (issue 28) through MLCommons LoadGen, dle shapes (26 tables up
# to 200k rows, dim 128): Offline with the tables in GPU memory, in pinned
# host memory and behind the hot-row cache (lfu, 1%, 5% and 20% of the
# rows), then Server at a 10 ms p99 bound for all_device, hot_cache 5% and
# the cpu backend (on this machine's cores: the comparison the issue asks
# for), and one report whose serving table sets each point against the cpu
# backend. LoadGen tests of 3 s each (min_duration), n = 1 per point.
phase_serve() {
  rm -rf "$runs/serve"
  local serve=(run dlrm --preset dle --mode inference --set eval_samples=262144 --set train_samples=1048576
               --min-duration-ms 3000 --min-queries 1024 --out "$runs/serve")
  local offline=(--scenario offline --target-qps 1000000 --max-batch 4096)
  local server=(--scenario server --target-qps 20000 --latency-bound-ms 10 --max-batch 1024 --max-wait-ms 1)
  step serve-offline-placements "$perflab" "${serve[@]}" --backend cuda "${offline[@]}" \
    --set placement=all_device,host
  step serve-offline-cache "$perflab" "${serve[@]}" --backend cuda "${offline[@]}" --set placement=hot_cache \
    --set cache_policy=lfu --set cache_capacity=1%,5%,20%
  step serve-server-gpu "$perflab" "${serve[@]}" --backend cuda "${server[@]}" --set placement=all_device
  step serve-server-cache "$perflab" "${serve[@]}" --backend cuda "${server[@]}" --set placement=hot_cache \
    --set cache_capacity=5% --set update_rate=0,10000
  step serve-server-cpu "$perflab" "${serve[@]}" --backend cpu "${server[@]}" --set placement=all_device
  step serve-offline-cpu "$perflab" "${serve[@]}" --backend cpu "${offline[@]}" --set placement=all_device
  step serve-report "$perflab" report "$runs/serve" --out "$runs/serve-report"
  cp "$runs/serve-report/report.md" "$OUT/serve-report.md" 2>/dev/null || true
}

# PyTorch peers, same GPU: DLRM eager and torch.compile with the shapes of
# a perflab DLRM result, at the same batch sizes and iterations (peers-dlrm),
# and the RNN-T loss, straightforward PyTorch and torchaudio's when present
# (peers). Two phases, last in `all` (the ratios were 1.9x-18x over PyTorch
# on the H200 runs of 2026-11-26 and -27: what changed since the last GPU
# run comes first). Both append to
# peers.jsonl, each first dropping what an earlier run of it wrote there (a
# phase cut by the call's budget runs again in the next call).
drop_peers() {  # drop_peers WORKLOAD: peers.jsonl without that workload's lines
  [[ -f $peers ]] || return 0
  python3 - "$peers" "$1" <<'PY'
import json, sys
path, workload = sys.argv[1], sys.argv[2]
keep = []
for line in open(path):
    try:
        if json.loads(line).get("workload") == workload:
            continue
    except ValueError:
        pass  # a torn line from a step cut mid-write: kept for whoever reads the file
    keep.append(line)
open(path, "w").writelines(keep)
PY
}
phase_peers_dlrm() {
  drop_peers dlrm
  local ref
  ref=$(find "$runs" -path '*dlrm-sweep-*/runs/*/result.json' 2>/dev/null | sort | head -n 1)
  if [[ -z "$ref" ]]; then
    row "peer-dlrm: no perflab dlrm result to take shapes from (run the dlrm phase first)" FAILED "-"
  else
    step -t 180 peer-dlrm-fp32 python3 scripts/peers/dlrm_torch.py --result "$ref" --precision fp32 \
      --batch-sizes "$batches" --iterations "$iters" --json-out "$peers"
    step -t 180 peer-dlrm-bf16 python3 scripts/peers/dlrm_torch.py --result "$ref" --precision bf16 \
      --batch-sizes "$batches" --iterations "$iters" --json-out "$peers"
  fi
}
phase_peers() {
  drop_peers rnnt_loss
  local shapes=all
  [[ $mode == all ]] && shapes=mlperf
  step -t 120 peer-rnnt-fp32 python3 scripts/peers/rnnt_loss_torch.py --shapes "$shapes" --dtype fp32 \
    --repeats 10 --json-out "$peers"
  step -t 120 peer-rnnt-bf16 python3 scripts/peers/rnnt_loss_torch.py --shapes mlperf --dtype bf16 \
    --repeats 10 --json-out "$peers"
}
