// The MPI communicator (Open MPI, host buffers): a duplicate of
// MPI_COMM_WORLD whose errors return to us (MPI_ERRORS_RETURN) and become
// one-line Errors naming the call and MPI's own description; the app adds
// the rank and stops every rank (abort_all_ranks). fp16 and bf16, which MPI
// has no type for, travel as 2-byte elements reduced by our own MPI_Ops.
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "collectives/communicator.h"
#include "collectives/mpi_world.h"
#include "base/error.h"
#include "kernels/half_precision.h"

/// Throws perflab::Error "MPI: <call> failed: <MPI's description>" when an
/// MPI call does not return MPI_SUCCESS.
#define PERFLAB_MPI_CHECK(call)                                                         \
  do {                                                                                  \
    const int perflab_mpi_rc = (call);                                                  \
    if (perflab_mpi_rc != MPI_SUCCESS) ::perflab::collectives::throw_mpi_error(#call, perflab_mpi_rc); \
  } while (0)

namespace perflab::collectives {

[[noreturn]] void throw_mpi_error(const char* call, int rc) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) std::snprintf(text, sizeof text, "error code %d", rc);
  std::string name(call);
  name = name.substr(0, name.find('('));
  throw Error(fmt::format("MPI: {} failed: {}", name, text));
}

namespace {

// Element-wise reductions of 2-byte floats through float (exact for the
// result's own rounding: one rounding per pair, as a ring reduction does).
template <float (*Load)(uint16_t), uint16_t (*Store)(float), int Op>
void reduce_halves(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = Load(a[i]), y = Load(b[i]);
    const float r = Op == 0 ? x + y : Op == 1 ? (x > y ? x : y) : (x < y ? x : y);
    b[i] = Store(r);
  }
}

/// The MPI handles of our 2-byte types and their reductions, made once.
struct HalfTypes {
  MPI_Datatype type = MPI_DATATYPE_NULL;  // 2 contiguous bytes
  MPI_Op fp16[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  MPI_Op bf16[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
};

const HalfTypes& half_types() {
  static HalfTypes types;
  static std::once_flag once;
  std::call_once(once, [] {
    PERFLAB_MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &types.type));
    PERFLAB_MPI_CHECK(MPI_Type_commit(&types.type));
    PERFLAB_MPI_CHECK(MPI_Op_create(&reduce_halves<from_fp16, to_fp16, 0>, 1, &types.fp16[0]));
    PERFLAB_MPI_CHECK(MPI_Op_create(&reduce_halves<from_fp16, to_fp16, 1>, 1, &types.fp16[1]));
    PERFLAB_MPI_CHECK(MPI_Op_create(&reduce_halves<from_fp16, to_fp16, 2>, 1, &types.fp16[2]));
    PERFLAB_MPI_CHECK(MPI_Op_create(&reduce_halves<from_bf16, to_bf16, 0>, 1, &types.bf16[0]));
    PERFLAB_MPI_CHECK(MPI_Op_create(&reduce_halves<from_bf16, to_bf16, 1>, 1, &types.bf16[1]));
    PERFLAB_MPI_CHECK(MPI_Op_create(&reduce_halves<from_bf16, to_bf16, 2>, 1, &types.bf16[2]));
  });
  return types;
}

