#include "workloads/halo_conv/cuda_layer.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <fmt/format.h>

#include "base/error.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/conv3d.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "kernels/half_precision.h"
#include "workloads/halo_conv/cuda_sum.h"

namespace perflab::halo_conv {

namespace cpu = kernels::cpu;
namespace kcu = kernels::cuda;

namespace {

/// One cuDNN call with its buffers bound, planned once.
struct Call {
  kcu::Conv3dArguments args;
  std::unique_ptr<kcu::Conv3d> plan;
};

/// One tensor of one slab: its planes with room for the halo on each side.
/// T is the stored element: float, or uint16_t holding bf16 bits.
template <typename T>
struct Padded {
  kcu::DeviceBuffer<T> buffer;
  int64_t planes = 0;  ///< The slab's own planes (L).
  int64_t channels = 0;
};

template <typename T>
struct DeviceSlab {
  Slab slab;
  bool top = false, bottom = false;
  Padded<T> x, dy;
  kcu::DeviceBuffer<T> y, dx, dw;
  kcu::Stream stream;
  /// The slab's own cuDNN handle: slabs run concurrently on their streams,
  /// and a handle re-pointed between them with cudnnSetStream would share
  /// its internal state across streams that run at once.
  kcu::CudnnHandle cudnn;
  kcu::Event forward_done, done;
  /// Calls before and after the halo arrives, forward and backward.
  std::vector<Call> forward_main, forward_fix, backward_main, backward_fix;
  kcu::DeviceBuffer<unsigned char> workspace;
};

/// A halo going to or coming from another rank, contiguous for NCCL.
template <typename T>
struct RemoteHalo {
  kcu::DeviceBuffer<T> send, recv;
};

}  // namespace

/// What CudaHaloLayer does, for either stored element (State<T> below).
struct CudaHaloLayer::Impl {
  virtual ~Impl() = default;
  virtual void fill(uint64_t seed) = 0;
  virtual void* stream() const = 0;
  virtual void enqueue_step() = 0;
  virtual SlabResults download() = 0;
  virtual void enqueue_exchange_alone() = 0;
  virtual void enqueue_compute_alone() = 0;
  virtual void sum_weight_grads() = 0;
  virtual double halo_bytes_per_step() const = 0;
  virtual std::pair<int, int> data_gradient_calls() const = 0;
  virtual std::string data_gradient_fallback() const = 0;
  virtual std::pair<int, int> staged_calls() const = 0;
  virtual const LayerConfig& layer_config() const = 0;
  virtual bool sync_free_step() const = 0;
};

namespace {

template <typename T>
struct State final : CudaHaloLayer::Impl {
  static constexpr bool kBf16 = std::is_same_v<T, uint16_t>;
  static constexpr kcu::Conv3dMath kMath = kBf16 ? kcu::Conv3dMath::kBf16 : kcu::Conv3dMath::kTf32;
  static constexpr collectives::DataType kHaloType =
      kBf16 ? collectives::DataType::kBFloat16 : collectives::DataType::kFloat32;
  using View = cpu::BasicPlaneView<T>;

  LayerConfig config;
  collectives::Communicator& host;
  collectives::Communicator* device;
  bool sync_free;
  int64_t r, hw;
  std::vector<DeviceSlab<T>> slabs;
  std::vector<float> w_host;  ///< The weights' values (bf16 values, as floats, in bf16).
  kcu::DeviceBuffer<T> w;
  /// bf16: the weight gradient summed over this process's slabs and all-reduced, fp32.
  kcu::DeviceBuffer<float> dw_sum;
  kcu::Stream step, copy;
  kcu::Event fork, x_ready, dy_ready;
  RemoteHalo<T> x_top, x_bottom, dy_top, dy_bottom;

  State(const LayerConfig& c, collectives::Communicator& host_comm, collectives::Communicator* device_comm,
        bool sync_free_step)
      : config(c),
        host(host_comm),
        device(device_comm),
        sync_free(sync_free_step),
        r(c.geometry.k / 2),
        hw(c.geometry.height * c.geometry.width) {}

