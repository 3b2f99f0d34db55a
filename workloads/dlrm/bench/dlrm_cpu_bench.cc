// Google Benchmark microbenchmark of one DLRM training step on the CPU
// backend (the CPU model over the kernels in kernels/cpu), at the tiny
// and small presets' shapes. Counters: samples/s ("items") and FLOP/s. The kernels
// alone are in kernels/bench (bench_cpu_kernels).
// Run: build/bin/bench_dlrm_cpu [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "base/random.h"
#include "workloads/dlrm/model.h"

namespace {

using namespace perflab;  // NOLINT: benchmark file

using test_support::random_vector;

/// One DLRM SGD step per iteration on `batch` samples of random data (ids
/// uniform over each table's rows).
void train_steps(benchmark::State& state, const dlrm::ModelShape& shape, int64_t batch) {
  const int tables = static_cast<int>(shape.table_sizes.size());
  dlrm::CpuModel model(shape, 1);
  auto dense = random_vector(static_cast<size_t>(batch * shape.num_dense), 2);
  std::vector<int32_t> ids(static_cast<size_t>(batch * tables));
  std::vector<float> labels(static_cast<size_t>(batch));
  std::mt19937_64 rng(3);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<int32_t>(rng() % static_cast<uint64_t>(shape.table_sizes[i % tables]));
  for (auto& l : labels) l = static_cast<float>(rng() % 4 == 0);
  dlrm::BatchView view{batch, dense.data(), ids.data(), labels.data()};
  model.reserve_batch(batch);
  for (auto _ : state) benchmark::DoNotOptimize(model.train_step(view, 0.01f));
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["FLOP/s"] = benchmark::Counter(
      3.0 * dlrm::forward_flops_per_sample(shape) * static_cast<double>(batch * state.iterations()),
      benchmark::Counter::kIsRate);
}

// The tiny preset's shapes (tables of 1000 rows, dim 16).
void BM_DlrmTrainStepTiny(benchmark::State& state) {
  dlrm::ModelShape shape;
  shape.table_sizes = std::vector<int64_t>(26, 1000);
  shape.embed_dim = 16;
  shape.bottom_mlp = {64, 32, 16};
  shape.top_mlp = {64, 32, 1};
  train_steps(state, shape, state.range(0));
}
BENCHMARK(BM_DlrmTrainStepTiny)->Arg(256)->UseRealTime();

// The small preset's shapes (tables of 100k rows, dim 64, the preset's batch
// 2048): what scripts/peers/dlrm_torch.py --device cpu compares against.
void BM_DlrmTrainStepSmall(benchmark::State& state) {
  dlrm::ModelShape shape;
  shape.table_sizes = std::vector<int64_t>(26, 100000);
  shape.embed_dim = 64;
  shape.bottom_mlp = {256, 128, 64};
  shape.top_mlp = {512, 256, 1};
  train_steps(state, shape, state.range(0));
}
BENCHMARK(BM_DlrmTrainStepSmall)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