MPI_Datatype mpi_type(DataType t) {
  switch (t) {
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kFloat64: return MPI_DOUBLE;
    case DataType::kFloat16:
    case DataType::kBFloat16: return half_types().type;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(DataType t, ReduceOp op) {
  const int i = static_cast<int>(op);
  if (t == DataType::kFloat16) return half_types().fp16[i];
  if (t == DataType::kBFloat16) return half_types().bf16[i];
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
  }
  return MPI_OP_NULL;
}

/// MPI counts are ints (MPI-3): larger messages are refused, not truncated.
int mpi_count(size_t count) {
  if (count > static_cast<size_t>(INT_MAX)) {
    throw UsageError(fmt::format("{} elements in one MPI call: more than MPI's int count ({}); use fewer bytes",
                                 count, INT_MAX));
  }
  return static_cast<int>(count);
}

const void* in_place_or(const void* send, const void* recv) { return send == recv ? MPI_IN_PLACE : send; }

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    PERFLAB_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    PERFLAB_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    PERFLAB_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    PERFLAB_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  }
  ~MpiCommunicator() override {
    if (!mpi_finalized()) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }
  std::string library_version() const override {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
    std::string s(text, static_cast<size_t>(length));
    return s.substr(0, s.find_first_of(std::string("\r\n\0", 3)));
  }
  void barrier() override { PERFLAB_MPI_CHECK(MPI_Barrier(comm_)); }

  void all_reduce_host(double* values, size_t count, ReduceOp op) override {
    if (count == 0) return;
    PERFLAB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, mpi_count(count), MPI_DOUBLE,
                                    mpi_op(DataType::kFloat64, op), comm_));
  }
  void broadcast_host(void* data, size_t bytes, int root) override {
    check_rank("root", root);
    PERFLAB_MPI_CHECK(MPI_Bcast(data, mpi_count(bytes), MPI_BYTE, root, comm_));
  }

  void all_reduce(const void* send, void* recv, size_t count, DataType t, ReduceOp op) override {
    PERFLAB_MPI_CHECK(MPI_Allreduce(in_place_or(send, recv), recv, mpi_count(count), mpi_type(t), mpi_op(t, op), comm_));
  }
  /// In place when send is this rank's block of recv (NCCL's convention).
  void all_gather(const void* send, void* recv, size_t count, DataType t) override {
    const bool in_place = send == block(recv, rank_, count, t);
    PERFLAB_MPI_CHECK(MPI_Allgather(in_place ? MPI_IN_PLACE : send, mpi_count(count), mpi_type(t), recv,
                                    mpi_count(count), mpi_type(t), comm_));
  }
  /// In place when recv is this rank's block of send (NCCL's convention):
  /// MPI then leaves the result at the start of send, and it is moved to
  /// this rank's block.
  void reduce_scatter(const void* send, void* recv, size_t count, DataType t, ReduceOp op) override {
    void* base = const_cast<void*>(send);
    if (recv == block(base, rank_, count, t)) {
      PERFLAB_MPI_CHECK(MPI_Reduce_scatter_block(MPI_IN_PLACE, base, mpi_count(count), mpi_type(t), mpi_op(t, op), comm_));
      if (rank_ != 0) std::memmove(recv, base, count * dtype_size(t));
      return;
    }
    PERFLAB_MPI_CHECK(MPI_Reduce_scatter_block(send, recv, mpi_count(count), mpi_type(t), mpi_op(t, op), comm_));
  }
  void all_to_all(const void* send, void* recv, size_t count, DataType t) override {
    PERFLAB_MPI_CHECK(MPI_Alltoall(in_place_or(send, recv), mpi_count(count), mpi_type(t), recv, mpi_count(count),
                                   mpi_type(t), comm_));
  }
  void broadcast(const void* send, void* recv, size_t count, DataType t, int root) override {
    check_rank("root", root);
    if (rank_ == root && send != recv) std::memmove(recv, send, count * dtype_size(t));
    PERFLAB_MPI_CHECK(MPI_Bcast(recv, mpi_count(count), mpi_type(t), root, comm_));
  }
  void reduce(const void* send, void* recv, size_t count, DataType t, ReduceOp op, int root) override {
    check_rank("root", root);
    const void* from = rank_ == root ? in_place_or(send, recv) : send;
    PERFLAB_MPI_CHECK(MPI_Reduce(from, recv, mpi_count(count), mpi_type(t), mpi_op(t, op), root, comm_));
  }
  void send_recv(const PeerTransfer* transfers, size_t n, DataType t) override {
    send_recv_start(transfers, n, t);
    send_recv_wait();
  }
  void send_recv_start(const PeerTransfer* transfers, size_t n, DataType t) override {
    if (!requests_.empty()) throw std::logic_error("send_recv_start: an exchange is already in flight");
    for (const PeerTransfer* x = transfers; x != transfers + n; ++x) {
      check_rank("peer", x->peer);
      MPI_Request r;
      if (x->recv) {
        PERFLAB_MPI_CHECK(MPI_Irecv(x->recv, mpi_count(x->count), mpi_type(t), x->peer, kTag, comm_, &r));
        requests_.push_back(r);
      }
      if (x->send) {
        PERFLAB_MPI_CHECK(MPI_Isend(x->send, mpi_count(x->count), mpi_type(t), x->peer, kTag, comm_, &r));
        requests_.push_back(r);
      }
    }
    // One pass of MPI's progress engine: the peers' rendezvous handshakes
    // start now, not only when the wait is called.
    int done = 0;
    PERFLAB_MPI_CHECK(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE));
  }
  void send_recv_wait() override {
    if (requests_.empty()) return;
    const int rc = MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();  // complete, or the run ends on the error
    if (rc != MPI_SUCCESS) throw_mpi_error("MPI_Waitall", rc);
  }

 private:
  static constexpr int kTag = 7001;

  void check_rank(const char* what, int r) const {
    if (r < 0 || r >= size_) throw UsageError(fmt::format("{} {} is not a rank (0 to {})", what, r, size_ - 1));
  }
  static const void* block(const void* base, int index, size_t count, DataType t) {
    return static_cast<const char*>(base) + static_cast<size_t>(index) * count * dtype_size(t);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::vector<MPI_Request> requests_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() {
  init_mpi_world();
  return std::make_unique<MpiCommunicator>();
}

}  // namespace perflab::collectives
