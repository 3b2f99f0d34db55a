#include "workloads/halo_conv/cuda_layer.h"

#include <cuda_runtime.h>

#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/conv3d.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "workloads/halo_conv/cuda_sum.h"

namespace perflab::halo_conv {

namespace cpu = kernels::cpu;
namespace kc = kernels::cuda;

namespace {

/// One cuDNN call with its buffers bound, planned once.
struct Call {
  kc::Conv3dArguments args;
  std::unique_ptr<kc::Conv3d> plan;
};

/// One tensor of one slab: its planes with room for the halo on each side.
struct Padded {
  kc::DeviceBuffer<float> buffer;
  int64_t planes = 0;  ///< The slab's own planes (L).
  int64_t channels = 0;
};

struct DeviceSlab {
  Slab slab;
  bool top = false, bottom = false;
  Padded x, dy;
  kc::DeviceBuffer<float> y, dx, dw;
  kc::Stream stream;
  /// The slab's own cuDNN handle: slabs run concurrently on their streams,
  /// and a handle re-pointed between them with cudnnSetStream would share
  /// its internal state across streams that run at once.
  kc::CudnnHandle cudnn;
  kc::Event forward_done, done;
  /// Calls before and after the halo arrives, forward and backward.
  std::vector<Call> forward_main, forward_fix, backward_main, backward_fix;
  kc::DeviceBuffer<unsigned char> workspace;
};

/// A halo going to or coming from another rank, contiguous for NCCL.
struct RemoteHalo {
  kc::DeviceBuffer<float> send, recv;
};

}  // namespace

struct CudaHaloLayer::State {
  LayerConfig config;
  collectives::Communicator& host;
  collectives::Communicator* device;
  bool sync_free;
  int64_t r, hw;
  std::vector<DeviceSlab> slabs;
  std::vector<float> w_host;
  kc::DeviceBuffer<float> w;
  kc::Stream step, copy;
  kc::Event fork, x_ready, dy_ready;
  RemoteHalo x_top, x_bottom, dy_top, dy_bottom;

  State(const LayerConfig& c, collectives::Communicator& host_comm, collectives::Communicator* device_comm,
        bool sync_free_step)
      : config(c),
        host(host_comm),
        device(device_comm),
        sync_free(sync_free_step),
        r(c.geometry.k / 2),
        hw(c.geometry.height * c.geometry.width) {}

  const cpu::Conv3dGeometry& g() const { return config.geometry; }
  int first_global() const { return host.rank() * config.per_rank; }
  int total() const { return host.size() * config.per_rank; }

  cpu::PlaneView whole(Padded& p) const {
    return cpu::dense_view(p.buffer.data(), p.planes + 2 * r, p.channels, g().height, g().width);
  }
  cpu::PlaneView own(Padded& p) const { return cpu::plane_range(whole(p), r, p.planes, g().height, g().width); }
  cpu::PlaneView top_halo(Padded& p) const { return cpu::plane_range(whole(p), 0, r, g().height, g().width); }
  cpu::PlaneView bottom_halo(Padded& p) const {
    return cpu::plane_range(whole(p), r + p.planes, r, g().height, g().width);
  }
  cpu::PlaneView dense(kc::DeviceBuffer<float>& b, int64_t planes, int64_t channels) const {
    return cpu::dense_view(b.data(), planes, channels, g().height, g().width);
  }
  cpu::PlaneView rows(cpu::PlaneView v, int64_t first, int64_t count) const {
    return cpu::plane_range(v, first, count, g().height, g().width);
  }

