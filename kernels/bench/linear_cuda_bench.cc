// Google Benchmark of the cuBLASLt linear layer (kernels/cuda/linear.h) on
// DeepLearningExamples' DLRM MLPs: bottom 13-512-256-128 (ReLU on every
// layer) and top 479-1024-1024-512-256-1 (ReLU on all but the logit; 479 =
// 128 + 27·26/2, the dot interaction of 26 tables and the bottom output), at
// batch 512, 8192 and 65536, TF32 and bf16, fused (cuBLASLt epilogues, the
// backward chained through DRELU_BGRAD) and unfused (separate bias/ReLU
// kernels), forward and backward of the whole MLP. Time is GPU time from CUDA
// events (manual time). Counters: TFLOP/s; floor_us, the roofline floor
// max(FLOPs / peak FLOP/s, compulsory bytes / peak bandwidth) from the peak
// table in kernels/roofline.h; and pct_of_floor = floor / time.
// Also relu_bias_grad alone with each of its kernels forced
// (ReluBiasGrad/<type>/r<rows>/c<cols>/<one_pass|two_passes>), at the row
// counts around its automatic choice and DLRM's widths, a fixed number of
// iterations: counters GB/s and pct_of_floor.
// Without a CUDA device it prints one line and exits 1.
// Run: build/bin/bench_cuda_linear [--benchmark_filter=top/b65536]
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/bench/cuda_bench_main.h"
#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/device_present.h"
#include "kernels/cuda/linear.h"
#include "kernels/roofline.h"

