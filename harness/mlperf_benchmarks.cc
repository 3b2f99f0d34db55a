// The table of MLPerf Training benchmarks (see mlperf_benchmarks.h), read
// off mlperf_logging 4.1.x/6.1 (rcp_checker.submission_runs and its
// read_submission_file; the summarizer's olympic drop). The averages
// that use them are harness/scoring.h's.
#include "harness/mlperf_benchmarks.h"

#include <array>

namespace perflab {
namespace {

constexpr std::array<MlperfBenchmarkFacts, 20> kBenchmarks = {{
    {"bert", 10, 1, false},
    {"dlrm_dcnv2", 10, 1, false},
    {"gpt3", 3, 1, false},
    {"maskrcnn", 5, 1, false},
    {"resnet", 5, 1, false},
    {"ssd", 5, 1, false},
    {"retinanet", 5, 1, false},
    {"unet3d", 40, 4, false},
    {"rnnt", 10, 1, false},
    {"stable_diffusion", 10, 1, false},
    {"gnn", 10, 1, false},
    {"rgat", 10, 1, false},
    {"llama2_70b_lora", 10, 1, true},
    {"flux1", 10, 1, true},
    {"llama31_405b", 3, 1, true},
    {"llama31_8b", 10, 1, true},
    {"gpt_oss_20b", 10, 1, true},
    {"deepseekv3_671b", 3, 1, true},
    {"qwen35_397b_grpo", 3, 1, true},
    {"dlrmv4", 10, 1, true},
}};

}  // namespace

MlperfBenchmarkFacts mlperf_benchmark(std::string_view benchmark) {
  for (const MlperfBenchmarkFacts& b : kBenchmarks) {
    if (b.name == benchmark) return b;
  }
  MlperfBenchmarkFacts other;
  other.name = benchmark;
  return other;
}

}  // namespace perflab