  void build();
  void fill(uint64_t seed) override;
  void* stream() const override { return step.get(); }
  SlabResults download() override;
  void enqueue_exchange_alone() override;
  void enqueue_compute_alone() override;
  double halo_bytes_per_step() const override;
  /// f(call) for every data-gradient call that reaches cuDNN (calls with no
  /// planes on one side make no cuDNN call).
  template <typename F>
  void for_each_data_gradient(F&& f) const {
    for (const DeviceSlab<T>& s : slabs) {
      for (const auto* calls : {&s.backward_main, &s.backward_fix}) {
        for (const Call& c : *calls) {
          if (c.args.pass == kcu::Conv3dPass::kBackwardData && c.args.dx.planes > 0 && c.args.dy.planes > 0) f(c);
        }
      }
    }
  }
  std::string data_gradient_fallback() const override {
    std::string first;
    for_each_data_gradient([&](const Call& c) {
      if (first.empty() && c.plan->backward_data_via_forward()) {
        first = fmt::format("dx {} planes from dy {} planes (d_offset {}): {}", c.args.dx.planes, c.args.dy.planes,
                            c.args.d_offset, c.plan->fallback_reason());
      }
    });
    return first;
  }
  std::pair<int, int> data_gradient_calls() const override {
    int all = 0, via_forward = 0;
    for_each_data_gradient([&](const Call& c) {
      ++all;
      via_forward += c.plan->backward_data_via_forward() ? 1 : 0;
    });
    return {all, via_forward};
  }
  std::pair<int, int> staged_calls() const override {
    int all = 0, staged = 0;
    for (const DeviceSlab<T>& s : slabs) {
      for (const auto* calls : {&s.forward_main, &s.forward_fix, &s.backward_main, &s.backward_fix}) {
        for (const Call& c : *calls) {
          ++all;
          staged += c.plan->staged() ? 1 : 0;
        }
      }
    }
    return {all, staged};
  }
  const LayerConfig& layer_config() const override { return config; }
  bool sync_free_step() const override { return sync_free; }

  const cpu::Conv3dGeometry& g() const { return config.geometry; }
  int first_global() const { return host.rank() * config.per_rank; }
  int total() const { return host.size() * config.per_rank; }

  View whole(Padded<T>& p) const {
    return cpu::dense_view(p.buffer.data(), p.planes + 2 * r, p.channels, g().height, g().width);
  }
  View own(Padded<T>& p) const { return cpu::plane_range(whole(p), r, p.planes, g().height, g().width); }
  View top_halo(Padded<T>& p) const { return cpu::plane_range(whole(p), 0, r, g().height, g().width); }
  View bottom_halo(Padded<T>& p) const {
    return cpu::plane_range(whole(p), r + p.planes, r, g().height, g().width);
  }
  View dense(kcu::DeviceBuffer<T>& b, int64_t planes, int64_t channels) const {
    return cpu::dense_view(b.data(), planes, channels, g().height, g().width);
  }
  View rows(View v, int64_t first, int64_t count) const {
    return cpu::plane_range(v, first, count, g().height, g().width);
  }

  /// A call planned on `handle`: the slab's own, as its calls run on its stream.
  Call plan(const kcu::CudnnHandle& handle, const kcu::Conv3dArguments& a) {
    Call call{a, std::make_unique<kcu::Conv3d>(handle, a)};
    if (!call.plan->status().ok()) {
      throw Error(fmt::format("halo_conv: cuDNN cannot run the {} pass of this shape: {}",
                              kcu::conv3d_pass_name(a.pass), call.plan->status().reason()));
    }
    return call;
  }
  kcu::Conv3dArguments base(kcu::Conv3dPass pass, int64_t d_offset, bool accumulate) const {
    kcu::Conv3dArguments a;
    a.pass = pass;
    a.math = kMath;
    a.geometry = g();
    a.d_offset = d_offset;
    a.accumulate = accumulate;
    return a;
  }
  kcu::Conv3dArguments forward(View x, View y, int64_t d, bool acc) {
    kcu::Conv3dArguments a = base(kcu::Conv3dPass::kForward, d, acc);
    a.x = x;
    a.y = y;
    a.w = w.data();
    return a;
  }
  kcu::Conv3dArguments data_grad(View dy, View dx, int64_t d, bool acc) {
    kcu::Conv3dArguments a = base(kcu::Conv3dPass::kBackwardData, d, acc);
    a.dy = dy;
    a.dx = dx;
    a.w = w.data();
    return a;
  }
  kcu::Conv3dArguments filter_grad(View x, View dy, T* dw, int64_t d, bool acc) {
    kcu::Conv3dArguments a = base(kcu::Conv3dPass::kBackwardFilter, d, acc);
    a.x = x;
    a.dy = dy;
    a.dw = dw;
    return a;
  }

