// Google Benchmark of what a CUDA graph replay costs between two replays:
// the period of back-to-back replays of a small graph, per replay, against
// its shape and what sits between two replays on the stream.
//
// Why: in the H200 traces at 32e4a50 (docs/results/2026-11-27-h200-gpu-check-32e4a50)
// the DLRM step's graph ended 10-15 us before the next replay's first
// kernel began, at every batch, whatever the input copy's size: 7-10% of
// the 0.134-0.188 ms step at batch 512. The step's graph forks onto up to
// seven streams and joins them, and between two replays the harness
// records the slot's `consumed` event, the copy stream waits for it and
// copies the next batch (one pinned host-to-device copy), and the compute
// stream waits for the other slot's `copied` event. These benchmarks take
// that apart:
//   GraphReplay/branches:B/between:M
//     B: side streams forked from the graph's first kernel and joined
//        before its last (0, 2, 6), one kernel each;
//     M: 0 nothing between replays; 1 an event recorded on the stream and
//        a wait on an event another stream recorded; 2 the harness's input
//        pipeline (two slots, an 88 KiB pinned copy a replay on a copy
//        stream, DLRM's batch-512 input block).
// Every kernel is one block's dReLU over 256 floats (a few microseconds of
// launch-bound work); the time is CUDA events around kReplays replays, per
// replay (manual time). Read against B = 0, M = 0 (two kernels in a row,
// nothing between replays): what the branches add, and what the events and
// the copy between two replays add.
// Without a CUDA device it prints one line and exits 1.
// Run: build/bin/bench_cuda_graph [--benchmark_filter=GraphReplay]
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "kernels/bench/cuda_bench_main.h"
#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/raii.h"

namespace {

using namespace perflab::kernels;        // NOLINT: benchmark file
using namespace perflab::kernels::cuda;  // NOLINT: benchmark file

constexpr int kReplays = 100;
constexpr int64_t kElements = 256;
constexpr size_t kInputBytes = 88 * 1024;  // DLRM dle's packed batch at 512 samples, about

/// One small kernel on `stream`.
void tiny(const DeviceBuffer<float>& y, DeviceBuffer<float>& dx, cudaStream_t stream) {
  relu_backward(DType::kF32, kElements, y.data(), y.data(), dx.data(), stream);
}

void BM_GraphReplay(benchmark::State& state) {
  const auto branches = static_cast<int>(state.range(0));
  const auto between = static_cast<int>(state.range(1));
  try {
    const Stream stream(greatest_stream_priority()), copy;
    std::vector<std::unique_ptr<Stream>> sides;
    for (int b = 0; b < branches; ++b) sides.push_back(std::make_unique<Stream>());
    const DeviceBuffer<float> y(std::vector<float>(kElements, 1.0f));
    std::vector<DeviceBuffer<float>> out;
    for (int b = 0; b < branches + 2; ++b) out.emplace_back(static_cast<size_t>(kElements));
    const Event fork, join;
    std::vector<std::unique_ptr<Event>> joins;
    for (int b = 0; b < branches; ++b) joins.push_back(std::make_unique<Event>());

    begin_capture(stream.get());
    tiny(y, out[0], stream.get());
    if (branches > 0) PERFLAB_CUDA_CHECK(cudaEventRecord(fork.get(), stream.get()));
    for (int b = 0; b < branches; ++b) {
      PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(sides[b]->get(), fork.get(), 0));
      tiny(y, out[static_cast<size_t>(b) + 1], sides[b]->get());
      PERFLAB_CUDA_CHECK(cudaEventRecord(joins[b]->get(), sides[b]->get()));
    }
    for (int b = 0; b < branches; ++b) PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), joins[b]->get(), 0));
    tiny(y, out[static_cast<size_t>(branches) + 1], stream.get());
    GraphExec graph;
    graph.end_capture(stream.get());

    // The harness's two input slots (cuda_run.cc): consumed after a step,
    // copied after its slot's copy.
    PinnedBuffer<unsigned char> host(kInputBytes * 2);
    DeviceBuffer<unsigned char> slots(kInputBytes * 2);
    const Event consumed[2], copied[2], other;
    for (int s = 0; s < 2; ++s) PERFLAB_CUDA_CHECK(cudaEventRecord(copied[s].get(), copy.get()));
    const auto replay = [&](int i) {
      const int s = i % 2;
      if (between == 1) {
        PERFLAB_CUDA_CHECK(cudaEventRecord(other.get(), copy.get()));
        PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), other.get(), 0));
      } else if (between == 2) {
        PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), copied[s].get(), 0));
      }
      graph.launch(stream.get());
      if (between == 1) {
        PERFLAB_CUDA_CHECK(cudaEventRecord(consumed[s].get(), stream.get()));
      } else if (between == 2) {
        PERFLAB_CUDA_CHECK(cudaEventRecord(consumed[s].get(), stream.get()));
        PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(copy.get(), consumed[s].get(), 0));
        PERFLAB_CUDA_CHECK(cudaMemcpyAsync(slots.data() + s * kInputBytes, host.data() + s * kInputBytes,
                                           kInputBytes, cudaMemcpyHostToDevice, copy.get()));
        PERFLAB_CUDA_CHECK(cudaEventRecord(copied[s].get(), copy.get()));
      }
    };
    for (int i = 0; i < 10; ++i) replay(i);  // warm-up
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    const Event start(true), stop(true);
    for (auto _ : state) {
      PERFLAB_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
      for (int i = 0; i < kReplays; ++i) replay(i);
      PERFLAB_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
      PERFLAB_CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      PERFLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      state.SetIterationTime(ms * 1e-3 / kReplays);
    }
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());
    state.counters["kernels_on_chain"] = branches > 0 ? 3 : 2;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

BENCHMARK(BM_GraphReplay)
    ->ArgNames({"branches", "between"})
    ->ArgsProduct({{0, 2, 6}, {0, 1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  return perflab::kernels::bench::cuda_benchmark_main(argc, argv, "bench_cuda_graph");
}
