// transducer: the RNN-T loss (forward and gradient with respect to the
// logits) or the transducer joint (forward and backward), timed at MLPerf
// RNN-T shapes: a throughput benchmark with no quality target, whose run
// fails when its correctness gate fails.
// Variants: layout padded | packed (param), fused | unfused kernels
// (--fused, cuda), no host synchronisation (--sync-free, cuda), the
// iteration replayed as a CUDA graph (--cuda-graphs, cuda, with sync-free).
// Backends: cpu (the reference kernels) and, when built with CUDA, cuda.
#include "harness/registry.h"
#include "workloads/transducer/transducer_benchmark.h"

namespace perflab::transducer {
namespace {

std::vector<ParamSpec> transducer_params() {
  using T = ParamType;
  return {
      {"op", T::kString, "loss", "what an iteration computes", {}, {}, {"loss", "joint"}},
      {"layout", T::kString, "padded", "padded [B,T,U+1,*] or packed (padding removed)", {}, {}, {"padded", "packed"}},
      {"batch", T::kInt, "4", "B: sequences per iteration", 1, 4096},
      {"max_time", T::kInt, "30", "T: frames of the longest sequence", 1, 100000},
      {"max_labels", T::kInt, "10", "U: labels of the longest sequence (U+1 label positions)", 0, 10000},
      {"vocab", T::kInt, "29", "V: symbols, blank included (loss)", 1, 1 << 20},
      {"hidden", T::kInt, "64", "H: joint width (joint)", 1, 1 << 16},
      {"blank", T::kInt, "-1", "blank symbol (-1: V-1)", -1, 1 << 20},
      {"reduction", T::kString, "mean", "loss over the batch", {}, {}, {"none", "sum", "mean"}},
      {"dtype", T::kString, "fp32", "logits (loss) or activations (joint); bf16/fp16 on cuda", {}, {}, {"fp32", "bf16", "fp16"}},
      {"length_sets", T::kInt, "4", "length/label sets cycled through, one per iteration", 1, 1024},
      {"min_length_fraction", T::kFloat, "0.6", "shortest sequence as a fraction of the longest", 0, 1},
      {"data_seed", T::kInt, "2024", "seed of the inputs", 0, 9.2e18},
  };
}

std::vector<Preset> transducer_presets() {
  return {
      {"tiny", "B=4 T=30 U=10 V=29: seconds on the CPU (CI)", {}},
      {"small-vocab",
       "B=128 T=150 U=40 V=28: character vocabulary",
       {{"batch", "128"}, {"max_time", "150"}, {"max_labels", "40"}, {"vocab", "28"}}},
      {"mlperf",
       "MLPerf RNN-T: V=1024 (blank last), T=279, U+1=126, B=64 (try --set batch=16..192)",
       {{"batch", "64"}, {"max_time", "279"}, {"max_labels", "125"}, {"vocab", "1024"}}},
      {"mlperf-bf16",
       "MLPerf RNN-T shapes with bf16 logits (cuda)",
       {{"batch", "64"}, {"max_time", "279"}, {"max_labels", "125"}, {"vocab", "1024"}, {"dtype", "bf16"}}},
      {"joint-mlperf",
       "the joint at MLPerf RNN-T shapes: B=64 T=279 U+1=126 H=512",
       {{"op", "joint"}, {"batch", "64"}, {"max_time", "279"}, {"max_labels", "125"}, {"hidden", "512"}}},
      {"joint-tiny",
       "the joint, B=4 T=30 U=10 H=64 (CI)",
       {{"op", "joint"}}},
  };
}

std::vector<ToggleRule> transducer_toggle_rules() {
  const std::vector<Backend> cuda = {Backend::kCuda};
  return {
      {Toggle::kFused, cuda, "the cpu backend runs the one reference implementation", {}, ""},
      {Toggle::kSyncFree, cuda, "the cpu backend has no host-device synchronisation to remove", {}, ""},
      {Toggle::kCudaGraphs, cuda, "the cpu backend launches no CUDA work to capture", {},
       "graph capture needs --sync-free (the synchronising iteration reads lengths back to the host)"},
      {Toggle::kSharp, {}, "the transducer runs as a single process: there is no collective to offload", {}, ""},
  };
}

WorkloadInfo transducer_info() {
  WorkloadInfo info;
  info.name = "transducer";
  info.summary = "RNN-T loss and gradient, or the transducer joint, at MLPerf RNN-T shapes (throughput)";
  info.params = transducer_params();
  info.presets = transducer_presets();
  info.default_preset = "tiny";
#ifdef PERFLAB_TRANSDUCER_CUDA
  info.backends = {Backend::kCpu, Backend::kCuda};
#else
  info.backends = {Backend::kCpu};
#endif
  info.toggle_rules = transducer_toggle_rules();
  info.batch_param = "batch";
  info.create_timed_step = [](const RunContext& ctx) -> std::unique_ptr<Benchmark> {
    return std::make_unique<TransducerBenchmark>(ctx);
  };
  return info;
}

}  // namespace

PERFLAB_REGISTER_WORKLOAD(transducer_info());

}  // namespace perflab::transducer
