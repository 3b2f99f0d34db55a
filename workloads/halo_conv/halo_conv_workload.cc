// halo_conv: a 3D convolution layer (N, C_in, D, H, W -> C_out; k^3 kernel,
// stride 1, same padding) with the volume split along D into partitions,
// each needing k/2 planes from each neighbour: the halo. Partitions are
// ranks (MPI on the cpu backend) and/or slabs of one process
// (`partitions`). `halo=naive` exchanges, waits, then convolves;
// `halo=overlap` convolves what needs no halo while the halo travels, then
// the boundary (cpu: corrections added, as NVIDIA's MLPerf 3D U-Net does;
// cuda: the boundary planes recomputed whole, overlap_calls in slabs.h).
// One iteration is one training step (forward, data and weight gradients,
// weight gradient all-reduced) or, with pass=forward, the forward alone;
// precision=bf16 stores bf16 (halving the halo's bytes on the cuda backend).
#include "harness/registry.h"
#include "workloads/halo_conv/halo_conv_benchmark.h"

namespace perflab::halo_conv {
namespace {

std::vector<ParamSpec> halo_conv_params() {
  return {
      {"batch", ParamType::kInt, "1", "N: volumes per step", 1, 1024},
      {"channels", ParamType::kInt, "3", "C_in: input channels", 1, 65536},
      {"out_channels", ParamType::kInt, "5", "C_out: output channels", 1, 65536},
      {"depth", ParamType::kInt, "20", "D: planes of the volume (split into partitions)", 1, 1 << 20},
      {"height", ParamType::kInt, "12", "H", 1, 1 << 20},
      {"width", ParamType::kInt, "14", "W", 1, 1 << 20},
      {"kernel", ParamType::kInt, "3", "k: kernel edge, odd (1, 3, 5, 7)", 1, 7},
      {"partitions", ParamType::kInt, "1", "slabs per process (times the ranks: the partitions)", 1, 4096},
      {"halo", ParamType::kString, "overlap", "naive: exchange, wait, convolve; overlap: convolve while it travels",
       {}, {}, {"naive", "overlap"}},
      {"scheme", ParamType::kString, "single",
       "single: the one split layer; hybrid: two split levels, then a bottleneck gathered and computed whole",
       {}, {}, {"single", "hybrid"}},
      {"pass", ParamType::kString, "train", "train: forward and both gradients; forward: forward only",
       {}, {}, {"train", "forward"}},
      {"precision", ParamType::kString, "fp32",
       "fp32 (cuda: TF32 tensor cores) or bf16 (tensors, weights and halos bf16, fp32 accumulation, weight "
       "gradient summed in fp32; cpu: emulated, rounded to bf16 wherever cuda stores)",
       {}, {}, {"fp32", "bf16"}},
  };
}

std::vector<Preset> halo_conv_presets() {
  return {
      {"tiny", "3 -> 5 channels, 20x12x14 voxels: seconds (CI)", {}},
      {"unet_level1", "3D U-Net's first level: N=1, 32 -> 32 channels, 128^3 voxels",
       {{"channels", "32"}, {"out_channels", "32"}, {"depth", "128"}, {"height", "128"}, {"width", "128"}}},
      {"unet_hybrid", "the hybrid scheme from 3D U-Net's first level: 32 channels at 128^3, 64 at 64^3, "
       "a 128-channel 32^3 bottleneck gathered whole",
       {{"channels", "32"}, {"out_channels", "32"}, {"depth", "128"}, {"height", "128"}, {"width", "128"},
        {"scheme", "hybrid"}}},
      {"unet_deep", "a deeper 3D U-Net level: N=1, 256 -> 256 channels, 32^3 voxels",
       {{"channels", "256"}, {"out_channels", "256"}, {"depth", "32"}, {"height", "32"}, {"width", "32"}}},
  };
}

std::vector<ToggleRule> halo_conv_toggle_rules() {
  const std::vector<Backend> cuda = {Backend::kCuda};
  return {
      {Toggle::kSyncFree, cuda, "the cpu backend has no device to stay ahead of", {}, ""},
      {Toggle::kCudaGraphs, cuda, "the cpu backend launches no CUDA work to capture", {},
       "graph capture needs --sync-free (off, the host waits for each halo exchange)"},
      {Toggle::kSharp, {}, "halo_conv does not set up SHARP for its weight-gradient all-reduce (the collectives "
       "workload measures SHARP)", {}, ""},
  };
}

WorkloadInfo halo_conv_info() {
  WorkloadInfo info;
  info.name = "halo_conv";
  info.summary = "3D convolution split along D, halo exchange naive or overlapped (throughput)";
  info.params = halo_conv_params();
  info.presets = halo_conv_presets();
  info.default_preset = "tiny";
#ifdef PERFLAB_HALO_CONV_CUDA
  info.backends = {Backend::kCpu, Backend::kCuda};
#else
  info.backends = {Backend::kCpu};
#endif
  info.batch_param = "batch";
  info.toggle_rules = halo_conv_toggle_rules();
  info.create_timed_step = [](const RunContext& ctx) -> std::unique_ptr<Benchmark> {
#ifdef PERFLAB_HALO_CONV_CUDA
    if (ctx.backend() == Backend::kCuda) return make_cuda_benchmark(ctx);
#endif
    return make_cpu_benchmark(ctx);
  };
  return info;
}

}  // namespace

PERFLAB_REGISTER_WORKLOAD(halo_conv_info());

}  // namespace perflab::halo_conv
