// The NCCL communicator (collectives/nccl.h) on one GPU: every collective,
// type and placement at odd sizes on device buffers, checked with the same
// exact wrong-element count as the MPI and single-rank communicators
// (collectives/check.h); stream-ordered calls captured in a CUDA graph and
// replayed give the same output. Skips with the runtime's reason without a
// device (label gpu: scripts/gpu-check fails if it skips there).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "collectives/check.h"
#include "collectives/nccl.h"
#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/raii.h"
#include "tests/support/cuda_device.h"

namespace perflab::collectives {
namespace {

namespace cu = perflab::kernels::cuda;

struct NcclFixture {
  std::unique_ptr<Communicator> host = make_single_communicator();
  std::unique_ptr<Communicator> nccl;
  cu::Stream stream;
  NcclFixture() {
    nccl = make_nccl_communicator(*host, NcclSetup{});
    nccl->set_stream(stream.get());
  }
};

/// One call on fresh device buffers; the output copied back.
std::vector<unsigned char> run_on_device(NcclFixture& f, const CollectiveCall& call, bool in_place, bool graph) {
  const BufferLayout layout = buffer_layout(call, in_place);
  const size_t esize = dtype_size(call.dtype);
  std::vector<unsigned char> input;
  fill_input(call, input);
  cu::DeviceBuffer<unsigned char> send(layout.send_elements * esize), recv(layout.shared ? 0 : layout.recv_elements * esize);
  // On the stream NCCL runs on: a pageable cudaMemcpy on the legacy stream
  // may return before its DMA lands, and NCCL's non-blocking stream would
  // not wait for it (the first H200 run read stale input here, 2026-11-26).
  PERFLAB_CUDA_CHECK(cudaMemcpyAsync(send.data() + layout.send_offset * esize, input.data(), input.size(),
                                     cudaMemcpyHostToDevice, f.stream.get()));
  unsigned char* out = layout.shared ? send.data() + layout.recv_offset * esize : recv.data();
  if (graph) {
    cudaGraph_t g = nullptr;
    kernels::cuda::begin_capture(f.stream.get());
    run_collective(*f.nccl, call, send.data() + layout.send_offset * esize, out);
    PERFLAB_CUDA_CHECK(cudaStreamEndCapture(f.stream.get(), &g));
    cudaGraphExec_t exec = nullptr;
    PERFLAB_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
    PERFLAB_CUDA_CHECK(cudaGraphLaunch(exec, f.stream.get()));
    nccl_wait(*f.nccl, f.stream.get(), 60);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
  } else {
    run_collective(*f.nccl, call, send.data() + layout.send_offset * esize, out);
    nccl_wait(*f.nccl, f.stream.get(), 60);
  }
  std::vector<unsigned char> host(call.counts.recv * esize);
  PERFLAB_CUDA_CHECK(cudaMemcpy(host.data(), out, host.size(), cudaMemcpyDeviceToHost));
  return host;
}

TEST(NcclCommunicator, EveryCollectiveTypeAndPlacementIsExactOnOneGpu) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  NcclFixture f;
  EXPECT_EQ(f.nccl->kind(), "nccl");
  EXPECT_TRUE(f.nccl->device_buffers());
  int cases = 0;
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kAllToAll, Collective::kBroadcast, Collective::kReduce, Collective::kSendRecv}) {
    for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kInt32,
                       DataType::kFloat64}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
        if (!collective_reduces(c) && op != ReduceOp::kSum) continue;
        for (bool in_place : {false, true}) {
          if (in_place && c == Collective::kSendRecv) continue;
          for (size_t elements : {size_t{1}, size_t{37}, size_t{100003}}) {
            CollectiveCall call;
            call.collective = c;
            call.dtype = t;
            call.op = op;
            call.counts = collective_counts(c, elements * dtype_size(t), dtype_size(t), 1);
            const std::vector<unsigned char> out = run_on_device(f, call, in_place, false);
            size_t first = 0;
            EXPECT_EQ(count_wrong(call, out.data(), first), 0u)
                << fmt::format("{} {} {} {} {} elements: first wrong at {}", collective_name(c), dtype_name(t),
                               op_name(op), in_place ? "in place" : "out of place", elements, first);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 375);
}

TEST(NcclCommunicator, CapturedInAGraphGivesTheSameOutput) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  NcclFixture f;
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kSendRecv}) {
    CollectiveCall call;
    call.collective = c;
    call.dtype = DataType::kBFloat16;
    call.counts = collective_counts(c, 4099 * 2, 2, 1);
    const std::vector<unsigned char> out = run_on_device(f, call, false, true);
    size_t first = 0;
    EXPECT_EQ(count_wrong(call, out.data(), first), 0u) << collective_name(c) << " replayed from a graph";
  }
}

TEST(NcclCommunicator, VersionIsTheLibrarys) {
  PERFLAB_REQUIRE_CUDA_DEVICE();
  const std::string v = nccl_runtime_version();
  EXPECT_EQ(v.rfind("2.", 0), 0u) << v;
}

}  // namespace
}  // namespace perflab::collectives