  /// The calls of slab `s` in this variant (see the header comment).
  void plan_slab(DeviceSlab<T>& s) {
    const int64_t L = s.slab.planes;
    const View y = dense(s.y, L, g().c_out), dx = dense(s.dx, L, g().c_in);
    if (!config.overlap) {
      s.forward_fix.push_back(plan(s.cudnn, forward(whole(s.x), y, r, false)));
      if (config.backward) {
        s.backward_fix.push_back(plan(s.cudnn, data_grad(whole(s.dy), dx, -r, false)));
        s.backward_fix.push_back(
            plan(s.cudnn, filter_grad(whole(s.x), own(s.dy), s.dw.data(), r, false)));
      }
    } else {
      // overlap_calls (slabs.h): every call convolves views as they are.
      for (const OverlapCall& c : overlap_calls(L, r, s.top, s.bottom, config.backward)) {
        const bool fwd = c.pass == OverlapCall::Pass::kForward;
        std::vector<Call>& into = fwd ? (c.after_halo ? s.forward_fix : s.forward_main)
                                      : (c.after_halo ? s.backward_fix : s.backward_main);
        const auto in = [&](Padded<T>& p) { return rows(whole(p), c.in_first + r, c.in_planes); };
        switch (c.pass) {
          case OverlapCall::Pass::kForward:
            into.push_back(plan(s.cudnn, forward(in(s.x), rows(y, c.out_first, c.out_planes), c.d_offset, false)));
            break;
          case OverlapCall::Pass::kData:
            into.push_back(
                plan(s.cudnn, data_grad(in(s.dy), rows(dx, c.out_first, c.out_planes), c.d_offset, false)));
            break;
          case OverlapCall::Pass::kFilter:
            into.push_back(plan(s.cudnn, filter_grad(in(s.x), rows(own(s.dy), c.out_first, c.out_planes),
                                                     s.dw.data(), c.d_offset, false)));
            break;
        }
      }
    }
    size_t bytes = 0;
    for (const auto* calls : {&s.forward_main, &s.forward_fix, &s.backward_main, &s.backward_fix}) {
      for (const Call& c : *calls) bytes = std::max(bytes, c.plan->workspace_bytes());
    }
    s.workspace = kcu::DeviceBuffer<unsigned char>(bytes);
  }

  void run(DeviceSlab<T>& s, const std::vector<Call>& calls) {
    for (const Call& c : calls) c.plan->run(c.args, s.workspace.data(), s.stream.get());
  }

  /// `r` planes of every (n, c) row from one view to another (same rows).
  void copy_rows(View to, View from, int64_t channels) {
    const size_t width = static_cast<size_t>(r * hw) * sizeof(T);
    PERFLAB_CUDA_CHECK(cudaMemcpy2DAsync(to.data, static_cast<size_t>(to.channel_stride) * sizeof(T), from.data,
                                         static_cast<size_t>(from.channel_stride) * sizeof(T), width,
                                         static_cast<size_t>(g().batch * channels), cudaMemcpyDeviceToDevice,
                                         copy.get()));
  }

