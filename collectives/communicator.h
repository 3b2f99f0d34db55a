// The communicator a run is handed (RunContext::comm): which rank this
// process is, how many there are, and the host-side collectives the harness
// itself needs (a barrier, and reducing per-rank timings). The device
// collectives (all_reduce, all_gather, ... on MPI and NCCL) extend this
// interface with the collectives workload; today only the single-rank
// communicator exists.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace perflab::collectives {

/// Reduction of values across ranks.
enum class ReduceOp { kSum, kMax, kMin };

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// This process's rank, 0 .. size()-1.
  virtual int rank() const = 0;
  /// Ranks in the run.
  virtual int size() const = 0;
  /// "single", "mpi" or "nccl".
  virtual std::string kind() const = 0;
  /// Returns when every rank has called it.
  virtual void barrier() = 0;
  /// Element-wise reduction of `count` host doubles across ranks, in place,
  /// on every rank (the runner reduces per-iteration times with kMax).
  virtual void all_reduce_host(double* values, size_t count, ReduceOp op) = 0;
};

/// One process, rank 0 of 1: collectives are copies (nothing to exchange).
std::unique_ptr<Communicator> make_single_communicator();

}  // namespace perflab::collectives
