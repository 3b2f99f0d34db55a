// Lays out perflab results as an MLPerf training submission folder, the
// layout mlperf_logging's package_checker and result_summarizer read:
//   DIR/results/<system>/<benchmark>/result_<i>.txt   each run's MLLOG log
//   DIR/systems/<system>.json                         the system description
// The folder is built beside DIR and renamed into place, so DIR either
// appears complete or not at all.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include "harness/result_model.h"
#include <string>
#include <utility>
#include <vector>

namespace perflab::reports {

/// A result and the invocation folder holding its run_<i>.log files.
struct ResultSource {
  Result result;
  std::filesystem::path dir;
};

/// Reads results: a result.json file, a folder holding one, or a folder
/// whose subfolders hold them (taken in name order). Throws UsageError for a
/// path that is none of these or a result.json that is not a JSON object.
std::vector<ResultSource> load_result_sources(const std::vector<std::filesystem::path>& paths);

/// What the system description says beyond what the environment knows.
struct MlperfExportOptions {
  std::string system_name;            ///< Empty: the hostname the results share.
  std::string submitter = "perflab";  ///< As the logs' submission_org.
  std::string division = "open";      ///< As the logs' submission_division.
  std::string status = "Research, Development, or Internal (RDI)";
};

/// What an export wrote.
struct ExportSummary {
  std::filesystem::path out_dir;
  std::string system_name;
  /// (benchmark, number of result files), in benchmark name order.
  std::vector<std::pair<std::string, size_t>> benchmarks;
};

/// The system description (systems/<name>.json) in MLPerf's format: every
/// field the system_desc_checker requires, filled from the result's
/// `environment` where it is known and "" where it is not. A run on the
/// cuda backend uses one device (accelerators_per_node "1", its name,
/// memory and clock); any other backend uses none ("0"). The environment
/// does not count sockets, so host_processors_per_node is "1" (the
/// summarizer needs an integer) and hw_notes says so.
nlohmann::ordered_json system_description(const Result& result,
                                          const std::string& system_name,
                                          const MlperfExportOptions& options);

/// Writes the folder. Runs go to results/<system>/<workload>/result_<i>.txt,
/// numbered from 0 in the order of `results` and of each result's runs.
/// Throws UsageError when there are no results, a run's log is missing,
/// results come from several hosts and no system name is given, the name is
/// not a plain file name, or `out_dir` exists and is not an empty folder.
/// On any error nothing is left at `out_dir` or beside it.
ExportSummary export_mlperf(const std::vector<ResultSource>& results,
                            const std::filesystem::path& out_dir,
                            const MlperfExportOptions& options = {});

}  // namespace perflab::reports
