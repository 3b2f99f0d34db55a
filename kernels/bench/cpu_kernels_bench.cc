// Google Benchmark microbenchmarks of the CPU kernels, at DLRM's tiny
// preset's shapes and at DeepLearningExamples' shapes. Counters: samples/s
// ("items") and FLOP/s where a FLOP count is defined. A whole DLRM training
// step is in workloads/dlrm/bench (bench_dlrm_cpu).
// Run: build/bin/bench_cpu_kernels [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/cpu/auc.h"
#include "kernels/cpu/bce.h"
#include "kernels/cpu/conv3d.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/interaction.h"
#include "kernels/cpu/linear.h"
#include "base/random.h"

namespace {

using namespace perflab;  // NOLINT: benchmark file

using test_support::random_vector;

// Args: batch, in, out.
void BM_LinearForwardBackward(benchmark::State& state) {
  kernels::cpu::LinearShape s{state.range(0), state.range(1), state.range(2)};
  auto x = random_vector(static_cast<size_t>(s.batch * s.in), 1);
  auto w = random_vector(static_cast<size_t>(s.out * s.in), 2);
  auto b = random_vector(static_cast<size_t>(s.out), 3);
  std::vector<float> y(static_cast<size_t>(s.batch * s.out)), dx(x.size()), dw(w.size()), db(b.size());
  for (auto _ : state) {
    kernels::cpu::linear_forward(s, x.data(), w.data(), b.data(), y.data());
    kernels::cpu::linear_backward(s, x.data(), w.data(), y.data(), dx.data(), dw.data(), db.data());
    benchmark::DoNotOptimize(dw.data());
  }
  state.SetItemsProcessed(state.iterations() * s.batch);
  state.counters["FLOP/s"] = benchmark::Counter(
      6.0 * static_cast<double>(s.batch * s.in * s.out) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LinearForwardBackward)->Args({256, 367, 64})->Args({2048, 479, 1024})->Args({2048, 1024, 1024});

// Args: batch, tables, dim.
void BM_InteractionForwardBackward(benchmark::State& state) {
  kernels::cpu::InteractionShape s{state.range(0), static_cast<int>(state.range(1)), state.range(2)};
  auto x = random_vector(static_cast<size_t>(s.batch * s.dim), 1);
  auto e = random_vector(static_cast<size_t>(s.batch * s.num_tables * s.dim), 2);
  int64_t width = kernels::cpu::interaction_output_width(s.num_tables, s.dim);
  std::vector<float> out(static_cast<size_t>(s.batch * width)), dx(x.size()), de(e.size());
  for (auto _ : state) {
    kernels::cpu::interaction_forward(s, x.data(), e.data(), out.data());
    kernels::cpu::interaction_backward(s, x.data(), e.data(), out.data(), dx.data(), de.data());
    benchmark::DoNotOptimize(de.data());
  }
  state.SetItemsProcessed(state.iterations() * s.batch);
}
BENCHMARK(BM_InteractionForwardBackward)
    ->Args({256, 26, 16})
    ->Args({2048, 26, 64})
    ->Args({2048, 26, 128});

// Args: batch, rows per table, dim (26 tables).
void BM_EmbeddingForwardUpdate(benchmark::State& state) {
  kernels::cpu::EmbeddingShape s{state.range(0), 26, state.range(2)};
  int64_t rows = state.range(1);
  std::vector<std::vector<float>> tables;
  std::vector<float*> ptrs;
  for (int t = 0; t < s.num_tables; ++t) {
    tables.push_back(random_vector(static_cast<size_t>(rows * s.dim), static_cast<uint32_t>(t)));
  }
  for (auto& t : tables) ptrs.push_back(t.data());
  std::mt19937_64 rng(7);
  std::vector<int32_t> ids(static_cast<size_t>(s.batch * s.num_tables));
  for (auto& id : ids) id = static_cast<int32_t>(rng() % static_cast<uint64_t>(rows));
  std::vector<float> out(static_cast<size_t>(s.batch * s.num_tables * s.dim));
  for (auto _ : state) {
    kernels::cpu::embedding_forward(s, ptrs.data(), ids.data(), out.data());
    kernels::cpu::embedding_sgd_update(s, ptrs.data(), ids.data(), out.data(), 1e-3f);
    benchmark::DoNotOptimize(ptrs[0]);
  }
  state.SetItemsProcessed(state.iterations() * s.batch);
}
BENCHMARK(BM_EmbeddingForwardUpdate)->Args({256, 1000, 16})->Args({2048, 100000, 128});

void BM_BceWithLogits(benchmark::State& state) {
  auto n = state.range(0);
  auto z = random_vector(static_cast<size_t>(n), 1);
  std::vector<float> y(static_cast<size_t>(n)), dz(static_cast<size_t>(n));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 4 == 0);
  for (auto _ : state) benchmark::DoNotOptimize(kernels::cpu::bce_with_logits(n, z.data(), y.data(), dz.data()));
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_BceWithLogits)->Arg(65536);

void BM_RocAuc(benchmark::State& state) {
  auto n = state.range(0);
  auto scores = random_vector(static_cast<size_t>(n), 1);
  std::vector<float> labels(static_cast<size_t>(n));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<float>(scores[i] + 0.3f * (i % 3 == 0) > 0.2f);
  for (auto _ : state) benchmark::DoNotOptimize(kernels::cpu::roc_auc(scores.data(), labels.data(), n));
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_RocAuc)->Arg(1 << 20);

// One "same" 3x3x3 convolution of a whole volume, as in a 3D U-Net's upper
// levels (halo_conv's layer). Args: channels in = out, edge of the cube.
// Items: output voxels.
void BM_Conv3dForward(benchmark::State& state) {
  const int64_t c = state.range(0), edge = state.range(1);
  const kernels::cpu::Conv3dGeometry g{1, c, c, edge, edge, 3};
  const auto x = random_vector(static_cast<size_t>(c * edge * edge * edge), 1);
  auto w = random_vector(static_cast<size_t>(c * c * 27), 2, -0.1f, 0.1f);
  std::vector<float> y(x.size()), workspace(kernels::cpu::conv3d_workspace_floats(g));
  for (auto _ : state) {
    kernels::cpu::conv3d_forward(g, kernels::cpu::dense_view(x.data(), edge, c, edge, edge), w.data(),
                                 kernels::cpu::dense_view(y.data(), edge, c, edge, edge), 0, false,
                                 workspace.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * edge * edge * edge);
  state.counters["FLOP/s"] = benchmark::Counter(
      2.0 * kernels::cpu::conv3d_macs(g, edge) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Conv3dForward)->Args({32, 32})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
