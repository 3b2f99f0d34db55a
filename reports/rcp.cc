// Reference convergence points: building them from sweep results, the JSON
// file format, and the rcp_checker's convergence test.
//
// The test, as mlperf_logging's rcp_checker (4.1.x) implements it:
//  1. Reference statistics per RCP entry with values e_1..e_m:
//       rcp_mean   = olympic mean: sort, drop d values from each end (the
//                    benchmark's: 4 for unet3d, 1 otherwise;
//                    harness/mlperf_benchmarks.h), average the other m - 2d;
//       rcp_stddev = population standard deviation (numpy std, ddof 0) of
//                    all m values.
//  2. The fastest acceptable submission mean ("Min Epochs") is the mean at
//     which a one-sided, equal-variance two-sample t-test (scipy's
//     ttest_ind_from_stats, both samples given stddev rcp_stddev) reaches
//     p = alpha = 0.05:
//       min_epochs = rcp_mean - t_{1-alpha, df} * rcp_stddev * sqrt(1/n_ref + 1/n_sub)
//       df = n_ref + n_sub - 2
//     with n_sub = S - 2 (S: MLPerf's required run count for the benchmark)
//     and n_ref = m - 2d for an exact entry, n_ref = 2 S for an interpolated
//     one. The checker finds this mean by bisection on [0, rcp_mean] to
//     1e-4 epochs; we use the closed form (clamped at 0), so the bounds
//     agree to within 1e-4. rcp_stddev == 0 gives min_epochs = rcp_mean.
//     df = 0 (3 reference runs and 3 required runs) has no t quantile: the
//     checker then settles on rcp_mean; we report "not checkable".
//     max_speedup = rcp_mean / min_epochs.
//  3. Which entry: the one at the submission's batch size; otherwise the
//     nearest lower and higher batch sizes, with rcp_mean and rcp_stddev
//     interpolated linearly in batch size; below every batch size, the
//     smallest one (passing there is accepted: a smaller batch converging
//     no faster); above every batch size, none ("Missing RCP").
//     The pruned set (what the package checker uses) first drops every
//     entry with a smaller batch size than the fastest-converging one, then,
//     walking up, each entry whose mean is above the interpolation of its
//     neighbours.
//  4. The submission: each run's epochs (a run that did not converge counts
//     as 1e9; more than d such runs fail the check); the olympic mean as
//     in 1, dropping d from each end. It passes when submission_mean >= rcp_mean / max_speedup, i.e.
//     >= min_epochs. The normalization factor max(1, rcp_mean /
//     submission_mean) is what a passing but faster submission's time to
//     train is multiplied by (the checker writes it to scaling.json).
#include "reports/rcp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "harness/atomic_file.h"
#include "base/error.h"
#include "harness/input_file.h"
#include "harness/json_text.h"
#include "harness/mlperf_benchmarks.h"
#include "harness/scoring.h"
#include "reports/statistics.h"

namespace perflab::reports {
namespace {

constexpr double kNotConverged = 1e9;  // The checker's stand-in for a failed run.

double round3(double epochs) { return std::round(epochs * 1000.0) / 1000.0; }

/// The olympic mean dropping `drop` from each end, as the checker does (the
/// stand-in value already marks the runs that failed as the slowest);
/// callers make sure more than 2 * drop values remain.
double olympic_mean_of(const std::vector<double>& values, size_t drop) {
  return mlperf_olympic_average(values, 0, drop).value_or(std::nan(""));
}

double population_stddev(const std::vector<double>& values) {
  if (values.empty()) return 0;
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size()));
}

