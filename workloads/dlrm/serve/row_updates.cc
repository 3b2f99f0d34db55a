#include "workloads/dlrm/serve/row_updates.h"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "base/counter_random.h"
#include "base/error.h"
#include "kernels/cpu/bf16.h"

namespace perflab::dlrm {

namespace {
constexpr uint64_t kDeltaStream = 0x0u;   // update_delta's draws
constexpr uint64_t kPickStream = 0x1u;    // which rows the thread updates
}  // namespace

float update_delta(uint64_t seed, uint64_t sequence, int64_t column) {
  const double u = counter_uniform(splitmix64(seed) ^ sequence, kDeltaStream, static_cast<uint64_t>(column));
  return static_cast<float>(0.02 * u - 0.01);
}

void check_update_key(const PendingUpdate& u, int64_t total_rows) {
  if (u.key < 0 || u.key >= total_rows) {
    throw Error(fmt::format("dlrm serving: an update of row {}, outside the {} rows of the tables", u.key, total_rows));
  }
}

double apply_update(const PendingUpdate& u, uint64_t seed, float* row, int64_t dim, bool bf16) {
  for (int64_t c = 0; c < dim; ++c) row[c] += update_delta(seed, u.sequence, c);
  if (bf16) kernels::cpu::round_to_bf16(dim, row, row);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - u.queued).count();
}

RowUpdateStream::RowUpdateStream(double rows_per_second, uint64_t seed, std::function<int64_t(uint64_t)> pick)
    : rate_(rows_per_second), seed_(seed), pick_(std::move(pick)) {}

RowUpdateStream::~RowUpdateStream() { stop(); }

void RowUpdateStream::start() {
  if (thread_.joinable() || rate_ <= 0) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void RowUpdateStream::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RowUpdateStream::take(std::vector<PendingUpdate>& out) {
  out.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  out.swap(queue_);
}

size_t RowUpdateStream::queued() {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

void RowUpdateStream::push(int64_t key) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back({key, next_++, std::chrono::steady_clock::now()});
}

void RowUpdateStream::run() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  uint64_t queued = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    const auto due = static_cast<uint64_t>(std::floor(rate_ * elapsed));
    for (; queued < due; ++queued) {
      // Stamped when it was due, not when this thread got to it.
      const auto at = t0 + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(static_cast<double>(queued) / rate_));
      queue_.push_back({pick_(counter_bits(seed_, kPickStream, queued)), next_++, at});
    }
    wake_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

}  // namespace perflab::dlrm