  /// Every slab's halo of one tensor filled from its neighbours, on the copy stream.
  void exchange(Padded<T> DeviceSlab<T>::*field, RemoteHalo<T>& remote_top, RemoteHalo<T>& remote_bottom) {
    if (r == 0) return;
    const size_t last = slabs.size() - 1;
    const int64_t channels = (slabs[0].*field).channels;
    for (size_t j = 0; j < slabs.size(); ++j) {
      Padded<T>& p = slabs[j].*field;
      if (j > 0) {
        Padded<T>& above = slabs[j - 1].*field;
        copy_rows(top_halo(p), rows(own(above), above.planes - r, r), channels);
      }
      if (j < last) copy_rows(bottom_halo(p), rows(own(slabs[j + 1].*field), 0, r), channels);
    }
    collectives::PeerTransfer transfers[2];
    size_t n = 0;
    const size_t count = static_cast<size_t>(g().batch * channels * r * hw);
    auto contiguous = [&](kcu::DeviceBuffer<T>& b) { return cpu::dense_view(b.data(), r, channels, 1, hw); };
    Padded<T>& first = slabs[0].*field;
    Padded<T>& final_slab = slabs[last].*field;
    if (slabs[0].top) {
      copy_rows(contiguous(remote_top.send), rows(own(first), 0, r), channels);
      transfers[n++] = {host.rank() - 1, remote_top.send.data(), remote_top.recv.data(), count};
    }
    if (slabs[last].bottom) {
      copy_rows(contiguous(remote_bottom.send), rows(own(final_slab), final_slab.planes - r, r), channels);
      transfers[n++] = {host.rank() + 1, remote_bottom.send.data(), remote_bottom.recv.data(), count};
    }
    if (n == 0) return;
    device->set_stream(copy.get());
    device->send_recv(transfers, n, kHaloType);
    if (slabs[0].top) copy_rows(top_halo(first), contiguous(remote_top.recv), channels);
    if (slabs[last].bottom) copy_rows(bottom_halo(final_slab), contiguous(remote_bottom.recv), channels);
  }
  void exchange_x() { exchange(&DeviceSlab<T>::x, x_top, x_bottom); }
  void exchange_dy() { exchange(&DeviceSlab<T>::dy, dy_top, dy_bottom); }

  /// Every slab stream and the copy stream wait for what the step stream enqueued so far.
  void fork_all() {
    PERFLAB_CUDA_CHECK(cudaEventRecord(fork.get(), step.get()));
    PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(copy.get(), fork.get(), 0));
    for (DeviceSlab<T>& s : slabs) PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(s.stream.get(), fork.get(), 0));
  }
  /// The step stream waits for every slab stream (and, through them, the copies).
  void join_all() {
    for (DeviceSlab<T>& s : slabs) kcu::stream_waits_for(step.get(), s.stream.get(), s.done.get());
  }
  /// Slab streams wait for the copy stream's halo (or, sync-free off, the host does first).
  void halo_arrived(kcu::Event& ready) {
    PERFLAB_CUDA_CHECK(cudaEventRecord(ready.get(), copy.get()));
    if (!sync_free) kcu::counted_stream_synchronize(copy.get());
    for (DeviceSlab<T>& s : slabs) PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(s.stream.get(), ready.get(), 0));
  }

  /// The weight gradient summed over slabs and ranks: slab 0's in fp32; the
  /// bf16 slabs' widened into dw_sum.
  float* summed_dw() {
    if constexpr (kBf16) {
      return dw_sum.data();
    } else {
      return slabs[0].dw.data();
    }
  }

  void sum_weight_grads() override {
    const size_t n = w.size();
    for (size_t j = 0; j < slabs.size(); ++j) {
      if constexpr (kBf16) {
        add_bf16_into(dw_sum.data(), slabs[j].dw.data(), n, j > 0, step.get());
      } else {
        if (j > 0) add_into(slabs[0].dw.data(), slabs[j].dw.data(), n, step.get());
      }
    }
    if (device != nullptr) {
      device->set_stream(step.get());
      device->all_reduce(summed_dw(), summed_dw(), n, collectives::DataType::kFloat32, collectives::ReduceOp::kSum);
    }
  }

  void enqueue_step() override {
    fork_all();
    for (DeviceSlab<T>& s : slabs) run(s, s.forward_main);
    exchange_x();
    halo_arrived(x_ready);
    for (DeviceSlab<T>& s : slabs) run(s, s.forward_fix);
    if (config.backward) {
      // The output gradient exists once the forward is done: its halo goes then.
      for (DeviceSlab<T>& s : slabs) kcu::stream_waits_for(copy.get(), s.stream.get(), s.forward_done.get());
      exchange_dy();
      for (DeviceSlab<T>& s : slabs) run(s, s.backward_main);
      halo_arrived(dy_ready);
      for (DeviceSlab<T>& s : slabs) run(s, s.backward_fix);
    }
    join_all();
    if (config.backward) sum_weight_grads();
  }
};

