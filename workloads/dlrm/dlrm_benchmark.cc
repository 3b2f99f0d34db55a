// DLRM benchmark: data preparation, per-seed training runs and evaluation.
#include "workloads/dlrm/dlrm_benchmark.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/host_memory.h"
#include "kernels/cpu/auc.h"
#include "harness/atomic_file.h"
#include "workloads/dlrm/checkpoint.h"
#include "workloads/dlrm/data/binary_dataset.h"
#include "workloads/dlrm/data/synthetic.h"
#include "workloads/dlrm/host_run.h"
#include "workloads/dlrm/projection.h"
#include "workloads/dlrm/serve/serve_engine.h"

#ifdef PERFLAB_DLRM_CUDA
#include "kernels/cuda/interaction.h"
#include "workloads/dlrm/cuda_launches.h"
#include "workloads/dlrm/cuda_run.h"
#include "workloads/dlrm/serve/cuda_engine.h"
#endif

namespace perflab::dlrm {
namespace {


double click_rate(const Dataset& d) {
  double positives = std::accumulate(d.labels.begin(), d.labels.end(), 0.0);
  return d.size() > 0 ? positives / static_cast<double>(d.size()) : 0.0;
}

/// Host memory a synthetic run holds at once: the data (13 dense floats,
/// 26 ids, a label per sample; the held-out teacher logits), the CPU model's
/// tables, and on cuda the pinned copy of the training set and the CPU model
/// the device parameters start from.
double host_bytes_needed(const SyntheticConfig& sc, int64_t embed_dim, Backend backend) {
  constexpr double kSampleBytes = (13 + 1) * sizeof(float) + 26 * sizeof(int32_t);
  double rows = 0;
  for (int64_t r : sc.table_sizes) rows += static_cast<double>(r);
  const double tables = rows * static_cast<double>(embed_dim) * sizeof(float);
  const auto train = static_cast<double>(sc.train_samples), eval = static_cast<double>(sc.eval_samples);
  double need = (train + eval) * kSampleBytes + eval * sizeof(float) + tables;
  if (backend == Backend::kCuda) need += train * kSampleBytes + tables;
  return need;
}

/// Device memory of the cuda backend, roughly: every parameter in fp32 with
/// a gradient for the dense ones (the embeddings are updated sparsely), the
/// held-out set and two input slots, activations and their gradients, and
/// the embedding update's sort workspace. With the NCCL exchange over
/// `ranks` GPUs, only the most loaded rank's tables, plus the exchange
/// buffers (lookups and received rows with their gradients). With the lookup
/// inside the interaction (`lookup_fused`: fused, no exchange; cuda_launches.h's
/// lookup_in_interaction) the gathered [batch, T, D] rows are not allocated.
/// Every buffer is counted at 4 bytes a value: in bf16 an overestimate.
/// Plus three cuBLASLt workspaces (the step's and up to two weight-gradient streams').
double device_bytes_needed(const ModelShape& shape, int64_t batch, int64_t eval_samples, bool nccl, int ranks,
                           bool lookup_fused, bool wgrad_dy_t) {
  constexpr double kSampleBytes = (13 + 1) * sizeof(float) + 26 * sizeof(int32_t);
  double rows = 0, widths = static_cast<double>(shape.embed_dim) * static_cast<double>(shape.table_sizes.size());
  for (int64_t r : shape.table_sizes) rows += static_cast<double>(r);
  if (nccl) {
    const TablePlacement placement = place_tables(shape.table_sizes, ranks);
    rows = static_cast<double>(*std::max_element(placement.rows_of.begin(), placement.rows_of.end()));
    widths += 2 * static_cast<double>(shape.embed_dim) * static_cast<double>(shape.table_sizes.size());
  }
  for (int w : shape.bottom_mlp) widths += w;
  for (int w : shape.top_mlp) widths += w;
  const double tables = rows * static_cast<double>(shape.embed_dim) * sizeof(float);
  // Values, gradients and (dgrad_weights=transposed) the transposed copies.
  const double dense = static_cast<double>(dense_parameter_count(shape)) * sizeof(float) * 3;
  const auto b = static_cast<double>(batch);
  const double eval_rows = std::ceil(static_cast<double>(eval_samples) / b) * b;
  const double gathered =
      lookup_fused ? b * static_cast<double>(shape.embed_dim * shape.table_sizes.size()) * sizeof(float) : 0.0;
  // cuBLASLt's workspaces: the step's, and the weight gradients' side streams' (up to two).
  constexpr double kCublasWorkspaces = 3.0 * 32 * 1024 * 1024;
  // wgrad_dy=transposed: a [out, B] copy of dz for the wide layers (counted for all).
  const double activations = (wgrad_dy_t ? 4 : 3) * b * widths * sizeof(float);
  return tables + dense + (eval_rows + 2 * b) * kSampleBytes + activations - gathered +
         b * static_cast<double>(shape.table_sizes.size()) * 32 + kCublasWorkspaces;
}

/// Batches the hybrid exchange's bytes are averaged over (the first of the
/// epoch): enough for a stable mean, cheap at preparation.
constexpr int64_t kByteSampleBatches = 64;

}  // namespace

void add_rank_facts(int ranks, const DlrmSetup& setup, const Dataset& train, const ValueBytes& values,
                    nlohmann::json& facts) {
  const TablePlacement placement = place_tables(setup.shape.table_sizes, ranks);
  if (setup.batch_size < ranks) {
    throw UsageError(fmt::format("dlrm: batch_size {} cannot be split over {} ranks (every rank needs a sample)",
                                 setup.batch_size, ranks));
  }
  std::vector<int64_t> local;
  for (int r = 0; r < ranks; ++r) {
    local.push_back(slice_first(setup.batch_size, ranks, r + 1) - slice_first(setup.batch_size, ranks, r));
  }
  // The rows' and their gradients' bytes against fp32's.
  const double forward_scale = values.forward / static_cast<double>(sizeof(float));
  const double backward_scale = values.backward / static_cast<double>(sizeof(float));
  ExchangeBytes bytes = model_parallel_exchange_bytes(placement, setup.batch_size, setup.shape.embed_dim);
  bytes.forward *= forward_scale;
  bytes.backward *= backward_scale;
  const bool hybrid = setup.sharding.mode == EmbeddingMode::kHybrid;
  facts["ranks"] = ranks;
  facts["embedding"] = hybrid ? "hybrid" : "model_parallel";
  facts["overlap"] = setup.sharding.overlap;
  facts["placement"] = placement_json(placement);
  facts["batch_split"] = {{"rule", "contiguous slices, sizes differing by at most one sample"},
                          {"local_batch", local}};
  const auto bytes_json = [](const ExchangeBytes& b) {
    return nlohmann::json{{"forward", b.forward}, {"backward", b.backward}, {"total", b.forward + b.backward}};
  };
  if (!hybrid) {
    facts["all_to_all_bytes_per_iteration"] = bytes_json(bytes);
    return;
  }
  ExchangeBytes mean;
  const int64_t batches = std::min(kByteSampleBatches, train.size() / setup.batch_size);
  for (int64_t i = 0; i < batches; ++i) {
    const ExchangeBytes b = hybrid_exchange_bytes(placement, setup.sharding.frequent,
                                                  train.batch(i * setup.batch_size, setup.batch_size),
                                                  setup.shape.embed_dim);
    mean.forward += b.forward * forward_scale / static_cast<double>(batches);
    mean.backward += b.backward * backward_scale / static_cast<double>(batches);
  }
  nlohmann::json h = frequent_json(setup.sharding.frequent);
  h["replica_gradient_all_reduce_bytes"] =
      static_cast<double>(setup.sharding.frequent.count) * setup.shape.embed_dim * static_cast<double>(sizeof(float));
  h["bytes_averaged_over_batches"] = batches;
  facts["hybrid"] = h;
  facts["all_to_all_bytes_per_iteration"] = bytes_json(mean);
  facts["model_parallel_all_to_all_bytes_per_iteration"] = bytes_json(bytes);
  const double mp = bytes.forward + bytes.backward;
  facts["all_to_all_reduction"] = mp > 0 ? 1.0 - (mean.forward + mean.backward) / mp : 0.0;
}

std::string auto_epilogues() { return "own_backward"; }

int auto_wgrad_streams(int64_t rank_batch) { return rank_batch <= kTwoWgradStreamsMaxBatch ? 2 : 1; }

bool auto_dgrad_weights_transposed(const std::string& precision, const std::string& epilogues, int64_t rank_batch) {
  return precision != "bf16" && epilogues != "cublaslt" && rank_batch >= kTransposedDgradMinBatch;
}

bool auto_interaction_tensor_cores(Backend backend, const std::string& precision, const ModelShape& shape,
                                   bool serving, int64_t rank_batch) {
#ifdef PERFLAB_DLRM_CUDA
  return backend == Backend::kCuda && precision == "bf16" && !serving &&
         rank_batch >= kTensorCoreInteractionMinBatch &&
         kernels::cuda::interaction_tensor_cores_fit(static_cast<int>(shape.table_sizes.size()), shape.embed_dim);
#else
  (void)backend, (void)precision, (void)shape, (void)serving, (void)rank_batch;
  return false;
#endif
}

ValueBytes exchange_values(Backend backend, const std::string& precision) {
  if (backend == Backend::kCuda && precision == "bf16") return {2, 2, 2};
  return {};
}

std::vector<int> parse_layers(const std::string& param, const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('-', start);
    std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    char* stop = nullptr;
    long v = std::strtol(part.c_str(), &stop, 10);
    if (part.empty() || *stop != '\0' || v < 1 || v > (1 << 16)) {
      throw UsageError(fmt::format("dlrm: parameter {}={}: expected layer widths such as 512-256-128",
                                   param, text));
    }
    out.push_back(static_cast<int>(v));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

DlrmBenchmark::DlrmBenchmark(const RunContext& ctx)
    : comm_(ctx.comm), backend_(ctx.backend()), toggles_(ctx.toggles()) {
  const ParamValues& p = ctx.params();
  read_backend_choices(p, ctx.size());
  nlohmann::json data_facts;
  const std::optional<double> ceiling = load_data(p, data_facts);
  read_model(p, ctx);
  choose_for_the_batch(p, ctx);
  plan_training(p, ctx, ceiling, std::move(data_facts));
  describe_backend(ctx);
}

/// The choices only the cuda backend has (each refused on the cpu backend
/// unless left at auto), the embedding exchange and the precision.
void DlrmBenchmark::read_backend_choices(const ParamValues& p, int ranks) {
  const std::string exchange = p.get_string("exchange");
  if (backend_ == Backend::kCpu && exchange == "nccl") {
    throw UsageError("dlrm: exchange=nccl is the cuda backend's; the cpu backend exchanges over MPI (use "
                     "--backend cuda, or leave exchange at auto)");
  }
  const std::string gemm_algorithms = p.get_string("gemm_algorithms");
  setup_.tune_gemms = gemm_algorithms == "tuned" || gemm_algorithms == "searched";
  setup_.search_gemms = gemm_algorithms == "searched";
  if (backend_ == Backend::kCpu && setup_.tune_gemms) {
    throw UsageError(fmt::format("dlrm: gemm_algorithms={} chooses cuBLASLt algorithms, on the cuda backend; the "
                                 "cpu backend's GEMMs are OpenBLAS's (leave gemm_algorithms at heuristic)",
                                 gemm_algorithms));
  }
  // A choice only the cuda backend has: its value, or on the cpu backend
  // one line refusing anything but auto.
  const auto cuda_choice = [&](const char* name, const char* what) {
    const std::string value = p.get_string(name);
    if (backend_ == Backend::kCpu && value != "auto") {
      throw UsageError(fmt::format("dlrm: {}={} chooses {} (leave {} at auto)", name, value, what, name));
    }
    return value;
  };
  const std::string epilogues =
      cuda_choice("epilogues", "the cuda backend's MLP epilogue kernels; the cpu backend has none to choose");
  setup_.epilogues = epilogues == "auto" ? auto_epilogues() : epilogues;
  setup_.side_streams = cuda_choice("side_streams",
                                    "whether the cuda backend runs independent work on more GPU streams; the cpu "
                                    "backend has none") != "off";
  cuda_choice("wgrad_streams",
              "how many streams the cuda backend's weight gradients take turns on; the cpu backend has none");
  cuda_choice("dgrad_weights",
              "which weights the cuda backend's data-gradient GEMMs read; the cpu backend's are OpenBLAS's");
  setup_.wgrad_dy_transposed =
      cuda_choice("wgrad_dy", "what the cuda backend's weight-gradient GEMMs read; the cpu backend's are OpenBLAS's") ==
      "transposed";
  setup_.dependent_launch =
      cuda_choice("dependent_launch", "how the cuda backend launches its kernels; the cpu backend launches none") ==
      "on";
  setup_.interaction_tensor_cores = p.get_string("interaction") == "tensor_cores";
  if (backend_ == Backend::kCpu && setup_.interaction_tensor_cores) {
    throw UsageError("dlrm: interaction=tensor_cores runs the interaction on a GPU's tensor cores, on the cuda "
                     "backend (leave interaction at auto or cuda_cores on the cpu backend)");
  }
  // The cuda backend across ranks: embeddings over NCCL (also on one rank when asked).
  nccl_ = backend_ == Backend::kCuda && (exchange == "nccl" || (exchange == "auto" && ranks > 1));
  if (backend_ == Backend::kCuda && ranks > 1 && !nccl_) {
    throw UsageError(fmt::format("dlrm: exchange=none runs the whole model on one GPU, not {} ranks; use "
                                 "exchange=nccl (or auto) under mpirun",
                                 ranks));
  }
  if (nccl_ && p.get_string("embedding") == "hybrid") {
    throw UsageError("dlrm: embedding=hybrid runs on the cpu backend only; the cuda backend's NCCL exchange is "
                     "model parallel (--set embedding=model_parallel)");
  }
  setup_.precision = p.get_string("precision");
  if (backend_ == Backend::kCpu && setup_.precision == "bf16" && ranks > 1) {
    throw UsageError(fmt::format(
        "dlrm: the cpu backend emulates bf16 on one rank, not {}; run one rank, or --backend cuda, or --set "
        "precision=fp32",
        ranks));
  }
}

/// The training and held-out sets (synthetic, or a binary dataset's
/// splits), and what the result says of them; the best AUC the synthetic
/// data allows, if known.
std::optional<double> DlrmBenchmark::load_data(const ParamValues& p, nlohmann::json& data_facts) {
  const std::string source = p.get_string("data");
  std::optional<double> ceiling;
  if (source == "synthetic") {
    SyntheticConfig sc;
    sc.train_samples = p.get_int("train_samples");
    sc.eval_samples = p.get_int("eval_samples");
    sc.table_sizes = criteo_table_sizes(p.get_int("max_table_size"));
    check_host_memory(fmt::format("dlrm: {} training and {} held-out samples with these tables", sc.train_samples,
                                  sc.eval_samples),
                      host_bytes_needed(sc, p.get_int("embed_dim"), backend_),
                      "reduce train_samples, eval_samples or max_table_size");
    sc.zipf_exponent = p.get_float("zipf_exponent");
    sc.seed = static_cast<uint64_t>(p.get_int("data_seed"));
    SyntheticData data = generate_synthetic(sc);
    train_ = std::move(data.train);
    eval_ = std::move(data.eval);
    ceiling = data.ceiling_auc;
    data_facts = {{"source", "synthetic"}, {"data_seed", sc.seed},
                  {"zipf_exponent", sc.zipf_exponent}, {"ceiling_auc", data.ceiling_auc}};
  } else {
    train_ = load_binary_split(source, "train");
    eval_ = load_binary_split(source, "test");
    data_facts = {{"source", source}};
  }
  data_facts["train_click_rate"] = click_rate(train_);
  data_facts["eval_click_rate"] = click_rate(eval_);
  data_facts["table_sizes"] = train_.table_sizes;
  return ceiling;
}

/// The model's shape, serving and saving options, and the batch size,
/// each checked against the data and the run.
void DlrmBenchmark::read_model(const ParamValues& p, const RunContext& ctx) {
  ModelShape& shape = setup_.shape;
  shape.num_dense = train_.num_dense;
  shape.table_sizes = train_.table_sizes;
  shape.embed_dim = static_cast<int>(p.get_int("embed_dim"));
  shape.bottom_mlp = parse_layers("bottom_mlp", p.get_string("bottom_mlp"));
  shape.top_mlp = parse_layers("top_mlp", p.get_string("top_mlp"));
  if (shape.bottom_mlp.back() != shape.embed_dim) {
    throw UsageError(fmt::format("dlrm: bottom_mlp must end in embed_dim ({}), got {}",
                                 shape.embed_dim, p.get_string("bottom_mlp")));
  }
  if (shape.top_mlp.back() != 1) {
    throw UsageError(fmt::format("dlrm: top_mlp must end in 1 (the logit), got {}",
                                 p.get_string("top_mlp")));
  }

  setup_.serve = parse_serve_options(p, shape, ctx.spec.mode == RunMode::kInference);
  setup_.save_model = p.get_string("save_model");
  if (!setup_.save_model.empty()) {
    if (ctx.size() > 1 || nccl_) {
      throw UsageError(fmt::format("dlrm: save_model writes one process's whole model, not {} ranks' shards; train "
                                   "on one rank{} to save it", ctx.size(), nccl_ ? " with exchange=none" : ""));
    }
    if (ctx.spec.seeds.size() > 1 && setup_.save_model.find("{seed}") == std::string::npos) {
      throw UsageError(fmt::format("dlrm: save_model={}: {} seeds would each overwrite it; put {{seed}} in the path",
                                   setup_.save_model, ctx.spec.seeds.size()));
    }
    const std::filesystem::path first = checkpoint_path(setup_.save_model, ctx.spec.seeds.empty() ? 0 : ctx.spec.seeds[0]);
    ensure_writable_directory(first.has_parent_path() ? first.parent_path() : std::filesystem::path("."));
  }
  if (!setup_.serve.model_path.empty()) {
    check_checkpoint(setup_.serve.model_path, shape,
                     p.get_string("precision") == "bf16" ? CpuPrecision::kBf16 : CpuPrecision::kFp32);
  }
  if (setup_.serve.placement == Placement::kHotCache) {
    check_host_memory(fmt::format("dlrm: a hot-row cache of {} rows", setup_.serve.cache_rows),
                      static_cast<double>(setup_.serve.cache_rows) * shape.embed_dim * sizeof(float),
                      "reduce cache_capacity");
  }

  setup_.batch_size = p.get_int("batch_size");
  if (setup_.batch_size > train_.size()) {
    throw UsageError(fmt::format("dlrm: batch_size {} is larger than the training set ({} samples)",
                                 setup_.batch_size, train_.size()));
  }
}

/// The choices whose auto depends on each rank's share of the batch, and
/// the learning-rate schedule.
void DlrmBenchmark::choose_for_the_batch(const ParamValues& p, const RunContext& ctx) {
  const std::string dgrad_weights = p.get_string("dgrad_weights");
  // Each rank's MLPs see its share of the batch.
  setup_.dgrad_weights_transposed =
      backend_ == Backend::kCuda &&
      (dgrad_weights == "auto" ? auto_dgrad_weights_transposed(setup_.precision, setup_.epilogues,
                                                               std::max<int64_t>(1, setup_.batch_size / ctx.size()))
                               : dgrad_weights == "transposed");
  const std::string wgrad_streams = p.get_string("wgrad_streams");
  setup_.wgrad_streams = wgrad_streams == "auto" ? auto_wgrad_streams(std::max<int64_t>(1, setup_.batch_size / ctx.size()))
                                                 : std::stoi(wgrad_streams);
  if (p.get_string("interaction") == "auto") {
    // Each rank's interaction sees its share of the batch.
    setup_.interaction_tensor_cores =
        auto_interaction_tensor_cores(backend_, setup_.precision, setup_.shape, ctx.spec.mode == RunMode::kInference,
                                      std::max<int64_t>(1, setup_.batch_size / ctx.size()));
  }
  setup_.schedule.base = p.get_float("learning_rate");
  setup_.schedule.warmup_steps = p.get_int("warmup_steps");
  setup_.schedule.decay_start_step = p.get_int("decay_start_step");
  setup_.schedule.decay_steps = p.get_int("decay_steps");
}

/// The training plan and the step's plan: hyperparameters, the ranks'
/// sharding and exchange facts, the work per iteration.
void DlrmBenchmark::plan_training(const ParamValues& p, const RunContext& ctx, std::optional<double> ceiling,
                                  nlohmann::json data_facts) {
  const ModelShape& shape = setup_.shape;
  TrainingPlan& plan = setup_.training;
  StepPlan& step = setup_.step;
  step.batch_size = setup_.batch_size;
  plan.iterations_per_epoch = train_.size() / setup_.batch_size;
  plan.train_samples = plan.iterations_per_epoch * setup_.batch_size;
  plan.eval_samples = eval_.size();
  plan.max_epochs = static_cast<int>(p.get_int("max_epochs"));
  plan.eval_interval_epochs = p.get_float("eval_interval");
  plan.quality_metric = "AUC";
  plan.quality_target = p.get_float("target_auc");
  plan.quality_ceiling = ceiling;
  if (ceiling && plan.quality_target > *ceiling) {
    throw UsageError(fmt::format(
        "dlrm: target_auc {:.4f} is above the best AUC this data allows ({:.4f}); no model can reach it",
        plan.quality_target, *ceiling));
  }
  step.precision = setup_.precision;  // the cpu backend's bf16: emulated numbers, fp32 arithmetic
  step.hyperparameters = {
      {"opt_name", "sgd"},
      {"opt_base_learning_rate", setup_.schedule.base},
      {"opt_learning_rate_warmup_steps", setup_.schedule.warmup_steps},
      {"opt_learning_rate_decay_start_step", setup_.schedule.decay_start_step},
      {"opt_learning_rate_decay_steps", setup_.schedule.decay_steps},
      {"opt_learning_rate_decay_poly_power", 2},
      {"embedding_dim", shape.embed_dim},
      {"bottom_mlp", p.get_string("bottom_mlp")},
      {"top_mlp", p.get_string("top_mlp")},
  };
  if (ctx.size() > 1 || nccl_) {
    // MPI: non-blocking sends and receives; NCCL: the exchanges on a second stream.
    setup_.sharding.overlap = p.get_string("overlap") == "on";
    if (p.get_string("embedding") == "hybrid") {
      setup_.sharding.mode = EmbeddingMode::kHybrid;
      setup_.sharding.frequent = find_frequent(train_.categorical.data(), plan.train_samples, shape.table_sizes,
                                      frequency_threshold(plan.train_samples, setup_.batch_size));
    }
    add_rank_facts(ctx.size(), setup_, train_, exchange_values(ctx.backend(), setup_.precision), data_facts);
    if (nccl_) {
      data_facts["exchange"] =
          "nccl: grouped send/receive of the embeddings and their gradients, all-reduce of the MLP gradients, "
          "stream-ordered on the step's stream";
    }
  } else if (p.get_string("embedding") == "hybrid") {
    // Said, not silently ignored: one process holds every table.
    data_facts["embedding"] = "one process: every table local (embedding=hybrid applies with several ranks)";
  }
  data_facts["parameters"] = parameter_count(shape);
  {
    // The communication of this step at 8, 64 and 512 GPUs (weak scaling
    // at this run's per-rank batch), for the report.
    std::optional<double> reduction;
    if (const auto r = data_facts.find("all_to_all_reduction"); r != data_facts.end()) reduction = r->get<double>();
    data_facts["projection"] = projection_json(project_communication(
        shape, std::max<int64_t>(1, setup_.batch_size / ctx.size()), reduction,
        exchange_values(ctx.backend(), setup_.precision)));
  }
  data_facts["forward_flops_per_sample"] = forward_flops_per_sample(shape);
  step.data = data_facts;
  step.work.flops = training_flops_per_iteration(shape, setup_.batch_size);
  // 4 bytes per value on both backends: in bf16 the embeddings and the
  // master weights (which dominate the bytes) stay fp32.
  step.work.bytes = training_bytes_floor_per_iteration(shape, setup_.batch_size, 4);
  step.work.flops_precision = "fp32";
  if (backend_ == Backend::kCpu && setup_.precision == "bf16") {
    step.hyperparameters["perflab_dlrm_precision"] =
        "bf16 emulated in fp32 arithmetic: GEMM operands, activations, gradients, interaction and logits "
        "rounded to nearest bf16; embedding tables bf16 with stochastically rounded updates; fp32 master "
        "weights, biases, SGD and loss (workloads/dlrm/model.h)";
  }
}

/// The cuda backend: the device memory the run needs, what the step
/// launches (describe_cuda_step), and the NCCL communicator every seed's
/// model shares.
void DlrmBenchmark::describe_backend(const RunContext& ctx) {
  StepPlan& step = setup_.step;
  const ModelShape& shape = setup_.shape;
  if (backend_ == Backend::kCuda) {
    // A training model (serving models take their embeddings from outside:
    // fp32 rows, no lookup of their own). CudaModel's lookup_in_interaction
    // and bf16_embeddings, for what the result says below.
    const bool training = ctx.spec.mode != RunMode::kInference;
    const bool lookup_fused = training && toggles_[Toggle::kFused].in_effect && !nccl_;
    step.device_bytes = device_bytes_needed(shape, setup_.batch_size, eval_.size(), nccl_, ctx.size(),
                                            lookup_fused, training && setup_.wgrad_dy_transposed);
    step.device_bytes_advice = "reduce max_table_size, embed_dim, batch_size or eval_samples";
#ifdef PERFLAB_DLRM_CUDA
    if (ctx.spec.mode == RunMode::kInference) {
      // Serving: the tables (all_device) or the cache on the GPU, not a training step's buffers.
      step.device_bytes = dlrm_serving_device_bytes(shape, setup_.serve, ctx.spec.inference.max_batch);
      step.device_bytes_advice = setup_.serve.placement == Placement::kHotCache
                                     ? "reduce cache_capacity"
                                     : "use placement=hot_cache or host (the tables in host memory)";
    }
#endif
    bool head_split = false;
    int wgrad_dy_layers = 0;
#ifdef PERFLAB_DLRM_CUDA
    CudaModelOptions model = cuda_model_options(setup_, toggles_);  // as the run builds the model
    model.external_embeddings = !training;
    head_split = split_head(shape, model, nccl_, model.batch);
    wgrad_dy_layers = transposed_dz_layers(shape, model);
#endif
    CudaStepChoices choices{training, toggles_[Toggle::kFused].in_effect, lookup_fused, nccl_,
                            toggles_[Toggle::kSyncFree].in_effect, head_split};
    choices.wgrad_dy_layers = wgrad_dy_layers;
    describe_cuda_step(setup_, choices, step);
  }
  if (nccl_) {
#ifdef PERFLAB_DLRM_CUDA
    // Once per run (per process and SHARP setting): every seed's model uses it.
    nccl_comm_ = dlrm_nccl(ctx, toggles_[Toggle::kSharp].in_effect);
    step.data["nccl_debug_log"] = nccl_comm_.debug_log;
#endif
  }
}

std::unique_ptr<InferenceEngine> DlrmBenchmark::start_inference(uint64_t seed, int max_batch) {
  auto model = std::make_unique<CpuModel>(setup_.shape, seed, EmbeddingStorage::kTables,
                                          setup_.precision == "bf16" ? CpuPrecision::kBf16 : CpuPrecision::kFp32);
  if (!setup_.serve.model_path.empty()) load_checkpoint(setup_.serve.model_path, *model);
#ifdef PERFLAB_DLRM_CUDA
  if (backend_ == Backend::kCuda) {
    CudaServeSettings settings;
    settings.bf16 = setup_.precision == "bf16";
    settings.fused = toggles_[Toggle::kFused].in_effect;
    settings.interaction_tensor_cores = setup_.interaction_tensor_cores;
    return make_dlrm_cuda_engine(std::move(model), eval_, train_, setup_.serve, max_batch, seed, settings);
  }
#endif
  return std::make_unique<DlrmCpuEngine>(std::move(model), eval_, train_, setup_.serve, max_batch, seed);
}

std::unique_ptr<TrainableModel> DlrmBenchmark::start_model(uint64_t seed) {
#ifdef PERFLAB_DLRM_CUDA
  if (backend_ == Backend::kCuda) return make_dlrm_cuda_run(setup_, train_, eval_, seed, toggles_, nccl_comm_);
#endif
  return make_host_run(setup_, train_, eval_, comm_, seed);
}

}  // namespace perflab::dlrm
