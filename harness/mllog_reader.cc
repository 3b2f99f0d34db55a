// MLLOG lines -> events.
#include "harness/mllog_reader.h"

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/input_file.h"
#include "harness/json_text.h"

namespace perflab {
namespace {

/// Longer event lines are bad lines (MLPerf's are well under a KiB).
constexpr size_t kMaxLineBytes = size_t{1} << 20;

/// The event on one line, or the problem with it.
bool parse_line(std::string_view rest, size_t number, MllogEvent& e, std::string& problem) {
  if (rest.size() > kMaxLineBytes) {
    problem = fmt::format("a line longer than {} MiB", kMaxLineBytes >> 20);
    return false;
  }
  std::string why;
  const nlohmann::json j = parse_json_text(rest, &why);
  if (j.is_discarded() || !j.is_object()) {
    problem = j.is_discarded() && why != "not valid JSON" ? why : "not a JSON object after :::MLLOG";
    return false;
  }
  auto key = j.find("key");
  auto time = j.find("time_ms");
  auto value = j.find("value");
  auto metadata = j.find("metadata");
  if (key == j.end() || !key->is_string()) problem = "no string key";
  else if (time == j.end() || !time->is_number()) problem = "no numeric time_ms";
  else if (value == j.end()) problem = "no value";
  else if (metadata == j.end() || !metadata->is_object()) problem = "no metadata object";
  if (!problem.empty()) return false;
  e.key = key->get<std::string>();
  e.time_ms = time->get<double>();
  e.value = *value;
  e.metadata = *metadata;
  e.line = number;
  return true;
}

}  // namespace

const MllogEvent* MllogFile::first(const std::string& key) const {
  for (const MllogEvent& e : events) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

MllogFile parse_mllog(std::string_view text) {
  MllogFile f;
  size_t number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    const size_t at = line.find(kMllogToken);
    if (at == std::string_view::npos) continue;
    MllogEvent e;
    std::string problem;
    if (parse_line(line.substr(at + kMllogToken.size()), number, e, problem)) {
      f.events.push_back(std::move(e));
    } else if (f.bad_lines++ == 0) {
      f.first_problem = fmt::format("line {}: {}", number, problem);
    }
  }
  return f;
}

MllogFile read_mllog(const std::filesystem::path& path) {
  return parse_mllog(read_document(path));
}

}  // namespace perflab