template <typename T>
void State<T>::build() {
  const cpu::Conv3dGeometry& geo = g();
  cpu::conv3d_check_geometry(geo);
  if (host.size() > 1 && device == nullptr) {
    throw Error("halo_conv: several ranks on the cuda backend need NCCL, which this build does not have");
  }
  Partitioning p{config.depth, host.size(), config.per_rank, geo.k / 2};
  check_partitioning(p);
  const std::vector<Slab> all = p.slabs();
  w_host.assign(static_cast<size_t>(geo.c_out * geo.c_in * geo.k * geo.k * geo.k), 0.0f);
  w = kcu::DeviceBuffer<T>(w_host.size());
  if constexpr (kBf16) {
    if (config.backward) dw_sum = kcu::DeviceBuffer<float>(w_host.size());
  }
  slabs = std::vector<DeviceSlab<T>>(static_cast<size_t>(config.per_rank));
  const auto halo = static_cast<size_t>(geo.batch * r * hw);
  for (size_t j = 0; j < slabs.size(); ++j) {
    DeviceSlab<T>& d = slabs[j];
    const int global = first_global() + static_cast<int>(j);
    d.slab = all[static_cast<size_t>(global)];
    d.top = global > 0;
    d.bottom = global + 1 < total();
    const int64_t L = d.slab.planes;
    const auto padded = static_cast<size_t>(geo.batch * (L + 2 * r) * hw);
    d.x = {kcu::DeviceBuffer<T>(padded * static_cast<size_t>(geo.c_in)), L, geo.c_in};
    d.dy = {kcu::DeviceBuffer<T>(padded * static_cast<size_t>(geo.c_out)), L, geo.c_out};
    d.x.buffer.zero();  // the halo planes beyond the volume's ends stay zero (bf16 +0 is all zero bits too)
    d.dy.buffer.zero();
    d.y = kcu::DeviceBuffer<T>(static_cast<size_t>(geo.batch * geo.c_out * L * hw));
    d.dx = kcu::DeviceBuffer<T>(static_cast<size_t>(geo.batch * geo.c_in * L * hw));
    d.dw = kcu::DeviceBuffer<T>(w_host.size());
    plan_slab(d);
  }
  if (device != nullptr) {
    for (RemoteHalo<T>* h : {&x_top, &x_bottom}) {
      h->send = kcu::DeviceBuffer<T>(halo * static_cast<size_t>(geo.c_in));
      h->recv = kcu::DeviceBuffer<T>(halo * static_cast<size_t>(geo.c_in));
    }
    for (RemoteHalo<T>* h : {&dy_top, &dy_bottom}) {
      h->send = kcu::DeviceBuffer<T>(halo * static_cast<size_t>(geo.c_out));
      h->recv = kcu::DeviceBuffer<T>(halo * static_cast<size_t>(geo.c_out));
    }
  }
}

