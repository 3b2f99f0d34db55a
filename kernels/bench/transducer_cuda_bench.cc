// Google Benchmark of the CUDA RNN-T loss (forward + gradient) and the
// transducer joint, unfused against fused, padded against packed.
//   Loss shapes: MLPerf RNN-T (V=1024 with blank last, T=279, U+1=126,
//   B in {16, 64, 192}) in fp32 and bf16 logits, and a small vocabulary
//   (T=150, U=40, V=28, B=128). Joint: MLPerf (H=512, B in {16, 64}).
//   Lengths are seeded: T_b uniform in [0.6T, T], U_b in [0.6U, U], sequence
//   0 at full length, so packed rows are fewer than padded ones.
// Each iteration is one run() on a stream, timed with CUDA events (manual
// time). Counters:
//   floor_GB  bytes the op must move at least: loss = valid logit rows read
//             once + gradient rows written once (padded: padding rows too,
//             they are written as zeros) + labels, lengths, offsets, costs;
//             joint forward = f + g read + h written; backward = dh (and h
//             for ReLU) read + df + dg written.
//   GB/s      floor bytes / time.
//   x_floor   time / (floor bytes / peak bandwidth), peak = 2 * memory clock
//             * bus width / 8 from cudaDeviceGetAttribute (1.0 = at the floor).
// A problem that does not fit in free device memory is skipped with the
// bytes it needs (fp32 unfused at B=192: logits + grad + fp32 log-probs ~83 GB).
// Without a usable device the binary prints one line and exits 1.
// Run: build/bin/bench_cuda_transducer [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/bench/cuda_bench_main.h"
#include "kernels/cpu/rnnt_loss.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/rnnt_loss.h"
#include "kernels/cuda/transducer_joint.h"
#include "base/random.h"

namespace {

using namespace perflab::kernels::cuda;  // NOLINT: benchmark file
namespace cpu = perflab::kernels::cpu;

/// Peak DRAM bandwidth of the current device in bytes/s (DDR: 2 transfers per clock).
double peak_bytes_per_second() {
  int device = 0, clock_khz = 0, bus_bits = 0;
  PERFLAB_CUDA_CHECK(cudaGetDevice(&device));
  PERFLAB_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
  PERFLAB_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  return 2.0 * clock_khz * 1e3 * bus_bits / 8.0;
}

/// Seeded lengths: T_b in [0.6T, T], U_b in [0.6U, U], sequence 0 full.
void random_lengths(int64_t batch, int64_t max_time, int64_t max_labels,
                    std::vector<int32_t>& frames, std::vector<int32_t>& labels) {
  std::mt19937 gen(2024);
  std::uniform_int_distribution<int64_t> t_dist((max_time * 6 + 9) / 10, max_time);
  std::uniform_int_distribution<int64_t> u_dist((max_labels * 6 + 9) / 10, max_labels);
  frames.resize(static_cast<size_t>(batch));
  labels.resize(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    frames[b] = static_cast<int32_t>(b == 0 ? max_time : t_dist(gen));
    labels[b] = static_cast<int32_t>(b == 0 ? max_labels : u_dist(gen));
  }
}

/// Skips the benchmark (returning false) when `bytes` do not fit in free memory.
bool fits(benchmark::State& state, double bytes) {
  size_t free_bytes = 0, total_bytes = 0;
  PERFLAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes <= 0.95 * static_cast<double>(free_bytes)) return true;
  state.SkipWithError(("needs " + std::to_string(bytes / 1e9) + " GB, " +
                       std::to_string(static_cast<double>(free_bytes) / 1e9) + " GB free")
                          .c_str());
  return false;
}

/// Fills `count` elements of `dtype` at `device` with seeded values in [-3, 3)
/// by uploading one chunk and copying it on the device.
void fill_random(void* device, size_t count, RnntDType dtype) {
  const size_t chunk = std::min<size_t>(count, size_t{1} << 22);
  const std::vector<float> values = perflab::test_support::random_vector(chunk, 7, -3, 3);
  const size_t element = rnnt_dtype_bytes(dtype);
  std::vector<uint8_t> bytes(chunk * element);
  for (size_t i = 0; i < chunk; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &values[i], 4);
    if (dtype == RnntDType::kFloat32) {
      std::memcpy(&bytes[4 * i], &bits, 4);
    } else {  // bf16: truncation is fine for benchmark data
      const uint16_t top = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&bytes[2 * i], &top, 2);
    }
  }
  auto* out = static_cast<uint8_t*>(device);
  for (size_t done = 0; done < count; done += chunk) {
    const size_t n = std::min(chunk, count - done);
    PERFLAB_CUDA_CHECK(cudaMemcpy(out + done * element, bytes.data(), n * element,
                                  cudaMemcpyHostToDevice));
  }
}

