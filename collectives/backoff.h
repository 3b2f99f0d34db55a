// Waiting on another party (NCCL's own thread, a stream) without adding
// latency or burning a core: yield while the wait is young, so a call that
// completes in microseconds is seen at once, then sleep in doubling steps
// up to a cap, so a wait of milliseconds (a peer connecting) costs no CPU.
// The schedule is a pure function of the time waited, tested on the CPU.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace perflab::collectives {

class Backoff {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::microseconds kSpin{200};    ///< Yield only, for this long.
  static constexpr std::chrono::microseconds kFirstSleep{20};
  static constexpr std::chrono::microseconds kMaxSleep{1000};

  /// The pause after waiting `waited`: zero (a yield) inside the spin
  /// window, then kFirstSleep, doubling on each call, up to kMaxSleep.
  std::chrono::microseconds next_pause(Clock::duration waited) {
    if (waited < kSpin) return std::chrono::microseconds(0);
    const std::chrono::microseconds pause = sleep_;
    sleep_ = std::min(sleep_ * 2, kMaxSleep);
    return pause;
  }

  /// Yields or sleeps, by the time since this Backoff was made.
  void pause() {
    const std::chrono::microseconds p = next_pause(Clock::now() - start_);
    if (p.count() == 0) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(p);
    }
  }

 private:
  Clock::time_point start_ = Clock::now();
  std::chrono::microseconds sleep_ = kFirstSleep;
};

}  // namespace perflab::collectives