  /// A call planned on `handle`: the slab's own, as its calls run on its stream.
  Call plan(const kc::CudnnHandle& handle, const kc::Conv3dArguments& a) {
    Call call{a, std::make_unique<kc::Conv3d>(handle, a)};
    if (!call.plan->status().ok()) {
      throw Error(fmt::format("halo_conv: cuDNN cannot run the {} pass of this shape: {}",
                              kc::conv3d_pass_name(a.pass), call.plan->status().reason()));
    }
    return call;
  }
  kc::Conv3dArguments base(kc::Conv3dPass pass, int64_t d_offset, bool accumulate) const {
    kc::Conv3dArguments a;
    a.pass = pass;
    a.math = kc::Conv3dMath::kTf32;
    a.geometry = g();
    a.d_offset = d_offset;
    a.accumulate = accumulate;
    return a;
  }
  kc::Conv3dArguments forward(cpu::PlaneView x, cpu::PlaneView y, int64_t d, bool acc) {
    kc::Conv3dArguments a = base(kc::Conv3dPass::kForward, d, acc);
    a.x = cpu::as_const(x);
    a.y = y;
    a.w = w.data();
    return a;
  }
  kc::Conv3dArguments data_grad(cpu::PlaneView dy, cpu::PlaneView dx, int64_t d, bool acc) {
    kc::Conv3dArguments a = base(kc::Conv3dPass::kBackwardData, d, acc);
    a.dy = cpu::as_const(dy);
    a.dx = dx;
    a.w = w.data();
    return a;
  }
  kc::Conv3dArguments filter_grad(cpu::PlaneView x, cpu::PlaneView dy, float* dw, int64_t d, bool acc) {
    kc::Conv3dArguments a = base(kc::Conv3dPass::kBackwardFilter, d, acc);
    a.x = cpu::as_const(x);
    a.dy = cpu::as_const(dy);
    a.dw = dw;
    return a;
  }

  /// The calls of slab `s` in this variant (see the header comment).
  void plan_slab(DeviceSlab& s) {
    const int64_t L = s.slab.planes;
    const cpu::PlaneView y = dense(s.y, L, g().c_out), dx = dense(s.dx, L, g().c_in);
    if (!config.overlap) {
      s.forward_fix.push_back(plan(s.cudnn, forward(whole(s.x), y, r, false)));
      if (config.backward) {
        s.backward_fix.push_back(plan(s.cudnn, data_grad(whole(s.dy), dx, -r, false)));
        s.backward_fix.push_back(
            plan(s.cudnn, filter_grad(whole(s.x), own(s.dy), s.dw.data(), r, false)));
      }
    } else {
      s.forward_main.push_back(plan(s.cudnn, forward(own(s.x), y, 0, false)));
      if (s.top)
        s.forward_fix.push_back(plan(s.cudnn, forward(top_halo(s.x), rows(y, 0, r), r, true)));
      if (s.bottom)
        s.forward_fix.push_back(
            plan(s.cudnn, forward(bottom_halo(s.x), rows(y, L - r, r), -r, true)));
      if (config.backward) {
        s.backward_main.push_back(plan(s.cudnn, data_grad(own(s.dy), dx, 0, false)));
        s.backward_main.push_back(
            plan(s.cudnn, filter_grad(own(s.x), own(s.dy), s.dw.data(), 0, false)));
        // The input's halo arrived in the forward pass.
        if (s.top)
          s.backward_main.push_back(plan(
              s.cudnn, filter_grad(top_halo(s.x), rows(own(s.dy), 0, r), s.dw.data(), r, true)));
        if (s.bottom) {
          s.backward_main.push_back(plan(
              s.cudnn,
              filter_grad(bottom_halo(s.x), rows(own(s.dy), L - r, r), s.dw.data(), -r, true)));
        }
        if (s.top)
          s.backward_fix.push_back(
              plan(s.cudnn, data_grad(top_halo(s.dy), rows(dx, 0, r), -r, true)));
        if (s.bottom)
          s.backward_fix.push_back(
              plan(s.cudnn, data_grad(bottom_halo(s.dy), rows(dx, L - r, r), r, true)));
      }
    }
    size_t bytes = 0;
    for (const auto* calls : {&s.forward_main, &s.forward_fix, &s.backward_main, &s.backward_fix}) {
      for (const Call& c : *calls) bytes = std::max(bytes, c.plan->workspace_bytes());
    }
    s.workspace = kc::DeviceBuffer<unsigned char>(bytes);
  }

  void run(DeviceSlab& s, const std::vector<Call>& calls) {
    for (const Call& c : calls) c.plan->run(c.args, s.workspace.data(), s.stream.get());
  }

