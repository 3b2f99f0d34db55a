// compare: verdict rules on hand-made samples, and the statistics proven by
// seeded simulation (trial counts printed): an A/A comparison flags at most
// 5% of metrics, a planted 10% slowdown is caught in at least 95% of trials
// at 10 repetitions, a planted 3% slowdown is "no change" at the default
// 5% threshold.
#include "reports/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "base/error.h"

namespace perflab::reports {
namespace {

MetricSamples samples(std::vector<double> v, bool lower_is_better = true, std::string metric = "time_to_train_s") {
  return {"{\"workload\":\"w\"}", "w tiny", std::move(metric), "s", lower_is_better, std::move(v), 0};
}

TEST(Compare, SlowerNeedsSignificanceAndThreshold) {
  const auto base = samples({10.0, 10.1, 9.9, 10.2, 9.8, 10.05});
  const auto slow = samples({11.0, 11.1, 10.9, 11.2, 10.8, 11.05});  // +10%, separated
  const CompareRow r = compare_metric(base, slow);
  EXPECT_EQ(r.verdict, Verdict::kSlower);
  EXPECT_NEAR(r.change, 0.1, 0.005);
  EXPECT_LT(r.test.p_value, 0.01);
  // The same separation but only +2%: significant, below the threshold.
  const auto slight = samples({10.2, 10.3, 10.25, 10.4, 10.22, 10.35});
  EXPECT_EQ(compare_metric(base, slight).verdict, Verdict::kNoChange);
  EXPECT_EQ(compare_metric(base, slight, {0.01, 0.05}).verdict, Verdict::kSlower);
}

TEST(Compare, HigherIsBetterMetricsTurnAround) {
  const auto base = samples({100, 101, 99, 100.5, 99.5}, false, "throughput");
  const auto lower = samples({80, 81, 79, 80.5, 79.5}, false, "throughput");
  EXPECT_EQ(compare_metric(base, lower).verdict, Verdict::kSlower);
  EXPECT_EQ(compare_metric(lower, base).verdict, Verdict::kFaster);
}

TEST(Compare, TooFewRepetitionsIsStatedNotHidden) {
  const CompareRow r = compare_metric(samples({10, 10.1, 9.9}), samples({20, 20.1, 19.9}));
  EXPECT_EQ(r.verdict, Verdict::kTooFew);
  EXPECT_NE(r.note.find("3 vs 3 repetitions"), std::string::npos) << r.note;
  const Comparison c = compare_samples({samples({10, 10.1, 9.9})}, {samples({20, 20.1, 19.9})});
  EXPECT_FALSE(c.regressed());
  EXPECT_NE(render_compare_console(c).find("too few repetitions"), std::string::npos);
}

TEST(Compare, GeomeanAndPairing) {
  std::vector<MetricSamples> base = {samples({10, 10, 10, 10}), samples({100, 100, 100, 100}, false, "throughput"),
                                     samples({1, 1, 1, 1}, true, "iteration_ms_p50")};
  std::vector<MetricSamples> cand = {samples({12, 12, 12, 12}), samples({80, 80, 80, 80}, false, "throughput"),
                                     samples({1, 1, 1, 1}, true, "iteration_ms_p99")};
  const Comparison c = compare_samples(base, cand);
  ASSERT_EQ(c.rows.size(), 2u);
  // Time ratios 1.2 and 1.25: geomean sqrt(1.5).
  EXPECT_NEAR(c.geomean_time_ratio, std::sqrt(1.5), 1e-12);
  EXPECT_EQ(c.only_base, std::vector<std::string>{"w tiny iteration_ms_p50"});
  EXPECT_EQ(c.only_candidate, std::vector<std::string>{"w tiny iteration_ms_p99"});
  EXPECT_TRUE(c.regressed());
  const auto json = compare_to_json(c);
  EXPECT_EQ(json["rows"][0]["verdict"], "slower");
  EXPECT_TRUE(json["regressed"].get<bool>());
  EXPECT_NE(render_compare_markdown(c).find("| w tiny | time_to_train_s (s) |"), std::string::npos);
}

TEST(Compare, RefusesDisjointSetsAndBadOptions) {
  EXPECT_THROW(compare_samples({samples({1, 2, 3, 4})}, {samples({1, 2, 3, 4}, true, "other")}), UsageError);
  EXPECT_THROW(compare_samples({samples({1})}, {samples({1})}, {-0.1, 0.05}), UsageError);
  EXPECT_THROW(compare_samples({samples({1})}, {samples({1})}, {0.05, 1.5}), UsageError);
}

TEST(Compare, PairsAPointAcrossAVersionThatAddedAParameterAndSaysSo) {
  // The base build had no `epilogues` parameter; the candidate's runs have
  // it at its default. Before point_match.h no point paired ("nothing to
  // compare").
  MetricSamples base = samples({10, 10.1, 9.9, 10.2});
  base.point = R"({"params":{"batch":512},"workload":"w"})";
  MetricSamples candidate = samples({8, 8.1, 7.9, 8.2});
  candidate.point = R"({"params":{"batch":512,"epilogues":"auto"},"workload":"w"})";
  const Comparison c = compare_samples({base}, {candidate});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kFaster);
  EXPECT_NE(c.rows[0].note.find("paired across versions: epilogues=auto only in the candidate"), std::string::npos)
      << c.rows[0].note;
  EXPECT_NE(render_compare_console(c).find("paired across versions"), std::string::npos);
  // Set with --set, it is part of what the candidate measured: no pairing.
  candidate.set_params = {"epilogues"};
  EXPECT_THROW(compare_samples({base}, {candidate}), UsageError);
}

// --- simulation ------------------------------------------------------------

/// Fraction of trials whose verdict is in `counted`, comparing `reps` base
/// values (median 10 s, 1.5% lognormal noise: a quiet benchmark machine)
/// with `reps` candidate values scaled by `factor`.
double simulate(uint64_t seed, int trials, int reps, double factor, const std::vector<Verdict>& counted,
                const CompareOptions& options = {}) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.015);
  int hits = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> b, c;
    for (int i = 0; i < reps; ++i) b.push_back(10 * std::exp(noise(rng)));
    for (int i = 0; i < reps; ++i) c.push_back(10 * factor * std::exp(noise(rng)));
    const Verdict v = compare_metric(samples(b), samples(c), options).verdict;
    for (Verdict k : counted) hits += v == k ? 1 : 0;
  }
  return static_cast<double>(hits) / trials;
}

