// E-divisive change points, one append at a time.
#include "reports/change_points.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "base/error.h"
#include "base/json_number.h"
#include "harness/stats.h"
#include "harness/sweep.h"

namespace perflab::reports {
namespace {

/// A stable digest of values[0, n) (FNV-1a of their bytes, as hex).
std::string digest_of(const double* values, size_t n) {
  return stable_hash(std::string(reinterpret_cast<const char*>(values), n * sizeof(double)));
}

double median_of(const double* begin, const double* end) { return percentile(std::vector<double>(begin, end), 50); }

/// The permutation p-value of the best split's statistic `observed`:
/// (permutations at least as large + 1) / (permutations + 1), stopping
/// early once it can no longer be <= `options.p_value`.
double permutation_p(std::vector<double> x, double observed, const ChangePointOptions& options) {
  std::mt19937_64 rng(std::stoull(digest_of(x.data(), x.size()), nullptr, 16));
  const auto limit = static_cast<int>(std::floor(options.p_value * (options.permutations + 1) + 1e-9));
  int at_least = 0;
  for (int i = 0; i < options.permutations; ++i) {
    std::shuffle(x.begin(), x.end(), rng);
    if (best_energy_split(x, options.min_segment).second >= observed) {
      if (++at_least >= limit) return static_cast<double>(at_least + 1) / (i + 2);  // Already too large.
    }
  }
  return static_cast<double>(at_least + 1) / (options.permutations + 1);
}

/// Looks for one change point in values[begin, end); its index when found.
std::optional<ChangePoint> detect_in(const std::vector<double>& values, size_t begin, size_t end,
                                     const ChangePointOptions& options) {
  if (end - begin < 2 * options.min_segment) return std::nullopt;
  const std::vector<double> x(values.begin() + static_cast<std::ptrdiff_t>(begin),
                              values.begin() + static_cast<std::ptrdiff_t>(end));
  const auto [split, q] = best_energy_split(x, options.min_segment);
  if (split == 0) return std::nullopt;
  // A best split at the last place allowed may be a change that happened
  // later, which the minimum segment hides: wait for more values.
  if (x.size() - split < options.min_segment + options.settle) return std::nullopt;
  ChangePoint cp;
  cp.index = begin + split;
  cp.before = median_of(x.data(), x.data() + split);
  cp.after = median_of(x.data() + split, x.data() + x.size());
  if (cp.before == 0) return std::nullopt;
  cp.change = cp.after / cp.before - 1;
  // Cheap test first: a change too small to matter needs no permutations.
  if (std::abs(cp.change) < options.min_magnitude) return std::nullopt;
  cp.p_value = permutation_p(x, q, options);
  if (cp.p_value > options.p_value) return std::nullopt;  // p = (exceeding + 1) / (permutations + 1) <= level

  return cp;
}

}  // namespace

std::string ChangePointOptions::key() const {
  return fmt::format("edivisive window={} p={} magnitude={} segment={} settle={} permutations={}", window, p_value,
                     min_magnitude, min_segment, settle, permutations);
}

void ChangePointOptions::validate() const {
  if (window < 4 || window > 10000) throw UsageError(fmt::format("--window: must be in [4, 10000], got {}", window));
  if (!(p_value > 0 && p_value < 1)) throw UsageError(fmt::format("--p-value: must be in (0, 1), got {}", p_value));
  if (!(min_magnitude >= 0 && min_magnitude < 10)) {
    throw UsageError(fmt::format("--min-magnitude: must be in [0, 10), got {}", min_magnitude));
  }
  if (min_segment < 2 || 2 * min_segment > window) {
    throw UsageError(fmt::format("--min-segment: must be at least 2 and at most half the window, got {}", min_segment));
  }
  if (settle > window) throw UsageError(fmt::format("settle: must be at most the window, got {}", settle));
  if (permutations < 9 || permutations > 100000) {
    throw UsageError(fmt::format("--permutations: must be in [9, 100000], got {}", permutations));
  }
}

std::pair<size_t, double> best_energy_split(const std::vector<double>& x, size_t min_segment) {
  const size_t n = x.size();
  if (n < 2 * min_segment || min_segment < 2) return {0, 0};
  // Sums of |a - b| over pairs: within the left part, within the right part,
  // and between them, updated as the split moves right one value at a time.
  double within_left = 0, within_right = 0, between = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) within_right += std::abs(x[i] - x[j]);
  }
  size_t best = 0;
  double best_q = -1;
  for (size_t t = 0; t + min_segment < n; ++t) {
    // Move x[t] from the right part to the left one.
    double to_left = 0, to_right = 0;
    for (size_t i = 0; i < t; ++i) to_left += std::abs(x[t] - x[i]);
    for (size_t j = t + 1; j < n; ++j) to_right += std::abs(x[t] - x[j]);
    within_left += to_left;
    within_right -= to_right;
    between += to_right - to_left;
    const size_t m = t + 1, k = n - m;  // Split before index m.
    if (m < min_segment) continue;
    const double dm = static_cast<double>(m), dk = static_cast<double>(k);
    const double energy = 2 * between / (dm * dk) - within_left / (dm * (dm - 1) / 2) - within_right / (dk * (dk - 1) / 2);
    const double q = dm * dk / (dm + dk) * energy;
    if (q > best_q) {
      best_q = q;
      best = m;
    }
  }
  return {best, best_q};
}

