#include "workloads/dlrm/serve/serve_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <unordered_map>

#include "base/error.h"

namespace perflab::dlrm {

const char* placement_name(Placement p) {
  switch (p) {
    case Placement::kAllDevice:
      return "all_device";
    case Placement::kHost:
      return "host";
    case Placement::kHotCache:
      return "hot_cache";
  }
  return "?";
}

std::vector<ParamSpec> serve_params() {
  using T = ParamType;
  return {
      {"placement", T::kString, "all_device",
       "--mode inference: where the embedding tables live: all_device (GPU memory), host (pinned host memory, "
       "rows gathered by the GPU) or hot_cache (host tables behind a GPU cache of the hot rows); on the cpu "
       "backend all are host memory and differ in the work per request",
       {}, {}, {"all_device", "host", "hot_cache"}},
      {"cache_capacity", T::kString, "5%",
       "--mode inference, hot_cache: rows (250000), bytes (64MiB, 1GiB) or a share of all rows (5%)"},
      {"cache_policy", T::kString, "lfu",
       "--mode inference, hot_cache: static (filled once by frequency, never evicts), lru or lfu (learnt online)",
       {}, {}, {"static", "lru", "lfu"}},
      {"cache_warm", T::kString, "frequency",
       "--mode inference, hot_cache: frequency (prefilled with the training data's most frequent rows) or empty",
       {}, {}, {"frequency", "empty"}},
      {"update_rate", T::kFloat, "0",
       "--mode inference: embedding rows updated per second while serving (0: none)", 0, 1e7},
      {"serve_model", T::kString, "",
       "--mode inference: a checkpoint written by save_model to serve (default: the model initialised from the "
       "seed)"},
      {"save_model", T::kString, "",
       "training: write each seed's trained model to this path ({seed} is replaced by the seed)"},
  };
}

namespace {

/// cache_capacity's text as rows, or a one-line UsageError.
int64_t capacity_rows(const std::string& text, const ModelShape& shape) {
  const auto bad = [&](const std::string& why) {
    return UsageError(fmt::format(
        "dlrm: cache_capacity={}: {} (expected rows such as 250000, bytes such as 64MiB, or a share such as 5%)",
        text, why));
  };
  if (text.empty()) throw bad("empty");
  // Digits first, as every other parameter: no blanks, sign or hex, which strtod would take.
  if (!std::isdigit(static_cast<unsigned char>(text.front())) && text.front() != '.') throw bad("not a positive number");
  if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) throw bad("not a decimal number");
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit(end);
  if (errno == ERANGE && std::isinf(value)) throw bad("too large");
  if (end == text.c_str() || !std::isfinite(value) || value <= 0) throw bad("not a positive number");
  const double row_bytes = static_cast<double>(shape.embed_dim) * sizeof(float);
  double total_rows = 0;
  for (int64_t r : shape.table_sizes) total_rows += static_cast<double>(r);
  double rows = 0;
  if (unit.empty()) {
    if (value != std::floor(value)) throw bad("a row count must be a whole number");
    rows = value;
  } else if (unit == "%") {
    if (value > 100) throw bad("a share above 100%");
    rows = std::ceil(total_rows * value / 100.0);
  } else {
    static const std::vector<std::pair<std::string, double>> kUnits = {
        {"B", 1.0}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
    const auto u = std::find_if(kUnits.begin(), kUnits.end(), [&](const auto& k) { return k.first == unit; });
    if (u == kUnits.end()) throw bad(fmt::format("unknown unit '{}'", unit));
    rows = std::floor(value * u->second / row_bytes);
    if (rows < 1) throw bad(fmt::format("smaller than one row ({} bytes)", row_bytes));
  }
  if (rows > 9.0e15) throw bad("too large");
  return static_cast<int64_t>(rows);
}

}  // namespace

ServeOptions parse_serve_options(const ParamValues& p, const ModelShape& shape, bool serving) {
  if (!serving) {
    for (const ParamSpec& spec : serve_params()) {
      if (spec.name == "save_model") continue;
      const nlohmann::json& v = p.json().at(spec.name);
      const bool is_default = spec.type == ParamType::kString ? v.get<std::string>() == spec.default_value
                                                              : v.get<double>() == std::atof(spec.default_value.c_str());
      if (!is_default) {
        throw UsageError(fmt::format("dlrm: {} applies to --mode inference (serving), not to training", spec.name));
      }
    }
  } else if (!p.get_string("save_model").empty()) {
    throw UsageError("dlrm: save_model writes a trained model, in training; --mode inference serves one "
                     "(serve_model=PATH)");
  }
  ServeOptions o;
  const std::string placement = p.get_string("placement");
  o.placement = placement == "host"        ? Placement::kHost
                : placement == "hot_cache" ? Placement::kHotCache
                                           : Placement::kAllDevice;
  kernels::parse_cache_policy(p.get_string("cache_policy"), &o.policy);  // choices checked already
  o.warm = p.get_string("cache_warm") == "frequency";
  o.cache_capacity = p.get_string("cache_capacity");
  o.update_rate = p.get_float("update_rate");
  o.model_path = p.get_string("serve_model");
  if (o.placement != Placement::kHotCache) {
    // Said, not silently ignored (and no sweep point that differs in nothing that runs).
    for (const ParamSpec& spec : serve_params()) {
      if (spec.name.rfind("cache_", 0) == 0 && p.get_string(spec.name) != spec.default_value) {
        throw UsageError(fmt::format("dlrm: {} applies to placement=hot_cache, not {}", spec.name, placement));
      }
    }
  }
  if (o.placement == Placement::kHotCache) {
    o.cache_rows = capacity_rows(o.cache_capacity, shape);
    if (o.policy == kernels::CachePolicy::kStatic && !o.warm) {
      throw UsageError("dlrm: cache_policy=static never inserts, so cache_warm=empty would serve every row from host "
                       "memory; use cache_warm=frequency or an online policy (lru, lfu)");
    }
  }
  return o;
}

nlohmann::json serve_options_json(const ServeOptions& o, Backend backend) {
  nlohmann::json j;
  j["placement"] = placement_name(o.placement);
  j["placement_in_effect"] =
      backend == Backend::kCuda
          ? (o.placement == Placement::kAllDevice ? "every table in GPU memory"
             : o.placement == Placement::kHost    ? "every table in pinned host memory, rows gathered by the GPU"
                                                  : "host tables behind a GPU cache of the hot rows")
          : (o.placement == Placement::kAllDevice ? "cpu backend: the model's own tables (host memory)"
             : o.placement == Placement::kHost
                 ? "cpu backend: host memory, rows gathered by the engine (as the GPU gathers them)"
                 : "cpu backend: host memory behind the cache's lookups and inserts (its hit rates are a GPU "
                   "cache's; its bytes stay in host memory)");
  if (o.placement == Placement::kHotCache) {
    const kernels::CacheGeometry g = kernels::cache_geometry(o.cache_rows);
    j["cache"] = {{"capacity", o.cache_capacity}, {"rows", g.slots()},         {"sets", g.sets},
                  {"ways", g.ways},               {"policy", kernels::cache_policy_name(o.policy)},
                  {"warm", o.warm ? "frequency" : "empty"}};
  }
  j["update_rate_rows_per_s"] = o.update_rate;
  j["model"] = o.model_path.empty() ? "initialised from the seed" : o.model_path;
  return j;
}

std::vector<int64_t> table_row_offsets(const std::vector<int64_t>& table_sizes) {
  std::vector<int64_t> offsets(table_sizes.size(), 0);
  for (size_t t = 1; t < table_sizes.size(); ++t) offsets[t] = offsets[t - 1] + table_sizes[t - 1];
  return offsets;
}

RowFrequency most_frequent_rows(const Dataset& train, int64_t limit) {
  const std::vector<int64_t> offsets = table_row_offsets(train.table_sizes);
  const auto tables = static_cast<size_t>(train.num_tables());
  const int64_t total_rows = offsets.empty() ? 0 : offsets.back() + train.table_sizes.back();
  std::vector<std::pair<int64_t, uint64_t>> rows;  // (key, count) of every row looked up
  // A count per row when the tables are not too many rows (four bytes each,
  // one pass, no hashing; measured on the small preset: the engine's setup
  // 2.1 s -> 0.3 s); a hash map of the rows seen otherwise.
  constexpr int64_t kDenseRows = int64_t{1} << 26;
  if (total_rows <= kDenseRows) {
    std::vector<uint32_t> seen(static_cast<size_t>(total_rows), 0);
    for (size_t i = 0; i < train.categorical.size(); ++i) {
      uint32_t& c = seen[static_cast<size_t>(offsets[i % tables] + train.categorical[i])];
      if (c != UINT32_MAX) ++c;
    }
    for (size_t k = 0; k < seen.size(); ++k) {
      if (seen[k] > 0) rows.emplace_back(static_cast<int64_t>(k), seen[k]);
    }
  } else {
    std::unordered_map<int64_t, uint64_t> seen;
    for (size_t i = 0; i < train.categorical.size(); ++i) ++seen[offsets[i % tables] + train.categorical[i]];
    rows.assign(seen.begin(), seen.end());
  }
  const auto keep = static_cast<size_t>(std::min<int64_t>(limit, static_cast<int64_t>(rows.size())));
  const auto hotter = [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; };
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(keep), rows.end(), hotter);
  RowFrequency f;
  for (size_t i = 0; i < keep; ++i) {
    f.keys.push_back(rows[i].first);
    f.counts.push_back(rows[i].second);
  }
  return f;
}

}  // namespace perflab::dlrm
