// Reference convergence points (RCPs), MLPerf style: per batch size, the
// epochs-to-converge of reference runs, kept in the JSON layout of the
// mlcommons/logging rcp_checker's rcps_<benchmark>.json files, and the
// checker's test of whether a new set of runs converges suspiciously faster
// than the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness/result_model.h"
#include <optional>
#include <string>
#include <vector>

namespace perflab::reports {

/// One reference convergence point: the converged reference runs of one
/// benchmark at one global batch size. In the file it is one entry,
/// keyed `<benchmark>_ref_<batch size>`.
struct RcpEntry {
  std::string benchmark;                                  ///< "Benchmark", e.g. "dlrm".
  int64_t batch_size = 0;                                 ///< "BS": global batch size.
  nlohmann::json hyperparams = nlohmann::json::object();  ///< "Hyperparams".
  std::vector<double> epochs_to_converge;                 ///< "Epochs to converge", >= 3 values.
  std::string creator;                                    ///< "Creator".
  std::string when;                                       ///< "When": the newest result's time.
  std::string platform;                                   ///< "Platform".

  /// The entry's key in the file: `<benchmark>_ref_<batch size>`.
  std::string key() const;
};

/// Groups sweep results (read by the typed reader) by workload and
/// `plan.global_batch_size`, one entry per batch size, ascending. Epochs are
/// the successful runs' `runs[].epochs`, rounded to 3 decimals as the
/// rcp_checker rounds a log's `epoch_num`; aborted runs are left out.
/// Hyperparams are `plan.hyperparameters` plus `spec.params` (the plan's
/// value wins on a shared name). Throws UsageError when there are no
/// results, results name different workloads, two results at one batch size
/// disagree on a hyperparameter, or a batch size has fewer than 3 converged
/// runs.
std::vector<RcpEntry> build_rcps(const std::vector<Result>& results);

/// The RCP document: one object whose members are the entries, ascending by
/// batch size, each with the fields in the order the official files use.
nlohmann::ordered_json rcps_to_json(const std::vector<RcpEntry>& rcps);

/// Parses an RCP document; `source` names it in errors. Accepts
/// "samples to converge" where "Epochs to converge" is missing (the
/// checker's spelling for some benchmarks). Throws UsageError
/// "SOURCE: problem" for anything malformed: not an object, missing or
/// mistyped fields, fewer than 3 values, a batch size given twice, entries
/// for different benchmarks.
std::vector<RcpEntry> rcps_from_json(const nlohmann::json& doc, const std::string& source);

/// Writes the RCP document to `path` atomically (two-space indented JSON).
void write_rcps(const std::filesystem::path& path, const std::vector<RcpEntry>& rcps);

/// Reads an RCP file. Throws UsageError naming the file and the problem.
std::vector<RcpEntry> read_rcps(const std::filesystem::path& path);

/// Which RCPs a check uses. The package checker and result summarizer use
/// the pruned set; `--rcp_pass full_rcps` of the rcp_checker uses all.
enum class RcpPass { kPruned, kFull };

/// Options of a check; the defaults are the checker's.
struct RcpCheckOptions {
  /// MLPerf's required run count for the benchmark (10 for DLRM). 0 means
  /// the number of runs given to the check.
  /// 0 with an MLPerf benchmark: its own (harness/mlperf_benchmarks.h).
  /// The values each olympic mean drops from each end (RCP mean and the
  /// submission's), and the runs that may fail, are always the
  /// benchmark's there (4 for unet3d, 1 otherwise).
  size_t submission_runs = 0;
  RcpPass pass = RcpPass::kPruned;
  double alpha = 0.05;  ///< One-sided significance level.
};

/// The outcome of a check.
enum class RcpVerdict { kPassed, kFailed, kNotCheckable };

/// Which reference the submission was compared with.
enum class RcpBasis {
  kNone,          ///< No comparison was possible.
  kExact,         ///< An RCP at the submission's batch size.
  kInterpolated,  ///< Mean and stddev interpolated between two RCPs.
  kSmallestBatch  ///< Below every RCP batch size: the smallest RCP.
};

/// A check's verdict and numbers. Fields that were not computed stay 0.
struct RcpCheck {
  RcpVerdict verdict = RcpVerdict::kNotCheckable;
  RcpBasis basis = RcpBasis::kNone;
  int64_t batch_size = 0;
  size_t runs = 0;                             ///< Runs given.
  size_t converged_runs = 0;                   ///< Of which converged.
  double submission_mean = 0;                  ///< Olympic mean of the submission's epochs.
  double rcp_mean = 0;                         ///< Olympic mean of the reference epochs.
  double rcp_stddev = 0;                       ///< Population stddev of all reference epochs.
  double reference_samples = 0;                ///< n_ref in the t-test.
  double submission_samples = 0;               ///< n_sub in the t-test.
  double min_epochs = 0;                       ///< Fastest acceptable submission mean.
  double max_speedup = 0;                      ///< rcp_mean / min_epochs.
  double normalization_factor = 1;             ///< max(1, rcp_mean / submission_mean).
  std::vector<int64_t> reference_batch_sizes;  ///< RCP(s) used, ascending.
  std::string explanation;                     ///< One line.
};

/// Checks one batch size's runs against RCPs the way the rcp_checker
/// does (see rcp.cc for the rule and formula). `epochs` holds one value per
/// run; nullopt is a run that did not converge. Entries of other benchmarks
/// than `benchmark` are ignored. Never throws for data that cannot be
/// checked: the verdict says so.
RcpCheck check_rcp(const std::vector<RcpEntry>& rcps, const std::string& benchmark,
                   int64_t batch_size, const std::vector<std::optional<double>>& epochs,
                   const RcpCheckOptions& options = {});

/// Checks a result's runs (workload, `plan.global_batch_size`,
/// `runs[].epochs` rounded to 3 decimals, aborted runs as not converged).
/// Throws UsageError for a result without a workload or batch size, or a
/// converged run without epochs.
RcpCheck check_rcp_result(const std::vector<RcpEntry>& rcps, const Result& result,
                          const RcpCheckOptions& options = {});

/// Checks the runs of any number of results (e.g. one result per seed from
/// a sweep), grouped by workload and batch size: one check per group, in
/// (workload, batch size) order.
std::vector<RcpCheck> check_rcp_results(const std::vector<RcpEntry>& rcps,
                                        const std::vector<Result>& results,
                                        const RcpCheckOptions& options = {});

/// "passed", "failed" or "not checkable".
std::string verdict_name(RcpVerdict verdict);

/// The check as JSON (for reports and the CLI).
nlohmann::json rcp_check_to_json(const RcpCheck& check);

}  // namespace perflab::reports
