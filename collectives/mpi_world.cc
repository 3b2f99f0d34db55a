// MPI's process-wide lifetime (see mpi_world.h).
#include "collectives/mpi_world.h"

#include <mpi.h>

#include <cstdlib>

namespace perflab::collectives {
namespace {

void finalize_at_exit() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

}  // namespace

void init_mpi_world() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  if (rc != MPI_SUCCESS) throw_mpi_error("MPI_Init_thread", rc);
  std::atexit(finalize_at_exit);
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

void abort_mpi_world(int exit_code) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized && !mpi_finalized()) MPI_Abort(MPI_COMM_WORLD, exit_code);
}

}  // namespace perflab::collectives
