#include "workloads/halo_conv/halo_conv_benchmark.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/host_memory.h"
#include "harness/part_timer.h"
#include "harness/stats.h"
#include "workloads/halo_conv/gate.h"

namespace perflab::halo_conv {

namespace kc = kernels::cpu;

namespace {

class CpuHaloStep final : public TimedStep {
 public:
  CpuHaloStep(const HaloConvConfig& config, collectives::Communicator& comm, uint64_t seed)
      : config_(config), comm_(comm), seed_(seed), layer_(config.layer, comm) {
    layer_.fill(seed);
  }

  void run_iteration(int64_t /*iteration*/) override { layer_.step(); }

  CorrectnessReport check_correctness() override {
    return check_against_whole(slab_results(layer_), comm_, seed_,
                               config_.layer.bf16 ? bf16_tolerance(config_.ranks * config_.layer.per_rank)
                                                  : kFp32Tolerance);
  }

  nlohmann::json run_facts() override {
    return halo_facts(config_, comm_, layer_.halo_bytes_per_step(),
                      config_.layer.bf16 ? "bf16 (emulated: fp32 arithmetic, rounded to bf16 where cuda stores)"
                                         : "fp32");
  }

  void time_parts(PartTimer& parts) override {
    parts.host(kTransferPart, [&] { layer_.exchange_alone(); });
    parts.host(kComputePart, [&] { layer_.compute_alone(); });
    if (config_.layer.backward) parts.host(kAllReducePart, [&] { layer_.all_reduce_alone(); });
  }

 private:
  HaloConvConfig config_;
  collectives::Communicator& comm_;
  uint64_t seed_;
  CpuHaloLayer layer_;
};

/// scheme=hybrid on the cpu backend: each part of the step also timed alone.
class CpuHybridHaloStep final : public TimedStep {
 public:
  CpuHybridHaloStep(const HaloConvConfig& config, collectives::Communicator& comm, uint64_t seed)
      : config_(config), comm_(comm), seed_(seed), step_(*config.hybrid, comm) {
    step_.fill(seed);
  }

  void run_iteration(int64_t /*iteration*/) override { step_.step(); }
  CorrectnessReport check_correctness() override { return step_.check(seed_); }

  nlohmann::json run_facts() override {
    nlohmann::json facts = variant_facts(config_, "fp32");
    facts["scheme"] = "hybrid";
    double bytes = step_.gather_bytes();
    comm_.all_reduce_host(&bytes, 1, collectives::ReduceOp::kSum);
    facts["gather_bytes_per_step"] = bytes;
    return facts;
  }

  /// Each part of the hybrid step alone, in the order the step runs them.
  void time_parts(PartTimer& parts) override {
    parts.host("level1", [&] { step_.level1(); });
    parts.host("level2", [&] { step_.level2(); });
    parts.host("gather", [&] { step_.gather(); });
    parts.host("bottleneck", [&] { step_.bottleneck(); });
    parts.host("split", [&] { step_.split(); });
  }

 private:
  HaloConvConfig config_;
  collectives::Communicator& comm_;
  uint64_t seed_;
  CpuHybridStep step_;
};

class CpuHaloBenchmark final : public Benchmark {
 public:
  explicit CpuHaloBenchmark(const RunContext& ctx)
      : config_(resolve_config(ctx.params(), ctx.size())), comm_(ctx.comm) {
    const LayerConfig& c = config_.layer;
    const kc::Conv3dGeometry& g = c.geometry;
    const double plane = static_cast<double>(g.batch * g.height * g.width) * sizeof(float);
    const double slab = std::ceil(static_cast<double>(c.depth) / (config_.ranks * c.per_rank)) * c.per_rank;
    const double r = g.k / 2;
    // Per process: padded input and output gradient, output, input gradient,
    // and the gate's whole input and output gradient.
    const auto channels = static_cast<double>(g.c_in + g.c_out);
    const double need = plane * channels * ((slab + 2 * r) + slab + static_cast<double>(c.depth));
    check_host_memory(fmt::format("halo_conv: {}x{}x{}x{} volume, {} -> {} channels, per process", g.batch,
                                  c.depth, g.height, g.width, g.c_in, g.c_out),
                      need, "reduce depth, height, width or channels");
  }

  StepPlan step_plan() const override { return halo_conv_step_plan(config_); }

  std::unique_ptr<TimedStep> start_step(uint64_t seed) override {
    if (config_.hybrid) return std::make_unique<CpuHybridHaloStep>(config_, comm_, seed);
    return std::make_unique<CpuHaloStep>(config_, comm_, seed);
  }

