#include "workloads/halo_conv/halo_conv_benchmark.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/host_memory.h"
#include "harness/stats.h"

namespace perflab::halo_conv {

namespace kc = kernels::cpu;

namespace {

/// fp32 tolerance of the gate: partitioned and whole convolutions sum the
/// same products in different orders (GEMM blocking, slabs, ranks).
constexpr double kTolerance = 1e-4;
/// Repetitions of each part of the step timed alone.
constexpr int kPartRepetitions = 3;

/// Largest |a - b| and largest |b| of two tensors of `n` elements.
struct Deviation {
  double max_diff = 0;
  double max_ref = 0;
  void add(const float* got, const float* ref, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      max_diff = std::max(max_diff, static_cast<double>(std::abs(got[i] - ref[i])));
      max_ref = std::max(max_ref, static_cast<double>(std::abs(ref[i])));
    }
  }
  double relative() const { return max_ref > 0 ? max_diff / max_ref : max_diff; }
};

int64_t count_wrong(const float* got, const float* ref, size_t n, double limit) {
  int64_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += std::abs(got[i] - ref[i]) > limit ? 1 : 0;
  return wrong;
}

std::vector<float> region(const VolumeShape& shape, int64_t first, int64_t planes, uint64_t seed, TensorTag tag) {
  std::vector<float> out(static_cast<size_t>(shape.batch * shape.channels * planes * shape.height * shape.width));
  fill_planes(kc::dense_view(out.data(), planes, shape.channels, shape.height, shape.width), shape, first, seed, tag,
              1.0f);
  return out;
}

double milliseconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Median over repetitions of the slowest rank's time of `part`.
template <typename Part>
double time_part(collectives::Communicator& comm, Part part) {
  std::vector<double> ms;
  for (int i = 0; i < kPartRepetitions; ++i) {
    comm.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    part();
    double t = milliseconds_since(t0);
    comm.all_reduce_host(&t, 1, collectives::ReduceOp::kMax);
    ms.push_back(t);
  }
  return percentile(ms, 50);
}

class CpuHaloStep final : public TimedStep {
 public:
  CpuHaloStep(const HaloConvConfig& config, collectives::Communicator& comm, uint64_t seed)
      : config_(config), comm_(comm), seed_(seed), layer_(config.layer, comm) {
    layer_.fill(seed);
  }

  void run_iteration(int64_t /*iteration*/) override { layer_.step(); }

  CorrectnessReport check_correctness() override { return check_against_whole(layer_, comm_, seed_); }

  nlohmann::json run_facts() override {
    nlohmann::json facts;
    const LayerConfig& c = config_.layer;
    facts["partitions"] = config_.ranks * c.per_rank;
    facts["ranks"] = config_.ranks;
    facts["partitions_per_rank"] = c.per_rank;
    facts["halo"] = c.overlap ? "overlap" : "naive";
    if (!config_.overlap_requested) {
      facts["overlap"] = "not requested";
    } else if (c.overlap) {
      facts["overlap"] = "in effect";
    } else {
      facts["overlap"] = "requested, not in effect: " + config_.overlap_reason;
    }
    double bytes = layer_.halo_bytes_per_step();
    comm_.all_reduce_host(&bytes, 1, collectives::ReduceOp::kSum);
    facts["halo_bytes_per_step"] = bytes;
    facts["transfer_ms"] = time_part(comm_, [&] { layer_.exchange_alone(); });
    facts["compute_ms"] = time_part(comm_, [&] { layer_.compute_alone(); });
    if (c.backward) facts["allreduce_ms"] = time_part(comm_, [&] { layer_.all_reduce_alone(); });
    facts["parts_timed"] = kPartRepetitions;
    return facts;
  }

 private:
  HaloConvConfig config_;
  collectives::Communicator& comm_;
  uint64_t seed_;
  CpuHaloLayer layer_;
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
    return std::make_unique<CpuHaloStep>(config_, comm_, seed);
  }

 private:
  HaloConvConfig config_;
  collectives::Communicator& comm_;
};

}  // namespace

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
  out.ranks = ranks;
  const Partitioning p{c.depth, ranks, c.per_rank, g.k / 2};
  check_partitioning(p);
  out.overlap_requested = params.get_string("halo") == "overlap";
  if (out.overlap_requested) {
    out.overlap_reason = overlap_not_in_effect_reason(p, g.k);
    c.overlap = out.overlap_reason.empty();
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
  plan.precision = "fp32";
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
               {"pass", c.backward ? "train" : "forward"}};
  plan.work.flops = 2.0 * kc::conv3d_macs(g, c.depth) * passes;
  const double weights = static_cast<double>(g.c_out * g.c_in) * g.k * g.k * g.k;
  // Forward reads x and w and writes y; backward reads dy, x and w and
  // writes dx and dw.
  const double forward = voxels * static_cast<double>(g.c_in + g.c_out) + weights;
  const double backward = voxels * static_cast<double>(g.c_out + 2 * g.c_in) + 2 * weights;
  plan.work.bytes = sizeof(float) * (forward + (c.backward ? backward : 0.0));
  plan.work.flops_precision = "fp32";
  return plan;
}

