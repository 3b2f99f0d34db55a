// Points the same across versions: a parameter one side has at its default
// and the other lacks is dropped (and said); a parameter set with --set, a
// differing value, toggle or backend, or a key that is not JSON keeps the
// points apart; a pairing that could go two ways is not made.
#include "reports/point_match.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace perflab::reports {
namespace {

using nlohmann::json;

/// A DLRM-like key; `extra` params merged in.
json key(const json& extra = json::object(), const std::string& backend = "cuda") {
  json params = {{"batch", 512}, {"precision", "fp32"}};
  params.update(extra);
  return {{"workload", "dlrm"}, {"preset", "dle"},    {"params", params},
          {"backend", backend}, {"threads", nullptr}, {"toggles_requested", {{"fused", true}}}};
}

PointIdentity id(const json& k, std::vector<std::string> set = {}) { return {k, std::move(set)}; }

TEST(PointMatch, EqualKeysAreTheSamePointWithNoGap) {
  const auto gap = same_point(id(key()), id(key()));
  ASSERT_TRUE(gap.has_value());
  EXPECT_TRUE(gap->empty());
  EXPECT_EQ(gap->describe("base", "candidate"), "");
}

TEST(PointMatch, AParameterANewerVersionHasAtItsDefaultIsDropped) {
  const auto gap = same_point(id(key()), id(key({{"epilogues", "auto"}})));
  ASSERT_TRUE(gap.has_value());
  EXPECT_TRUE(gap->only_a.empty());
  EXPECT_EQ(gap->only_b, (std::vector<std::string>{"epilogues=auto"}));
  EXPECT_EQ(gap->describe("base", "candidate"),
            "paired across versions: epilogues=auto only in the candidate (not set with --set: the default or its preset's)");
  // And the other way round: a parameter the newer version no longer has.
  const auto back = same_point(id(key({{"old_knob", 3}})), id(key()));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->only_a, (std::vector<std::string>{"old_knob=3"}));
}

TEST(PointMatch, ParametersSetOrDifferingKeepThePointsApart) {
  // Set with --set: the user asked for it, so it is part of what was measured.
  EXPECT_FALSE(same_point(id(key()), id(key({{"epilogues", "own"}}), {"epilogues"})).has_value());
  // A parameter both have, with another value.
  EXPECT_FALSE(same_point(id(key()), id(key({{"batch", 1024}}))).has_value());
  EXPECT_FALSE(same_point(id(key()), id(key({{"batch", 1024}, {"epilogues", "auto"}}))).has_value());
  // Elsewhere in the key.
  EXPECT_FALSE(same_point(id(key()), id(key({{"epilogues", "auto"}}, "cpu"))).has_value());
  // What a side set is not known (a history row): none of its own is dropped.
  EXPECT_FALSE(same_point(PointIdentity{key({{"epilogues", "auto"}}), {}, false}, id(key())).has_value());
  EXPECT_TRUE(same_point(PointIdentity{key(), {}, false}, id(key({{"epilogues", "auto"}}))).has_value());
}

TEST(PointMatch, KeysThatAreNotJsonOnlyPairExactly) {
  const json mlperf = parse_point_key("mlperf:sys/dlrm");
  EXPECT_TRUE(mlperf.is_string());
  EXPECT_TRUE(same_point(id(mlperf), id(parse_point_key("mlperf:sys/dlrm"))).has_value());
  EXPECT_FALSE(same_point(id(mlperf), id(parse_point_key("mlperf:sys/bert"))).has_value());
  EXPECT_FALSE(same_point(id(mlperf), id(key())).has_value());
  EXPECT_EQ(parse_point_key(key().dump()), key());
}

TEST(PointMatch, PairingPrefersEqualKeysKeepsGroupsAndRefusesAmbiguity) {
  const std::vector<PointIdentity> base = {id(key()), id(key({{"batch", 2048}})), id(key()), id(key({{"batch", 64}}))};
  const std::vector<std::string> base_groups = {"throughput", "throughput", "iteration_ms_p50", "throughput"};
  const std::vector<PointIdentity> candidate = {
      id(key({{"epilogues", "auto"}})),                    // 0: base 0 across versions
      id(key({{"batch", 2048}})),                          // 1: base 1 exactly
      id(key({{"epilogues", "auto"}})),                    // 2: base 2 across versions, other metric
      id(key({{"batch", 64}, {"epilogues", "auto"}})),     // 3 and 4: two ways for base 3
      id(key({{"batch", 64}, {"interaction", "auto"}})),
      id(key({{"batch", 4096}}))};                         // 5: unpaired
  const std::vector<std::string> candidate_groups = {"throughput",       "throughput", "iteration_ms_p50",
                                                     "throughput",       "throughput", "throughput"};
  const Pairing p = pair_points(base, base_groups, candidate, candidate_groups);
  ASSERT_EQ(p.partner.size(), 4u);
  EXPECT_EQ(p.partner[0], 0u);
  EXPECT_EQ(p.gaps[0].only_b, (std::vector<std::string>{"epilogues=auto"}));
  EXPECT_EQ(p.partner[1], 1u);
  EXPECT_TRUE(p.gaps[1].empty());
  EXPECT_EQ(p.partner[2], 2u);
  EXPECT_EQ(p.partner[3], Pairing::npos) << "two candidates could be base 3: neither is chosen";
  EXPECT_EQ(p.paired, (std::vector<bool>{true, true, true, false, false, false}));
  // Mirrored: two base points could be one candidate's: neither pairs, in
  // either order.
  const std::vector<PointIdentity> two = {id(key({{"epilogues", "auto"}})), id(key({{"interaction", "auto"}}))};
  const std::vector<PointIdentity> one = {id(key())};
  const std::vector<std::string> groups2 = {"", ""}, groups1 = {""};
  const Pairing q = pair_points(two, groups2, one, groups1);
  EXPECT_EQ(q.partner, (std::vector<size_t>{Pairing::npos, Pairing::npos}));
  const Pairing r = pair_points({two[1], two[0]}, groups2, one, groups1);
  EXPECT_EQ(r.partner, (std::vector<size_t>{Pairing::npos, Pairing::npos}));
  EXPECT_EQ(r.paired, (std::vector<bool>{false}));
}

}  // namespace
}  // namespace perflab::reports
