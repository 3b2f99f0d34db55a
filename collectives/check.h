// Inputs whose every collective's output is exactly predictable on every
// rank, and the count of wrong elements (nccl-tests' #wrong). Rank r's
// element i is a small integer, v(r, i) in [-8, 8]: sums over up to 32
// ranks stay exact in bf16 (8 bits of mantissa), fp16, int32 and floats,
// so a correct collective matches bit for bit in every type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/bandwidth.h"
#include "collectives/communicator.h"

namespace perflab::collectives {

/// The value rank `rank` puts at element `index` of its input.
int input_value(int rank, size_t index);

/// What one operation is: collective, type, reduction, root, ranks.
struct CollectiveCall {
  Collective collective = Collective::kAllReduce;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  int rank = 0;
  int ranks = 1;
  CollectiveCounts counts;
};

/// Fills `bytes` (counts.send elements of call.dtype) with this rank's input.
void fill_input(const CollectiveCall& call, std::vector<unsigned char>& bytes);

/// The value element `index` of this rank's output must hold; false when
/// the element is not defined for this rank (a non-root's reduce output).
bool expected_output(const CollectiveCall& call, size_t index, double& value);

/// Wrong elements of this rank's output (counts.recv elements in `bytes`).
/// `first_wrong` gets the first wrong index (unchanged when none).
size_t count_wrong(const CollectiveCall& call, const unsigned char* bytes, size_t& first_wrong);

/// Element `index` of a buffer of `dtype`, as a double (exact).
double load_element(DataType dtype, const unsigned char* bytes, size_t index);
/// Stores `value` (an exactly representable integer) as element `index`.
void store_element(DataType dtype, unsigned char* bytes, size_t index, double value);

/// Where send and receive live. Out of place: two buffers. In place
/// (NCCL's convention): one buffer of max(send, recv) elements; all_gather
/// sends from this rank's block of it, reduce_scatter receives into this
/// rank's block, every other collective sends and receives at its start.
struct BufferLayout {
  bool shared = false;       ///< One buffer (in place).
  size_t send_elements = 0;  ///< Elements of the send buffer (the shared one when in place).
  size_t recv_elements = 0;  ///< Elements of the receive buffer (the shared one when in place).
  size_t send_offset = 0;    ///< In place: elements from the buffer's start to send.
  size_t recv_offset = 0;    ///< In place: elements from the buffer's start to recv.
};
BufferLayout buffer_layout(const CollectiveCall& call, bool in_place);

/// The one call the benchmark makes for `call`, on `comm`, out of place
/// (send, recv) or in place (recv inside send, or send inside recv, as
/// NCCL's convention for each collective says).
void run_collective(Communicator& comm, const CollectiveCall& call, const void* send, void* recv);

}  // namespace perflab::collectives
