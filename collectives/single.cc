// The single-rank communicator: rank 0 of 1.
#include "collectives/communicator.h"

namespace perflab::collectives {
namespace {

class SingleCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string kind() const override { return "single"; }
  void barrier() override {}
  /// With one rank every reduction is the identity: the values stay.
  void all_reduce_host(double* /*values*/, size_t /*count*/, ReduceOp /*op*/) override {}
};

}  // namespace

std::unique_ptr<Communicator> make_single_communicator() {
  return std::make_unique<SingleCommunicator>();
}

}  // namespace perflab::collectives
