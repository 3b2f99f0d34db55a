// Reads MLPerf training logs (:::MLLOG lines, as written by perflab, the
// MLCommons reference implementations and submitters): outside input, so
// it never throws on content. A line counts when it holds ":::MLLOG "
// (anything before it, such as a rank prefix, is dropped) followed by one
// JSON object with a string `key`, a numeric `time_ms`, a `value` and an
// object `metadata`; other ":::MLLOG " lines are counted as bad, as the
// mlperf_logging parser fails them.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace perflab {

/// What marks an MLLOG line (anything before it is dropped).
inline constexpr std::string_view kMllogToken = ":::MLLOG ";

struct MllogEvent {
  std::string key;
  double time_ms = 0;
  nlohmann::json value;
  nlohmann::json metadata = nlohmann::json::object();
  size_t line = 0;  ///< 1-based line number in the file.
};

struct MllogFile {
  std::vector<MllogEvent> events;
  size_t bad_lines = 0;
  std::string first_problem;  ///< "line N: what", for the first bad line.

  /// The first event with `key`, or nullptr.
  const MllogEvent* first(const std::string& key) const;
};

/// Parses MLLOG text.
MllogFile parse_mllog(std::string_view text);

/// Reads and parses a file; UsageError "PATH: cannot read" when it cannot be read.
MllogFile read_mllog(const std::filesystem::path& path);

}  // namespace perflab
