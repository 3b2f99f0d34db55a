// The NCCL communicator: device buffers, one GPU per rank, every call
// enqueued on the stream given to set_stream (never a host synchronisation,
// so a step of NCCL calls can be captured in a CUDA graph). The
// communicator is non-blocking: a call returns once NCCL has put its work
// on the stream, which the first exchange with each peer waits for on the
// host while NCCL connects (bounded by NcclSetup::init_timeout_s, then an
// abort); the stream itself is never waited for. It is built
// from a host communicator (single or MPI) that carries NCCL's unique id
// from rank 0 to the others and keeps serving the host-side calls
// (barrier, all_reduce_host, broadcast_host).
//
// Host-only header: built when NCCL is found (PERFLAB_HAVE_NCCL).
#pragma once

#include <memory>
#include <string>

#include "collectives/communicator.h"

namespace perflab::collectives {

/// Environment set before the communicator is created (NCCL reads it once,
/// then): the SHARP toggle and the debug log file. Applied with setenv.
struct NcclSetup {
  int device = 0;                  ///< CUDA device of this rank.
  double init_timeout_s = 120;     ///< Give up (abort) when init takes longer.
};

/// Creates the communicator over `host`'s ranks (collective: every rank
/// calls it). Throws Error on failure, naming NCCL's reason; a rank that
/// does not arrive within init_timeout_s aborts the communicator.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& host, const NcclSetup& setup);

/// The GPU of this process, one per rank on its node: the launcher's local
/// rank (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK, SLURM's SLURM_LOCALID,
/// MPICH's MPI_LOCALRANKID), 0 when started alone.
int nccl_local_device();

/// The NCCL communicator of this process for one `--sharp` setting, and the
/// debug log it writes.
struct ProcessNccl {
  Communicator* comm = nullptr;  ///< Lives until the process exits.
  std::string debug_log;         ///< This process's file (NCCL_DEBUG_FILE expanded).
};

/// Made on first use per SHARP setting and shared by every run of the
/// process after it: NCCL reads its environment (the SHARP toggle,
/// collectives/nccl_log.h's sharp_environment; its debug log into
/// out_dir/nccl-debug.<host>.<pid>.log) once, at creation, and opens its
/// debug file once per process: the first call's out_dir holds the log of
/// every communicator after it (debug_log names that file; it accumulates
/// the choices of every run of the process). Collective over `host`'s ranks on first
/// use; one GPU per rank (nccl_local_device()).
ProcessNccl process_nccl_communicator(Communicator& host, bool sharp, const std::string& out_dir);

/// "2.28.9" (the library's version at run time).
std::string nccl_runtime_version();

/// Waits until `stream` (a cudaStream_t) is idle, polling NCCL's
/// asynchronous error state of `comm` (made by make_nccl_communicator):
/// on an NCCL error, or after `timeout_s`, the communicator is aborted and
/// Error names the cause, so a rank whose peer died does not hang.
void nccl_wait(Communicator& comm, void* stream, double timeout_s);

}  // namespace perflab::collectives