/// Times `run` once per iteration with CUDA events on `stream`; sets the counters.
template <typename Run>
void time_runs(benchmark::State& state, cudaStream_t stream, double floor_bytes, Run&& run) {
  for (int i = 0; i < 2; ++i) run();  // warm-up
  cudaEvent_t start = nullptr, stop = nullptr;
  PERFLAB_CUDA_CHECK(cudaEventCreate(&start));
  PERFLAB_CUDA_CHECK(cudaEventCreate(&stop));
  double total_s = 0;
  for (auto _ : state) {
    PERFLAB_CUDA_CHECK(cudaEventRecord(start, stream));
    run();
    PERFLAB_CUDA_CHECK(cudaEventRecord(stop, stream));
    PERFLAB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    PERFLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms / 1e3);
    total_s += ms / 1e3;
  }
  PERFLAB_CUDA_CHECK(cudaEventDestroy(start));
  PERFLAB_CUDA_CHECK(cudaEventDestroy(stop));
  const double per_run = total_s / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  state.counters["floor_GB"] = floor_bytes / 1e9;
  state.counters["GB/s"] = per_run > 0 ? floor_bytes / per_run / 1e9 : 0;
  state.counters["x_floor"] = per_run / (floor_bytes / peak_bytes_per_second());
}

// Args: B, T, U, V, bf16, fused, packed.
void BM_RnntLoss(benchmark::State& state) {
  const cpu::RnntShape shape{state.range(0), state.range(1), state.range(2), state.range(3)};
  const RnntDType dtype = state.range(4) ? RnntDType::kBFloat16 : RnntDType::kFloat32;
  const auto variant = state.range(5) ? RnntLoss::Variant::kFused : RnntLoss::Variant::kUnfused;
  const bool packed = state.range(6) != 0;
  std::vector<int32_t> frames, lengths;
  random_lengths(shape.batch, shape.max_time, shape.max_labels, frames, lengths);
  std::vector<int64_t> offsets(static_cast<size_t>(shape.batch + 1));
  const int64_t valid_rows =
      cpu::rnnt_packed_offsets(shape.batch, frames.data(), lengths.data(), offsets.data());
  std::vector<int32_t> labels(static_cast<size_t>(shape.batch * shape.max_labels));
  std::mt19937 gen(11);
  std::uniform_int_distribution<int32_t> symbol(0, static_cast<int32_t>(shape.vocab - 2));
  for (int32_t& y : labels) y = symbol(gen);

  RnntLossArguments args;
  args.shape = shape;
  args.options = {-1, cpu::RnntReduction::kMean};
  args.layout = packed ? TransducerLayout::kPacked : TransducerLayout::kPadded;
  args.dtype = dtype;
  args.packed_rows = packed ? valid_rows : 0;
  args.packed_offsets = packed ? offsets.data() : nullptr;  // replaced by the device copy below
  const int64_t rows = RnntLoss::rows(args);
  const double element = static_cast<double>(rnnt_dtype_bytes(dtype));
  const double tensor_bytes = static_cast<double>(rows) * static_cast<double>(shape.vocab) * element;
  const double workspace = static_cast<double>(RnntLoss::workspace_bytes(args, variant));
  if (!fits(state, 2 * tensor_bytes + workspace)) return;

  const size_t elements = static_cast<size_t>(rows * shape.vocab);
  DeviceBuffer<uint8_t> d_logits(elements * rnnt_dtype_bytes(dtype));
  DeviceBuffer<uint8_t> d_grad(d_logits.size());
  fill_random(d_logits.data(), elements, dtype);
  DeviceBuffer<int32_t> d_labels(labels), d_frames(frames), d_lengths(lengths);
  DeviceBuffer<int64_t> d_offsets(offsets);
  DeviceBuffer<float> d_costs(static_cast<size_t>(shape.batch)), d_loss(1);
  DeviceBuffer<uint8_t> d_workspace(RnntLoss::workspace_bytes(args, variant));
  args.logits = d_logits.data();
  args.labels = d_labels.data();
  args.logit_lengths = d_frames.data();
  args.label_lengths = d_lengths.data();
  args.packed_offsets = packed ? d_offsets.data() : nullptr;
  args.costs = d_costs.data();
  args.grad = d_grad.data();
  args.loss = d_loss.data();
  const Status status = RnntLoss::can_implement(args, variant);
  if (!status) {
    state.SkipWithError(status.reason().c_str());
    return;
  }
  const double small = static_cast<double>(labels.size() * 4 + frames.size() * 8 + 4 * shape.batch +
                                           (packed ? offsets.size() * 8 : 0));
  const double floor_bytes =
      static_cast<double>(valid_rows) * static_cast<double>(shape.vocab) * element + tensor_bytes + small;
  cudaStream_t stream = nullptr;
  PERFLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const RnntLoss op;
  time_runs(state, stream, floor_bytes, [&] { op.run(args, variant, d_workspace.data(), stream); });
  PERFLAB_CUDA_CHECK(cudaStreamDestroy(stream));
  state.SetLabel(std::string(rnnt_dtype_name(dtype)) + " " + rnnt_variant_name(variant) +
                 (packed ? " packed" : " padded"));
}

