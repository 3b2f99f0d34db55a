// Points that are the same across versions (see point_match.h).
#include "reports/point_match.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "base/text.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

std::string param_value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// Drops from `mine` the parameters `other` lacks, into `dropped`; false when
/// one of them was set (or what was set is not known).
bool drop_one_sided(json& mine, const PointIdentity& me, const json& other, std::vector<std::string>& dropped) {
  std::vector<std::string> names;
  for (const auto& [name, value] : mine.items()) {
    if (other.contains(name)) continue;
    if (!me.set_params_known || contains(me.set_params, name)) return false;
    dropped.push_back(name + "=" + param_value_text(value));
    names.push_back(name);
  }
  for (const std::string& name : names) mine.erase(name);
  return true;
}

}  // namespace

json parse_point_key(const std::string& key) {
  json parsed = json::parse(key, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? json(key) : parsed;
}

std::string VersionGap::describe(const std::string& a_name, const std::string& b_name) const {
  std::vector<std::string> parts;
  if (!only_a.empty()) parts.push_back(fmt::format("{} only in the {}", join(only_a, ", "), a_name));
  if (!only_b.empty()) parts.push_back(fmt::format("{} only in the {}", join(only_b, ", "), b_name));
  if (parts.empty()) return "";
  return "paired across versions: " + join(parts, ", ") + " (not set with --set: the default or its preset's)";
}

std::optional<VersionGap> same_point(const PointIdentity& a, const PointIdentity& b) {
  if (a.key == b.key) return VersionGap{};
  if (!a.key.is_object() || !b.key.is_object()) return std::nullopt;
  const auto params_of = [](const json& key) {
    const auto it = key.find("params");
    return it != key.end() && it->is_object() ? *it : json::object();
  };
  json pa = params_of(a.key), pb = params_of(b.key);
  VersionGap gap;
  if (!drop_one_sided(pa, a, pb, gap.only_a) || !drop_one_sided(pb, b, pa, gap.only_b)) return std::nullopt;
  if (gap.empty()) return std::nullopt;  // the parameters agree, so the keys differ elsewhere
  json ka = a.key, kb = b.key;
  ka["params"] = std::move(pa);
  kb["params"] = std::move(pb);
  if (ka != kb) return std::nullopt;
  return gap;
}

Pairing pair_points(const std::vector<PointIdentity>& base, const std::vector<std::string>& base_groups,
                    const std::vector<PointIdentity>& candidate, const std::vector<std::string>& candidate_groups) {
  Pairing p;
  p.partner.assign(base.size(), Pairing::npos);
  p.gaps.resize(base.size());
  p.paired.assign(candidate.size(), false);
  // Equal keys: candidates by (key, group), first unpaired first.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> exact;
  for (size_t j = candidate.size(); j-- > 0;) exact[{candidate[j].key.dump(), candidate_groups[j]}].push_back(j);
  for (size_t i = 0; i < base.size(); ++i) {
    auto it = exact.find({base[i].key.dump(), base_groups[i]});
    if (it == exact.end() || it->second.empty()) continue;
    p.partner[i] = it->second.back();
    it->second.pop_back();
    p.paired[p.partner[i]] = true;
  }
  // Then across versions, among the items still unpaired: only where each
  // side has exactly one match (symmetric, and independent of order).
  std::vector<std::vector<std::pair<size_t, VersionGap>>> matches(base.size());
  std::vector<int> claims(candidate.size(), 0);
  for (size_t i = 0; i < base.size(); ++i) {
    if (p.partner[i] != Pairing::npos) continue;
    for (size_t j = 0; j < candidate.size(); ++j) {
      if (p.paired[j] || candidate_groups[j] != base_groups[i]) continue;
      if (auto g = same_point(base[i], candidate[j])) {
        matches[i].emplace_back(j, std::move(*g));
        ++claims[j];
      }
    }
  }
  for (size_t i = 0; i < base.size(); ++i) {
    if (matches[i].size() != 1 || claims[matches[i][0].first] != 1) continue;
    p.partner[i] = matches[i][0].first;
    p.gaps[i] = std::move(matches[i][0].second);
    p.paired[p.partner[i]] = true;
  }
  return p;
}

}  // namespace perflab::reports
