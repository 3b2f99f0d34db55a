// dlrm: trains a DLRM (bottom MLP, one embedding table per categorical
// feature, dot interaction, top MLP, sigmoid + BCE, SGD with warm-up and
// polynomial decay) until its ROC AUC on a held-out split reaches a target:
// MLPerf's time-to-train. Data: a seeded synthetic Criteo-like set whose
// best achievable AUC is known, or real Criteo converted by
// `perflab data convert` (--set data=DIR/feature_spec.yaml).
// Backends: cpu (OpenBLAS + OpenMP; fp32) and, in CUDA builds, cuda
// (cuBLASLt MLPs, CUB-deduplicated embedding SGD; precision fp32 = TF32 GEMMs
// or bf16). Toggles on cuda: fused (fused epilogues, cuBLASLt's or our own
// passes as `epilogues` says, and the last layer + loss in one kernel vs
// separate bias/ReLU kernels and GEMMs), sync-free (device-side unique count vs reading it back: 0 vs 1
// host sync per iteration), cuda-graphs (whole-iteration capture and replay;
// needs sync-free). None apply on the CPU.
// Several ranks (`mpirun -np P perflab run dlrm`): embedding tables placed
// on ranks, MLPs replicated, the global batch split; rank 0 evaluates. On
// the cpu backend over MPI (sharded_model.h), on the cuda backend over NCCL,
// one GPU per rank (cuda_model.h; exchange=nccl, which also runs on one
// rank). --sharp applies to the NCCL path's gradient all-reduce and says
// from NCCL's log whether it took effect.
#include <fmt/format.h>

#include "harness/registry.h"
#include "workloads/dlrm/dlrm_benchmark.h"
#include "workloads/dlrm/serve/serve_options.h"

