// Change points: the energy split on hand-made data, determinism, append by
// append equal to all at once, and seeded simulations (counts printed): a 5%
// step in noisy history is found at the right index, and pure noise gives at
// most 1 false change point per 1,000 values.
#include "reports/change_points.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "base/error.h"

namespace perflab::reports {
namespace {

/// `n` values around 100 with `noise` relative Gaussian noise, stepping by
/// `step` (relative) from index `at` on.
std::vector<double> series(uint64_t seed, size_t n, double noise, size_t at = SIZE_MAX, double step = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, noise);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(100 * (i >= at ? 1 + step : 1.0) * (1 + z(rng)));
  return v;
}

TEST(ChangePoints, EnergySplitFindsAnObviousStep) {
  const std::vector<double> x = {1, 1.1, 0.9, 1, 1.05, 0.95, 5, 5.1, 4.9, 5, 5.05, 4.95};
  EXPECT_EQ(best_energy_split(x, 3).first, 6u);
  EXPECT_EQ(best_energy_split({1, 2, 3}, 2).first, 0u);  // Too short to split.
}

TEST(ChangePoints, FindsAStepAndReportsItsSize) {
  const auto v = series(7, 60, 0.01, 30, 0.10);
  const auto cps = detect_change_points(v);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 30u);
  EXPECT_NEAR(cps[0].change, 0.10, 0.02);
  EXPECT_LE(cps[0].p_value, 0.001);  // No permutation came close: 1 / 1000.
}