CorrectnessReport check_against_whole(CpuHaloLayer& layer, collectives::Communicator& comm, uint64_t seed) {
  const LayerConfig& c = layer.config();
  const kc::Conv3dGeometry& g = c.geometry;
  const int64_t r = g.k / 2;
  const VolumeShape in = input_shape(c), out = output_shape(c);
  std::vector<float> workspace(kc::conv3d_workspace_floats(g));
  std::vector<std::vector<float>> y_ref, dx_ref;
  Deviation y_dev, dx_dev, dw_dev;
  for (size_t j = 0; j < layer.my_slabs().size(); ++j) {
    const Slab s = layer.my_slabs()[j];
    const size_t ny = static_cast<size_t>(g.batch * g.c_out * s.planes * g.height * g.width);
    const size_t nx = static_cast<size_t>(g.batch * g.c_in * s.planes * g.height * g.width);
    // The whole volume's convolution at this slab's planes: its input
    // planes drawn straight from the seed (zero beyond the volume's ends).
    std::vector<float> x = region(in, s.first - r, s.planes + 2 * r, seed, TensorTag::kInput);
    y_ref.emplace_back(ny);
    kc::conv3d_forward(g, kc::dense_view(std::as_const(x).data(), s.planes + 2 * r, g.c_in, g.height, g.width),
                       layer.weights().data(), kc::dense_view(y_ref.back().data(), s.planes, g.c_out, g.height, g.width),
                       r, false, workspace.data());
    y_dev.add(layer.output(j).data, y_ref.back().data(), ny);
    if (!c.backward) continue;
    std::vector<float> dy = region(out, s.first - r, s.planes + 2 * r, seed, TensorTag::kOutputGrad);
    dx_ref.emplace_back(nx);
    kc::conv3d_backward_data(g, kc::dense_view(std::as_const(dy).data(), s.planes + 2 * r, g.c_out, g.height, g.width),
                             layer.weights().data(),
                             kc::dense_view(dx_ref.back().data(), s.planes, g.c_in, g.height, g.width), -r, false,
                             workspace.data());
    dx_dev.add(layer.input_grad(j).data, dx_ref.back().data(), nx);
  }
  std::vector<float> dw_ref;
  if (c.backward) {
    // The weight gradient of the whole volume at once.
    std::vector<float> x = region(in, 0, c.depth, seed, TensorTag::kInput);
    std::vector<float> dy = region(out, 0, c.depth, seed, TensorTag::kOutputGrad);
    dw_ref.resize(layer.weight_grad().size());
    kc::conv3d_backward_filter(g, kc::dense_view(std::as_const(x).data(), c.depth, g.c_in, g.height, g.width),
                               kc::dense_view(std::as_const(dy).data(), c.depth, g.c_out, g.height, g.width), dw_ref.data(), 0,
                               false, workspace.data());
    dw_dev.add(layer.weight_grad().data(), dw_ref.data(), dw_ref.size());
  }
  double extremes[6] = {y_dev.max_diff, y_dev.max_ref, dx_dev.max_diff, dx_dev.max_ref, dw_dev.max_diff,
                        dw_dev.max_ref};
  comm.all_reduce_host(extremes, 6, collectives::ReduceOp::kMax);
  y_dev = {extremes[0], extremes[1]};
  dx_dev = {extremes[2], extremes[3]};
  dw_dev = {extremes[4], extremes[5]};
  double wrong[3] = {0, 0, 0};
  for (size_t j = 0; j < y_ref.size(); ++j) {
    wrong[0] += static_cast<double>(count_wrong(layer.output(j).data, y_ref[j].data(), y_ref[j].size(),
                                                kTolerance * y_dev.max_ref));
  }
  for (size_t j = 0; j < dx_ref.size(); ++j) {
    wrong[1] += static_cast<double>(count_wrong(layer.input_grad(j).data, dx_ref[j].data(), dx_ref[j].size(),
                                                kTolerance * dx_dev.max_ref));
  }
  if (comm.rank() == 0 && !dw_ref.empty()) {  // the same all-reduced dw on every rank
    wrong[2] = static_cast<double>(
        count_wrong(layer.weight_grad().data(), dw_ref.data(), dw_ref.size(), kTolerance * dw_dev.max_ref));
  }
  comm.all_reduce_host(wrong, 3, collectives::ReduceOp::kSum);
  const int partitions = comm.size() * c.per_rank;
  std::string detail = fmt::format("{} partition(s), halo={}: output max |diff| {:.3g} of max {:.3g}",
                                   partitions, c.overlap ? "overlap" : "naive", y_dev.max_diff, y_dev.max_ref);
  if (c.backward) {
    detail += fmt::format("; input gradient {:.3g} of {:.3g}; weight gradient {:.3g} of {:.3g}", dx_dev.max_diff,
                          dx_dev.max_ref, dw_dev.max_diff, dw_dev.max_ref);
  }
  const double total_wrong = wrong[0] + wrong[1] + wrong[2];
  if (total_wrong == 0) {
    return {true, detail + fmt::format(" (the unpartitioned convolution; tolerance {:g} x max)", kTolerance)};
  }
  return {false, fmt::format("{} output, {} input-gradient and {} weight-gradient elements differ from the "
                             "unpartitioned convolution by more than {:g} x max: {}",
                             wrong[0], wrong[1], wrong[2], kTolerance, detail)};
}

std::unique_ptr<Benchmark> make_cpu_benchmark(const RunContext& ctx) {
  return std::make_unique<CpuHaloBenchmark>(ctx);
}

}  // namespace perflab::halo_conv
