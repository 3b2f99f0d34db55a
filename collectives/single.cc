// The single-rank communicator: rank 0 of 1. Every collective's result is
// the one rank's input, so each is a copy (none when in place).
#include <cstring>

#include <fmt/format.h>

#include "collectives/communicator.h"
#include "base/error.h"

namespace perflab::collectives {
namespace {

void copy(const void* send, void* recv, size_t count, DataType t) {
  if (send != recv && count > 0) std::memmove(recv, send, count * dtype_size(t));
}

void check_root(int root) {
  if (root != 0) throw UsageError(fmt::format("root {} is not a rank of a single-rank run", root));
}

class SingleCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string kind() const override { return "single"; }
  void barrier() override {}
  /// With one rank every reduction is the identity: the values stay.
  void all_reduce_host(double* /*values*/, size_t /*count*/, ReduceOp /*op*/) override {}
  void broadcast_host(void* /*data*/, size_t /*bytes*/, int root) override { check_root(root); }

  void all_reduce(const void* send, void* recv, size_t count, DataType t, ReduceOp /*op*/) override {
    copy(send, recv, count, t);
  }
  void all_gather(const void* send, void* recv, size_t count, DataType t) override { copy(send, recv, count, t); }
  void reduce_scatter(const void* send, void* recv, size_t count, DataType t, ReduceOp /*op*/) override {
    copy(send, recv, count, t);
  }
  void all_to_all(const void* send, void* recv, size_t count, DataType t) override { copy(send, recv, count, t); }
  void broadcast(const void* send, void* recv, size_t count, DataType t, int root) override {
    check_root(root);
    copy(send, recv, count, t);
  }
  void reduce(const void* send, void* recv, size_t count, DataType t, ReduceOp /*op*/, int root) override {
    check_root(root);
    copy(send, recv, count, t);
  }
  /// Only transfers to itself exist with one rank.
  void send_recv(const PeerTransfer* transfers, size_t n, DataType t) override {
    for (const PeerTransfer* x = transfers; x != transfers + n; ++x) {
      if (x->peer != 0) throw UsageError(fmt::format("peer {} is not a rank of a single-rank run", x->peer));
      if (x->send && x->recv) copy(x->send, x->recv, x->count, t);
    }
  }
};

}  // namespace

std::unique_ptr<Communicator> make_single_communicator() {
  return std::make_unique<SingleCommunicator>();
}

}  // namespace perflab::collectives