namespace {

using namespace perflab::kernels;        // NOLINT: benchmark file (roofline)
using namespace perflab::kernels::cuda;  // NOLINT: benchmark file
using perflab::kernels::cuda::DeviceBuffer;

struct MlpShape {
  const char* name;
  std::vector<int64_t> widths;  ///< input width, then each layer's output width
  bool relu_on_last;
};

const MlpShape kMlps[] = {{"bottom", {13, 512, 256, 128}, true},
                          {"top", {479, 1024, 1024, 512, 256, 1}, false}};
const int64_t kBatches[] = {512, 8192, 65536};

/// Device buffer of n elements of `dtype`, filled with values in [-1, 1)
/// (random, so the tensor cores do not see the low-power zeros).
DeviceBuffer<uint8_t> random_buffer(DType dtype, int64_t n, uint32_t seed) {
  const size_t bytes = std::max<size_t>(256, static_cast<size_t>(n) * dtype_bytes(dtype));
  std::vector<uint8_t> host(bytes);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  constexpr size_t kBlock = 1 << 16;  // a random block, tiled: fast to make
  std::vector<uint8_t> block(kBlock * 4);
  for (size_t i = 0; i < kBlock; ++i) {
    const float f = dist(gen);
    uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    if (dtype == DType::kF32) {
      std::memcpy(block.data() + 4 * i, &u, 4);
    } else {
      const auto h = static_cast<uint16_t>(u >> 16);
      std::memcpy(block.data() + 2 * i, &h, 2);
    }
  }
  const size_t block_bytes = kBlock * dtype_bytes(dtype);
  for (size_t at = 0; at < bytes; at += block_bytes) {
    std::memcpy(host.data() + at, block.data(), std::min(block_bytes, bytes - at));
  }
  DeviceBuffer<uint8_t> dev(bytes);
  dev.upload(host);
  return dev;
}

/// One MLP at one batch size, precision and mode: its layers and buffers.
class MlpStack {
 public:
  MlpStack(cublasLtHandle_t lt, const MlpShape& mlp, int64_t batch, Precision precision,
           bool fused) {
    const DType dtype = precision == Precision::kTf32 ? DType::kF32 : DType::kBF16;
    const size_t layers = mlp.widths.size() - 1;
    input_ = random_buffer(dtype, batch * mlp.widths[0], 1);
    input_grad_ = random_buffer(dtype, batch * mlp.widths[0], 2);
    size_t workspace = 0;
    for (size_t l = 0; l < layers; ++l) {
      LinearArguments a;
      a.batch = batch;
      a.in_features = mlp.widths[l];
      a.out_features = mlp.widths[l + 1];
      a.precision = precision;
      a.activation = (l + 1 < layers || mlp.relu_on_last) ? Activation::kRelu : Activation::kNone;
      a.fused = fused;
      args_.push_back(a);
    }
    for (size_t l = 0; l < layers; ++l) {
      LinearArguments& a = args_[l];
      // Chain the fused backward (see linear.h): the layer above a ReLU layer
      // applies its dReLU in its dgrad, so that ReLU layer's dy arrives as dz.
      const bool relu = a.activation == Activation::kRelu;
      a.dx_applies_input_relu = fused && l > 0 && args_[l - 1].activation == Activation::kRelu;
      a.dy_is_pre_activation = fused && relu && l + 1 < layers;
      const int64_t in = a.in_features, out = a.out_features;
      const auto seed = static_cast<uint32_t>(10 * l);
      buffers_.push_back(random_buffer(dtype, out * in, seed + 3));     // w
      buffers_.push_back(random_buffer(dtype, out, seed + 4));          // b
      buffers_.push_back(random_buffer(dtype, batch * out, seed + 5));  // y
      buffers_.push_back(random_buffer(dtype, batch * out, seed + 6));  // dy
      buffers_.push_back(random_buffer(dtype, out * in, seed + 7));     // dw
      buffers_.push_back(random_buffer(dtype, out, seed + 8));          // db
      buffers_.push_back(DeviceBuffer<uint8_t>(std::max<size_t>(256, Linear::aux_bytes(a))));
      workspace = std::max(workspace, Linear::workspace_bytes(a));
      flops_forward_ += linear_flops(batch, in, out);
      flops_backward_ += linear_backward_flops(batch, in, out);
      bytes_forward_ +=
          linear_forward_bytes(batch, in, out, static_cast<int64_t>(dtype_bytes(dtype)),
                               static_cast<double>(Linear::aux_bytes(a)));
      bytes_backward_ +=
          linear_backward_bytes(batch, in, out, static_cast<int64_t>(dtype_bytes(dtype)));
    }
    workspace_ = DeviceBuffer<uint8_t>(workspace);
    for (size_t l = 0; l < layers; ++l) {
      LinearArguments& a = args_[l];
      auto buffer = [&](size_t k) { return buffers_[7 * l + k].data(); };
      a.x = l == 0 ? input_.data() : buffers_[7 * (l - 1) + 2].data();
      a.w = buffer(0);
      a.b = buffer(1);
      a.y = buffer(2);
      a.dy = buffer(3);
      a.dw = buffer(4);
      a.db = buffer(5);
      a.aux = buffer(6);
      // The bottom MLP's input is data (no gradient); the top's is the interaction.
      a.dx = l > 0 ? buffers_[7 * (l - 1) + 3].data()
                   : (std::string(mlp.name) == "top" ? input_grad_.data() : nullptr);
      if (a.dx_applies_input_relu) {
        a.input_aux = buffers_[7 * (l - 1) + 6].data();
        a.input_db = buffers_[7 * (l - 1) + 5].data();
      }
      Status ok = Linear::can_implement(a);
      if (!ok) throw perflab::UsageError(ok.reason());
      layers_.emplace_back(lt, a);
      if (!layers_.back().status()) throw perflab::UsageError(layers_.back().status().reason());
    }
  }

  void forward(cudaStream_t stream) {
    for (size_t l = 0; l < layers_.size(); ++l)
      layers_[l].forward(args_[l], workspace_.data(), stream);
  }
  /// Layers from the top down, each with its chained flags (see linear.h).
  void backward(cudaStream_t stream) {
    for (size_t l = layers_.size(); l-- > 0;)
      layers_[l].backward(args_[l], workspace_.data(), stream);
  }
  double flops(bool backward) const { return backward ? flops_backward_ : flops_forward_; }
  double bytes(bool backward) const { return backward ? bytes_backward_ : bytes_forward_; }

