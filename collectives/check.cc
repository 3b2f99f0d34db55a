// Predictable inputs and the wrong-element count (see check.h).
#include "collectives/check.h"

#include <algorithm>
#include <cstring>

#include "kernels/half_precision.h"

namespace perflab::collectives {
namespace {

double reduce_over_ranks(const CollectiveCall& call, size_t index) {
  double acc = input_value(0, index);
  for (int r = 1; r < call.ranks; ++r) {
    const double v = input_value(r, index);
    switch (call.op) {
      case ReduceOp::kSum: acc += v; break;
      case ReduceOp::kMax: acc = std::max(acc, v); break;
      case ReduceOp::kMin: acc = std::min(acc, v); break;
    }
  }
  return acc;
}

}  // namespace

int input_value(int rank, size_t index) {
  return static_cast<int>((index * 131 + static_cast<size_t>(rank) * 71) % 17) - 8;
}

double load_element(DataType dtype, const unsigned char* bytes, size_t index) {
  switch (dtype) {
    case DataType::kFloat32: {
      float x;
      std::memcpy(&x, bytes + 4 * index, 4);
      return x;
    }
    case DataType::kFloat64: {
      double x;
      std::memcpy(&x, bytes + 8 * index, 8);
      return x;
    }
    case DataType::kInt32: {
      int32_t x;
      std::memcpy(&x, bytes + 4 * index, 4);
      return x;
    }
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * index, 2);
      return dtype == DataType::kFloat16 ? from_fp16(h) : from_bf16(h);
    }
  }
  return 0;
}

void store_element(DataType dtype, unsigned char* bytes, size_t index, double value) {
  switch (dtype) {
    case DataType::kFloat32: {
      const auto x = static_cast<float>(value);
      std::memcpy(bytes + 4 * index, &x, 4);
      return;
    }
    case DataType::kFloat64: std::memcpy(bytes + 8 * index, &value, 8); return;
    case DataType::kInt32: {
      const auto x = static_cast<int32_t>(value);
      std::memcpy(bytes + 4 * index, &x, 4);
      return;
    }
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      const auto f = static_cast<float>(value);
      const uint16_t h = dtype == DataType::kFloat16 ? to_fp16(f) : to_bf16(f);
      std::memcpy(bytes + 2 * index, &h, 2);
      return;
    }
  }
}

void fill_input(const CollectiveCall& call, std::vector<unsigned char>& bytes) {
  bytes.assign(call.counts.send * dtype_size(call.dtype), 0);
  for (size_t i = 0; i < call.counts.send; ++i) store_element(call.dtype, bytes.data(), i, input_value(call.rank, i));
}

bool expected_output(const CollectiveCall& call, size_t index, double& value) {
  const size_t block = call.counts.param;
  const int n = call.ranks;
  switch (call.collective) {
    case Collective::kAllReduce: value = reduce_over_ranks(call, index); return true;
    case Collective::kReduce:
      if (call.rank != call.root) return false;
      value = reduce_over_ranks(call, index);
      return true;
    case Collective::kBroadcast: value = input_value(call.root, index); return true;
    case Collective::kAllGather: value = input_value(static_cast<int>(index / block), index % block); return true;
    case Collective::kReduceScatter:
      value = reduce_over_ranks(call, static_cast<size_t>(call.rank) * block + index);
      return true;
    case Collective::kAllToAll:
      // Block j came from rank j: its block number `rank`.
      value = input_value(static_cast<int>(index / block), static_cast<size_t>(call.rank) * block + index % block);
      return true;
    case Collective::kSendRecv: value = input_value((call.rank - 1 + n) % n, index); return true;
  }
  return false;
}

size_t count_wrong(const CollectiveCall& call, const unsigned char* bytes, size_t& first_wrong) {
  size_t wrong = 0;
  for (size_t i = 0; i < call.counts.recv; ++i) {
    double want = 0;
    if (!expected_output(call, i, want)) continue;
    if (load_element(call.dtype, bytes, i) != want) {
      if (wrong == 0) first_wrong = i;
      ++wrong;
    }
  }
  return wrong;
}

BufferLayout buffer_layout(const CollectiveCall& call, bool in_place) {
  BufferLayout b;
  if (!in_place) {
    b.send_elements = call.counts.send;
    b.recv_elements = call.counts.recv;
    return b;
  }
  b.shared = true;
  b.send_elements = b.recv_elements = std::max(call.counts.send, call.counts.recv);
  const size_t block = static_cast<size_t>(call.rank) * call.counts.param;
  if (call.collective == Collective::kAllGather) b.send_offset = block;
  if (call.collective == Collective::kReduceScatter) b.recv_offset = block;
  return b;
}

void run_collective(Communicator& comm, const CollectiveCall& call, const void* send, void* recv) {
  const size_t count = call.counts.param;
  switch (call.collective) {
    case Collective::kAllReduce: comm.all_reduce(send, recv, count, call.dtype, call.op); return;
    case Collective::kAllGather: comm.all_gather(send, recv, count, call.dtype); return;
    case Collective::kReduceScatter: comm.reduce_scatter(send, recv, count, call.dtype, call.op); return;
    case Collective::kAllToAll: comm.all_to_all(send, recv, count, call.dtype); return;
    case Collective::kBroadcast: comm.broadcast(send, recv, count, call.dtype, call.root); return;
    case Collective::kReduce: comm.reduce(send, recv, count, call.dtype, call.op, call.root); return;
    case Collective::kSendRecv: {
      const int n = call.ranks;
      const int next = (call.rank + 1) % n, prev = (call.rank - 1 + n) % n;
      // A ring: to the next rank, from the previous one (nccl-tests' sendrecv);
      // one transfer when they are the same rank (two ranks, or one).
      const PeerTransfer ring[2] = {{next, send, next == prev ? recv : nullptr, count},
                                    {prev, nullptr, recv, count}};
      comm.send_recv(ring, next == prev ? 1 : 2, call.dtype);
      return;
    }
  }
}

}  // namespace perflab::collectives
