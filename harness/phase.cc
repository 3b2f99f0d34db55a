// Phases as NVTX ranges and, while a recording is active, as range records
// (see phase.h).
#include "harness/phase.h"

#include <utility>

#if PERFLAB_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace perflab {
namespace {

/// The recording active on this thread: phases are marked from the thread
/// that drives the step, and recordings nest (the previous one is restored).
thread_local PhaseRecording* active = nullptr;

}  // namespace

ScopedPhase::ScopedPhase(const char* name) {
#if PERFLAB_HAVE_NVTX
  nvtxRangePushA(name);
#endif
  if (active) {
    active->push(name);
    recording_ = active;
  }
}

ScopedPhase::~ScopedPhase() {
#if PERFLAB_HAVE_NVTX
  nvtxRangePop();
#endif
  // Closed in the recording it was opened in, if that one is still active.
  if (recording_ != nullptr && recording_ == active) recording_->pop();
}

PhaseRecording::PhaseRecording(std::function<uint64_t()> clock)
    : clock_(std::move(clock)), previous_(active) {
  active = this;
}

PhaseRecording::~PhaseRecording() { active = previous_; }

void PhaseRecording::push(const char* name) {
  ActivityRecord r;
  r.kind = ActivityKind::kRange;
  r.name = name;
  r.start_ns = clock_();
  r.depth = static_cast<int>(open_.size());
  open_.push_back(std::move(r));
}

void PhaseRecording::pop() {
  if (open_.empty()) return;  // opened before this recording began
  ActivityRecord r = std::move(open_.back());
  open_.pop_back();
  r.end_ns = clock_();
  closed_.push_back(std::move(r));
}

std::vector<ActivityRecord> PhaseRecording::take() { return std::exchange(closed_, {}); }

}  // namespace perflab
