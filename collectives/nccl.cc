// The NCCL communicator (see nccl.h).
#include "collectives/nccl.h"

#include <nccl.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "collectives/backoff.h"
#include "collectives/nccl_log.h"
#include "base/error.h"
#include "base/exit_hooks.h"
#include "kernels/cuda/check.h"

namespace perflab::collectives {

[[noreturn]] void throw_nccl_error(ncclResult_t rc, const char* call, const char* file, int line) {
  std::string name(call);
  name = name.substr(0, name.find('('));
  std::string detail = ncclGetErrorString(rc);
  const char* last = ncclGetLastError(nullptr);
  if (last && *last) detail += std::string(" (") + last + ")";
  throw Error(fmt::format("NCCL: {} failed: {} [{}:{}]", name, detail, file, line));
}

}  // namespace perflab::collectives

/// Throws perflab::Error "NCCL: <call> failed: <NCCL's description>".
#define PERFLAB_NCCL_CHECK(call)                                                             \
  do {                                                                                       \
    const ncclResult_t perflab_nccl_rc = (call);                                             \
    if (perflab_nccl_rc != ncclSuccess && perflab_nccl_rc != ncclInProgress)                 \
      ::perflab::collectives::throw_nccl_error(perflab_nccl_rc, #call, __FILE__, __LINE__);  \
  } while (0)

namespace perflab::collectives {
namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::kFloat32: return ncclFloat32;
    case DataType::kFloat16: return ncclFloat16;
    case DataType::kBFloat16: return ncclBfloat16;
    case DataType::kInt32: return ncclInt32;
    case DataType::kFloat64: return ncclFloat64;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
  }
  return ncclSum;
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Communicator& host, const NcclSetup& setup) : host_(host), timeout_s_(setup.init_timeout_s) {
    PERFLAB_CUDA_CHECK(cudaSetDevice(setup.device));
    ncclUniqueId id{};
    if (host.rank() == 0) PERFLAB_NCCL_CHECK(ncclGetUniqueId(&id));
    host.broadcast_host(&id, sizeof id, 0);
    // Non-blocking init, polled: a rank that never arrives is a timeout
    // and an abort, not a hang.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    PERFLAB_NCCL_CHECK(ncclCommInitRankConfig(&comm_, host.size(), id, host.rank(), &config));
    await_ready("ncclCommInitRankConfig", "communicator not ready (a rank did not arrive)");
  }
  ~NcclCommunicator() override {
    if (comm_) ncclCommDestroy(comm_);
  }

  int rank() const override { return host_.rank(); }
  int size() const override { return host_.size(); }
  std::string kind() const override { return "nccl"; }
  bool device_buffers() const override { return true; }
  void set_stream(void* stream) override { stream_ = static_cast<cudaStream_t>(stream); }
  void barrier() override { host_.barrier(); }
  void all_reduce_host(double* values, size_t count, ReduceOp op) override { host_.all_reduce_host(values, count, op); }
  void broadcast_host(void* data, size_t bytes, int root) override { host_.broadcast_host(data, bytes, root); }

  void all_reduce(const void* send, void* recv, size_t count, DataType t, ReduceOp op) override {
    enqueued(ncclAllReduce(send, recv, count, nccl_type(t), nccl_op(op), comm_, stream_), "ncclAllReduce");
  }
  void all_gather(const void* send, void* recv, size_t count, DataType t) override {
    enqueued(ncclAllGather(send, recv, count, nccl_type(t), comm_, stream_), "ncclAllGather");
  }
  void reduce_scatter(const void* send, void* recv, size_t count, DataType t, ReduceOp op) override {
    enqueued(ncclReduceScatter(send, recv, count, nccl_type(t), nccl_op(op), comm_, stream_), "ncclReduceScatter");
  }
  /// NCCL's own all-to-all is a group of sends and receives, as nccl-tests does it.
  void all_to_all(const void* send, void* recv, size_t count, DataType t) override {
    const size_t bytes = count * dtype_size(t);
    PERFLAB_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < size(); ++r) {
      PERFLAB_NCCL_CHECK(ncclSend(static_cast<const char*>(send) + r * bytes, count, nccl_type(t), r, comm_, stream_));
      PERFLAB_NCCL_CHECK(ncclRecv(static_cast<char*>(recv) + r * bytes, count, nccl_type(t), r, comm_, stream_));
    }
    enqueued(ncclGroupEnd(), "ncclGroupEnd");
  }
  void broadcast(const void* send, void* recv, size_t count, DataType t, int root) override {
    enqueued(ncclBroadcast(send, recv, count, nccl_type(t), root, comm_, stream_), "ncclBroadcast");
  }
  void reduce(const void* send, void* recv, size_t count, DataType t, ReduceOp op, int root) override {
    enqueued(ncclReduce(send, recv, count, nccl_type(t), nccl_op(op), root, comm_, stream_), "ncclReduce");
  }
  void send_recv(const PeerTransfer* transfers, size_t n, DataType t) override {
    PERFLAB_NCCL_CHECK(ncclGroupStart());
    for (const PeerTransfer* x = transfers; x != transfers + n; ++x) {
      if (x->send) PERFLAB_NCCL_CHECK(ncclSend(x->send, x->count, nccl_type(t), x->peer, comm_, stream_));
      if (x->recv) PERFLAB_NCCL_CHECK(ncclRecv(x->recv, x->count, nccl_type(t), x->peer, comm_, stream_));
    }
    enqueued(ncclGroupEnd(), "ncclGroupEnd");
  }

  void wait(cudaStream_t stream, double timeout_s) {
    const auto t0 = Clock::now();
    Backoff backoff;
    for (;;) {
      const cudaError_t done = cudaStreamQuery(stream);
      if (done == cudaSuccess) return;
      if (done != cudaErrorNotReady) PERFLAB_CUDA_CHECK(done);
      ncclResult_t state = ncclSuccess;
      PERFLAB_NCCL_CHECK(ncclCommGetAsyncError(comm_, &state));
      if (state != ncclSuccess && state != ncclInProgress) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        throw_nccl_error(state, "ncclCommGetAsyncError", __FILE__, __LINE__);
      }
      if (std::chrono::duration<double>(Clock::now() - t0).count() > timeout_s) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        throw Error(fmt::format("NCCL: operations not finished after {:.0f} s (a peer stopped?); communicator "
                                "aborted", timeout_s));
      }
      backoff.pause();
    }
  }

 private:
  /// A non-blocking communicator may return ncclInProgress from a
  /// collective or ncclGroupEnd (the first exchange with a peer sets up its
  /// connection): the kernels reach the stream later, from NCCL's own
  /// thread. Wait until they have (host-side only: no stream is waited
  /// for), so whatever the caller enqueues next runs after them, and the
  /// next call does not meet a communicator still busy.
  void enqueued(ncclResult_t rc, const char* call) {
    if (rc == ncclSuccess) return;
    if (rc != ncclInProgress) throw_nccl_error(rc, call, __FILE__, __LINE__);
    await_ready(call, fmt::format("{} not enqueued (a peer did not connect?)", call));
  }

  /// Polls NCCL's asynchronous state until the communicator is ready; an
  /// error, or `timeout_s_` without one, aborts it and throws one line.
  void await_ready(const char* call, const std::string& timeout_what) {
    const auto t0 = Clock::now();
    Backoff backoff;
    for (;;) {
      ncclResult_t state = ncclSuccess;
      PERFLAB_NCCL_CHECK(ncclCommGetAsyncError(comm_, &state));
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        throw_nccl_error(state, call, __FILE__, __LINE__);
      }
      if (std::chrono::duration<double>(Clock::now() - t0).count() > timeout_s_) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        throw Error(fmt::format("NCCL: {} after {:.0f} s; communicator aborted", timeout_what, timeout_s_));
      }
      backoff.pause();
    }
  }

  Communicator& host_;
  double timeout_s_ = 120;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& host, const NcclSetup& setup) {
  return std::make_unique<NcclCommunicator>(host, setup);
}