double interpolate(double x, double x0, double x1, double y0, double y1) {
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

/// An RCP entry with the checker's statistics.
struct RcpStats {
  int64_t batch_size = 0;
  double mean = 0;
  double stddev = 0;
  double reference_samples = 0;
};

double min_acceptable_mean(double rcp_mean, double stddev, double n_ref, double n_sub,
                           double alpha) {
  if (stddev == 0) return rcp_mean;
  const double df = n_ref + n_sub - 2;
  const double bound =
      rcp_mean - student_t_quantile(1 - alpha, df) * stddev * std::sqrt(1 / n_ref + 1 / n_sub);
  return std::max(0.0, bound);
}

/// The checker's pruning: keep batch sizes from the fastest-converging
/// entry up, then drop each entry slower than its neighbours' interpolation.
std::vector<RcpStats> prune(std::vector<RcpStats> stats) {
  if (stats.empty()) return stats;
  auto fastest = std::min_element(stats.begin(), stats.end(),
                                  [](const auto& a, const auto& b) { return a.mean < b.mean; });
  stats.erase(stats.begin(), fastest);
  for (size_t i = 1; i + 1 < stats.size();) {
    const double expected = interpolate(
        static_cast<double>(stats[i].batch_size), static_cast<double>(stats[i - 1].batch_size),
        static_cast<double>(stats[i + 1].batch_size), stats[i - 1].mean, stats[i + 1].mean);
    if (stats[i].mean > expected) {
      stats.erase(stats.begin() + static_cast<std::ptrdiff_t>(i));  // Then look at i again.
    } else {
      ++i;
    }
  }
  return stats;
}

const nlohmann::json& member(const nlohmann::json& object, const char* name,
                             const std::string& where) {
  auto it = object.find(name);
  if (it == object.end()) throw UsageError(fmt::format("{}: missing \"{}\"", where, name));
  return *it;
}

std::string string_member(const nlohmann::json& entry, const char* name, const std::string& where) {
  auto it = entry.find(name);
  if (it == entry.end()) return "";
  if (!it->is_string()) throw UsageError(fmt::format("{}: \"{}\" is not a string", where, name));
  return it->get<std::string>();
}

RcpEntry entry_from_json(const std::string& key, const nlohmann::json& value,
                         const std::string& source) {
  const std::string where = fmt::format("{}: entry \"{}\"", source, key);
  if (!value.is_object()) throw UsageError(where + " is not an object");
  RcpEntry entry;
  const auto& benchmark = member(value, "Benchmark", where);
  if (!benchmark.is_string() || benchmark.get<std::string>().empty()) {
    throw UsageError(where + ": \"Benchmark\" is not a non-empty string");
  }
  entry.benchmark = benchmark.get<std::string>();
  const auto& bs = member(value, "BS", where);
  if (!bs.is_number_integer() || bs.get<int64_t>() < 1) {
    throw UsageError(where + ": \"BS\" is not a positive integer");
  }
  entry.batch_size = bs.get<int64_t>();
  const auto& hyperparams = member(value, "Hyperparams", where);
  if (!hyperparams.is_object()) throw UsageError(where + ": \"Hyperparams\" is not an object");
  entry.hyperparams = hyperparams;
  const char* list_name =
      value.contains("Epochs to converge") ? "Epochs to converge" : "samples to converge";
  const auto& list = member(value, list_name, where);
  if (!list.is_array()) throw UsageError(fmt::format("{}: \"{}\" is not a list", where, list_name));
  for (const auto& v : list) {
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
      throw UsageError(
          fmt::format("{}: \"{}\" holds {}, not a positive number", where, list_name, v.dump()));
    }
    entry.epochs_to_converge.push_back(v.get<double>());
  }
  if (entry.epochs_to_converge.size() < 3) {
    throw UsageError(fmt::format("{}: \"{}\" has {} value(s); an RCP needs at least 3", where,
                                 list_name, entry.epochs_to_converge.size()));
  }
  entry.creator = string_member(value, "Creator", where);
  entry.when = string_member(value, "When", where);
  entry.platform = string_member(value, "Platform", where);
  return entry;
}

std::string platform_of(const Result& result) {
  if (result.spec.backend == "cuda") {
    const std::string device = result.environment_text("/cuda/devices/0/name");
    if (!device.empty()) return device;
    if (!result.environment_text("/cuda/devices/0").empty()) return "GPU";
  }
  return result.environment_text("/cpu_model");
}

std::string result_name(const Result& result) {
  return fmt::format("result {}", result.created.empty() ? "(undated)" : result.created);
}

/// What the RCP code reads from a result: its workload, batch size and each
/// run's epochs (rounded as the checker rounds epoch_num; nullopt for a run
/// that did not converge).
struct ResultRuns {
  std::string workload;
  int64_t batch_size = 0;
  std::vector<std::optional<double>> epochs;
};

