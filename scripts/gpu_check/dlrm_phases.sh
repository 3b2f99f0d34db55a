# gpu-check's DLRM phases (dlrm, dlrm-bf16, dlrm-ttt) and their matrix of points.
# Sourced by scripts/gpu-check, which sets what they use ($build, $work,
# $runs, $perflab, $iters, $batches, $quick, $mode, ...) and runs each as
# phase_NAME through run_phase. Not a program of its own.
# shellcheck shell=bash disable=SC2154,SC2317

# DLRM dle, throughput: gate and timing at every batch size over the toggles
# (fused on/off x sync-free on/off without graphs, and graphs with sync-free,
# fused on/off), each point's kernels profiled; with all toggles on, a
# Chrome trace per batch size as well.
# batch_points: sets the caller's smallest, largest, ends (the two) and three
# (the ends and 2,048, unless an end is 2,048: a third point where a choice
# between two kernels' forms may cross over) from $batches.
batch_points() {
  smallest=${batches%%,*}
  largest=${batches##*,}
  ends=$smallest,$largest
  three=$ends
  [[ ",$ends," == *,2048,* ]] || three=$ends,2048
}

dlrm_matrix() {  # dlrm_matrix NAME OUTDIR [perflab args...]
  local name=$1 out=$2
  shift 2
  local tp=(run dlrm --preset dle --backend cuda --mode throughput --iterations "$iters" --warmup 10
            --set train_samples=524288 --set eval_samples=16384 --set batch_size="$batches" "$@" --out "$out")
  step "$name-all-on" "$perflab" "${tp[@]}" --fused on --cuda-graphs on --sync-free on "${pt[@]}"
  # The owed measurements first (a phase cut by its limit or the call's
  # budget loses its last steps), then the toggle matrix and graphs
  # unfused. The comparisons whose verdicts are in (dlrm_settled_matrix)
  # wait in the dlrm-settled phase, at the end of `all`.
  local smallest largest ends three
  batch_points
  # The layers' weight gradients on one stream against taking turns on two
  # (wgrad_streams; auto: 2 up to 2,048 samples a rank), at the two ends,
  # graphed and profiled: in the H200's 512 traces at 32e4a50 the one
  # weight-gradient stream ended the step 18.7 us (TF32) and 7.7 us (bf16)
  # after the data-gradient chain, the bottom MLP's weight gradients queued
  # behind the top MLP's.
  step "$name-wgrad-streams" "$perflab" run dlrm --preset dle --backend cuda --mode throughput \
    --iterations "$iters" --warmup 10 --set train_samples=524288 --set eval_samples=16384 \
    --set batch_size="$ends" --set wgrad_streams=1,2 "$@" --fused on --cuda-graphs on --sync-free on \
    "${pk[@]}" --out "$out"
  # cuBLASLt's candidates timed at setup against its first choice,
  # profiled (which kernels are kept): the heuristic's own (tuned: at most 8
  # a GEMM, 1.01x on the H200 at 32e4a50) at the smallest and the largest
  # batch, and every algorithm id's (searched: up to 64 a GEMM, a longer
  # setup) at the smallest, where the TF32 step's GEMMs were Ampere kernels
  # with split-K reductions.
  step "$name-gemm-tuning" "$perflab" run dlrm --preset dle --backend cuda --mode throughput --iterations "$iters" \
    --warmup 10 --set train_samples=524288 --set eval_samples=16384 --set batch_size="$ends" \
    --set gemm_algorithms=heuristic,tuned "$@" --fused on --cuda-graphs on --sync-free on "${pk[@]}" --out "$out"
  step "$name-gemm-search" "$perflab" run dlrm --preset dle --backend cuda --mode throughput --iterations "$iters" \
    --warmup 10 --set train_samples=524288 --set eval_samples=16384 --set batch_size="$smallest" \
    --set gemm_algorithms=searched "$@" --fused on --cuda-graphs on --sync-free on "${pk[@]}" --out "$out"
  # The data-gradient GEMMs reading W as stored ("NN") against a transposed
  # copy written once a step ("TN"), TF32 only (auto's pick there from 8,192
  # samples; bf16 tensor cores take 16-bit operands either way round), at
  # the two ends, 2,048 and 8,192, profiled: on the H200 at 32e4a50
  # transposed over stored was 0.95x at 512, 0.98x at 2,048, 1.03x at 65,536
  # (auto's threshold, 8,192, is an estimate between them).
  if [[ $name == dlrm ]]; then
    local dgrad_batches=$three
    [[ ",$three," == *,8192,* ]] || dgrad_batches=$three,8192
    step "$name-dgrad-weights" "$perflab" run dlrm --preset dle --backend cuda --mode throughput --iterations "$iters" \
      --warmup 10 --set train_samples=524288 --set eval_samples=16384 --set batch_size="$dgrad_batches" \
      --set dgrad_weights=stored,transposed "$@" --fused on --cuda-graphs on --sync-free on "${pk[@]}" --out "$out"
    # (wgrad_dy=transposed is not timed any more: on the H200 at 32e4a50,
    # TF32 65,536, it was 0.97x stored, its dz transposes 1.9 ms a step.)
  fi
  # A captured graph's memset nodes as captured against turned into kernel
  # nodes (PERFLAB_GRAPH_MEMSETS; the default: kernels), all toggles on at
  # the largest batch, profiled: on the H200 at 32e4a50 (bf16 65,536, 17
  # memsets a step; TF32 22) a memset on the step's chain put 13-20 us
  # between the kernels either side of it, 0.4 us without one.
  for m in nodes kernels; do
    step "$name-graph-memsets-$m" env PERFLAB_GRAPH_MEMSETS="$m" "$perflab" run dlrm --preset dle --backend cuda \
      --mode throughput --iterations "$iters" --warmup 10 --set train_samples=524288 --set eval_samples=16384 \
      --set batch_size="$largest" "$@" --fused on --cuda-graphs on --sync-free on "${pk[@]}" --out "$out-graph-memsets-$m"
  done
  step "$name-toggles" "$perflab" "${tp[@]}" --fused on,off --cuda-graphs off --sync-free on,off "${pk[@]}"
  step "$name-unfused-graphs" "$perflab" "${tp[@]}" --fused off --cuda-graphs on --sync-free on "${pk[@]}"
}
# The comparisons whose verdicts are in, run again when a call has time for
# them (the dlrm-settled phase, after every other phase of `all`): none is
# owed a measurement, and each auto follows them. On the H200 at 32e4a50
# (docs/results/2026-11-27-h200-gpu-check-32e4a50): own_backward epilogues
# 1.19x cuBLASLt's at bf16 512; side streams 1.15x (bf16) and 1.18x (TF32)
# at 512; 32 hardware queues 1.01-1.03x over 8; dependent launch 1.00x;
# the CUDA-core interaction faster at 512, tensor cores at 2,048 in bf16.
# Until the 32e4a50 run they sat in the dlrm phases, which never left time
# for halo_conv, the transducer, serving or the PyTorch peers.
dlrm_settled_matrix() {  # dlrm_settled_matrix NAME OUTDIR [perflab args...]
  local name=$1 out=$2
  shift 2
  local smallest largest ends three
  batch_points
  # cuBLASLt's epilogues against our own passes (issue 22: cuBLASLt ran the
  # TF32 ones, and bf16's DRELU_BGRAD, as slow separate kernels on an
  # H100), profiled, at the smallest and the largest batch (our passes add
  # launches, which a small batch feels) and at 2,048: auto picks
  # own_backward; on the H200 at 1590d6a cuBLASLt's were 1.06x faster at
  # bf16 512 and own_backward 1.33x at 65,536, so 2,048 is a third point
  # for an auto that looks at the batch.
  step "$name-epilogues" "$perflab" run dlrm --preset dle --backend cuda --mode throughput --iterations "$iters" \
    --warmup 10 --set train_samples=524288 --set eval_samples=16384 --set batch_size="$three" \
    --set epilogues=cublaslt,own_backward,own "$@" --fused on --cuda-graphs on --sync-free on "${pk[@]}" --out "$out"
  # One stream against side streams (the weight gradients beside the
  # data-gradient chain, the update's sort beside the MLPs and, sync-free on
  # one GPU, the update beside the bottom MLP's backward), at the smallest
  # and the largest batch: auto picks on, which a small batch's idle SMs
  # should favour. Profiled (the profile times its own iterations after the
  # unprofiled ones): at 1590d6a, bf16 512, the backward's chain kernels ran
  # slower in the graph than eager (the tensor-core interaction backward
  # 28.2 against 14.1-14.7 us, the data-gradient GEMMs 1.4-1.6x), with
  # nothing beside the interaction for most of it in the trace; one stream
  # against two, kernel by kernel, says whether the side streams cause it.
  step "$name-side-streams" "$perflab" run dlrm --preset dle --backend cuda --mode throughput --iterations "$iters" \
    --warmup 10 --set train_samples=524288 --set eval_samples=16384 --set batch_size="$ends" \
    --set side_streams=off,on "$@" --fused on --cuda-graphs on --sync-free on "${pk[@]}" --out "$out"
  # The CUDA runtime's hardware work queues, its default 8 against 32, all
  # toggles on at the smallest batch, traced. On the H200 at 1590d6a (bf16,
  # 512) the next graph's first kernel began 9 us after its step's start
  # and 16 us after the last one's end, beside the next batch's copies on
  # the copy stream: streams that share a queue wait for each other's work
  # (a false dependency). Each in its own folder: the environment is not
  # part of a point, so a sweep would reuse the other's result.
  for n in 8 32; do
    step "$name-connections-$n" env CUDA_DEVICE_MAX_CONNECTIONS="$n" "$perflab" run dlrm --preset dle --backend cuda \
      --mode throughput --iterations "$iters" --warmup 10 --set train_samples=524288 --set eval_samples=16384 \
      --set batch_size="$smallest" "$@" --fused on --cuda-graphs on --sync-free on "${pt[@]}" --out "$out-connections-$n"
  done
  # The step's own kernels with programmatic dependent launch, off against
  # on (dependent_launch; auto: off until this says), at the smallest batch,
  # graphed and profiled: each then waits at its start for the kernel before
  # it instead of being launched after that kernel's end. In the H200's
  # bf16 512 trace at 1590d6a two dependent kernels of the step's chain
  # were 0.2-0.6 us apart in the forward and 0.6-3.6 in the backward (there
  # beside the weight gradients), about 25 such boundaries an iteration.
  step "$name-dependent-launch" "$perflab" run dlrm --preset dle --backend cuda --mode throughput \
    --iterations "$iters" --warmup 10 --set train_samples=524288 --set eval_samples=16384 \
    --set batch_size="$smallest" --set dependent_launch=off,on "$@" --fused on --cuda-graphs on --sync-free on \
    "${pk[@]}" --out "$out"
  # The interaction on CUDA cores against tensor cores, profiled (its two
  # kernels' times), at the smallest and the largest batch and at 2,048:
  # the evidence for interaction=auto's batch threshold
  # (kTensorCoreInteractionMinBatch, 2,048: where straight lines through
  # the H200's 512 and 65,536 times cross; at 512 a tensor-core warp does a
  # whole sample alone, with about four warps a SM).
  step "$name-interaction" "$perflab" run dlrm --preset dle --backend cuda --mode throughput --iterations "$iters" \
    --warmup 10 --set train_samples=524288 --set eval_samples=16384 --set batch_size="$three" \
    --set interaction=cuda_cores,tensor_cores "$@" --fused on --cuda-graphs on --sync-free on "${pk[@]}" --out "$out"
}
phase_dlrm() {
  dlrm_matrix dlrm "$runs/dlrm"
  # What a graph replay costs between two replays (bench_cuda_graph): the
  # DLRM step's graphs ended 10-15 us before the next one began at every
  # batch on the H200 at 32e4a50; side branches, events and the input
  # copy between replays, each apart (about 10 s).
  step -t 60 dlrm-graph-bench "$build/bin/bench_cuda_graph" --benchmark_filter=GraphReplay \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$work/bench-graph.json" --benchmark_out_format=json
  # The NCCL path on one rank (exchange=nccl: self send/receive, a one-rank
  # all-reduce) trained to tiny's target; then throughput with SHARP requested
  # for its gradient all-reduce: on one GPU the verdict must read off, with
  # the reason, in the result (NCCL's debug log lands beside it).
  rm -rf "$runs/dlrm-nccl" "$runs/dlrm-nccl-sharp"
  step dlrm-nccl-tiny "$perflab" run dlrm --preset tiny --backend cuda --set exchange=nccl --seeds 1 \
    --out "$runs/dlrm-nccl"
  step dlrm-nccl-sharp "$perflab" run dlrm --preset tiny --backend cuda --set exchange=nccl --mode throughput \
    --iterations 50 --warmup 5 --sync-free on --cuda-graphs on --sharp on --out "$runs/dlrm-nccl-sharp"
  step dlrm-nccl-sharp-verdict python3 -c '
import glob, json, sys
files = glob.glob(sys.argv[1] + "/*/result.json")
assert files, "no result.json under " + sys.argv[1]
sharp = json.load(open(files[0]))["toggles"]["sharp"]
print("sharp:", sharp)
assert sharp["requested"] and not sharp["in_effect"] and sharp.get("reason"), "SHARP verdict must read off with a reason on one GPU"
' "$runs/dlrm-nccl-sharp"
}
phase_dlrm_bf16() {
  dlrm_matrix dlrm-bf16 "$runs/dlrm-bf16" --set precision=bf16
}
phase_dlrm_settled() {
  dlrm_settled_matrix dlrm "$runs/dlrm"
  dlrm_settled_matrix dlrm-bf16 "$runs/dlrm-bf16" --set precision=bf16
  # The lookups inside the interaction against the gather, forward and
  # backward alone (issue 22; bench_cuda_dlrm's BM_LookupAndInteraction);
  # and the interaction's forward and backward each alone at 512 and 65,536
  # (BM_InteractionForward/Backward), to tell their times apart.
  step -t 120 dlrm-lookup-bench "$build/bin/bench_cuda_dlrm" \
    --benchmark_filter='BM_LookupAndInteraction|BM_Interaction(Forward|Backward)' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$work/bench-lookup.json" --benchmark_out_format=json
  # The dReLU + bias gradient's two kernels forced at 512, 2,048 and 16,384
  # rows of DLRM's widths, both types: where relu_bias_grad's one-pass
  # threshold (kOnePassMaxRows, 2,048) belongs. Fixed iterations (about 20 s).
  step -t 90 dlrm-epilogue-bench "$build/bin/bench_cuda_linear" --benchmark_filter=ReluBiasGrad \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$work/bench-relu-bias-grad.json" --benchmark_out_format=json
}
# Time to train at the dle target (0.72), 3 seeds, all toggles on; tiny too.
phase_dlrm_ttt() {
  rm -rf "$runs/dlrm-ttt"
  step dlrm-dle-ttt "$perflab" run dlrm --preset dle --backend cuda --seeds 3 --fused on --cuda-graphs on \
    --sync-free on --out "$runs/dlrm-ttt"
  step dlrm-tiny-ttt "$perflab" run dlrm --preset tiny --backend cuda --seeds 3 --fused on --cuda-graphs on \
    --sync-free on --out "$runs/dlrm-ttt"
}