  /// `r` planes of every (n, c) row from one view to another (same rows).
  void copy_rows(cpu::PlaneView to, cpu::PlaneView from, int64_t channels) {
    const size_t width = static_cast<size_t>(r * hw) * sizeof(float);
    PERFLAB_CUDA_CHECK(cudaMemcpy2DAsync(to.data, static_cast<size_t>(to.channel_stride) * sizeof(float), from.data,
                                         static_cast<size_t>(from.channel_stride) * sizeof(float), width,
                                         static_cast<size_t>(g().batch * channels), cudaMemcpyDeviceToDevice,
                                         copy.get()));
  }

  /// Every slab's halo of one tensor filled from its neighbours, on the copy stream.
  void exchange(Padded DeviceSlab::*field, RemoteHalo& remote_top, RemoteHalo& remote_bottom) {
    if (r == 0) return;
    const size_t last = slabs.size() - 1;
    const int64_t channels = (slabs[0].*field).channels;
    for (size_t j = 0; j < slabs.size(); ++j) {
      Padded& p = slabs[j].*field;
      if (j > 0) {
        Padded& above = slabs[j - 1].*field;
        copy_rows(top_halo(p), rows(own(above), above.planes - r, r), channels);
      }
      if (j < last) copy_rows(bottom_halo(p), rows(own(slabs[j + 1].*field), 0, r), channels);
    }
    collectives::PeerTransfer transfers[2];
    size_t n = 0;
    const size_t count = static_cast<size_t>(g().batch * channels * r * hw);
    auto contiguous = [&](kc::DeviceBuffer<float>& b) { return cpu::dense_view(b.data(), r, channels, 1, hw); };
    Padded& first = slabs[0].*field;
    Padded& final_slab = slabs[last].*field;
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
    device->send_recv(transfers, n, collectives::DataType::kFloat32);
    if (slabs[0].top) copy_rows(top_halo(first), contiguous(remote_top.recv), channels);
    if (slabs[last].bottom) copy_rows(bottom_halo(final_slab), contiguous(remote_bottom.recv), channels);
  }
  void exchange_x() { exchange(&DeviceSlab::x, x_top, x_bottom); }
  void exchange_dy() { exchange(&DeviceSlab::dy, dy_top, dy_bottom); }

  /// Every slab stream and the copy stream wait for what the step stream enqueued so far.
  void fork_all() {
    PERFLAB_CUDA_CHECK(cudaEventRecord(fork.get(), step.get()));
    PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(copy.get(), fork.get(), 0));
    for (DeviceSlab& s : slabs) PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(s.stream.get(), fork.get(), 0));
  }
  /// The step stream waits for every slab stream (and, through them, the copies).
  void join_all() {
    for (DeviceSlab& s : slabs) {
      PERFLAB_CUDA_CHECK(cudaEventRecord(s.done.get(), s.stream.get()));
      PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(step.get(), s.done.get(), 0));
    }
  }
  /// Slab streams wait for the copy stream's halo (or, sync-free off, the host does first).
  void halo_arrived(kc::Event& ready) {
    PERFLAB_CUDA_CHECK(cudaEventRecord(ready.get(), copy.get()));
    if (!sync_free) kc::counted_stream_synchronize(copy.get());
    for (DeviceSlab& s : slabs) PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(s.stream.get(), ready.get(), 0));
  }

  void sum_weight_grads() {
    for (size_t j = 1; j < slabs.size(); ++j) {
      add_into(slabs[0].dw.data(), slabs[j].dw.data(), slabs[0].dw.size(), step.get());
    }
    if (device != nullptr) {
      device->set_stream(step.get());
      device->all_reduce(slabs[0].dw.data(), slabs[0].dw.data(), slabs[0].dw.size(), collectives::DataType::kFloat32,
                         collectives::ReduceOp::kSum);
    }
  }

  void enqueue_step() {
    fork_all();
    for (DeviceSlab& s : slabs) run(s, s.forward_main);
    exchange_x();
    halo_arrived(x_ready);
    for (DeviceSlab& s : slabs) run(s, s.forward_fix);
    if (config.backward) {
      // The output gradient exists once the forward is done: its halo goes then.
      for (DeviceSlab& s : slabs) {
        PERFLAB_CUDA_CHECK(cudaEventRecord(s.forward_done.get(), s.stream.get()));
        PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(copy.get(), s.forward_done.get(), 0));
      }
      exchange_dy();
      for (DeviceSlab& s : slabs) run(s, s.backward_main);
      halo_arrived(dy_ready);
      for (DeviceSlab& s : slabs) run(s, s.backward_fix);
    }
    join_all();
    if (config.backward) sum_weight_grads();
  }

};

