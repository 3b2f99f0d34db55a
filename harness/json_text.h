// JSON text perflab did not necessarily write (results, MLPerf logs, RCP
// files, sweep state, the history database's cached state), parsed with a
// bound on nesting: nlohmann's parser is iterative, but copying, printing
// and destroying a value recurse once per level, so a 300 KB line nested
// 50,000 levels overflowed the stack in every reader. No document perflab
// reads comes near the bound.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perflab {

/// Arrays and objects nested deeper than this are refused.
constexpr int kMaxJsonDepth = 100;

/// The deepest nesting of arrays and objects in `text` (brackets outside
/// strings; 0 for a scalar). Stops counting past kMaxJsonDepth + 1.
int json_nesting_depth(std::string_view text);

/// `text` parsed without exceptions: the value, or a discarded value (see
/// nlohmann::json::is_discarded) with `problem` set to why: "not valid
/// JSON", "JSON nested more than 100 levels deep", or "not valid JSON (...)"
/// for a NUL byte or a key repeated in one object (nlohmann would stop at
/// the NUL, and keep the last of the repeated keys).
nlohmann::json parse_json_text(std::string_view text, std::string* problem = nullptr);

}  // namespace perflab
