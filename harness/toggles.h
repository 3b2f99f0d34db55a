// Optimization toggles from MLPerf practice. Each run records every toggle
// as requested and as in effect, with the reason when they differ.
#pragma once

#include <array>
#include <string>

#include <nlohmann/json.hpp>

namespace perflab {

enum class Toggle { kCudaGraphs, kSharp, kSyncFree, kFused };
inline constexpr std::array<Toggle, 4> kAllToggles = {Toggle::kCudaGraphs, Toggle::kSharp,
                                                      Toggle::kSyncFree, Toggle::kFused};

/// Flag name without dashes: "cuda-graphs", "sharp", "sync-free", "fused".
const char* toggle_flag(Toggle t);
/// Key in results and logs: "cuda_graphs", "sharp", "sync_free", "fused".
const char* toggle_key(Toggle t);
/// One line saying what the toggle does.
const char* toggle_help(Toggle t);

struct ToggleState {
  bool requested = false;
  bool in_effect = false;
  std::string reason;  ///< Why requested but not in effect (empty otherwise).
};

/// All four toggles, indexed by Toggle.
class ToggleSet {
 public:
  ToggleState& operator[](Toggle t) { return states_[static_cast<size_t>(t)]; }
  const ToggleState& operator[](Toggle t) const { return states_[static_cast<size_t>(t)]; }
  /// "requested: on, in effect: off (reason)" lines for toggles that differ.
  std::string describe_differences() const;

 private:
  std::array<ToggleState, 4> states_{};
};

/// Parses "on"/"off" (also true/false/1/0); throws UsageError otherwise.
bool parse_on_off(const std::string& flag, const std::string& text);

}  // namespace perflab