void loss_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"B", "T", "U", "V", "bf16", "fused", "packed"});
  for (int64_t batch : {16, 64, 192}) {
    for (int64_t bf16 : {0, 1}) {
      for (int64_t fused : {0, 1}) {
        for (int64_t packed : {0, 1}) b->Args({batch, 279, 125, 1024, bf16, fused, packed});
      }
    }
  }
  for (int64_t fused : {0, 1}) {
    for (int64_t packed : {0, 1}) b->Args({128, 150, 40, 28, 0, fused, packed});
  }
}
BENCHMARK(BM_RnntLoss)->Apply(loss_args)->UseManualTime()->Unit(benchmark::kMillisecond);

// Args: B, T, U, H, backward, fused, packed (ReLU).
void BM_TransducerJoint(benchmark::State& state) {
  const cpu::JointShape shape{state.range(0), state.range(1), state.range(2), state.range(3)};
  const JointPass pass = state.range(4) ? JointPass::kBackward : JointPass::kForward;
  const auto variant =
      state.range(5) ? TransducerJoint::Variant::kFused : TransducerJoint::Variant::kUnfused;
  const bool packed = state.range(6) != 0;
  std::vector<int32_t> frames, lengths;
  random_lengths(shape.batch, shape.max_time, shape.max_labels, frames, lengths);
  std::vector<int64_t> offsets(static_cast<size_t>(shape.batch + 1));
  const int64_t valid_rows =
      cpu::rnnt_packed_offsets(shape.batch, frames.data(), lengths.data(), offsets.data());
  const int64_t rows = packed ? valid_rows : shape.batch * shape.max_time * (shape.max_labels + 1);
  const size_t h_elements = static_cast<size_t>(rows * shape.hidden);
  const size_t f_elements = static_cast<size_t>(shape.batch * shape.max_time * shape.hidden);
  const size_t g_elements = static_cast<size_t>(shape.batch * (shape.max_labels + 1) * shape.hidden);
  TransducerJointArguments args;
  args.shape = shape;
  args.activation = cpu::JointActivation::kRelu;
  args.layout = packed ? TransducerLayout::kPacked : TransducerLayout::kPadded;
  args.packed_rows = packed ? valid_rows : 0;
  args.packed_offsets = packed ? offsets.data() : nullptr;  // replaced by the device copy below
  const size_t workspace = TransducerJoint::workspace_bytes(args, variant, pass);
  if (!fits(state, 4.0 * static_cast<double>(2 * h_elements + 2 * f_elements + 2 * g_elements) +
                       static_cast<double>(workspace))) {
    return;
  }
  DeviceBuffer<float> d_f(f_elements), d_g(g_elements), d_h(h_elements), d_dh(h_elements);
  DeviceBuffer<float> d_df(f_elements), d_dg(g_elements);
  fill_random(d_f.data(), f_elements, RnntDType::kFloat32);
  fill_random(d_g.data(), g_elements, RnntDType::kFloat32);
  fill_random(d_h.data(), h_elements, RnntDType::kFloat32);
  fill_random(d_dh.data(), h_elements, RnntDType::kFloat32);
  DeviceBuffer<int32_t> d_frames(frames), d_lengths(lengths);
  DeviceBuffer<int64_t> d_offsets(offsets);
  DeviceBuffer<uint8_t> d_workspace(workspace);
  args.frames = d_frames.data();
  args.label_lengths = d_lengths.data();
  args.packed_offsets = packed ? d_offsets.data() : nullptr;
  args.f = d_f.data();
  args.g = d_g.data();
  args.h = d_h.data();
  args.dh = d_dh.data();
  args.df = d_df.data();
  args.dg = d_dg.data();
  const Status status = TransducerJoint::can_implement(args, variant, pass);
  if (!status) {
    state.SkipWithError(status.reason().c_str());
    return;
  }
  const double valid_h = static_cast<double>(valid_rows * shape.hidden) * 4;
  const double floor_bytes =
      pass == JointPass::kForward
          ? 4.0 * static_cast<double>(f_elements + g_elements + h_elements)
          : 2 * valid_h + 4.0 * static_cast<double>(f_elements + g_elements);  // dh + h read
  cudaStream_t stream = nullptr;
  PERFLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const TransducerJoint op;
  time_runs(state, stream, floor_bytes,
            [&] { op.run(args, variant, pass, d_workspace.data(), stream); });
  PERFLAB_CUDA_CHECK(cudaStreamDestroy(stream));
  state.SetLabel(std::string(pass == JointPass::kForward ? "forward" : "backward") +
                 (state.range(5) ? " fused" : " unfused") + (packed ? " packed" : " padded"));
}

void joint_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"B", "T", "U", "H", "bwd", "fused", "packed"});
  for (int64_t batch : {16, 64}) {
    for (int64_t backward : {0, 1}) {
      for (int64_t fused : {0, 1}) {
        for (int64_t packed : {0, 1}) b->Args({batch, 279, 125, 512, backward, fused, packed});
      }
    }
  }
}
BENCHMARK(BM_TransducerJoint)->Apply(joint_args)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  return perflab::kernels::bench::cuda_benchmark_main(argc, argv, "bench_cuda_transducer");
}