namespace {

std::map<bool, ProcessNccl>& made_communicators() {
  static std::map<bool, ProcessNccl> made;
  return made;
}

/// Owns them until main returns (base/exit_hooks.h): destroyed then, in
/// order, while CUDA and the host communicator are still up, not by static
/// destruction after CUDA's runtime has torn down.
std::map<bool, std::unique_ptr<Communicator>>& owned_communicators() {
  static std::map<bool, std::unique_ptr<Communicator>> owned;
  return owned;
}

void release_process_nccl_communicators() {
  made_communicators().clear();
  auto& owned = owned_communicators();
  while (!owned.empty()) owned.erase(std::prev(owned.end()));
}

}  // namespace

ProcessNccl process_nccl_communicator(Communicator& host, bool sharp, const std::string& out_dir) {
  std::map<bool, ProcessNccl>& made = made_communicators();
  // NCCL reads NCCL_DEBUG_FILE once per process, at its first communicator:
  // every later one logs into that same file.
  static std::string pattern;
  ProcessNccl& nccl = made[sharp];
  if (nccl.comm == nullptr) {
    if (pattern.empty()) {
      std::filesystem::create_directories(out_dir);
      pattern = (std::filesystem::absolute(out_dir) / "nccl-debug.%h.%p.log").string();
    }
    for (const std::vector<EnvSetting>& settings : {sharp_environment(sharp), nccl_debug_environment(pattern)}) {
      for (const EnvSetting& e : settings) {
        if (e.value) {
          setenv(e.name.c_str(), e.value->c_str(), 1);
        } else {
          unsetenv(e.name.c_str());
        }
      }
    }
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    NcclSetup setup;
    setup.device = nccl_local_device();
    auto& owned = owned_communicators();
    if (owned.empty()) at_main_exit(release_process_nccl_communicators);
    owned[sharp] = make_nccl_communicator(host, setup);
    nccl.comm = owned[sharp].get();
    nccl.debug_log = expand_nccl_debug_file(pattern, name, static_cast<long>(getpid()));
  }
  return nccl;
}

int nccl_local_device() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"}) {
    if (const char* s = std::getenv(v)) return std::atoi(s);
  }
  return 0;
}

std::string nccl_runtime_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "unknown";
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9.
  return fmt::format("{}.{}.{}", code / 10000, (code / 100) % 100, code % 100);
}

void nccl_wait(Communicator& comm, void* stream, double timeout_s) {
  auto* nccl = dynamic_cast<NcclCommunicator*>(&comm);
  if (!nccl) throw Error("internal: nccl_wait on a " + comm.kind() + " communicator");
  nccl->wait(static_cast<cudaStream_t>(stream), timeout_s);
}

}  // namespace perflab::collectives