template <typename T>
void State<T>::fill(uint64_t seed) {
  const cpu::Conv3dGeometry& geo = g();
  for (DeviceSlab<T>& d : slabs) {
    for (Padded<T>* p : {&d.x, &d.dy}) {
      const bool input = p == &d.x;
      std::vector<float> values(static_cast<size_t>(geo.batch * p->channels * p->planes * hw));
      fill_planes(cpu::dense_view(values.data(), p->planes, p->channels, geo.height, geo.width),
                  input ? input_shape(config) : output_shape(config), d.slab.first, seed,
                  input ? TensorTag::kInput : TensorTag::kOutputGrad, 1.0f);
      const std::vector<T> stored = stored_as<T>(values);
      const View mine = own(*p);
      const size_t width = static_cast<size_t>(p->planes * hw) * sizeof(T);
      const auto row_count = static_cast<size_t>(geo.batch * p->channels);
      const size_t pitch = static_cast<size_t>(mine.channel_stride) * sizeof(T);
      PERFLAB_CUDA_CHECK(cudaMemcpy2D(mine.data, pitch, stored.data(), width, width, row_count,  // sync outside the iteration: setup
                                      cudaMemcpyHostToDevice));
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(geo.c_in * geo.k * geo.k * geo.k));
  fill_dense(w_host.data(), static_cast<int64_t>(w_host.size()), seed, TensorTag::kWeight, scale);
  const std::vector<T> w_stored = stored_as<T>(w_host);
  w_host = widened_from<T>(w_stored);  // what the device holds, for the gate
  w.upload(w_stored);
  // The padding's memsets (constructor) and these copies ran on the legacy
  // stream, and a pageable copy returns once staged, not landed: the step's
  // non-blocking streams do not wait for the legacy stream, so wait here,
  // before any step can read them.
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: setup
}

template <typename T>
SlabResults State<T>::download() {
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: read-back for the gate
  SlabResults out;
  std::vector<std::vector<float>>& keep = out.storage;
  out.config = &config;
  const cpu::Conv3dGeometry& geo = g();
  for (DeviceSlab<T>& d : slabs) {
    out.slabs.push_back(d.slab);
    keep.push_back(widened_from<T>(d.y.download()));
    out.y.push_back(cpu::dense_view(static_cast<const float*>(keep.back().data()), d.slab.planes, geo.c_out,
                                    geo.height, geo.width));
    if (config.backward) {
      keep.push_back(widened_from<T>(d.dx.download()));
      out.dx.push_back(cpu::dense_view(static_cast<const float*>(keep.back().data()), d.slab.planes, geo.c_in,
                                       geo.height, geo.width));
    }
  }
  out.w = w_host.data();
  out.weights = w_host.size();
  if (config.backward) {
    if constexpr (kBf16) {
      keep.push_back(dw_sum.download());
    } else {
      keep.push_back(slabs[0].dw.download());
    }
    out.dw = keep.back().data();
  }
  return out;
}

template <typename T>
void State<T>::enqueue_exchange_alone() {
  fork_all();
  exchange_x();
  if (config.backward) exchange_dy();
  kcu::stream_waits_for(step.get(), copy.get(), x_ready.get());
}

template <typename T>
void State<T>::enqueue_compute_alone() {
  fork_all();
  for (DeviceSlab<T>& d : slabs) {
    for (const auto* calls : {&d.forward_main, &d.forward_fix, &d.backward_main, &d.backward_fix}) run(d, *calls);
  }
  join_all();
}

template <typename T>
double State<T>::halo_bytes_per_step() const {
  const double halos = halos_received(first_global(), static_cast<int>(slabs.size()), total());
  const cpu::Conv3dGeometry& geo = g();
  const double channels = static_cast<double>(geo.c_in + (config.backward ? geo.c_out : 0));
  return halos * static_cast<double>(geo.batch * r * hw) * channels * sizeof(T);
}

template <typename T>
std::unique_ptr<CudaHaloLayer::Impl> make_state(const LayerConfig& config, collectives::Communicator& host_comm,
                                                collectives::Communicator* device_comm, bool sync_free) {
  auto state = std::make_unique<State<T>>(config, host_comm, device_comm, sync_free);
  state->build();
  return state;
}

}  // namespace

CudaHaloLayer::CudaHaloLayer(const LayerConfig& config, collectives::Communicator& host_comm,
                             collectives::Communicator* device_comm, bool sync_free)
    : s_(config.bf16 ? make_state<uint16_t>(config, host_comm, device_comm, sync_free)
                     : make_state<float>(config, host_comm, device_comm, sync_free)) {}

CudaHaloLayer::~CudaHaloLayer() = default;

void CudaHaloLayer::fill(uint64_t seed) { s_->fill(seed); }

void* CudaHaloLayer::stream() const { return s_->stream(); }

void CudaHaloLayer::enqueue() { s_->enqueue_step(); }

int CudaHaloLayer::expected_host_syncs() const {
  if (s_->sync_free_step()) return 0;
  return s_->layer_config().backward ? 2 : 1;
}

SlabResults CudaHaloLayer::download() { return s_->download(); }

void CudaHaloLayer::enqueue_exchange_alone() { s_->enqueue_exchange_alone(); }

void CudaHaloLayer::enqueue_compute_alone() { s_->enqueue_compute_alone(); }

void CudaHaloLayer::enqueue_all_reduce_alone() { s_->sum_weight_grads(); }

double CudaHaloLayer::halo_bytes_per_step() const { return s_->halo_bytes_per_step(); }

std::pair<int, int> CudaHaloLayer::data_gradient_calls() const { return s_->data_gradient_calls(); }
std::string CudaHaloLayer::data_gradient_fallback() const { return s_->data_gradient_fallback(); }
std::pair<int, int> CudaHaloLayer::staged_calls() const { return s_->staged_calls(); }

const LayerConfig& CudaHaloLayer::config() const { return s_->layer_config(); }

}  // namespace perflab::halo_conv