CudaHaloLayer::CudaHaloLayer(const LayerConfig& config, collectives::Communicator& host_comm,
                             collectives::Communicator* device_comm, bool sync_free)
    : s_(std::make_unique<State>(config, host_comm, device_comm, sync_free)) {
  State& s = *s_;
  const cpu::Conv3dGeometry& g = config.geometry;
  cpu::conv3d_check_geometry(g);
  if (host_comm.size() > 1 && device_comm == nullptr) {
    throw Error("halo_conv: several ranks on the cuda backend need NCCL, which this build does not have");
  }
  Partitioning p{config.depth, host_comm.size(), config.per_rank, g.k / 2};
  check_partitioning(p);
  const std::vector<Slab> all = p.slabs();
  s.w_host.assign(static_cast<size_t>(g.c_out * g.c_in * g.k * g.k * g.k), 0.0f);
  s.w = kc::DeviceBuffer<float>(s.w_host.size());
  s.slabs = std::vector<DeviceSlab>(static_cast<size_t>(config.per_rank));
  const auto halo = static_cast<size_t>(g.batch * s.r * s.hw);
  for (size_t j = 0; j < s.slabs.size(); ++j) {
    DeviceSlab& d = s.slabs[j];
    const int global = s.first_global() + static_cast<int>(j);
    d.slab = all[static_cast<size_t>(global)];
    d.top = global > 0;
    d.bottom = global + 1 < s.total();
    const int64_t L = d.slab.planes;
    const auto padded = static_cast<size_t>(g.batch * (L + 2 * s.r) * s.hw);
    d.x = {kc::DeviceBuffer<float>(padded * static_cast<size_t>(g.c_in)), L, g.c_in};
    d.dy = {kc::DeviceBuffer<float>(padded * static_cast<size_t>(g.c_out)), L, g.c_out};
    d.x.buffer.zero();  // the halo planes beyond the volume's ends stay zero
    d.dy.buffer.zero();
    d.y = kc::DeviceBuffer<float>(static_cast<size_t>(g.batch * g.c_out * L * s.hw));
    d.dx = kc::DeviceBuffer<float>(static_cast<size_t>(g.batch * g.c_in * L * s.hw));
    d.dw = kc::DeviceBuffer<float>(s.w_host.size());
    s.plan_slab(d);
  }
  if (device_comm != nullptr) {
    for (RemoteHalo* h : {&s.x_top, &s.x_bottom}) {
      h->send = kc::DeviceBuffer<float>(halo * static_cast<size_t>(g.c_in));
      h->recv = kc::DeviceBuffer<float>(halo * static_cast<size_t>(g.c_in));
    }
    for (RemoteHalo* h : {&s.dy_top, &s.dy_bottom}) {
      h->send = kc::DeviceBuffer<float>(halo * static_cast<size_t>(g.c_out));
      h->recv = kc::DeviceBuffer<float>(halo * static_cast<size_t>(g.c_out));
    }
  }
}

CudaHaloLayer::~CudaHaloLayer() = default;

