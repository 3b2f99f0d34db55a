// Tests for reports/rcp: the RCP file round trip, malformed files, building
// RCPs from results, and the rcp_checker's test on hand-worked numbers.
// Every expected bound was also checked against mlperf_logging's
// RCP_Checker (4.1.x), which bisects to 1e-4: its values are quoted.
#include "reports/rcp.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace perflab::reports {
namespace {

namespace fs = std::filesystem;
using Epochs = std::vector<std::optional<double>>;

RcpEntry entry(int64_t bs, std::vector<double> epochs) {
  RcpEntry e;
  e.benchmark = "dlrm";
  e.batch_size = bs;
  e.hyperparams = {{"opt_base_learning_rate", 0.1}};
  e.epochs_to_converge = std::move(epochs);
  e.creator = "perflab";
  e.platform = "test CPU";
  return e;
}

// BS 1024: 2.0 .. 2.8 step 0.2: olympic mean 2.4; population variance
//   (0.16 + 0.04 + 0 + 0.04 + 0.16) / 5 = 0.08, stddev 0.282843.
// BS 2048: 3.0 .. 4.6 step 0.4: olympic mean 3.8, variance 0.32, stddev 0.565685.
std::vector<RcpEntry> two_rcps() {
  return {entry(1024, {2.0, 2.2, 2.4, 2.6, 2.8}), entry(2048, {3.0, 3.4, 3.8, 4.2, 4.6})};
}

RcpCheckOptions five_runs() {
  RcpCheckOptions o;
  o.submission_runs = 5;
  return o;
}

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("perflab_rcp_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string error_of(const fs::path& path) {
  try {
    read_rcps(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Rcp, ExactBatchSizeNormalSetPasses) {
  // n_ref = 5 - 2 = 3, n_sub = 5 - 2 = 3, df = 4, t_{0.95,4} = 2.131847:
  // min = 2.4 - 2.131847 * 0.282843 * sqrt(1/3 + 1/3) = 1.907671 (checker: 1.907703).
  const RcpCheck c = check_rcp(two_rcps(), "dlrm", 1024, {2.3, 2.4, 2.5, 2.2, 2.6}, five_runs());
  EXPECT_EQ(c.verdict, RcpVerdict::kPassed) << c.explanation;
  EXPECT_EQ(c.basis, RcpBasis::kExact);
  EXPECT_NEAR(c.submission_mean, 2.4, 1e-12);
  EXPECT_NEAR(c.rcp_mean, 2.4, 1e-12);
  EXPECT_NEAR(c.rcp_stddev, std::sqrt(0.08), 1e-12);
  EXPECT_EQ(c.reference_samples, 3);
  EXPECT_EQ(c.submission_samples, 3);
  EXPECT_NEAR(c.min_epochs, 1.907671, 1e-6);
  EXPECT_NEAR(c.min_epochs, 1.907703, 1e-4);
  EXPECT_NEAR(c.max_speedup, 2.4 / 1.907671, 1e-5);
  EXPECT_EQ(c.normalization_factor, 1.0);
}

// unet3d's olympic means drop 4 from each end (harness/mlperf_benchmarks.h),
// as the rcp_checker's: the RCP mean, the submission's, the failures allowed.
TEST(Rcp, Unet3dDropsFourFromEachEnd) {
  RcpEntry ref = entry(56, {});
  ref.benchmark = "unet3d";
  for (int i = 0; i < 12; ++i) ref.epochs_to_converge.push_back(100 + 10 * i);  // 100 .. 210
  // Drop 4 each end: mean of 140 .. 170 = 155; n_ref = 12 - 8 = 4.
  std::vector<std::optional<double>> runs;
  for (int i = 0; i < 10; ++i) runs.push_back(150 + i);  // 150 .. 159
  runs[0] = std::nullopt;  // three failures: allowed (up to 4)
  runs[1] = std::nullopt;
  runs[2] = std::nullopt;
  RcpCheckOptions o;
  o.submission_runs = 10;
  const RcpCheck c = check_rcp({ref}, "unet3d", 56, runs, o);
  EXPECT_NEAR(c.rcp_mean, 155, 1e-12);
  EXPECT_EQ(c.reference_samples, 4);
  // Sorted: 153 .. 159 then three 1e9; drop 4 each end: 157, 158.
  EXPECT_NEAR(c.submission_mean, 157.5, 1e-9);
  EXPECT_NE(c.verdict, RcpVerdict::kFailed) << c.explanation;
  runs[3] = std::nullopt;
  runs[4] = std::nullopt;  // five failures: more than 4
  EXPECT_EQ(check_rcp({ref}, "unet3d", 56, runs, o).verdict, RcpVerdict::kFailed);
  // Too few runs for the drop: not checkable, said so (not a NaN mean).
  const RcpCheck few = check_rcp({ref}, "unet3d", 56, {150.0, 151.0, 152.0, 153.0, 154.0, 155.0}, o);
  EXPECT_EQ(few.verdict, RcpVerdict::kNotCheckable);
  EXPECT_NE(few.explanation.find("drops 4 from each end"), std::string::npos) << few.explanation;
}

TEST(Rcp, FasterThanReferenceFails) {
  // Olympic mean of 1.5 .. 1.9 is 1.7 < 1.907671.
  const RcpCheck c = check_rcp(two_rcps(), "dlrm", 1024, {1.5, 1.6, 1.7, 1.8, 1.9}, five_runs());
  EXPECT_EQ(c.verdict, RcpVerdict::kFailed);
  EXPECT_NEAR(c.submission_mean, 1.7, 1e-12);
  EXPECT_NEAR(c.normalization_factor, 2.4 / 1.7, 1e-12);
  EXPECT_NE(c.explanation.find("significantly faster"), std::string::npos) << c.explanation;
}

TEST(Rcp, FasterButWithinBoundPassesWithNormalization) {
  // Olympic mean 2.2: above 1.907671, below 2.4: scale by 2.4 / 2.2 = 1.090909.
  const RcpCheck c = check_rcp(two_rcps(), "dlrm", 1024, {2.0, 2.1, 2.2, 2.3, 2.4}, five_runs());
  EXPECT_EQ(c.verdict, RcpVerdict::kPassed);
  EXPECT_NEAR(c.normalization_factor, 1.090909, 1e-6);
  EXPECT_NE(c.explanation.find("1.0909"), std::string::npos) << c.explanation;
}

TEST(Rcp, InterpolatedBatchSize) {
  // BS 1536 halfway: mean 3.1, stddev (0.282843 + 0.565685) / 2 = 0.424264;
  // n_ref = 2 * 5 = 10, n_sub = 3, df = 11, t_{0.95,11} = 1.795885:
  // min = 3.1 - 1.795885 * 0.424264 * sqrt(1/10 + 1/3) = 2.598437 (checker: 2.598454).
  const RcpCheck pass = check_rcp(two_rcps(), "dlrm", 1536, {2.5, 2.6, 2.7, 2.8, 2.9}, five_runs());
  EXPECT_EQ(pass.verdict, RcpVerdict::kPassed) << pass.explanation;
  EXPECT_EQ(pass.basis, RcpBasis::kInterpolated);
  EXPECT_EQ(pass.reference_batch_sizes, (std::vector<int64_t>{1024, 2048}));
  EXPECT_NEAR(pass.rcp_mean, 3.1, 1e-12);
  EXPECT_NEAR(pass.rcp_stddev, 0.424264, 1e-6);
  EXPECT_EQ(pass.reference_samples, 10);
  EXPECT_NEAR(pass.min_epochs, 2.598437, 1e-6);
  EXPECT_NEAR(pass.normalization_factor, 3.1 / 2.7, 1e-12);

  const RcpCheck fail =
      check_rcp(two_rcps(), "dlrm", 1536, {2.4, 2.45, 2.5, 2.55, 2.6}, five_runs());
  EXPECT_EQ(fail.verdict, RcpVerdict::kFailed);
  EXPECT_EQ(fail.basis, RcpBasis::kInterpolated);
}

TEST(Rcp, OutsideTheBatchSizeRange) {
  const RcpCheck above = check_rcp(two_rcps(), "dlrm", 4096, {9, 9, 9, 9, 9}, five_runs());
  EXPECT_EQ(above.verdict, RcpVerdict::kNotCheckable);
  EXPECT_NE(above.explanation.find("above every RCP batch size"), std::string::npos);

  // Below the smallest batch size the smallest RCP is the bound: slower passes...
  const RcpCheck slow = check_rcp(two_rcps(), "dlrm", 512, {2.3, 2.4, 2.5, 2.2, 2.6}, five_runs());
  EXPECT_EQ(slow.verdict, RcpVerdict::kPassed);
  EXPECT_EQ(slow.basis, RcpBasis::kSmallestBatch);
  // ... faster cannot be judged without an RCP at that batch size.
  const RcpCheck fast = check_rcp(two_rcps(), "dlrm", 512, {1.5, 1.6, 1.7, 1.8, 1.9}, five_runs());
  EXPECT_EQ(fast.verdict, RcpVerdict::kNotCheckable);
  EXPECT_NE(fast.explanation.find("missing RCP"), std::string::npos);

  EXPECT_EQ(check_rcp(two_rcps(), "bert", 1024, {2, 2, 2}).verdict, RcpVerdict::kNotCheckable);
  EXPECT_EQ(check_rcp({}, "dlrm", 1024, {2, 2, 2}).verdict, RcpVerdict::kNotCheckable);
}

TEST(Rcp, PruningDropsSlowerPoints) {
  // 512 (mean 3.0) is left of the fastest point (1024, 2.4): dropped. 2048
  // (3.8) is above the line from 1024 (2.4) to 3072 (4.0), which gives 3.2
  // at 2048: dropped. So the pruned check at 2048 interpolates: mean 3.2,
  // stddev (0.282843 + 0.260768) / 2 = 0.271805, min = 2.878673 (checker 2.878662).
  auto rcps = two_rcps();
  rcps.push_back(entry(3072, {3.6, 3.9, 4.0, 4.1, 4.4}));
  rcps.push_back(entry(512, {2.8, 2.9, 3.0, 3.1, 3.2}));
  // Olympic mean 2.85: below the pruned bound, above the full set's exact
  // bound at 2048 (3.8 - 2.131847 * 0.565685 * sqrt(2/3) = 2.815342).
  const Epochs runs = {2.8, 2.84, 2.85, 2.86, 2.9};
  const RcpCheck pruned = check_rcp(rcps, "dlrm", 2048, runs, five_runs());
  EXPECT_EQ(pruned.basis, RcpBasis::kInterpolated);
  EXPECT_EQ(pruned.reference_batch_sizes, (std::vector<int64_t>{1024, 3072}));
  EXPECT_NEAR(pruned.rcp_mean, 3.2, 1e-12);
  EXPECT_NEAR(pruned.min_epochs, 2.878673, 1e-6);
  EXPECT_EQ(pruned.verdict, RcpVerdict::kFailed);

  RcpCheckOptions full = five_runs();
  full.pass = RcpPass::kFull;
  const RcpCheck exact = check_rcp(rcps, "dlrm", 2048, runs, full);
  EXPECT_EQ(exact.basis, RcpBasis::kExact);
  EXPECT_NEAR(exact.rcp_mean, 3.8, 1e-12);
  EXPECT_NEAR(exact.min_epochs, 2.815342, 1e-6);
  EXPECT_EQ(exact.verdict, RcpVerdict::kPassed);
}

TEST(Rcp, NonConvergedRuns) {
  // One failed run counts as the slowest and is dropped by the olympic mean.
  const RcpCheck one =
      check_rcp(two_rcps(), "dlrm", 1024, {2.3, std::nullopt, 2.5, 2.2, 2.4}, five_runs());
  EXPECT_EQ(one.verdict, RcpVerdict::kPassed);
  EXPECT_NEAR(one.submission_mean, 2.4, 1e-12);
  EXPECT_EQ(one.converged_runs, 4u);
  const RcpCheck two =
      check_rcp(two_rcps(), "dlrm", 1024, {2.3, std::nullopt, 2.5, std::nullopt, 2.4});
  EXPECT_EQ(two.verdict, RcpVerdict::kFailed);
  EXPECT_NE(two.explanation.find("insufficient convergence"), std::string::npos);
  EXPECT_EQ(check_rcp(two_rcps(), "dlrm", 1024, {2.3, 2.4}).verdict, RcpVerdict::kNotCheckable);
}

TEST(Rcp, DefaultRunCountIsTheSubmissionSize) {
  // 3 runs: n_sub = 1, df = 3 + 1 - 2 = 2, t_{0.95,2} = 2.919986:
  // min = 2.4 - 2.919986 * 0.282843 * sqrt(1/3 + 1) = 1.446337.
  const RcpCheck c = check_rcp(two_rcps(), "dlrm", 1024, {1.4, 1.5, 1.6});
  EXPECT_EQ(c.submission_samples, 1);
  EXPECT_NEAR(c.min_epochs, 2.4 - 2.919986 * std::sqrt(0.08) * std::sqrt(4.0 / 3.0), 1e-5);
  EXPECT_EQ(c.verdict, RcpVerdict::kPassed);
}

TEST(Rcp, NoDegreesOfFreedomIsNotCheckable) {
  // 3 reference runs and 3 submission runs: n_ref = n_sub = 1, df = 0.
  const std::vector<RcpEntry> rcps = {entry(256, {1.5, 1.75, 2.0})};
  const RcpCheck c = check_rcp(rcps, "dlrm", 256, {1.75, 1.75, 2.0});
  EXPECT_EQ(c.verdict, RcpVerdict::kNotCheckable);
  EXPECT_NE(c.explanation.find("no degrees of freedom"), std::string::npos) << c.explanation;
  // Identical reference values need no t-test: the bound is the mean.
  const RcpCheck flat = check_rcp({entry(256, {1.75, 1.75, 1.75})}, "dlrm", 256, {1.7, 1.8, 1.9});
  EXPECT_EQ(flat.verdict, RcpVerdict::kPassed);
  EXPECT_EQ(flat.min_epochs, 1.75);
}

TEST(Rcp, FileRoundTrip) {
  const fs::path dir = temp_dir("roundtrip");
  auto rcps = two_rcps();
  std::swap(rcps[0], rcps[1]);  // Written ascending whatever the input order.
  write_rcps(dir / "rcps_dlrm.json", rcps);
  const auto back = read_rcps(dir / "rcps_dlrm.json");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].batch_size, 1024);
  EXPECT_EQ(back[0].key(), "dlrm_ref_1024");
  EXPECT_EQ(back[1].epochs_to_converge, two_rcps()[1].epochs_to_converge);
  EXPECT_EQ(back[0].hyperparams, two_rcps()[0].hyperparams);
  EXPECT_EQ(back[0].platform, "test CPU");
  std::ifstream in(dir / "rcps_dlrm.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_LT(text.find("dlrm_ref_1024"), text.find("dlrm_ref_2048"));
  EXPECT_NE(text.find("\"Epochs to converge\""), std::string::npos);
  fs::remove_all(dir);
}

TEST(Rcp, MalformedFilesNameFileAndProblem) {
  const fs::path dir = temp_dir("malformed");
  const fs::path f = dir / "rcps.json";
  EXPECT_NE(error_of(dir / "absent.json").find("absent.json: no such file"), std::string::npos);
  write(f, "{ not json");
  EXPECT_NE(error_of(f).find("rcps.json: not JSON"), std::string::npos);
  write(f, "[]");
  EXPECT_NE(error_of(f).find("one JSON object"), std::string::npos);
  write(f, "{}");
  EXPECT_NE(error_of(f).find("no RCP entries"), std::string::npos);
  const std::string good =
      R"("Benchmark": "dlrm", "Hyperparams": {}, "Epochs to converge": [1, 2, 3])";
  write(f, R"({"a": {"Benchmark": "dlrm", "Hyperparams": {}, "Epochs to converge": [1, 2, 3]}})");
  EXPECT_NE(error_of(f).find("entry \"a\": missing \"BS\""), std::string::npos) << error_of(f);
  write(f, R"({"a": {"BS": "8", )" + good + "}}");
  EXPECT_NE(error_of(f).find("\"BS\" is not a positive integer"), std::string::npos);
  write(
      f,
      R"({"a": {"BS": 8, "Benchmark": "dlrm", "Hyperparams": {}, "Epochs to converge": [1, 2]}})");
  EXPECT_NE(error_of(f).find("has 2 value(s)"), std::string::npos);
  write(
      f,
      R"({"a": {"BS": 8, "Benchmark": "dlrm", "Hyperparams": {}, "Epochs to converge": [1, "x", 3]}})");
  EXPECT_NE(error_of(f).find("not a positive number"), std::string::npos);
  write(f, R"({"a": {"BS": 8, )" + good + R"(}, "b": {"BS": 8, )" + good + "}}");
  EXPECT_NE(error_of(f).find("batch size 8 appears twice"), std::string::npos);
  write(
      f,
      R"({"a": {"BS": 8, )" + good +
          R"(}, "b": {"BS": 9, "Benchmark": "bert", "Hyperparams": {}, "Epochs to converge": [1, 2, 3]}})");
  EXPECT_NE(error_of(f).find("different benchmarks"), std::string::npos);
  fs::remove_all(dir);
}

/// A result as the typed reader gives it: workload, batch size,
/// hyperparameters, platform and each run's status and epochs.
Result result(int64_t bs, std::vector<std::pair<std::string, double>> runs) {
  Result r;
  r.created = "2026-11-21T14:00:00Z";
  r.spec.workload = "dlrm";
  r.spec.backend = "cpu";
  r.spec.params = {{"batch_size", bs}};
  r.environment = {{"cpu_model", "Test CPU"}};
  r.plan.global_batch_size = bs;
  r.plan.hyperparameters = {{"opt_name", "sgd"}};
  for (const auto& [status, epochs] : runs) {
    ResultRun run;
    run.status = status;
    run.epochs = epochs;
    r.runs.push_back(run);
  }
  return r;
}

TEST(Rcp, BuildFromResults) {
  const auto rcps =
      build_rcps({result(512, {{"success", 1.23456}, {"aborted", 9}, {"success", 1.5}}),
                  result(256, {{"success", 1}, {"success", 1.1}, {"success", 1.2}}),
                  result(512, {{"success", 1.4}})});
  ASSERT_EQ(rcps.size(), 2u);
  EXPECT_EQ(rcps[0].batch_size, 256);
  EXPECT_EQ(rcps[1].key(), "dlrm_ref_512");
  EXPECT_EQ(rcps[1].epochs_to_converge, (std::vector<double>{1.235, 1.5, 1.4}));
  EXPECT_EQ(rcps[1].hyperparams, (nlohmann::json{{"batch_size", 512}, {"opt_name", "sgd"}}));
  EXPECT_EQ(rcps[1].platform, "Test CPU");
  EXPECT_EQ(rcps[1].creator, "perflab");

  EXPECT_THROW(build_rcps({}), UsageError);
  auto bert = result(128, {{"success", 1}, {"success", 1}, {"success", 1}});
  bert.spec.workload = "bert";
  EXPECT_THROW(build_rcps({result(256, {{"success", 1}, {"success", 1}, {"success", 1}}), bert}),
               UsageError);
  EXPECT_THROW(build_rcps({result(512, {{"success", 1}, {"success", 1}, {"aborted", 1}})}),
               UsageError);
  auto other = result(256, {{"success", 1}, {"success", 1}, {"success", 1}});
  other.plan.hyperparameters["opt_name"] = "adam";
  try {
    build_rcps({result(256, {{"success", 1}, {"success", 1}, {"success", 1}}), other});
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("differ in hyperparameter opt_name"), std::string::npos);
  }
}

TEST(Rcp, CheckResultDocument) {
  auto r = result(1024, {{"success", 2.3}, {"success", 2.4}, {"aborted", 0.5}});
  const RcpCheck c = check_rcp_result(two_rcps(), r);
  EXPECT_EQ(c.runs, 3u);
  EXPECT_EQ(c.converged_runs, 2u);
  EXPECT_NEAR(c.submission_mean, 2.4, 1e-12);  // The aborted run is the slowest.
  EXPECT_EQ(rcp_check_to_json(c)["verdict"], verdict_name(c.verdict));
  EXPECT_THROW(check_rcp_result(two_rcps(), Result{}), UsageError);  // no workload, no batch size
}

TEST(Rcp, CheckResultsGroupsSeedsByBatchSize) {
  // A sweep stores one result per seed: the three results at 1024 are one
  // submission and must give the same check as one result with three runs.
  const auto grouped = check_rcp_results(
      two_rcps(), {result(1024, {{"success", 2.3}}), result(2048, {{"success", 3.0}}),
                   result(1024, {{"success", 2.4}}), result(1024, {{"aborted", 0.5}})});
  ASSERT_EQ(grouped.size(), 2u);
  EXPECT_EQ(grouped[0].batch_size, 1024);
  EXPECT_EQ(grouped[1].batch_size, 2048);
  const RcpCheck one = check_rcp_result(
      two_rcps(), result(1024, {{"success", 2.3}, {"success", 2.4}, {"aborted", 0.5}}));
  EXPECT_EQ(grouped[0].runs, one.runs);
  EXPECT_DOUBLE_EQ(grouped[0].submission_mean, one.submission_mean);
  EXPECT_EQ(grouped[0].verdict, one.verdict);
}

}  // namespace
}  // namespace perflab::reports