 private:
  DeviceBuffer<uint8_t> input_, input_grad_, workspace_;
  std::vector<DeviceBuffer<uint8_t>> buffers_;  ///< 7 per layer: w b y dy dw db aux
  std::vector<LinearArguments> args_;
  std::vector<Linear> layers_;
  double flops_forward_ = 0, flops_backward_ = 0, bytes_forward_ = 0, bytes_backward_ = 0;
};

struct Context {
  cublasLtHandle_t lt = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::optional<DevicePeaks> peaks;
  std::string key;                  ///< The cached stack's configuration.
  std::unique_ptr<MlpStack> stack;  ///< One at a time: the big ones are GBs.
};

Context& context() {
  static Context c;
  return c;
}

const char* precision_name(Precision p) { return p == Precision::kTf32 ? "tf32" : "bf16"; }

std::string config_name(const MlpShape* mlp, int64_t batch, Precision precision, bool fused) {
  return std::string(mlp->name) + "/b" + std::to_string(batch) + "/" + precision_name(precision) +
         (fused ? "/fused" : "/unfused");
}

void BM_Mlp(benchmark::State& state, const MlpShape* mlp, int64_t batch, Precision precision,
            bool fused, bool backward) {
  Context& c = context();
  try {
    const std::string key = config_name(mlp, batch, precision, fused);
    if (c.key != key) {
      c.stack.reset();
      c.key.clear();
      c.stack = std::make_unique<MlpStack>(c.lt, *mlp, batch, precision, fused);
      c.key = key;
    }
    MlpStack& stack = *c.stack;
    // Warm-up (and, for backward, a forward so y and aux are real).
    stack.forward(c.stream);
    if (backward) stack.backward(c.stream);
    double total = 0;
    for (auto _ : state) {
      PERFLAB_CUDA_CHECK(cudaEventRecord(c.start, c.stream));
      if (backward) {
        stack.backward(c.stream);
      } else {
        stack.forward(c.stream);
      }
      PERFLAB_CUDA_CHECK(cudaEventRecord(c.stop, c.stream));
      PERFLAB_CUDA_CHECK(cudaEventSynchronize(c.stop));
      float ms = 0;
      PERFLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, c.start, c.stop));
      state.SetIterationTime(ms * 1e-3);
      total += ms * 1e-3;
    }
    const double per_iter = total / static_cast<double>(std::max<int64_t>(1, state.iterations()));
    const double flops = stack.flops(backward);
    state.counters["TFLOP/s"] = flops / per_iter / 1e12;
    state.SetItemsProcessed(state.iterations() * batch);
    if (c.peaks) {
      const double peak = precision == Precision::kTf32 ? c.peaks->tf32_flops : c.peaks->bf16_flops;
      const double floor =
          roofline_floor_seconds(flops, stack.bytes(backward), peak, c.peaks->bytes_per_s);
      state.counters["floor_us"] = floor * 1e6;
      state.counters["pct_of_floor"] = 100.0 * floor / per_iter;
    } else {
      state.SetLabel("unknown peak");
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// relu_bias_grad alone, one kernel forced (ReluBiasGradPasses), on a
/// [rows, cols] dy with its ReLU output: the row counts around the automatic
/// choice's threshold (relu_bias_grad_one_pass), so a GPU run says where it
/// belongs. kLaunches launches a timed iteration (each kernel takes a few
/// microseconds); the time reported is one launch's. dy is masked in place,
/// so the launches after the first read the same values and write them back.
/// Timed iterations a repetition, fixed: a minimum time would count the
/// reported (one launch's) time, and so run kLaunches times as long on the
/// clock. 200 iterations of 20 launches: under 0.2 s a repetition at the
/// largest shape (16,384 x 1,024 fp32: about 40 us a launch on an H100).
constexpr int64_t kReluBiasGradIterations = 200;

void BM_ReluBiasGrad(benchmark::State& state, DType dtype, int64_t rows, int64_t cols, ReluBiasGradPasses passes) {
  constexpr int kLaunches = 20;
  Context& c = context();
  try {
    c.stack.reset();  // the MLPs' buffers are not needed here
    c.key.clear();
    DeviceBuffer<uint8_t> y = random_buffer(dtype, rows * cols, 31), dy = random_buffer(dtype, rows * cols, 32);
    DeviceBuffer<uint8_t> db = random_buffer(dtype, cols, 33);
    DeviceBuffer<uint8_t> workspace(std::max<size_t>(256, relu_bias_grad_workspace_bytes(rows, cols)));
    DeviceBuffer<unsigned> done(std::vector<unsigned>(static_cast<size_t>(relu_bias_grad_counters(cols)), 0u));
    auto launch = [&] {
      relu_bias_grad(dtype, rows, cols, y.data(), dy.data(), db.data(), workspace.data(), done.data(), c.stream,
                     passes);
    };
    launch();  // warm-up
    double total = 0;
    for (auto _ : state) {
      PERFLAB_CUDA_CHECK(cudaEventRecord(c.start, c.stream));
      for (int i = 0; i < kLaunches; ++i) launch();
      PERFLAB_CUDA_CHECK(cudaEventRecord(c.stop, c.stream));
      PERFLAB_CUDA_CHECK(cudaEventSynchronize(c.stop));
      float ms = 0;
      PERFLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, c.start, c.stop));
      state.SetIterationTime(ms * 1e-3 / kLaunches);
      total += ms * 1e-3 / kLaunches;
    }
    const double per_launch = total / static_cast<double>(std::max<int64_t>(1, state.iterations()));
    // Read y and dy, write dy and db (the partial sums, when two passes
    // write them, are not compulsory).
    const double bytes = static_cast<double>(dtype_bytes(dtype)) * (3.0 * static_cast<double>(rows * cols) + static_cast<double>(cols));
    state.counters["GB/s"] = bytes / per_launch / 1e9;
    if (c.peaks) {
      const double floor = roofline_floor_seconds(0, bytes, 1, c.peaks->bytes_per_s);
      state.counters["floor_us"] = floor * 1e6;
      state.counters["pct_of_floor"] = 100.0 * floor / per_launch;
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// The device's handles and the benchmarks (cuda_benchmark_main's setup).
void set_up(const perflab::kernels::cuda::DevicePresence& presence) {
  Context& c = context();
  PERFLAB_CUDA_CHECK(cudaSetDevice(0));
  PERFLAB_CUBLAS_CHECK(cublasLtCreate(&c.lt));
  PERFLAB_CUDA_CHECK(cudaStreamCreate(&c.stream));
  PERFLAB_CUDA_CHECK(cudaEventCreate(&c.start));
  PERFLAB_CUDA_CHECK(cudaEventCreate(&c.stop));
  const std::string device = presence.name;
  c.peaks = device_peaks(device);
  if (c.peaks) {
    benchmark::AddCustomContext("roofline_peaks", c.peaks->model);
  } else {
    std::fprintf(stderr, "bench_cuda_linear: unknown peak for device '%s': no roofline counters\n",
                 device.c_str());
    benchmark::AddCustomContext("roofline_peaks", "unknown peak");
  }
  for (const MlpShape& mlp : kMlps) {
    for (int64_t batch : kBatches) {
      for (Precision precision : {Precision::kTf32, Precision::kBf16}) {
        for (bool fused : {true, false}) {
          for (bool backward : {false, true}) {
            const std::string name = "Linear/" + config_name(&mlp, batch, precision, fused) +
                                     (backward ? "/backward" : "/forward");
            const MlpShape* shape = &mlp;
            benchmark::RegisterBenchmark(name.c_str(),
                                         [=](benchmark::State& state) {
                                           BM_Mlp(state, shape, batch, precision, fused, backward);
                                         })
                ->UseManualTime()
                ->Unit(benchmark::kMicrosecond);
          }
        }
      }
    }
  }
  for (DType dtype : {DType::kBF16, DType::kF32}) {
    for (int64_t rows : {int64_t{512}, int64_t{2048}, int64_t{16384}}) {
      for (int64_t cols : {int64_t{1024}, int64_t{512}, int64_t{256}, int64_t{128}}) {
        for (ReluBiasGradPasses passes : {ReluBiasGradPasses::kOne, ReluBiasGradPasses::kTwo}) {
          const std::string name = std::string("ReluBiasGrad/") + (dtype == DType::kBF16 ? "bf16" : "fp32") + "/r" +
                                   std::to_string(rows) + "/c" + std::to_string(cols) +
                                   (passes == ReluBiasGradPasses::kOne ? "/one_pass" : "/two_passes");
          benchmark::RegisterBenchmark(name.c_str(),
                                       [=](benchmark::State& state) {
                                         BM_ReluBiasGrad(state, dtype, rows, cols, passes);
                                       })
              ->Iterations(kReluBiasGradIterations)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rc = perflab::kernels::bench::cuda_benchmark_main(argc, argv, "bench_cuda_linear", set_up);
  Context& c = context();
  c.stack.reset();
  if (c.start != nullptr) cudaEventDestroy(c.start);
  if (c.stop != nullptr) cudaEventDestroy(c.stop);
  if (c.stream != nullptr) cudaStreamDestroy(c.stream);
  if (c.lt != nullptr) cublasLtDestroy(c.lt);
  return rc;
}