TEST(ChangePoints, DeterministicAndIncremental) {
  const auto v = series(11, 300, 0.02, 150, -0.08);
  const auto once = update_change_points(v, {});
  // Appended in pieces, through the JSON cache.
  ChangePointState state;
  for (size_t n : {40, 41, 170, 299, 300}) {
    const std::vector<double> prefix(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
    state = *ChangePointState::from_json(update_change_points(prefix, state).to_json());
  }
  ASSERT_EQ(once.found.size(), state.found.size());
  for (size_t i = 0; i < once.found.size(); ++i) {
    EXPECT_EQ(once.found[i].index, state.found[i].index);
    EXPECT_EQ(once.found[i].p_value, state.found[i].p_value);
  }
  EXPECT_EQ(update_change_points(v, {}).to_json(), once.to_json());  // Same history, same answer.
  // Appending does not redo the old part: a state's findings for the prefix
  // are kept as they are (here one planted into the state stays).
  ChangePointState planted = update_change_points(std::vector<double>(v.begin(), v.begin() + 100), {});
  planted.found.insert(planted.found.begin(), ChangePoint{3, 0.5, 1, 1, 0});
  const auto extended = update_change_points(v, planted);
  ASSERT_FALSE(extended.found.empty());
  EXPECT_EQ(extended.found.front().index, 3u);
  // A state of another history is discarded, not trusted.
  const auto other = series(12, 300, 0.02);
  EXPECT_EQ(update_change_points(other, once).to_json(), update_change_points(other, {}).to_json());
}

// A damaged cache entry (issue 24: an index past the end made dashboard
// crash) is not trusted: from_json refuses it and an update recomputes.
TEST(ChangePoints, DamagedStatesAreRecomputed) {
  const auto v = series(13, 120, 0.01, 60, 0.10);
  const ChangePointState good = update_change_points(v, {});
  ASSERT_EQ(good.found.size(), 1u);
  for (size_t bad_index : {size_t{0}, size_t{120}, size_t{1} << 40, SIZE_MAX}) {
    nlohmann::json damaged = good.to_json();
    damaged["found"][0]["index"] = bad_index;
    EXPECT_FALSE(ChangePointState::from_json(damaged)) << bad_index;
    ChangePointState state = good;
    state.found[0].index = bad_index;
    EXPECT_EQ(update_change_points(v, state).to_json(), good.to_json()) << bad_index;
  }
  // Counts that are not counts (a hand edit, a damaged file): refused, never
  // cast (UBSan found get<size_t> of -1.5 in CI's fuzz pass).
  for (const nlohmann::json& not_a_count : {nlohmann::json(-1.5), nlohmann::json(1e300), nlohmann::json(2.5),
                                            nlohmann::json(-1), nlohmann::json("3")}) {
    nlohmann::json bad_analyzed = good.to_json();
    bad_analyzed["analyzed"] = not_a_count;
    EXPECT_FALSE(ChangePointState::from_json(bad_analyzed)) << not_a_count;
    nlohmann::json bad_index = good.to_json();
    bad_index["found"][0]["index"] = not_a_count;
    EXPECT_FALSE(ChangePointState::from_json(bad_index)) << not_a_count;
  }
  nlohmann::json integral_float = good.to_json();  // 60.0 is the count 60
  integral_float["found"][0]["index"] = static_cast<double>(good.found[0].index);
  EXPECT_EQ(ChangePointState::from_json(integral_float)->to_json(), good.to_json());
  ChangePointState unordered = good;
  unordered.found.push_back(unordered.found[0]);  // not increasing
  EXPECT_FALSE(ChangePointState::from_json(unordered.to_json()));
  EXPECT_EQ(update_change_points(v, unordered).to_json(), good.to_json());
}

TEST(ChangePoints, RefusesBadOptions) {
  ChangePointOptions o;
  o.p_value = 0;
  EXPECT_THROW(o.validate(), UsageError);
  o = {};
  o.window = 8;
  o.min_segment = 6;
  EXPECT_THROW(o.validate(), UsageError);
  EXPECT_FALSE(ChangePointState::from_json(nlohmann::json::array()).has_value());
}

TEST(ChangePointSimulation, FivePercentStepFoundAtTheRightIndex) {
  // A 5% step at index 150 of 300 in 1% noise (a history value is the
  // median of a night's repetitions, quieter than one run), 20 seeds.
  constexpr int kTrials = 20;
  int exact = 0, extra = 0;
  for (int t = 0; t < kTrials; ++t) {
    const auto cps = detect_change_points(series(100 + t, 300, 0.01, 150, 0.05));
    for (const ChangePoint& c : cps) {
      if (c.index == 150) ++exact;
      else ++extra;
    }
  }
  std::printf("5%% step in 1%% noise, %d histories of 300 values: found at the right index %d times, "
              "%d other change points\n", kTrials, exact, extra);
  EXPECT_EQ(exact, kTrials);
  EXPECT_EQ(extra, 0);
}

TEST(ChangePointSimulation, PureNoiseAtMostOneFalseChangePerThousand) {
  constexpr int kSeries = 5;
  constexpr size_t kValues = 1000;
  for (double noise : {0.01, 0.02}) {
    size_t found = 0;
    for (int s = 0; s < kSeries; ++s) found += detect_change_points(series(500 + s, kValues, noise)).size();
    std::printf("pure %.0f%% noise, %d histories of %zu values: %zu false change points (%.2f per 1,000 values)\n",
                100 * noise, kSeries, kValues, found, 1000.0 * static_cast<double>(found) / (kSeries * kValues));
    EXPECT_LE(found, static_cast<size_t>(kSeries));
  }
  // The guards matter: without the minimum magnitude and at p 0.05 the same
  // noise gives many (so the counts above can fail).
  ChangePointOptions lax;
  lax.p_value = 0.05;
  lax.min_magnitude = 0;
  lax.permutations = 99;
  size_t lax_found = 0;
  for (int s = 0; s < kSeries; ++s) lax_found += detect_change_points(series(500 + s, kValues, 0.02), lax).size();
  std::printf("pure 2%% noise with p 0.05 and no minimum magnitude: %zu false change points\n", lax_found);
  EXPECT_GT(lax_found, static_cast<size_t>(kSeries));
}

}  // namespace
}  // namespace perflab::reports