constexpr int kTrials = 2000;

TEST(CompareSimulation, AaFlagsAtMostFivePercent) {
  const double flagged = simulate(1, kTrials, 10, 1.0, {Verdict::kFaster, Verdict::kSlower});
  // With no threshold the verdict is the U test alone: its false-positive
  // rate must stay near its level alpha = 0.05 too.
  const double significant = simulate(2, kTrials, 10, 1.0, {Verdict::kFaster, Verdict::kSlower}, {0.0, 0.05});
  std::printf("A/A, %d trials x 10 vs 10 repetitions: flagged %.2f%% at the 5%% threshold, "
              "%.2f%% on significance alone\n",
              kTrials, 100 * flagged, 100 * significant);
  EXPECT_LE(flagged, 0.05);
  EXPECT_LE(significant, 0.05);
}

TEST(CompareSimulation, TenPercentSlowdownCaught) {
  const double caught = simulate(3, kTrials, 10, 1.10, {Verdict::kSlower});
  std::printf("planted +10%%, %d trials x 10 vs 10 repetitions: caught %.2f%%\n", kTrials, 100 * caught);
  EXPECT_GE(caught, 0.95);
}

TEST(CompareSimulation, ThreePercentSlowdownIsNoChange) {
  const double none = simulate(4, kTrials, 10, 1.03, {Verdict::kNoChange});
  std::printf("planted +3%%, %d trials x 10 vs 10 repetitions: \"no change\" in %.2f%%\n", kTrials, 100 * none);
  EXPECT_GE(none, 0.95);
}

}  // namespace
}  // namespace perflab::reports