ResultRuns read_result_runs(const Result& result) {
  const std::string what = result_name(result);
  if (result.spec.workload.empty() || result.plan.global_batch_size < 1) {
    throw UsageError(what + ": no spec.workload or plan.global_batch_size");
  }
  ResultRuns out{result.spec.workload, result.plan.global_batch_size, {}};
  for (const ResultRun& run : result.runs) {
    if (!run.success()) {
      out.epochs.emplace_back();
      continue;
    }
    if (!run.epochs) throw UsageError(what + ": a converged run has no epochs");
    out.epochs.emplace_back(round3(*run.epochs));
  }
  return out;
}

}  // namespace

std::string RcpEntry::key() const { return fmt::format("{}_ref_{}", benchmark, batch_size); }

std::vector<RcpEntry> build_rcps(const std::vector<Result>& results) {
  if (results.empty()) throw UsageError("no results to build reference convergence points from");
  std::map<int64_t, RcpEntry> by_batch;
  std::string benchmark;
  for (const auto& result : results) {
    const ResultRuns read = read_result_runs(result);
    if (benchmark.empty()) benchmark = read.workload;
    if (read.workload != benchmark) {
      throw UsageError(fmt::format("results are for different workloads ({} and {})", benchmark,
                                   read.workload));
    }
    nlohmann::json hyperparams = result.spec.params;
    hyperparams.update(result.plan.hyperparameters);

    RcpEntry& entry = by_batch[read.batch_size];
    if (entry.benchmark.empty()) {
      entry.benchmark = read.workload;
      entry.batch_size = read.batch_size;
      entry.hyperparams = hyperparams;
      entry.creator = "perflab";
      entry.platform = platform_of(result);
    } else if (entry.hyperparams != hyperparams) {
      for (const auto& [name, value] : hyperparams.items()) {
        if (entry.hyperparams.value(name, nlohmann::json()) != value) {
          throw UsageError(fmt::format("results at batch size {} differ in hyperparameter {}",
                                       entry.batch_size, name));
        }
      }
      throw UsageError(fmt::format("results at batch size {} differ in their hyperparameters",
                                   entry.batch_size));
    }
    entry.when = std::max(entry.when, result.created);
    for (const auto& epochs : read.epochs) {
      if (epochs) entry.epochs_to_converge.push_back(*epochs);
    }
  }
  std::vector<RcpEntry> entries;
  for (auto& [batch, entry] : by_batch) {
    if (entry.epochs_to_converge.size() < 3) {
      throw UsageError(fmt::format("batch size {} has {} converged run(s); an RCP needs at least 3",
                                   batch, entry.epochs_to_converge.size()));
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

nlohmann::ordered_json rcps_to_json(const std::vector<RcpEntry>& rcps) {
  std::vector<const RcpEntry*> sorted;
  for (const auto& e : rcps) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->batch_size < b->batch_size; });
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const RcpEntry* e : sorted) {
    nlohmann::ordered_json entry;
    entry["Benchmark"] = e->benchmark;
    entry["Creator"] = e->creator;
    entry["When"] = e->when;
    entry["Platform"] = e->platform;
    entry["BS"] = e->batch_size;
    entry["Hyperparams"] = nlohmann::ordered_json::parse(e->hyperparams.dump());
    entry["Epochs to converge"] = e->epochs_to_converge;
    doc[e->key()] = std::move(entry);
  }
  return doc;
}

std::vector<RcpEntry> rcps_from_json(const nlohmann::json& doc, const std::string& source) {
  if (!doc.is_object()) throw UsageError(source + ": an RCP file holds one JSON object");
  std::vector<RcpEntry> entries;
  for (const auto& [key, value] : doc.items()) {
    entries.push_back(entry_from_json(key, value, source));
    const RcpEntry& e = entries.back();
    if (e.benchmark != entries.front().benchmark) {
      throw UsageError(fmt::format("{}: entries for different benchmarks ({} and {})", source,
                                   entries.front().benchmark, e.benchmark));
    }
    for (size_t i = 0; i + 1 < entries.size(); ++i) {
      if (entries[i].batch_size == e.batch_size) {
        throw UsageError(fmt::format("{}: batch size {} appears twice", source, e.batch_size));
      }
    }
  }
  if (entries.empty()) throw UsageError(source + ": no RCP entries");
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.batch_size < b.batch_size; });
  return entries;
}

void write_rcps(const std::filesystem::path& path, const std::vector<RcpEntry>& rcps) {
  if (rcps.empty()) throw UsageError("no reference convergence points to write");
  write_file_atomically(path, rcps_to_json(rcps).dump(2) + "\n");
}

