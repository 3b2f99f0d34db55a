// This process's communicator: which launcher started it, and how many
// ranks it started. mpirun (Open MPI) and srun (SLURM, through PMI/PMIx)
// both leave their marks in the environment; without one, a single rank.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collectives/communicator.h"
#include "base/error.h"
#if PERFLAB_HAVE_MPI
#include "collectives/mpi_world.h"
#endif

namespace perflab::collectives {
namespace {

std::string g_rank_prefix;
int g_rank = 0;

/// Ranks the launcher started (0: no launcher) and its name.
int launcher_ranks(std::string& launcher) {
  struct Mark {
    const char* variable;
    const char* launcher;
  };
  // srun that gave the tasks no PMIx (--mpi=none, or pmi2, which Open MPI
  // does not speak): judged before PMI_SIZE, which pmi2 sets.
  const bool srun = std::getenv("SLURM_STEP_ID") && std::getenv("SLURM_PROCID");
  if (srun && !std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMIX_RANK")) {
    launcher = "srun";
    const char* n = std::getenv("SLURM_STEP_NUM_TASKS");
    if (!n) n = std::getenv("SLURM_NTASKS");
    return n ? std::max(1, std::atoi(n)) : 1;
  }
  // Size variables first; PMIx only names the rank, the size then comes from MPI.
  static const Mark marks[] = {{"OMPI_COMM_WORLD_SIZE", "mpirun"}, {"PMI_SIZE", "a PMI launcher"},
                               {"PMIX_RANK", "a PMIx launcher"}};
  for (const Mark& m : marks) {
    if (const char* v = std::getenv(m.variable)) {
      launcher = m.launcher;
      const int n = std::atoi(v);
      return n > 0 ? n : 1;
    }
  }
  return 0;
}

}  // namespace

std::unique_ptr<Communicator> make_world_communicator() {
  std::string launcher;
  const int ranks = launcher_ranks(launcher);
  if (ranks == 0) return make_single_communicator();
  if (launcher == "srun") {
    // srun without PMIx (--mpi=none, SLURM's default; or pmi2) gives Open
    // MPI's ranks nothing to meet through. One task needs no MPI at all;
    // more are refused in one line, said by task 0.
    if (ranks == 1) return make_single_communicator();
    const char* task = std::getenv("SLURM_PROCID");
    g_rank = task ? std::atoi(task) : 0;
    throw UsageError(fmt::format(
        "srun started {} tasks without PMIx (--mpi=none or pmi2), so Open MPI cannot join them: use srun --mpi=pmix "
        "(or MpiDefault=pmix in slurm.conf), or mpirun inside salloc/sbatch",
        ranks));
  }
#if PERFLAB_HAVE_MPI
  auto comm = make_mpi_communicator();
  g_rank = comm->rank();
  if (comm->size() > 1) g_rank_prefix = fmt::format("rank {} of {}: ", comm->rank(), comm->size());
  return comm;
#else
  if (ranks > 1) {
    throw Error(fmt::format("started as {} ranks by {}, but this perflab was built without MPI; "
                            "install Open MPI (scripts/setup) and rebuild",
                            ranks, launcher));
  }
  return make_single_communicator();
#endif
}

std::string rank_prefix() { return g_rank_prefix; }

int world_rank() { return g_rank; }

std::vector<std::string> all_gather_text(Communicator& comm, const std::string& text) {
  std::vector<std::string> out(static_cast<size_t>(comm.size()));
  for (int r = 0; r < comm.size(); ++r) {
    std::string& s = out[static_cast<size_t>(r)];
    if (r == comm.rank()) s = text;
    uint64_t length = s.size();
    comm.broadcast_host(&length, sizeof length, r);
    s.resize(length);
    if (length > 0) comm.broadcast_host(s.data(), length, r);
  }
  return out;
}

void abort_all_ranks(int exit_code) {
#if PERFLAB_HAVE_MPI
  if (!g_rank_prefix.empty()) abort_mpi_world(exit_code);
#else
  (void)exit_code;
#endif
}

}  // namespace perflab::collectives
