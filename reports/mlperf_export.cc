// MLPerf submission folder export: result logs under results/, the system
// description under systems/, built in a hidden folder and renamed.
#include "reports/mlperf_export.h"

#include "reports/result_set.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "harness/atomic_file.h"
#include "base/error.h"
#include "base/json_number.h"
#include "harness/input_file.h"

namespace perflab::reports {
namespace {

namespace fs = std::filesystem;


std::string text_of(const nlohmann::json& doc, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  if (!doc.contains(p)) return "";
  const auto& v = doc.at(p);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return "";
}

std::string gigabytes(const nlohmann::json& doc, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  if (!doc.contains(p) || !doc.at(p).is_number()) return "";
  return fmt::format("{:.0f} GB", doc.at(p).get<double>() / 1e9);
}

/// Keeps letters, digits, '.', '-' and '_'; anything else becomes '_'.
std::string file_name_safe(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    if (!ok) c = '_';
  }
  return out;
}

/// A name taken from data that can name one folder or file inside the
/// export: only letters, digits, '.', '-' and '_', and not "." or ".." (which
/// file_name_safe keeps, and which would climb out of the folder).
bool is_folder_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name == file_name_safe(name);
}

std::string pick_system_name(const std::vector<ResultSource>& results,
                             const std::string& requested) {
  if (!requested.empty()) {
    if (!is_folder_name(requested)) {
      throw UsageError(fmt::format(
          "system name \"{}\" must use only letters, digits, '.', '-' and '_'", requested));
    }
    return requested;
  }
  std::set<std::string> hosts;
  for (const auto& r : results) hosts.insert(r.result.environment_text("/hostname"));
  if (hosts.size() > 1) {
    throw UsageError(
        fmt::format("results come from {} hosts ({}); give a system name for the export",
                    hosts.size(), fmt::join(hosts, ", ")));
  }
  const std::string host = *hosts.begin();
  if (host.empty()) return "perflab_system";
  if (!is_folder_name(file_name_safe(host))) {
    throw UsageError(fmt::format("the results' hostname \"{}\" cannot name a folder; give one with --system NAME",
                                 host));
  }
  return file_name_safe(host);
}

/// Which log files go where: benchmark -> source log paths, in order.
std::map<std::string, std::vector<fs::path>> plan_logs(const std::vector<ResultSource>& results) {
  std::map<std::string, std::vector<fs::path>> logs;
  for (const auto& r : results) {
    const std::string& workload = r.result.spec.workload;
    if (workload.empty() || r.result.runs.empty()) {
      throw UsageError(fmt::format("{}: result has no spec.workload or no runs",
                                   (r.dir / "result.json").string()));
    }
    if (!is_folder_name(workload)) {
      throw UsageError(
          fmt::format("{}: workload name \"{}\" cannot name a folder", r.dir.string(), workload));
    }
    for (const ResultRun& run : r.result.runs) {
      const std::string& log = run.log;
      if (!is_folder_name(log)) {
        throw UsageError(fmt::format("{}: a run has no usable log name", r.dir.string()));
      }
      const fs::path path = r.dir / log;
      if (!fs::is_regular_file(path)) {
        throw UsageError(fmt::format("{}: run log missing", path.string()));
      }
      logs[workload].push_back(path);
    }
  }
  return logs;
}

/// Removes a partial folder when the export does not complete.
class PartialDir {
 public:
  explicit PartialDir(fs::path dir) : dir_(std::move(dir)) {}
  PartialDir(const PartialDir&) = delete;
  PartialDir& operator=(const PartialDir&) = delete;
  ~PartialDir() {
    if (armed_) {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }
  const fs::path& path() const { return dir_; }
  void release() { armed_ = false; }

 private:
  fs::path dir_;
  bool armed_ = true;
};

}  // namespace

std::vector<ResultSource> load_result_sources(const std::vector<fs::path>& paths) {
  // The same reader as the reports, but strict: a file that is not a valid
  // result stops an export or an RCP computation instead of being skipped.
  ResultSet set = load_result_set(paths);
  if (!set.skipped.empty()) throw UsageError(set.skipped.front());
  if (set.results.empty()) {
    std::string where = paths.empty() ? std::string("(no paths)") : paths.front().string();
    throw UsageError(fmt::format("{}: no result.json in it or its subfolders", where));
  }
  std::vector<ResultSource> results;
  for (auto& r : set.results) results.push_back({std::move(r.view), r.path.parent_path()});
  return results;
}