void CudaHaloLayer::fill(uint64_t seed) {
  State& s = *s_;
  const cpu::Conv3dGeometry& g = s.config.geometry;
  for (DeviceSlab& d : s.slabs) {
    for (Padded* p : {&d.x, &d.dy}) {
      const bool input = p == &d.x;
      std::vector<float> host(static_cast<size_t>(g.batch * p->channels * p->planes * s.hw));
      fill_planes(cpu::dense_view(host.data(), p->planes, p->channels, g.height, g.width),
                  input ? input_shape(s.config) : output_shape(s.config), d.slab.first, seed,
                  input ? TensorTag::kInput : TensorTag::kOutputGrad, 1.0f);
      const cpu::PlaneView own = s.own(*p);
      const size_t width = static_cast<size_t>(p->planes * s.hw) * sizeof(float);
      const auto rows = static_cast<size_t>(g.batch * p->channels);
      const size_t pitch = static_cast<size_t>(own.channel_stride) * sizeof(float);
      PERFLAB_CUDA_CHECK(cudaMemcpy2D(own.data, pitch, host.data(), width, width, rows, cudaMemcpyHostToDevice));  // sync outside the iteration: setup
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(g.c_in * g.k * g.k * g.k));
  fill_dense(s.w_host.data(), static_cast<int64_t>(s.w_host.size()), seed, TensorTag::kWeight, scale);
  s.w.upload(s.w_host);
  // The padding's memsets (constructor) and these copies ran on the legacy
  // stream, and a pageable copy returns once staged, not landed: the step's
  // non-blocking streams do not wait for the legacy stream, so wait here,
  // before any step can read them.
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: setup
}

void* CudaHaloLayer::stream() const { return s_->step.get(); }

void CudaHaloLayer::enqueue() { s_->enqueue_step(); }

int CudaHaloLayer::expected_host_syncs() const {
  if (s_->sync_free) return 0;
  return s_->config.backward ? 2 : 1;
}

SlabResults CudaHaloLayer::download() {
  State& s = *s_;
  PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: read-back for the gate
  SlabResults out;
  std::vector<std::vector<float>>& keep = out.storage;
  out.config = &s.config;
  const cpu::Conv3dGeometry& g = s.config.geometry;
  for (DeviceSlab& d : s.slabs) {
    out.slabs.push_back(d.slab);
    keep.push_back(d.y.download());
    out.y.push_back(cpu::dense_view(static_cast<const float*>(keep.back().data()), d.slab.planes, g.c_out, g.height,
                                    g.width));
    if (s.config.backward) {
      keep.push_back(d.dx.download());
      out.dx.push_back(cpu::dense_view(static_cast<const float*>(keep.back().data()), d.slab.planes, g.c_in, g.height,
                                       g.width));
    }
  }
  out.w = s.w_host.data();
  out.weights = s.w_host.size();
  if (s.config.backward) {
    keep.push_back(s.slabs[0].dw.download());
    out.dw = keep.back().data();
  }
  return out;
}

void CudaHaloLayer::enqueue_exchange_alone() {
  State& s = *s_;
  s.fork_all();
  s.exchange_x();
  if (s.config.backward) s.exchange_dy();
  PERFLAB_CUDA_CHECK(cudaEventRecord(s.x_ready.get(), s.copy.get()));
  PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(s.step.get(), s.x_ready.get(), 0));
}

void CudaHaloLayer::enqueue_compute_alone() {
  State& s = *s_;
  s.fork_all();
  for (DeviceSlab& d : s.slabs) {
    for (const auto* calls : {&d.forward_main, &d.forward_fix, &d.backward_main, &d.backward_fix}) s.run(d, *calls);
  }
  s.join_all();
}

void CudaHaloLayer::enqueue_all_reduce_alone() { s_->sum_weight_grads(); }

double CudaHaloLayer::halo_bytes_per_step() const {
  const State& s = *s_;
  const double halos = halos_received(s.first_global(), static_cast<int>(s.slabs.size()), s.total());
  const cpu::Conv3dGeometry& g = s.config.geometry;
  const double channels = static_cast<double>(g.c_in + (s.config.backward ? g.c_out : 0));
  return halos * static_cast<double>(g.batch * s.r * s.hw) * channels * sizeof(float);
}

const LayerConfig& CudaHaloLayer::config() const { return s_->config; }

}  // namespace perflab::halo_conv
