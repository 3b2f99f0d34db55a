// Bounded JSON parsing (see json_text.h).
#include "harness/json_text.h"

#include <fmt/format.h>

namespace perflab {

int json_nesting_depth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > kMaxJsonDepth) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_json_text(std::string_view text, std::string* problem) {
  if (json_nesting_depth(text) > kMaxJsonDepth) {
    if (problem != nullptr) *problem = fmt::format("JSON nested more than {} levels deep", kMaxJsonDepth);
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() && problem != nullptr) *problem = "not valid JSON";
  return j;
}

}  // namespace perflab
