// MPI's process-wide state, used by the MPI communicator and the launcher
// detection (collectives/world.cc): initialised once (MPI_THREAD_FUNNELED:
// only the main thread calls MPI), finalised at exit, aborted on error.
// Only built when MPI is found (PERFLAB_HAVE_MPI).
#pragma once

#include <memory>

#include "collectives/communicator.h"

namespace perflab::collectives {

/// MPI_Init_thread once per process, MPI_Finalize registered at exit.
void init_mpi_world();
/// Whether MPI_Finalize has run (handles must not be freed after it).
bool mpi_finalized();
/// MPI_Abort(MPI_COMM_WORLD, code) when MPI is initialised and not finalised.
void abort_mpi_world(int exit_code);
/// The communicator over every rank the launcher started.
std::unique_ptr<Communicator> make_mpi_communicator();
/// Throws Error "MPI: <call> failed: <MPI's description of rc>".
[[noreturn]] void throw_mpi_error(const char* call, int rc);

}  // namespace perflab::collectives
