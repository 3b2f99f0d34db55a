// Which points of two result sets (or of a result set and the history) are
// the same point. A point's identity is its key (reports/result_set.h:
// workload, preset, every resolved parameter, backend, threads, toggles),
// so a version of a workload that gains a parameter gives every one of its
// points a new key, and a comparison across that version found no point in
// common ("nothing to compare") while the nightly history started every
// series afresh, hiding the very change the new default brought. Two keys
// name the same point when they are equal once each drops the parameters
// only it has and did not set with --set (a parameter one version has at
// its default and the other lacks); the pairing says which it dropped.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perflab::reports {

/// One side of a pairing: a point's key and the parameters it set.
struct PointIdentity {
  nlohmann::json key;                   ///< The parsed key (not an object: an MLPerf point, paired only exactly).
  std::vector<std::string> set_params;  ///< Given with --set.
  /// False where the parameters set are not known (a history row keeps
  /// none): then every parameter counts as set, so none is dropped.
  bool set_params_known = true;
};

/// Parses MetricSamples::point; a key that is not JSON (an MLPerf point's
/// "mlperf:SYSTEM/BENCHMARK") is kept as a string.
nlohmann::json parse_point_key(const std::string& key);

/// What two keys of one point differ by: "name=value" of each parameter only
/// one side has, at that side's default. Both empty: the keys are equal.
struct VersionGap {
  std::vector<std::string> only_a, only_b;

  bool empty() const { return only_a.empty() && only_b.empty(); }
  /// "paired across versions: epilogues=auto only in the candidate (not set
  /// with --set: ...)", naming the sides `a_name` and `b_name`; "" when
  /// empty().
  std::string describe(const std::string& a_name, const std::string& b_name) const;
};

/// The gap when `a` and `b` are the same point (above); nullopt otherwise.
std::optional<VersionGap> same_point(const PointIdentity& a, const PointIdentity& b);

/// For each base item, the candidate item of the same point within the same
/// group, or npos: equal keys first, then keys the same point across
/// versions where that match is the only one on both sides (an item with
/// several stays unpaired: which is meant cannot be told). Each candidate
/// pairs once; the result does not depend on the items' order.
struct Pairing {
  static constexpr size_t npos = static_cast<size_t>(-1);
  std::vector<size_t> partner;   ///< Per base item.
  std::vector<VersionGap> gaps;  ///< Per base item: empty where paired exactly or unpaired.
  std::vector<bool> paired;      ///< Per candidate item.
};
Pairing pair_points(const std::vector<PointIdentity>& base, const std::vector<std::string>& base_groups,
                    const std::vector<PointIdentity>& candidate, const std::vector<std::string>& candidate_groups);

}  // namespace perflab::reports