std::vector<RcpEntry> read_rcps(const std::filesystem::path& path) {
  const std::string text = read_document(path);
  std::string problem;
  const nlohmann::json doc = parse_json_text(text, &problem);
  if (doc.is_discarded()) throw UsageError(fmt::format("{}: not JSON: {}", path.string(), problem));
  return rcps_from_json(doc, path.string());
}

RcpCheck check_rcp(const std::vector<RcpEntry>& rcps, const std::string& benchmark,
                   int64_t batch_size, const std::vector<std::optional<double>>& epochs,
                   const RcpCheckOptions& options) {
  RcpCheck check;
  check.batch_size = batch_size;
  check.runs = epochs.size();
  std::vector<double> values;
  for (const auto& e : epochs) {
    values.push_back(e ? *e : kNotConverged);
    if (e) ++check.converged_runs;
  }
  const MlperfBenchmarkFacts facts = mlperf_benchmark(benchmark);
  const size_t required = options.submission_runs   ? options.submission_runs
                          : facts.submission_runs ? facts.submission_runs
                                                  : epochs.size();
  if (epochs.size() < 3 || required < 3) {
    check.explanation = fmt::format(
        "{} run(s) given, {} required: the olympic mean needs at least 3", epochs.size(), required);
    return check;
  }
  const size_t drop = std::max<size_t>(1, facts.dropped_each_end);
  if (epochs.size() <= 2 * drop) {
    check.explanation = fmt::format("{} run(s) given: {}'s olympic mean drops {} from each end and needs more",
                                    epochs.size(), benchmark, drop);
    return check;
  }
  if (check.runs - check.converged_runs > drop) {
    check.verdict = RcpVerdict::kFailed;
    check.explanation = fmt::format("insufficient convergence: {} of {} runs did not converge",
                                    check.runs - check.converged_runs, check.runs);
    return check;
  }
  check.submission_mean = olympic_mean_of(values, drop);

  std::vector<RcpStats> stats;
  for (const auto& e : rcps) {
    if (e.benchmark != benchmark) continue;
    if (e.epochs_to_converge.size() <= 2 * drop) continue;  // nothing left after the olympic drop
    stats.push_back({e.batch_size, olympic_mean_of(e.epochs_to_converge, drop),
                     population_stddev(e.epochs_to_converge),
                     static_cast<double>(e.epochs_to_converge.size() - 2 * drop)});
  }
  std::sort(stats.begin(), stats.end(),
            [](const auto& a, const auto& b) { return a.batch_size < b.batch_size; });
  if (options.pass == RcpPass::kPruned) stats = prune(std::move(stats));
  if (stats.empty()) {
    check.explanation = fmt::format("no RCPs for benchmark {}", benchmark);
    return check;
  }

  const double n_sub = static_cast<double>(required - 2);
  check.submission_samples = n_sub;
  auto above = std::find_if(stats.begin(), stats.end(),
                            [&](const auto& s) { return s.batch_size >= batch_size; });
  if (above == stats.end()) {
    check.explanation =
        fmt::format("missing RCP: batch size {} is above every RCP batch size (largest {})",
                    batch_size, stats.back().batch_size);
    return check;
  }
  RcpStats ref = *above;
  if (above->batch_size == batch_size) {
    check.basis = RcpBasis::kExact;
    check.reference_batch_sizes = {ref.batch_size};
  } else if (above == stats.begin()) {
    check.basis = RcpBasis::kSmallestBatch;
    check.reference_batch_sizes = {ref.batch_size};
  } else {
    const RcpStats& low = *(above - 1);
    const auto x = static_cast<double>(batch_size);
    const auto x0 = static_cast<double>(low.batch_size);
    const auto x1 = static_cast<double>(above->batch_size);
    ref.batch_size = batch_size;
    ref.mean = interpolate(x, x0, x1, low.mean, above->mean);
    ref.stddev = interpolate(x, x0, x1, low.stddev, above->stddev);
    ref.reference_samples = 2 * static_cast<double>(required);
    check.basis = RcpBasis::kInterpolated;
    check.reference_batch_sizes = {low.batch_size, above->batch_size};
  }
  check.rcp_mean = ref.mean;
  check.rcp_stddev = ref.stddev;
  check.reference_samples = ref.reference_samples;
  if (ref.stddev > 0 && ref.reference_samples + n_sub - 2 < 1) {
    // scipy returns NaN for df = 0 and the checker's bisection then settles
    // on rcp_mean; we say the test cannot be made instead.
    check.explanation = fmt::format(
        "the t-test has no degrees of freedom ({} reference and {} submission samples after the "
        "olympic drop): use more runs",
        ref.reference_samples, n_sub);
    return check;
  }
  check.min_epochs =
      min_acceptable_mean(ref.mean, ref.stddev, ref.reference_samples, n_sub, options.alpha);
  check.max_speedup = check.min_epochs > 0 ? ref.mean / check.min_epochs : INFINITY;
  check.normalization_factor = rcp_normalization_factor(ref.mean, check.submission_mean);
  const bool passed = check.submission_mean >= check.min_epochs;

  const std::string numbers =
      fmt::format("olympic mean {:.4f} epochs, RCP mean {:.4f}, stddev {:.4f}, minimum {:.4f}",
                  check.submission_mean, check.rcp_mean, check.rcp_stddev, check.min_epochs);
  std::string against;
  switch (check.basis) {
    case RcpBasis::kExact:
      against = fmt::format("RCP at batch size {}", ref.batch_size);
      break;
    case RcpBasis::kInterpolated:
      against = fmt::format("RCP interpolated between batch sizes {} and {}",
                            check.reference_batch_sizes[0], check.reference_batch_sizes[1]);
      break;
    default:
      against = fmt::format("smallest RCP (batch size {})", check.reference_batch_sizes[0]);
      break;
  }
  if (passed) {
    check.verdict = RcpVerdict::kPassed;
    check.explanation = fmt::format("passed against {}: {}", against, numbers);
    if (check.normalization_factor > 1) {
      check.explanation += fmt::format("; faster than the RCP mean, scale time to train by {:.4f}",
                                       check.normalization_factor);
    }
  } else if (check.basis == RcpBasis::kSmallestBatch) {
    check.explanation = fmt::format(
        "missing RCP: batch size {} is below every RCP batch size and converges faster than the "
        "{}: {}",
        batch_size, against, numbers);
  } else {
    check.verdict = RcpVerdict::kFailed;
    check.explanation =
        fmt::format("converges significantly faster than the {}: {}", against, numbers);
  }
  return check;
}

