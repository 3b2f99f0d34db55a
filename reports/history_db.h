// The history database (`perflab history`): one SQLite file in WAL mode
// holding recorded runs (timestamp, git revision, machine fingerprint,
// environment) and their metrics (median and every repetition), plus the
// change-point detector's per-series cache. Each write is one transaction;
// the schema version is kept in SQLite's user_version and older files are
// migrated on open. A file that is not ours (no database, another
// application's database, a newer schema) is refused with one line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/metric_samples.h"

namespace perflab::reports {

namespace sqlite {
class Connection;
}

/// The schema this build writes; files with a lower version are migrated.
inline constexpr int kHistorySchemaVersion = 2;

/// A run to record: one `history record` invocation.
struct NewHistoryRun {
  std::string timestamp;     ///< When it ran (UTC, ISO 8601): the newest result's creation time.
  std::string git_revision;  ///< The revision it measured.
  std::string machine;       ///< Machine fingerprint (machine_fingerprint()).
  nlohmann::json environment = nlohmann::json::object();
  std::vector<std::string> sources;  ///< What was recorded (paths).
  std::vector<MetricSamples> metrics;
};

/// A recorded run, as `history list` shows it.
struct HistoryRun {
  int64_t id = 0;
  std::string timestamp, recorded_at, git_revision, machine;
  int64_t metrics = 0;
};

/// One recorded value of a series.
struct HistoryValue {
  int64_t run_id = 0;
  std::string timestamp, git_revision;
  double median = 0;
  std::vector<double> samples;
  size_t failed = 0;
};

/// One metric of one point on one machine, oldest run first.
struct HistorySeries {
  std::string point, label, metric, unit, machine;
  bool lower_is_better = true;
  std::vector<HistoryValue> values;

  std::string name() const { return label + " " + metric; }
};

/// Which series to read.
struct SeriesFilter {
  std::string metric;   ///< Exact metric name; empty: all.
  std::string point;    ///< Substring of the point's label; empty: all.
  std::string machine;  ///< Exact fingerprint; empty: all.
  std::string since;    ///< Runs with timestamp >= since (ISO 8601 prefix compare); empty: all.
  std::optional<int64_t> up_to_run;  ///< Runs with id <= this.
};

class HistoryDb {
 public:
  /// Opens (and with `create`, creates) the database, migrating an older
  /// schema. Throws UsageError for a missing file without `create`, a file
  /// that is not a perflab history database or one from a newer perflab.
  HistoryDb(const std::filesystem::path& path, bool create);
  /// True when the file could not be written (a read-only mount, or a file
  /// this user may only read): it is then only read (immutable on a
  /// read-only mount), its change points computed but not cached.
  bool read_only() const { return read_only_; }
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  /// Records a run and its metrics in one transaction; returns its id. A
  /// metric whose point the database does not hold continues the series of
  /// the one recorded point that is the same point across versions (a
  /// parameter this run has at its default and the recorded one lacks;
  /// reports/point_match.h): it is stored under that point's key, and
  /// `continued`, when given, gets a "label: how the keys differ" line for
  /// each such point.
  int64_t record(const NewHistoryRun& run, std::vector<std::string>* continued = nullptr);
  /// Every run, oldest first (optionally from `since` on).
  std::vector<HistoryRun> runs(const std::string& since = {});
  std::optional<HistoryRun> latest_run();
  /// The series matching `filter`, sorted by label then metric then machine.
  std::vector<HistorySeries> series(const SeriesFilter& filter);

  /// The change-point cache of a series under `options_key`: the detector's
  /// state as JSON (empty when none).
  std::optional<nlohmann::json> cached_state(const HistorySeries& s, const std::string& options_key);
  void store_state(const HistorySeries& s, const std::string& options_key, const nlohmann::json& state);

  int schema_version();

 private:
  std::unique_ptr<sqlite::Connection> db_;
  bool read_only_ = false;
};

/// A short stable fingerprint of the machine a result ran on: a hash of the
/// hostname, CPU model, logical core count and GPU names in `environment`.
std::string machine_fingerprint(const nlohmann::json& environment);

}  // namespace perflab::reports
