// triad: STREAM's triad, a[i] = b[i] + q * c[i] over n doubles, timed as a
// step: how fast this machine streams memory, against a bytes floor of 24
// bytes per element (read b and c, write a). The smallest complete workload:
// parameters, presets, a prepared Benchmark, a TimedStep per seed and its
// correctness gate; the harness does everything else.
// Backend: cpu (OpenMP threads). Toggles: none apply.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "harness/host_memory.h"
#include "harness/registry.h"

namespace perflab::triad {
namespace {

constexpr double kBytesPerElement = 3 * sizeof(double);

/// One seed's arrays: b and c drawn from the seed, a written by each iteration.
class TriadStep final : public TimedStep {
 public:
  TriadStep(int64_t n, double q, uint64_t seed) : q_(q), a_(static_cast<size_t>(n)), b_(a_.size()), c_(a_.size()) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (size_t i = 0; i < a_.size(); ++i) {
      b_[i] = value(gen);
      c_[i] = value(gen);
    }
  }

  void run_iteration(int64_t /*iteration*/) override {
    const auto n = static_cast<int64_t>(a_.size());
    double* a = a_.data();
    const double* b = b_.data();
    const double* c = c_.data();
    const double q = q_;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) a[i] = b[i] + q * c[i];
  }

  /// Every element recomputed: within 2 ulp of b + q*c (a fused multiply-add
  /// may round once where the check rounds twice).
  CorrectnessReport check_correctness() override {
    int64_t wrong = 0, first = -1;
    for (size_t i = 0; i < a_.size(); ++i) {
      const double want = b_[i] + q_ * c_[i];
      const double limit = 2 * std::numeric_limits<double>::epsilon() * (std::abs(b_[i]) + std::abs(q_ * c_[i]));
      if (!(std::abs(a_[i] - want) <= limit)) {
        if (first < 0) first = static_cast<int64_t>(i);
        ++wrong;
      }
    }
    if (wrong == 0) return {true, fmt::format("all {} elements equal b + q*c (within 2 ulp)", a_.size())};
    const auto f = static_cast<size_t>(first);
    return {false, fmt::format("{} of {} elements wrong; first at {}: {} instead of {}", wrong, a_.size(), first,
                               a_[f], b_[f] + q_ * c_[f])};
  }

 private:
  double q_;
  std::vector<double> a_, b_, c_;
};

class TriadBenchmark final : public Benchmark {
 public:
  explicit TriadBenchmark(const RunContext& ctx)
      : n_(ctx.params().get_int("elements")), q_(ctx.params().get_float("scalar")) {
    check_host_memory(fmt::format("triad: {} elements", n_), kBytesPerElement * static_cast<double>(n_),
                      "reduce elements");
  }

  StepPlan step_plan() const override {
    StepPlan plan;
    plan.batch_size = n_;
    plan.sample_unit = "elements";
    plan.precision = "fp64";
    plan.hyperparameters = {{"perflab_triad_scalar", q_}};
    plan.data = {{"elements", n_}, {"bytes_per_array", 8 * n_}};
    plan.work.flops = 2.0 * static_cast<double>(n_);
    plan.work.bytes = kBytesPerElement * static_cast<double>(n_);
    return plan;
  }

  std::unique_ptr<TimedStep> start_step(uint64_t seed) override {
    return std::make_unique<TriadStep>(n_, q_, seed);
  }

 private:
  int64_t n_;
  double q_;
};

WorkloadInfo triad_info() {
  WorkloadInfo info;
  info.name = "triad";
  info.summary = "STREAM triad a = b + q*c over n doubles: memory bandwidth (throughput)";
  info.params = {
      {"elements", ParamType::kInt, "65536", "n: elements per array", 1, 1LL << 32},
      {"scalar", ParamType::kFloat, "3", "q", -1e6, 1e6},
  };
  info.presets = {
      {"tiny", "n = 65,536: 1.5 MiB in all, cache-resident (CI)", {}},
      {"stream", "n = 33,554,432: 768 MiB in all, far beyond any cache (STREAM's rule)", {{"elements", "33554432"}}},
  };
  info.default_preset = "tiny";
  info.backends = {Backend::kCpu};
  info.batch_param = "elements";
  info.create_timed_step = [](const RunContext& ctx) -> std::unique_ptr<Benchmark> {
    return std::make_unique<TriadBenchmark>(ctx);
  };
  return info;
}

}  // namespace

PERFLAB_REGISTER_WORKLOAD(triad_info());

}  // namespace perflab::triad