/// A state's change points lie inside what it analysed, in increasing order:
/// a damaged cache entry (an index past the end underflowed the window's
/// start, and dashboard crashed) is recomputed, not trusted.
static bool consistent(const ChangePointState& state) {
  size_t previous = 0;
  for (const ChangePoint& c : state.found) {
    if (c.index <= previous || c.index >= state.analyzed) return false;
    previous = c.index;
  }
  return true;
}

ChangePointState update_change_points(const std::vector<double>& values, ChangePointState state,
                                      const ChangePointOptions& options) {
  options.validate();
  if (state.analyzed > values.size() || digest_of(values.data(), state.analyzed) != state.digest ||
      !consistent(state)) {
    state = {};
  }
  for (size_t length = state.analyzed + 1; length <= values.size(); ++length) {
    // Each new value: look at the values since the last change point, at most a window of them.
    for (;;) {
      size_t begin = state.found.empty() ? 0 : state.found.back().index;
      if (length - begin > options.window) begin = length - options.window;
      const auto cp = detect_in(values, begin, length, options);
      if (!cp) break;
      state.found.push_back(*cp);
    }
  }
  state.analyzed = values.size();
  state.digest = digest_of(values.data(), values.size());
  return state;
}

std::vector<ChangePoint> detect_change_points(const std::vector<double>& values, const ChangePointOptions& options) {
  return update_change_points(values, {}, options).found;
}

nlohmann::json ChangePointState::to_json() const {
  nlohmann::json cps = nlohmann::json::array();
  for (const ChangePoint& c : found) {
    cps.push_back({{"index", c.index}, {"p", c.p_value}, {"before", c.before}, {"after", c.after}, {"change", c.change}});
  }
  return {{"analyzed", analyzed}, {"digest", digest}, {"found", cps}};
}

std::optional<ChangePointState> ChangePointState::from_json(const nlohmann::json& j) {
  try {
    // The cache lives in a file anyone may edit: a count is read only when it
    // is one (get<size_t> of -1.5 or 1e300 is an undefined cast).
    const std::optional<size_t> analyzed = json_number<size_t>(j.at("analyzed"));
    if (!analyzed) return std::nullopt;
    ChangePointState s;
    s.analyzed = *analyzed;
    s.digest = j.at("digest").get<std::string>();
    for (const auto& c : j.at("found")) {
      const std::optional<size_t> index = json_number<size_t>(c.at("index"));
      if (!index) return std::nullopt;
      s.found.push_back({*index, c.at("p").get<double>(), c.at("before").get<double>(), c.at("after").get<double>(),
                         c.at("change").get<double>()});
    }
    if (!consistent(s)) return std::nullopt;
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // Not ours, or damaged: the caller recomputes.
  }
}

}  // namespace perflab::reports
