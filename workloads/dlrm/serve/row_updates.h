// Incremental embedding-row updates arriving while DLRM serves (issue 28):
// a producer thread queues updates at a fixed rate (rows per second) while
// a LoadGen test runs; the serving engine applies every queued update
// before it serves its next batch, to its tables and to a cached copy.
// Bound, tested: an update queued before a batch starts is in that batch's
// predictions. Its staleness is the wait for the next batch to start: the
// batch in progress, then (Server) the next query's arrival and the
// batcher's wait. Each update is stamped with the time it was due, so a
// producer that fell behind does not hide its lateness.
//
// An update is a key (global row, drawn as the served samples draw them:
// a random sample's id in a random table, so hot rows are updated more
// often) and a sequence number; the change it makes is a function of
// (seed, sequence, column) alone (update_delta), so a test can recompute it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace perflab::dlrm {

struct PendingUpdate {
  int64_t key = 0;
  uint64_t sequence = 0;
  std::chrono::steady_clock::time_point queued;
};

/// The change update `sequence` adds to column `column` of its row: uniform
/// in [-0.01, 0.01), from (seed, sequence, column).
float update_delta(uint64_t seed, uint64_t sequence, int64_t column);

/// Error, one line, when `u`'s key is outside the tables' `total_rows`.
void check_update_key(const PendingUpdate& u, int64_t total_rows);

/// Applies `u` to its row (`row`, dim floats): adds update_delta per column
/// and, when the tables hold bf16 values, rounds the row to bf16 as they
/// do. Returns how long the update waited since it was due, in seconds.
double apply_update(const PendingUpdate& u, uint64_t seed, float* row, int64_t dim, bool bf16);

class RowUpdateStream {
 public:
  /// `pick(draw)` maps a uniform 64-bit draw to the key to update.
  RowUpdateStream(double rows_per_second, uint64_t seed, std::function<int64_t(uint64_t)> pick);
  ~RowUpdateStream();
  RowUpdateStream(const RowUpdateStream&) = delete;
  RowUpdateStream& operator=(const RowUpdateStream&) = delete;

  /// Starts queueing (rows_per_second x elapsed time, topped up every
  /// millisecond); stop() ends it. Both idempotent.
  void start();
  void stop();
  /// Moves the queued updates into `out` (cleared first), oldest first.
  void take(std::vector<PendingUpdate>& out);
  /// Updates queued and not taken (after stop: those no batch applied).
  size_t queued();
  /// Queues one update now (tests; the thread uses it too).
  void push(int64_t key);

  uint64_t seed() const { return seed_; }
  double rate() const { return rate_; }

 private:
  void run();

  double rate_ = 0;
  uint64_t seed_ = 0;
  std::function<int64_t(uint64_t)> pick_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<PendingUpdate> queue_;
  uint64_t next_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace perflab::dlrm