 private:
  HaloConvConfig config_;
  collectives::Communicator& comm_;
};

}  // namespace

nlohmann::json variant_facts(const HaloConvConfig& config, const std::string& math) {
  nlohmann::json facts;
  const LayerConfig& c = config.layer;
  facts["partitions"] = config.ranks * c.per_rank;
  facts["ranks"] = config.ranks;
  facts["partitions_per_rank"] = c.per_rank;
  facts["halo"] = c.overlap ? "overlap" : "naive";
  if (!config.overlap_requested) {
    facts["overlap"] = "not requested";
  } else if (c.overlap) {
    facts["overlap"] = "in effect";
  } else {
    facts["overlap"] = "requested, not in effect: " + config.overlap_reason;
  }
  facts["math"] = math;
  return facts;
}

nlohmann::json halo_facts(const HaloConvConfig& config, collectives::Communicator& comm, double local_halo_bytes,
                          const std::string& math) {
  nlohmann::json facts = variant_facts(config, math);
  double bytes = local_halo_bytes;
  comm.all_reduce_host(&bytes, 1, collectives::ReduceOp::kSum);
  facts["halo_bytes_per_step"] = bytes;
  return facts;
}

HaloConvConfig resolve_config(const ParamValues& params, int ranks) {
  HaloConvConfig out;
  LayerConfig& c = out.layer;
  kc::Conv3dGeometry& g = c.geometry;
  g.batch = params.get_int("batch");
  g.c_in = params.get_int("channels");
  g.c_out = params.get_int("out_channels");
  g.height = params.get_int("height");
  g.width = params.get_int("width");
  const int64_t k = params.get_int("kernel");
  if (k % 2 == 0) throw UsageError(fmt::format("halo_conv: kernel must be odd (1, 3, 5 or 7), not {}", k));
  g.k = static_cast<int>(k);
  c.depth = params.get_int("depth");
  c.per_rank = static_cast<int>(params.get_int("partitions"));
  c.backward = params.get_string("pass") == "train";
  c.bf16 = params.get_string("precision") == "bf16";
  out.ranks = ranks;
  const Partitioning p{c.depth, ranks, c.per_rank, g.k / 2};
  check_partitioning(p);
  out.overlap_requested = params.get_string("halo") == "overlap";
  if (out.overlap_requested) {
    out.overlap_reason = overlap_not_in_effect_reason(p, g.k);
    c.overlap = out.overlap_reason.empty();
  }
  if (params.get_string("scheme") == "hybrid") {
    if (c.bf16) {
      throw UsageError("halo_conv: scheme=hybrid computes in fp32 only; use precision=fp32 or scheme=single");
    }
    out.hybrid = hybrid_levels(c, ranks);
  }
  return out;
}

StepPlan halo_conv_step_plan(const HaloConvConfig& config) {
  const LayerConfig& c = config.layer;
  const kc::Conv3dGeometry& g = c.geometry;
  const double voxels = static_cast<double>(g.batch * c.depth * g.height * g.width);
  const double passes = c.backward ? 3 : 1;  // forward; backward data and backward filter
  StepPlan plan;
  plan.batch_size = g.batch * c.depth * g.height * g.width;
  plan.sample_unit = "voxels";
  // The cpu backend's bf16 is emulated: bf16 numbers, fp32 arithmetic and memory.
  plan.precision = c.bf16 ? "bf16" : "fp32";
  plan.data = {{"batch", g.batch},
               {"channels", g.c_in},
               {"out_channels", g.c_out},
               {"depth", c.depth},
               {"height", g.height},
               {"width", g.width},
               {"kernel", g.k},
               {"partitions", config.ranks * c.per_rank},
               {"ranks", config.ranks},
               {"halo", c.overlap ? "overlap" : "naive"},
               {"pass", c.backward ? "train" : "forward"},
               {"precision", c.bf16 ? "bf16" : "fp32"}};
  plan.work.flops = 2.0 * kc::conv3d_macs(g, c.depth) * passes;
  if (config.hybrid) {
    plan.data["scheme"] = "hybrid";
    plan.work.flops = 2.0 * hybrid_macs(*config.hybrid);
  }
  const double weights = static_cast<double>(g.c_out * g.c_in) * g.k * g.k * g.k;
  // Forward reads x and w and writes y; backward reads dy, x and w and
  // writes dx and dw.
  const double forward = voxels * static_cast<double>(g.c_in + g.c_out) + weights;
  const double backward = voxels * static_cast<double>(g.c_out + 2 * g.c_in) + 2 * weights;
  plan.work.bytes = sizeof(float) * (forward + (c.backward ? backward : 0.0));
  plan.work.flops_precision = "fp32";
  return plan;
}

StepPlan halo_conv_device_plan(const HaloConvConfig& config) {
  StepPlan plan = halo_conv_step_plan(config);
  const LayerConfig& c = config.layer;
  plan.precision = c.bf16 ? "bf16" : "tf32";
  plan.work.flops_precision = plan.precision;
  // Every tensor and the weights are stored in 2 bytes in bf16 (the step
  // plan counted 4).
  const double element = c.bf16 ? 2.0 : sizeof(float);
  plan.work.bytes *= element / sizeof(float);
  const kc::Conv3dGeometry& g = c.geometry;
  const double slab = std::ceil(static_cast<double>(c.depth) / (config.ranks * c.per_rank));
  const double plane = static_cast<double>(g.batch * g.height * g.width) * element;
  // Per slab: padded input and output gradient, output, input gradient.
  plan.device_bytes = c.per_rank * plane * static_cast<double>(g.c_in + g.c_out) * (2 * slab + g.k - 1);
  plan.device_bytes_advice = "reduce depth, height, width or channels, or use more ranks";
  return plan;
}

std::unique_ptr<Benchmark> make_cpu_benchmark(const RunContext& ctx) {
  return std::make_unique<CpuHaloBenchmark>(ctx);
}

}  // namespace perflab::halo_conv
