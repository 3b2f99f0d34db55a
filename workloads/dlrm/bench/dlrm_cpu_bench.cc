// Google Benchmark microbenchmark of one DLRM training step on the CPU
// backend (the CPU model over the kernels in kernels/cpu), at the tiny
// preset's shapes. Counters: samples/s ("items") and FLOP/s. The kernels
// alone are in kernels/bench (bench_cpu_kernels).
// Run: build/bin/bench_dlrm_cpu [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tests/support/random.h"
#include "workloads/dlrm/model.h"

namespace {

using namespace perflab;  // NOLINT: benchmark file

using test_support::random_vector;

// One DLRM SGD step at the tiny preset's shapes (tables up to 1000 rows).
void BM_DlrmTrainStepTiny(benchmark::State& state) {
  dlrm::ModelShape shape;
  shape.table_sizes = std::vector<int64_t>(26, 1000);
  shape.embed_dim = 16;
  shape.bottom_mlp = {64, 32, 16};
  shape.top_mlp = {64, 32, 1};
  int64_t batch = state.range(0);
  dlrm::CpuModel model(shape, 1);
  auto dense = random_vector(static_cast<size_t>(batch * 13), 2);
  std::vector<int32_t> ids(static_cast<size_t>(batch * 26));
  std::vector<float> labels(static_cast<size_t>(batch));
  std::mt19937_64 rng(3);
  for (auto& id : ids) id = static_cast<int32_t>(rng() % 1000);
  for (auto& l : labels) l = static_cast<float>(rng() % 4 == 0);
  dlrm::BatchView view{batch, dense.data(), ids.data(), labels.data()};
  model.reserve_batch(batch);
  for (auto _ : state) benchmark::DoNotOptimize(model.train_step(view, 0.01f));
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["FLOP/s"] = benchmark::Counter(
      3.0 * dlrm::forward_flops_per_sample(shape) * static_cast<double>(batch * state.iterations()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DlrmTrainStepTiny)->Arg(256)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