RcpCheck check_rcp_result(const std::vector<RcpEntry>& rcps, const Result& result,
                          const RcpCheckOptions& options) {
  const ResultRuns read = read_result_runs(result);
  return check_rcp(rcps, read.workload, read.batch_size, read.epochs, options);
}

std::vector<RcpCheck> check_rcp_results(const std::vector<RcpEntry>& rcps,
                                        const std::vector<Result>& results,
                                        const RcpCheckOptions& options) {
  std::map<std::pair<std::string, int64_t>, std::vector<std::optional<double>>> groups;
  for (const auto& result : results) {
    ResultRuns read = read_result_runs(result);
    auto& epochs = groups[{read.workload, read.batch_size}];
    epochs.insert(epochs.end(), read.epochs.begin(), read.epochs.end());
  }
  std::vector<RcpCheck> checks;
  for (const auto& [key, epochs] : groups) {
    checks.push_back(check_rcp(rcps, key.first, key.second, epochs, options));
  }
  return checks;
}

std::string verdict_name(RcpVerdict verdict) {
  switch (verdict) {
    case RcpVerdict::kPassed:
      return "passed";
    case RcpVerdict::kFailed:
      return "failed";
    default:
      return "not checkable";
  }
}

nlohmann::json rcp_check_to_json(const RcpCheck& check) {
  static const char* const kBasis[] = {"none", "exact", "interpolated", "smallest_batch_size"};
  return {{"verdict", verdict_name(check.verdict)},
          {"basis", kBasis[static_cast<int>(check.basis)]},
          {"batch_size", check.batch_size},
          {"runs", check.runs},
          {"converged_runs", check.converged_runs},
          {"submission_mean_epochs", check.submission_mean},
          {"rcp_mean_epochs", check.rcp_mean},
          {"rcp_stddev_epochs", check.rcp_stddev},
          {"reference_samples", check.reference_samples},
          {"submission_samples", check.submission_samples},
          {"min_epochs", check.min_epochs},
          {"max_speedup", check.max_speedup},
          {"normalization_factor", check.normalization_factor},
          {"reference_batch_sizes", check.reference_batch_sizes},
          {"explanation", check.explanation}};
}

}  // namespace perflab::reports