namespace perflab::dlrm {
namespace {

std::vector<ParamSpec> dlrm_params() {
  using T = ParamType;
  return {
      {"data", T::kString, "synthetic", "'synthetic', or a feature_spec.yaml from perflab data convert"},
      {"train_samples", T::kInt, "524288", "synthetic training samples per epoch", 1, 1e9},
      {"eval_samples", T::kInt, "32768", "synthetic held-out samples", 2, 1e8},
      {"max_table_size", T::kInt, "1000", "synthetic: rows of the largest embedding table", 4, 1e8},
      {"zipf_exponent", T::kFloat, "1.05", "synthetic: skew of the categorical ids", 0, 4},
      {"data_seed", T::kInt, "2024", "synthetic: seed of the data and its teacher", 0, 9.2e18},
      {"embed_dim", T::kInt, "16", "embedding width (= last bottom layer)", 1, 4096},
      {"bottom_mlp", T::kString, "64-32-16", "bottom MLP layer widths"},
      {"top_mlp", T::kString, "64-32-1", "top MLP layer widths (last is 1)"},
      {"batch_size", T::kInt, "256", "global batch size", 1, 1 << 22},
      {"learning_rate", T::kFloat, "1.0", "peak SGD learning rate", 1e-9, 1e4},
      {"warmup_steps", T::kInt, "50", "linear warm-up steps", 0, 1e9},
      {"decay_start_step", T::kInt, "0", "first step of the polynomial decay", 0, 1e12},
      {"decay_steps", T::kInt, "0", "length of the decay (0: no decay)", 0, 1e12},
      {"max_epochs", T::kInt, "8", "abort when the target is not reached by then", 1, 1000},
      {"eval_interval", T::kFloat, "0.25", "evaluate every this many epochs", 1e-4, 1},
      {"target_auc", T::kFloat, "0.74", "quality target: eval ROC AUC", 0.5, 1},
      {"embedding", T::kString, "model_parallel",
       "several ranks: model_parallel (tables whole on ranks) or hybrid (frequent categories replicated, the "
       "rest model parallel, deduplicated per batch)", {}, {}, {"model_parallel", "hybrid"}},
      {"overlap", T::kString, "on",
       "several ranks: run the bottom MLP while the embeddings travel and all-reduce the MLP gradients while "
       "theirs travel (cpu: non-blocking MPI; cuda: the NCCL exchanges on a second stream while the bottom MLP "
       "runs)", {}, {}, {"on", "off"}},
      {"exchange", T::kString, "auto",
       "cuda backend: nccl (tables placed on ranks, embeddings and gradients exchanged and MLP gradients "
       "all-reduced over NCCL, one GPU per rank; also on one rank) or none (the whole model on one GPU); auto: "
       "nccl with several ranks, none on one", {}, {}, {"auto", "nccl", "none"}},
      {"gemm_algorithms", T::kString, "heuristic",
       "cuda backend: heuristic (cuBLASLt's first choice for every GEMM: the same algorithm, so the same bits, "
       "on every run), tuned (each GEMM's heuristic candidates timed at setup on random operands and the "
       "fastest kept; choices and times in the result's facts; the choice can differ between runs) or searched "
       "(as tuned, the candidates widened first by every other algorithm id's best configurations, the heuristic "
       "limited to each id: up to 64 a GEMM, a longer setup; the kept configuration in the facts)",
       {}, {}, {"heuristic", "tuned", "searched"}},
      {"epilogues", T::kString, "auto",
       "cuda backend, --fused on: whose kernels run the MLP layers' bias, ReLU and their gradients: cublaslt "
       "(cuBLASLt's epilogues, the backward chained through DRELU_BGRAD), own (one bias+ReLU pass and one "
       "dReLU+bias-gradient pass of perflab's), or own_backward (forward in cuBLASLt's RELU_BIAS epilogue, "
       "backward as own); auto: own_backward (cuBLASLt runs the backward's epilogues, and in TF32 the forward's "
       "RELU_AUX_BIAS, as separate passes; its RELU_BIAS it fuses into the GEMM)",
       {}, {}, {"auto", "cublaslt", "own", "own_backward"}},
      {"side_streams", T::kString, "auto",
       "cuda backend, training: on runs independent work on two more streams, joined back with events (and "
       "captured with the step under CUDA graphs): each MLP layer's weight-gradient GEMM (on one GPU then "
       "its SGD) beside the data-gradient chain, and the embedding update's sort beside the top MLP, the loss "
       "and the backward (on one GPU, sync-free, the update too, beside the bottom MLP's backward); "
       "off runs the step in order on one stream. The same kernels and bits either way; auto: on (on an H200 "
       "at c9d4b27, before the update moved: 1.05x bf16 and 1.11x TF32 at batch 512, 1.01x at 65,536; "
       "gpu-check's dlrm-side-streams step)",
       {}, {}, {"auto", "on", "off"}},
      {"wgrad_streams", T::kString, "auto",
       fmt::format("cuda backend, training, side_streams on: how many streams the MLP layers' weight-gradient GEMMs "
                   "(on one GPU each followed there by its layer's SGD) take turns on: 1 (one stream: each layer's "
                   "weight gradient waits behind the layer above's) or 2 (the layers alternate, so a layer's weight "
                   "gradient can start as its dReLU pass ends; a second cuBLASLt workspace). The same kernels and "
                   "bits either way; auto: 2 up to {} samples a rank (where, on an H200 at 32e4a50, the one stream "
                   "ended the step 7.7-18.7 us after the data-gradient chain at batch 512), 1 above",
                   kTwoWgradStreamsMaxBatch),
       {}, {}, {"auto", "1", "2"}},
      {"dgrad_weights", T::kString, "auto",
       "cuda backend, training: which weights the MLPs' data-gradient GEMMs read: stored (W as the forward "
       "reads it: an \"NN\" GEMM) or transposed (a copy of each layer's W transposed, written once a step, "
       "beside the forward, by one launch per 16 layers: a \"TN\" GEMM, both operands K-major, the only "
       "layout a TF32 tensor-core GEMM on Hopper reads without transposing it itself); auto: transposed in "
       "fp32 (TF32 GEMMs) from 8,192 samples a rank unless epilogues=cublaslt (on an H200: 1.03x at 65,536, 0.98x "
       "at 2,048), stored otherwise and in bf16",
       {}, {}, {"auto", "stored", "transposed"}},
      {"wgrad_dy", T::kString, "auto",
       fmt::format("cuda backend, training: what the weight-gradient GEMMs of MLP layers with inputs at least {} "
                   "wide read: stored (dz as the data gradient reads it: both operands batch-major, which a TF32 "
                   "tensor-core GEMM on Hopper transposes itself) or transposed (dz transposed by one launch just "
                   "before the GEMM, one operand K-major; not where cuBLASLt's BGRADB epilogue sums the bias "
                   "gradient on it); auto: stored (on an H200 at TF32 65,536 transposed was 0.97x: its copies "
                   "took 1.9 ms a step)",
                   kWgradTransposedMinInput),
       {}, {}, {"auto", "stored", "transposed"}},
      {"dependent_launch", T::kString, "auto",
       "cuda backend, training: on launches the step's own kernels (not cuBLASLt's or CUB's) with programmatic "
       "dependent launch, so each may be scheduled as the kernel before it ends and waits at its start for "
       "that kernel's writes, instead of being launched after that kernel's end is processed: the same "
       "kernels and bits, less time between two dependent kernels (a GPU of compute capability 9.0 or later; "
       "elsewhere off, and the result says why); auto: off (on is not measured yet)",
       {}, {}, {"auto", "on", "off"}},
      {"interaction", T::kString, "auto",
       "cuda backend: the dot interaction on fp32 CUDA cores (cuda_cores) or on tensor cores (tensor_cores: "
       "WMMA, TF32-rounded products, or exact bf16 products with precision=bf16; needs tables + 1 <= 32 and "
       "embed_dim a multiple of 16 up to 144); auto: tensor cores for a bf16 model that trains its tables "
       "with at least 2,048 samples a rank where the shape fits, CUDA cores otherwise (the faster of the two "
       "on an H100 and an H200)",
       {}, {}, {"auto", "cuda_cores", "tensor_cores"}},
      {"precision", T::kString, "fp32",
       "fp32 (cuda: TF32 GEMMs) or bf16 (cuda: bf16 MLPs, fp32 master weights; cpu: bf16 numbers emulated, one rank)",
       {}, {},
       {"fp32", "bf16"}},
  };
}

std::vector<Preset> dlrm_presets() {
  return {
      {"tiny", "small tables, dim 16: reaches its target in seconds on 2 cores (CI)", {}},
      {"small",
       "tables up to 100k rows, dim 64",
       {{"train_samples", "1048576"},
        {"eval_samples", "131072"},
        {"max_table_size", "100000"},
        {"embed_dim", "64"},
        {"bottom_mlp", "256-128-64"},
        {"top_mlp", "512-256-1"},
        {"batch_size", "2048"},
        {"learning_rate", "2.0"},
        {"warmup_steps", "100"},
        {"target_auc", "0.725"}}},
      {"dle",
       "DeepLearningExamples shapes: dim 128, bottom 512-256-128, top 1024-1024-512-256-1",
       {{"train_samples", "4194304"},
        {"eval_samples", "262144"},
        {"max_table_size", "200000"},
        {"embed_dim", "128"},
        {"bottom_mlp", "512-256-128"},
        {"top_mlp", "1024-1024-512-256-1"},
        {"batch_size", "16384"},
        {"learning_rate", "2.0"},
        {"warmup_steps", "100"},
        {"target_auc", "0.72"}}},
  };
}

std::vector<ToggleRule> dlrm_toggle_rules() {
  const std::vector<Backend> cuda = {Backend::kCuda};
  return {
      {Toggle::kFused, cuda, "the cpu backend has no fused kernels (bias and ReLU run separately)", {}, ""},
      {Toggle::kSyncFree, cuda, "the cpu backend has no host-device synchronisation to remove", {}, ""},
      {Toggle::kCudaGraphs, cuda, "the cpu backend launches no CUDA work to capture", {},
       "graph capture needs the sync-free iteration: the synchronising embedding update waits on the "
       "host inside the iteration (add --sync-free on)"},
      // SHARP offloads the MLP gradient all-reduce: on the cuda backend's
      // NCCL path it is requested from NCCL, and the step says from NCCL's
      // log whether it took effect (as the collectives workload does); the
      // cpu backend's all-reduce runs over MPI.
      {Toggle::kSharp, cuda, "dlrm's gradient all-reduce runs over MPI on the cpu backend: no in-network "
       "reduction, that is NCCL's (CollNet/SHARP, NVLS) on the cuda backend", {}, ""},
  };
}

WorkloadInfo dlrm_info() {
  WorkloadInfo info;
  info.name = "dlrm";
  info.summary = "DLRM trained with SGD to a ROC AUC target (time to train)";
  info.params = dlrm_params();
  for (ParamSpec& spec : serve_params()) info.params.push_back(std::move(spec));
  info.presets = dlrm_presets();
  info.default_preset = "tiny";
#ifdef PERFLAB_DLRM_CUDA
  info.backends = {Backend::kCpu, Backend::kCuda};
#else
  info.backends = {Backend::kCpu};
#endif
  info.toggle_rules = dlrm_toggle_rules();
  info.batch_param = "batch_size";
  info.learning_rate_param = "learning_rate";
  info.warmup_param = "warmup_steps";
  info.create_trainable = [](const RunContext& ctx) -> std::unique_ptr<TrainableBenchmark> {
    return std::make_unique<DlrmBenchmark>(ctx);
  };
  info.rules_file = [](const std::string&) { return std::string("workloads/dlrm/rules/dlrm.yaml"); };
  info.serves = true;  // --mode inference: the cpu backend's engine (workloads/dlrm/serve/serve_engine.h)
  return info;
}

}  // namespace

PERFLAB_REGISTER_WORKLOAD(dlrm_info());

}  // namespace perflab::dlrm
