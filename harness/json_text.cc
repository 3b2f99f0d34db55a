// Bounded JSON parsing (see json_text.h).
#include "harness/json_text.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

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

namespace {

/// Thrown from the parser's callback to stop at a repeated key.
struct RepeatedKey {
  std::string key;
};

nlohmann::json refused(std::string* problem, std::string why) {
  if (problem != nullptr) *problem = std::move(why);
  return nlohmann::json(nlohmann::json::value_t::discarded);
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, std::string* problem) {
  if (json_nesting_depth(text) > kMaxJsonDepth) {
    return refused(problem, fmt::format("JSON nested more than {} levels deep", kMaxJsonDepth));
  }
  // nlohmann stops at a NUL byte and takes what came before as the whole
  // document (a result with NULs after it was accepted).
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return refused(problem, fmt::format("not valid JSON (a NUL byte at offset {})", nul));
  }
  // nlohmann keeps the last of repeated keys, so a "schema_version": 99 put
  // first passed as the version written last: a repeated key is refused.
  std::vector<std::set<std::string>> keys;  // one set per open object
  const auto check_keys = [&keys](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      keys.emplace_back();
    } else if (event == Event::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == Event::key && !keys.empty()) {
      std::string key = parsed.get<std::string>();
      if (!keys.back().insert(key).second) throw RepeatedKey{std::move(key)};
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end(), check_keys, /*allow_exceptions=*/false);
  } catch (const RepeatedKey& repeated) {
    return refused(problem, fmt::format("not valid JSON (the key \"{}\" appears twice in one object)", repeated.key));
  }
  if (j.is_discarded() && problem != nullptr) *problem = "not valid JSON";
  return j;
}

}  // namespace perflab