nlohmann::ordered_json system_description(const Result& result,
                                          const std::string& system_name,
                                          const MlperfExportOptions& options) {
  // The environment is free-form machine facts: read by JSON pointer here.
  const nlohmann::json& environment = result.environment;
  // A hand-edited environment may hold anything at /cuda/devices: a list is read, anything else is none.
  const auto devices_at = "/cuda/devices"_json_pointer;
  const nlohmann::json devices = environment.contains(devices_at) && environment.at(devices_at).is_array()
                                     ? environment.at(devices_at)
                                     : nlohmann::json::array();
  const bool on_device = result.spec.backend == "cuda" && !devices.empty();
  const nlohmann::json first_device = on_device ? devices[0] : nlohmann::json::object();
  std::string software = text_of(environment, "/compiler");
  for (const auto& [label, pointer] :
       std::vector<std::pair<const char*, const char*>>{{"OpenBLAS", "/openblas/config"},
                                                        {"CUDA", "/cuda/runtime_version"},
                                                        {"cuDNN", "/cuda/cudnn_version"},
                                                        {"NCCL", "/cuda/nccl_version"}}) {
    const std::string v = text_of(environment, pointer);
    if (v.empty()) continue;
    software += fmt::format("{}{}", software.empty() ? "" : ", ",
                            v.rfind(label, 0) == 0 ? v : fmt::format("{} {}", label, v));
  }
  std::string os = text_of(environment, "/distribution");
  const std::string kernel = text_of(environment, "/os");
  if (!kernel.empty()) os += os.empty() ? kernel : fmt::format(" ({})", kernel);

  nlohmann::ordered_json d;
  d["submitter"] = options.submitter;
  d["division"] = options.division;
  d["status"] = options.status;
  d["system_name"] = system_name;
  d["number_of_nodes"] = "1";
  d["host_processors_per_node"] = "1";
  d["host_processor_model_name"] = text_of(environment, "/cpu_model");
  d["host_processor_core_count"] = "";
  d["host_processor_vcpu_count"] = text_of(environment, "/logical_cores");
  d["host_processor_frequency"] = "";
  d["host_processor_caches"] = "";
  d["host_processor_interconnect"] = "";
  d["host_memory_capacity"] = gigabytes(environment, "/memory_bytes");
  d["host_storage_type"] = "";
  d["host_storage_capacity"] = "";
  d["host_networking"] = "";
  d["host_networking_topology"] = "";
  d["host_memory_configuration"] = "";
  d["accelerators_per_node"] = on_device ? "1" : "0";
  d["accelerator_model_name"] = text_of(first_device, "/name");
  d["accelerator_host_interconnect"] = "";
  const std::optional<int64_t> clock_khz =
      first_device.contains("clock_rate_khz") ? json_number<int64_t>(first_device["clock_rate_khz"]) : std::nullopt;
  d["accelerator_frequency"] = clock_khz ? fmt::format("{} MHz", *clock_khz / 1000) : "";
  d["accelerator_on-chip_memories"] = "";
  d["accelerator_memory_configuration"] = "";
  d["accelerator_memory_capacity"] = gigabytes(first_device, "/memory_bytes");
  d["accelerator_interconnect"] = "";
  d["accelerator_interconnect_topology"] = "";
  d["cooling"] = "";
  d["hw_notes"] =
      "exported by perflab; host_processors_per_node not measured (1 assumed); "
      "host_processor_vcpu_count is the logical core count";
  d["framework"] = fmt::format("perflab {}", text_of(environment, "/perflab_version"));
  d["other_software_stack"] = software;
  d["operating_system"] = os;
  d["sw_notes"] = fmt::format("perflab git revision {}", text_of(environment, "/git_revision"));
  return d;
}

namespace {

/// Writes the results and systems folders under `root`.
void write_folder(const fs::path& root, const std::string& system,
                  const std::map<std::string, std::vector<fs::path>>& logs,
                  const ResultSource& first, const MlperfExportOptions& options,
                  ExportSummary& summary) {
  for (const auto& [benchmark, paths] : logs) {
    const fs::path dir = root / "results" / system / benchmark;
    fs::create_directories(dir);
    for (size_t i = 0; i < paths.size(); ++i) {
      write_file_atomically(dir / fmt::format("result_{}.txt", i), read_document(paths[i]));
    }
    summary.benchmarks.emplace_back(benchmark, paths.size());
  }
  fs::create_directories(root / "systems");
  const auto desc = system_description(first.result, system, options);
  write_file_atomically(root / "systems" / (system + ".json"), desc.dump(2) + "\n");
}

}  // namespace

ExportSummary export_mlperf(const std::vector<ResultSource>& results, const fs::path& out_dir,
                            const MlperfExportOptions& options) {
  if (results.empty()) throw UsageError("no results to export");
  if (out_dir.empty()) throw UsageError("no export folder given");
  if (fs::exists(out_dir) && !(fs::is_directory(out_dir) && fs::is_empty(out_dir))) {
    throw UsageError(
        fmt::format("{}: already exists and is not an empty folder", out_dir.string()));
  }
  const std::string system = pick_system_name(results, options.system_name);
  const auto logs = plan_logs(results);

  const fs::path target = fs::absolute(out_dir).lexically_normal();
  const fs::path parent = target.parent_path();
  ensure_writable_directory(parent);
  PartialDir partial(parent /
                     fmt::format(".{}.partial.{}", target.filename().string(), ::getpid()));
  fs::remove_all(partial.path());

  ExportSummary summary{out_dir, system, {}};
  try {
    write_folder(partial.path(), system, logs, results.front(), options, summary);
  } catch (const fs::filesystem_error& e) {
    throw Error(fmt::format("cannot write {}: {}", out_dir.string(), e.code().message()));
  }
  std::error_code ec;
  if (fs::exists(target)) fs::remove(target, ec);  // Known empty: checked above.
  fs::rename(partial.path(), target, ec);
  if (ec) throw Error(fmt::format("cannot create {}: {}", out_dir.string(), ec.message()));
  partial.release();
  return summary;
}

}  // namespace perflab::reports
