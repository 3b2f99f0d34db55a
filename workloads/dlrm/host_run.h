// A seed's run of the DLRM model on the host (the cpu backend), as the
// harness drives it: training steps, the mean loss, the held-out AUC.
#pragma once

#include <cstdint>
#include <memory>

#include "collectives/communicator.h"
#include "harness/workload.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/dlrm_benchmark.h"

namespace perflab::dlrm {

/// The whole model in this process on one rank, this rank's part of it
/// (sharded_model.h) on several. With several ranks every call is
/// collective. `setup`, `train`, `eval` and `comm` must outlive it.
std::unique_ptr<TrainableModel> make_host_run(const DlrmSetup& setup, const Dataset& train, const Dataset& eval,
                                              collectives::Communicator& comm, uint64_t seed);

}  // namespace perflab::dlrm
