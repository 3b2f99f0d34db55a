// Measured points from CSV and JSON (reports/collectives_measurements.h).
#include "reports/collectives_measurements.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectives/byte_size.h"
#include "base/error.h"
#include "base/text.h"
#include "harness/input_file.h"
#include "harness/json_text.h"
#include "base/json_number.h"
#include "reports/collectives_table.h"
#include "reports/result_set.h"
#include "harness/result_model.h"

namespace perflab::reports {
using namespace perflab::collectives;  // the model's types and formatters
namespace {

constexpr std::array<const char*, 6> kColumns = {"op", "nranks", "nnodes", "bytes", "time_us", "algorithm"};
constexpr size_t kMaxPoints = 1000000;

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    const size_t length = comma == std::string_view::npos ? std::string_view::npos : comma - start;
    out.push_back(trim_space(line.substr(start, length)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

/// A point from its six fields as text; `where` prefixes every error.
MeasuredPoint make_point(const std::array<std::string, 6>& v, const std::string& where) {
  MeasuredPoint p;
  p.where = where;
  auto op = parse_coll_op(v[0]);
  if (!op) throw UsageError(fmt::format("{}: op '{}' is not all_reduce, all_gather, reduce_scatter or broadcast", where, v[0]));
  p.op = *op;
  auto to_int = [&](const std::string& s, const char* what) {
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno != 0 || x < 1 || x > (1 << 20)) {
      throw UsageError(fmt::format("{}: {} '{}' is not an integer in [1, 1048576]", where, what, s));
    }
    return static_cast<int>(x);
  };
  p.nranks = to_int(v[1], "nranks");
  p.nnodes = to_int(v[2], "nnodes");
  try {
    p.bytes = parse_byte_size(v[3], "bytes");
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", where, e.what()));
  }
  char* end = nullptr;
  p.time_us = std::strtod(v[4].c_str(), &end);
  if (v[4].empty() || *end != '\0' || !std::isfinite(p.time_us) || p.time_us <= 0) {
    throw UsageError(fmt::format("{}: time_us '{}' is not a positive number", where, v[4]));
  }
  auto algo = parse_model_algo(v[5]);
  if (!algo) throw UsageError(fmt::format("{}: algorithm '{}' is not one of NCCL's (ring, tree, collnet_direct, collnet_chain, nvls, nvls_tree)", where, v[5]));
  p.algo = *algo;
  return p;
}

}  // namespace

std::vector<MeasuredPoint> parse_measurements_csv(std::string_view text, const std::string& name) {
  std::vector<MeasuredPoint> points;
  std::array<int, 6> column{};
  bool have_header = false;
  size_t ncols = 0;
  int line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    const size_t length = nl == std::string_view::npos ? std::string_view::npos : nl - start;
    std::string_view line = trim_space(text.substr(start, length));
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    auto fields = split_fields(line);
    const std::string where = fmt::format("{}:{}", name, line_no);
    if (!have_header) {
      for (size_t k = 0; k < kColumns.size(); ++k) {
        column[k] = -1;
        for (size_t i = 0; i < fields.size(); ++i) {
          if (fields[i] == kColumns[k]) column[k] = static_cast<int>(i);
        }
        if (column[k] < 0) {
          throw UsageError(fmt::format("{}: the header has no column '{}' (it needs op, nranks, nnodes, bytes, "
                                       "time_us, algorithm)",
                                       where, kColumns[k]));
        }
      }
      ncols = fields.size();
      have_header = true;
      continue;
    }
    if (fields.size() != ncols) {
      throw UsageError(fmt::format("{}: {} fields, the header has {}", where, fields.size(), ncols));
    }
    std::array<std::string, 6> v;
    for (size_t k = 0; k < v.size(); ++k) v[k] = std::string(fields[static_cast<size_t>(column[k])]);
    if (points.size() >= kMaxPoints) throw UsageError(fmt::format("{}: more than {} points", where, kMaxPoints));
    points.push_back(make_point(v, where));
  }
  if (!have_header) throw UsageError(fmt::format("{}: no header line (op,nranks,nnodes,bytes,time_us,algorithm)", name));
  return points;
}

/// A collectives benchmark's result.json: one point per placement measured,
/// at nccl-tests' size, with the algorithm NCCL logged for it.
static std::vector<MeasuredPoint> points_from_result(const nlohmann::json& doc, const std::string& name) {
  const Result view = parse_result(doc, name);
  if (!is_collectives_result(view)) {
    throw UsageError(fmt::format("{}: a perflab result of '{}', not of the collectives benchmark", name,
                                 view.spec.workload));
  }
  const std::vector<std::string> hosts = view.rank_hosts();
  std::vector<MeasuredPoint> points;
  for (const CollectivesRow& row : collectives_rows({view})) {
    if (row.communicator != "nccl") {
      throw UsageError(fmt::format("{}: measured on the {} communicator; the model is NCCL's (run with --backend cuda)",
                                   name, row.communicator));
    }
    for (const auto* m : {&row.out_of_place, &row.in_place}) {
      if (!*m) continue;
      const std::string algo = (*m)->algorithm.substr(0, (*m)->algorithm.find('/'));
      points.push_back(make_point({row.collective, std::to_string(row.ranks), std::to_string(std::max<size_t>(1, hosts.size())),
                                   std::to_string(row.size_bytes), fmt::format("{}", (*m)->time_us), algo},
                                  fmt::format("{} ({} B)", name, row.size_bytes)));
    }
  }
  return points;
}

std::vector<MeasuredPoint> parse_measurements_json(std::string_view text, const std::string& name) {
  std::string problem;
  nlohmann::json doc = parse_json_text(text, &problem);
  if (doc.is_discarded()) throw UsageError(fmt::format("{}: {}", name, problem));
  if (doc.is_object() && doc.contains("schema_version")) return points_from_result(doc, name);
  if (!doc.is_object() || !doc.contains("points") || !doc["points"].is_array()) {
    throw UsageError(fmt::format("{}: expected {{\"points\": [...]}}", name));
  }
  std::vector<MeasuredPoint> points;
  size_t i = 0;
  for (const nlohmann::json& item : doc["points"]) {
    const std::string where = fmt::format("{}: points[{}]", name, i++);
    if (!item.is_object()) throw UsageError(where + ": not an object");
    std::array<std::string, 6> v;
    for (size_t k = 0; k < kColumns.size(); ++k) {
      auto it = item.find(kColumns[k]);
      if (it == item.end()) throw UsageError(fmt::format("{}: no '{}'", where, kColumns[k]));
      if (it->is_string()) {
        v[k] = it->get<std::string>();
      } else if (auto n = json_number<uint64_t>(*it)) {
        v[k] = std::to_string(*n);
      } else if (auto d = json_number<double>(*it)) {
        v[k] = fmt::format("{:.17g}", *d);
      } else {
        throw UsageError(fmt::format("{}: '{}' is neither a string nor a number", where, kColumns[k]));
      }
    }
    if (points.size() >= kMaxPoints) throw UsageError(fmt::format("{}: more than {} points", where, kMaxPoints));
    points.push_back(make_point(v, where));
  }
  return points;
}

std::vector<MeasuredPoint> load_measurements(const std::filesystem::path& path) {
  if (std::filesystem::is_directory(path)) {  // a run or sweep folder: every result.json in it
    std::vector<MeasuredPoint> points;
    const ResultSet set = load_result_set({path});
    if (set.results.empty()) throw UsageError(fmt::format("{}: no result.json in the folder", path.string()));
    for (const auto& loaded : set.results) {
      for (auto& p : parse_measurements_json(read_document(loaded.path), loaded.path.string())) {
        points.push_back(std::move(p));
      }
    }
    return points;
  }
  const std::string s = read_document(path);
  std::string_view body = trim_space(s);
  if (!body.empty() && (body.front() == '{' || body.front() == '[')) return parse_measurements_json(s, path.string());
  return parse_measurements_csv(s, path.string());
}

}  // namespace perflab::reports
