// Toggle names, parsing and reporting.
#include "harness/toggles.h"

#include <cctype>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab {

const char* toggle_flag(Toggle t) {
  switch (t) {
    case Toggle::kCudaGraphs: return "cuda-graphs";
    case Toggle::kSharp: return "sharp";
    case Toggle::kSyncFree: return "sync-free";
    case Toggle::kFused: return "fused";
  }
  return "?";
}

const char* toggle_key(Toggle t) {
  switch (t) {
    case Toggle::kCudaGraphs: return "cuda_graphs";
    case Toggle::kSharp: return "sharp";
    case Toggle::kSyncFree: return "sync_free";
    case Toggle::kFused: return "fused";
  }
  return "?";
}

const char* toggle_help(Toggle t) {
  switch (t) {
    case Toggle::kCudaGraphs: return "capture the training iteration once as a CUDA graph and replay it";
    case Toggle::kSharp: return "SHARP in-network reductions for NCCL collectives (CollNet)";
    case Toggle::kSyncFree: return "no host synchronisation inside the iteration (fixed sizes, masks, device counts)";
    case Toggle::kFused: return "fused kernels (fused GEMM epilogues, fused loss/joint kernels)";
  }
  return "?";
}

std::string ToggleSet::describe_differences() const {
  std::string out;
  for (Toggle t : kAllToggles) {
    const ToggleState& s = (*this)[t];
    if (s.requested == s.in_effect) continue;
    out += fmt::format("--{}: requested: {}, in effect: {} ({})\n", toggle_flag(t),
                       s.requested ? "on" : "off", s.in_effect ? "on" : "off", s.reason);
  }
  return out;
}

bool parse_on_off(const std::string& flag, const std::string& text) {
  // One documented set, in any case: on and off (true, 1 and '' meant on
  // while ON was refused).
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "on") return true;
  if (lower == "off") return false;
  throw UsageError(fmt::format("--{}: '{}' is not a valid value; valid values: on, off", flag, text));
}

}  // namespace perflab
