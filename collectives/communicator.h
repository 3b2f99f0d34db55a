// The communicator a run is handed (RunContext::comm) and the one interface
// of perflab's collectives: which rank this process is, how many there are,
// the host-side reductions the harness itself needs (per-rank timings), and
// the data collectives every workload and the collectives benchmark call.
//
// Three implementations: single-rank (copies), MPI (Open MPI, host buffers;
// collectives/mpi.cc) and NCCL (device buffers, one GPU per rank, created
// from an MPI or single communicator that carries its unique id;
// collectives/nccl.cc). Buffers are host memory for "single" and "mpi",
// device memory for "nccl". On NCCL every call is enqueued on the stream
// given to set_stream, never synchronises the host and can be captured in a
// CUDA graph; on MPI a call returns when its buffers are ready.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace perflab::collectives {

/// Reduction of values across ranks.
enum class ReduceOp { kSum, kMax, kMin };

/// Element types of the data collectives (every kind takes every type).
enum class DataType { kFloat32, kFloat16, kBFloat16, kInt32, kFloat64 };

/// Bytes of one element.
size_t dtype_size(DataType t);
/// nccl-tests' names: "float", "half", "bfloat16", "int32", "double".
const char* dtype_name(DataType t);
/// nccl-tests' names: "sum", "max", "min".
const char* op_name(ReduceOp op);
/// Parses dtype_name's names (and fp32, fp16, bf16, int, fp64); throws
/// UsageError naming the choices otherwise.
DataType parse_dtype(const std::string& text);
/// Parses "sum", "max", "min"; throws UsageError otherwise.
ReduceOp parse_op(const std::string& text);

/// One transfer of a grouped send/receive: `count` elements to `peer` from
/// `send` (null: nothing sent) and `count` elements from `peer` into `recv`
/// (null: nothing received).
struct PeerTransfer {
  int peer = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// This process's rank, 0 .. size()-1.
  virtual int rank() const = 0;
  /// Ranks in the run.
  virtual int size() const = 0;
  /// "single", "mpi" or "nccl".
  virtual std::string kind() const = 0;
  /// The library's own version line ("Open MPI v4.1.4, ..."; "" for single).
  virtual std::string library_version() const { return ""; }
  /// Whether buffers are device memory (NCCL) or host memory.
  virtual bool device_buffers() const { return false; }
  /// Whether the data collectives take `t` (NCCL has no fp64 here).
  virtual bool supports(DataType /*t*/) const { return true; }
  /// The CUDA stream (a cudaStream_t) NCCL calls are enqueued on; ignored
  /// by host communicators.
  virtual void set_stream(void* /*stream*/) {}
  /// Returns when every rank has called it (host-blocking on every kind).
  virtual void barrier() = 0;
  /// Element-wise reduction of `count` host doubles across ranks, in place,
  /// on every rank (the runner reduces per-iteration times with kMax).
  virtual void all_reduce_host(double* values, size_t count, ReduceOp op) = 0;
  /// Rank `root`'s `bytes` host bytes copied into every rank's `data`.
  virtual void broadcast_host(void* data, size_t bytes, int root) = 0;

  /// recv[i] = op over ranks of send[i], i < count, on every rank
  /// (send == recv: in place).
  virtual void all_reduce(const void* send, void* recv, size_t count, DataType t, ReduceOp op) = 0;
  /// recv = every rank's `count` elements of send, in rank order (recv holds size()*count).
  virtual void all_gather(const void* send, void* recv, size_t count, DataType t) = 0;
  /// recv (count elements) = rank r's block of op over ranks of send
  /// (size()*count elements).
  virtual void reduce_scatter(const void* send, void* recv, size_t count, DataType t, ReduceOp op) = 0;
  /// Block j (count elements) of send goes to rank j; recv's block j came
  /// from rank j.
  virtual void all_to_all(const void* send, void* recv, size_t count, DataType t) = 0;
  /// recv = root's send, on every rank.
  virtual void broadcast(const void* send, void* recv, size_t count, DataType t, int root) = 0;
  /// recv on root = op over ranks of send (recv is ignored elsewhere).
  virtual void reduce(const void* send, void* recv, size_t count, DataType t, ReduceOp op, int root) = 0;
  /// Every one of `n` transfers at once (a ring exchange or a halo swap
  /// cannot deadlock). A pointer and a count, so a caller on a timed path
  /// passes a fixed array and nothing is allocated per call.
  virtual void send_recv(const PeerTransfer* transfers, size_t n, DataType t) = 0;
  /// send_recv in two halves, so work can run while the transfers travel:
  /// start returns once they are posted, and until send_recv_wait returns
  /// the buffers must be left alone. One grouped exchange at a time; other
  /// collectives may run in between. MPI posts non-blocking sends and
  /// receives; elsewhere the exchange completes in start and the wait
  /// returns at once.
  virtual void send_recv_start(const PeerTransfer* transfers, size_t n, DataType t) { send_recv(transfers, n, t); }
  /// Returns when the exchange send_recv_start posted is complete (at once
  /// when none is pending).
  virtual void send_recv_wait() {}
};

/// One process, rank 0 of 1: collectives are copies (nothing to exchange).
std::unique_ptr<Communicator> make_single_communicator();

/// The communicator of this process: MPI when a launcher started it
/// (mpirun: OMPI_COMM_WORLD_SIZE; srun --mpi=pmix: PMIX_RANK; PMI_SIZE),
/// single-rank otherwise. MPI is initialised here and finalised at exit; a
/// build without MPI started by a launcher with more than one rank throws
/// Error. srun without PMIx (SLURM_STEP_ID, no PMIX_RANK: --mpi=none or
/// pmi2): one task is single-rank, more throw UsageError (Open MPI cannot
/// join them), said by task 0.
std::unique_ptr<Communicator> make_world_communicator();

/// Every rank's `text`, in rank order, on every rank (host-blocking; for
/// small facts such as each rank's host and devices).
std::vector<std::string> all_gather_text(Communicator& comm, const std::string& text);

/// "rank R of N: " once a multi-rank communicator exists in this process,
/// "" otherwise: the prefix of every error line, so the user reads which
/// rank failed.
std::string rank_prefix();

/// This process's rank in the run (0 before, or without, a multi-rank
/// communicator).
int world_rank();

/// After an error on one rank of a multi-rank run: stop every rank within
/// a bounded time (MPI_Abort with `exit_code`). Returns when single-rank.
void abort_all_ranks(int exit_code);

}  // namespace perflab::collectives
