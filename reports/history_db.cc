// History database: schema, migrations, record and queries.
#include "reports/history_db.h"

#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "harness/atomic_file.h"
#include "base/error.h"
#include "harness/json_text.h"
#include "harness/sweep.h"
#include "base/utc_time.h"
#include "reports/point_match.h"
#include "reports/sqlite.h"

namespace perflab::reports {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// SQLite's application_id for our files: "pflh".
constexpr int64_t kApplicationId = 0x70666c68;

/// Migration i takes a database from schema version i to i + 1.
const char* const kMigrations[] = {
    // 0 -> 1: runs and their metrics.
    "CREATE TABLE runs("
    "  id INTEGER PRIMARY KEY,"
    "  timestamp TEXT NOT NULL,"
    "  recorded_at TEXT NOT NULL,"
    "  git_revision TEXT NOT NULL,"
    "  machine TEXT NOT NULL,"
    "  environment TEXT NOT NULL,"
    "  sources TEXT NOT NULL);"
    "CREATE TABLE metrics("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  point TEXT NOT NULL,"
    "  label TEXT NOT NULL,"
    "  metric TEXT NOT NULL,"
    "  unit TEXT NOT NULL,"
    "  lower_is_better INTEGER NOT NULL,"
    "  median REAL NOT NULL,"
    "  samples TEXT NOT NULL,"
    "  failed INTEGER NOT NULL,"
    "  PRIMARY KEY(run_id, point, metric));"
    "CREATE INDEX metrics_by_series ON metrics(metric, point, run_id);",
    // 1 -> 2: the change-point detector's per-series cache, so that
    // appending a run does not recompute a series' whole history.
    "CREATE TABLE change_point_cache("
    "  point TEXT NOT NULL,"
    "  metric TEXT NOT NULL,"
    "  machine TEXT NOT NULL,"
    "  options TEXT NOT NULL,"
    "  state TEXT NOT NULL,"
    "  PRIMARY KEY(point, metric, machine, options));",
};
static_assert(std::size(kMigrations) == kHistorySchemaVersion);

/// The tables migration i creates (the names its CREATE TABLEs give).
const char* const kMigrationTables[][2] = {{"runs", "metrics"}, {"change_point_cache", nullptr}};
static_assert(std::size(kMigrationTables) == kHistorySchemaVersion);

/// Refuses files that are not ours, damaged ones and newer ones before
/// anything is written to them; returns the schema version.
int64_t checked_version(sqlite::Connection& db) {
  // One statement, so one snapshot: another process may be creating the file.
  sqlite::Statement q = db.prepare(
      "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
      "(SELECT count(*) FROM sqlite_master), "
      "(SELECT group_concat(name, ' ') FROM sqlite_master WHERE type = 'table')");
  q.step();
  const int64_t app = q.integer(0), version = q.integer(1), objects = q.integer(2);
  const std::string tables = q.text(3);  // empty when there is none
  if (app != kApplicationId && (app != 0 || version != 0 || objects != 0)) {
    throw UsageError(fmt::format("{}: not a perflab history database (an SQLite database of another application)",
                                 db.path().string()));
  }
  if (version > kHistorySchemaVersion) {
    throw Error(fmt::format("{}: history schema version {} is newer than this perflab's ({}); use a newer perflab",
                            db.path().string(), version, kHistorySchemaVersion));
  }
  const auto damaged = [&](const std::string& why) {
    return Error(fmt::format("{}: damaged history database (schema version {}: {}); left as it is",
                             db.path().string(), version, why));
  };
  if (version < 0) throw damaged("not a version perflab writes");
  // perflab sets the application id and the version in one transaction.
  if (app == kApplicationId && version == 0) throw damaged("version 0 on a file perflab marked as its own");
  // A version's tables exist and the later versions' do not.
  const auto has_table = [&](const std::string& name) {
    return (" " + tables + " ").find(" " + name + " ") != std::string::npos;
  };
  for (int64_t v = 0; v < kHistorySchemaVersion; ++v) {
    for (const char* table : kMigrationTables[v]) {
      if (table == nullptr) continue;
      if (v < version && !has_table(table)) throw damaged(fmt::format("table {} is missing", table));
      if (v >= version && has_table(table)) {
        throw damaged(fmt::format("table {} of a later version is present", table));
      }
    }
  }
  return version;
}

std::string samples_json(const std::vector<double>& v) { return json(v).dump(); }

std::vector<double> parse_samples(const std::string& text, const fs::path& path) {
  const json j = parse_json_text(text);
  if (!j.is_array()) throw Error(fmt::format("{}: a metric's samples are not a JSON array", path.string()));
  std::vector<double> out;
  for (const json& v : j) {
    if (!v.is_number()) throw Error(fmt::format("{}: a metric's sample is not a number", path.string()));
    out.push_back(v.get<double>());
  }
  return out;
}

/// The points a database holds on one machine, for a new run's metrics:
/// which series each continues (HistoryDb::record).
class RecordedPoints {
 public:
  RecordedPoints(sqlite::Connection& db, std::string machine) : db_(db), machine_(std::move(machine)) {}

  /// The point each of `run` is stored under: its own where the database
  /// holds it for its metric on this machine, or holds nothing the same
  /// across versions; else the one recorded point that is, when no other
  /// of the run's points claims that point's series for the metric (the
  /// metrics table keys rows by run, point and metric). Lines for
  /// `continued`: "label: how the keys differ", once per point.
  std::vector<std::string> resolve(const std::vector<MetricSamples>& run, std::vector<std::string>* continued) {
    std::set<std::string> own;
    for (const MetricSamples& m : run) own.insert(m.point);
    std::vector<std::string> out;
    std::vector<std::pair<const Known*, VersionGap>> found(run.size(), {nullptr, VersionGap{}});
    std::map<std::pair<std::string, std::string>, int> claims;  // (recorded point, metric) -> run points
    for (size_t i = 0; i < run.size(); ++i) {
      const MetricSamples& m = run[i];
      out.push_back(m.point);
      if (recorded(m.point, m.metric)) continue;
      const PointIdentity mine{parse_point_key(m.point), m.set_params, m.set_params_known};
      int matches = 0;
      for (const Known& k : known(m.metric, mine.key)) {
        if (own.count(k.point) != 0) continue;  // two versions' points in one run stay two
        if (auto g = same_point(k.identity, mine)) {
          ++matches;
          found[i] = {&k, std::move(*g)};
        }
      }
      if (matches != 1) {
        found[i].first = nullptr;
        continue;
      }
      ++claims[{found[i].first->point, m.metric}];
    }
    for (size_t i = 0; i < run.size(); ++i) {
      const Known* k = found[i].first;
      if (k == nullptr || claims[{k->point, run[i].metric}] != 1) continue;
      out[i] = k->point;
      if (continued != nullptr) {
        const std::string line = run[i].label + ": " + found[i].second.describe("recorded series", "new result");
        if (std::find(continued->begin(), continued->end(), line) == continued->end()) continued->push_back(line);
      }
    }
    return out;
  }

 private:
  struct Known {
    std::string point;
    PointIdentity identity;
  };

  bool recorded(const std::string& point, const std::string& metric) {
    sqlite::Statement q = db_.prepare(
        "SELECT 1 FROM metrics m JOIN runs r ON r.id = m.run_id WHERE m.point = ? AND m.metric = ? AND r.machine = ? "
        "LIMIT 1");
    q.bind(1, point).bind(2, metric).bind(3, machine_);
    return q.step();
  }

  /// Workload, preset and backend: only points that agree on them can match.
  static std::string coarse(const nlohmann::json& key) {
    if (!key.is_object()) return key.dump();
    return key.value("workload", nlohmann::json()).dump() + "|" + key.value("preset", nlohmann::json()).dump() +
           "|" + key.value("backend", nlohmann::json()).dump();
  }

  /// This machine's recorded points of `metric` with key's coarse identity,
  /// read once per metric. What a recorded point set is not kept, so none
  /// of its parameters is dropped.
  const std::vector<Known>& known(const std::string& metric, const nlohmann::json& key) {
    auto it = by_metric_.find(metric);
    if (it == by_metric_.end()) {
      std::map<std::string, std::vector<Known>> groups;
      sqlite::Statement q = db_.prepare(
          "SELECT DISTINCT m.point FROM metrics m JOIN runs r ON r.id = m.run_id WHERE m.metric = ? AND r.machine = ?");
      q.bind(1, metric).bind(2, machine_);
      while (q.step()) {
        std::string point = q.text(0);
        PointIdentity identity{parse_point_key(point), {}, false};
        groups[coarse(identity.key)].push_back({std::move(point), std::move(identity)});
      }
      it = by_metric_.emplace(metric, std::move(groups)).first;
    }
    static const std::vector<Known> kNone;
    const auto group = it->second.find(coarse(key));
    return group == it->second.end() ? kNone : group->second;
  }

  sqlite::Connection& db_;
  std::string machine_;
  std::map<std::string, std::map<std::string, std::vector<Known>>> by_metric_;
};

}  // namespace

HistoryDb::HistoryDb(const fs::path& path, bool create) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(fmt::format("{}: is a folder, not a history database", path.string()));
  if (!create && !fs::exists(path, ec)) {
    throw UsageError(fmt::format("{}: no such history database (create it with perflab history record)", path.string()));
  }
  if (create && path.has_parent_path()) ensure_writable_directory(path.parent_path());
  // A file this process cannot write is only read: no journal-mode switch,
  // no cache write. On a read-only mount (EROFS) nobody can be writing it,
  // so it is opened immutable (no lock or -shm file, which cannot be made
  // there); a file this user may only read (EACCES) may be another user's
  // live database, so it is read with the normal locks.
  const int why = !create && ::access(path.c_str(), W_OK) != 0 ? errno : 0;
  read_only_ = why == EROFS || why == EACCES;
  const bool read_only_mount = why == EROFS;
  db_ = read_only_ ? std::make_unique<sqlite::Connection>(sqlite::Connection::read_only(path, read_only_mount))
                   : std::make_unique<sqlite::Connection>(path, create);
  const int64_t version = checked_version(*db_);
  if (read_only_) {
    if (version < kHistorySchemaVersion) {
      throw Error(fmt::format("{}: read-only, and its history schema version {} needs migrating to {}; open it "
                              "once with perflab where it can be written",
                              path.string(), version, kHistorySchemaVersion));
    }
    return;
  }
  // Two recorders creating the same database at once meet here, and SQLite
  // does not call the busy handler for a journal-mode switch.
  db_->exec_when_unlocked("PRAGMA journal_mode=WAL");
  db_->exec("PRAGMA foreign_keys=ON");
  if (version < kHistorySchemaVersion) {
    sqlite::Transaction t(*db_);
    // Another process may have migrated it while we waited for the lock.
    for (int64_t v = checked_version(*db_); v < kHistorySchemaVersion; ++v) db_->exec(kMigrations[v]);
    db_->exec(fmt::format("PRAGMA application_id={}", kApplicationId));
    db_->exec(fmt::format("PRAGMA user_version={}", kHistorySchemaVersion));
    t.commit();
  }
}

HistoryDb::~HistoryDb() = default;

int HistoryDb::schema_version() { return static_cast<int>(db_->integer("PRAGMA user_version")); }

int64_t HistoryDb::record(const NewHistoryRun& run, std::vector<std::string>* continued) {
  sqlite::Transaction t(*db_);
  const std::vector<std::string> points = RecordedPoints(*db_, run.machine).resolve(run.metrics, continued);
  db_->prepare("INSERT INTO runs(timestamp, recorded_at, git_revision, machine, environment, sources) "
               "VALUES(?, ?, ?, ?, ?, ?)")
      .bind(1, run.timestamp)
      .bind(2, utc_now("%Y-%m-%dT%H:%M:%SZ"))
      .bind(3, run.git_revision)
      .bind(4, run.machine)
      .bind(5, run.environment.dump())
      .bind(6, json(run.sources).dump())
      .run();
  const int64_t id = db_->last_insert_id();
  sqlite::Statement insert = db_->prepare(
      "INSERT INTO metrics(run_id, point, label, metric, unit, lower_is_better, median, samples, failed) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t i = 0; i < run.metrics.size(); ++i) {
    const MetricSamples& m = run.metrics[i];
    insert.reset();
    insert.bind(1, id)
        .bind(2, points[i])
        .bind(3, m.label)
        .bind(4, m.metric)
        .bind(5, m.unit)
        .bind(6, static_cast<int64_t>(m.lower_is_better))
        .bind(7, median(m.values))
        .bind(8, samples_json(m.values))
        .bind(9, static_cast<int64_t>(m.failed))
        .run();
  }
  t.commit();
  return id;
}

std::vector<HistoryRun> HistoryDb::runs(const std::string& since) {
  sqlite::Statement q = db_->prepare(
      "SELECT r.id, r.timestamp, r.recorded_at, r.git_revision, r.machine, "
      "(SELECT count(*) FROM metrics m WHERE m.run_id = r.id) FROM runs r WHERE r.timestamp >= ? ORDER BY r.id");
  q.bind(1, since);
  std::vector<HistoryRun> out;
  while (q.step()) out.push_back({q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.integer(5)});
  return out;
}

std::optional<HistoryRun> HistoryDb::latest_run() {
  auto all = runs();
  if (all.empty()) return std::nullopt;
  return all.back();
}

std::vector<HistorySeries> HistoryDb::series(const SeriesFilter& f) {
  sqlite::Statement q = db_->prepare(
      "SELECT m.point, m.label, m.metric, m.unit, r.machine, m.lower_is_better, r.id, r.timestamp, "
      "r.git_revision, m.median, m.samples, m.failed FROM metrics m JOIN runs r ON r.id = m.run_id "
      "WHERE (?1 = '' OR m.metric = ?1) AND (?2 = '' OR r.machine = ?2) AND r.timestamp >= ?3 AND r.id <= ?4 "
      "ORDER BY r.id");
  q.bind(1, f.metric).bind(2, f.machine).bind(3, f.since).bind(4, f.up_to_run.value_or(INT64_MAX));
  std::map<std::tuple<std::string, std::string, std::string>, HistorySeries> by_key;
  while (q.step()) {
    HistorySeries& s = by_key[{q.text(0), q.text(2), q.text(4)}];
    s.point = q.text(0);
    s.label = q.text(1);  // The newest run's label wins.
    s.metric = q.text(2);
    s.unit = q.text(3);
    s.machine = q.text(4);
    s.lower_is_better = q.integer(5) != 0;
    s.values.push_back({q.integer(6), q.text(7), q.text(8), q.real(9), parse_samples(q.text(10), db_->path()),
                        static_cast<size_t>(q.integer(11))});
  }
  std::vector<HistorySeries> out;
  for (auto& [key, s] : by_key) {
    if (f.point.empty() || s.label.find(f.point) != std::string::npos) out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const HistorySeries& a, const HistorySeries& b) {
    return std::tie(a.label, a.metric, a.machine, a.point) < std::tie(b.label, b.metric, b.machine, b.point);
  });
  return out;
}

std::optional<json> HistoryDb::cached_state(const HistorySeries& s, const std::string& options_key) {
  sqlite::Statement q = db_->prepare(
      "SELECT state FROM change_point_cache WHERE point = ? AND metric = ? AND machine = ? AND options = ?");
  q.bind(1, s.point).bind(2, s.metric).bind(3, s.machine).bind(4, options_key);
  if (!q.step()) return std::nullopt;
  json state = parse_json_text(q.text(0));
  if (state.is_discarded()) return std::nullopt;  // A damaged cache entry is recomputed, not fatal.
  return state;
}

void HistoryDb::store_state(const HistorySeries& s, const std::string& options_key, const json& state) {
  if (read_only_) return;  // computed each time instead
  sqlite::Transaction t(*db_);
  db_->prepare("INSERT OR REPLACE INTO change_point_cache(point, metric, machine, options, state) VALUES(?, ?, ?, ?, ?)")
      .bind(1, s.point)
      .bind(2, s.metric)
      .bind(3, s.machine)
      .bind(4, options_key)
      .bind(5, state.dump())
      .run();
  t.commit();
}

std::string machine_fingerprint(const json& environment) {
  auto field = [&](const char* pointer) {
    const json::json_pointer p(pointer);
    if (!environment.contains(p)) return std::string();
    const json& v = environment.at(p);
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  std::string basis = field("/hostname") + "|" + field("/cpu_model") + "|" + field("/logical_cores");
  if (environment.contains(json::json_pointer("/cuda/devices")) && environment.at(json::json_pointer("/cuda/devices")).is_array()) {
    for (const json& d : environment.at(json::json_pointer("/cuda/devices"))) {
      if (d.is_object() && d.contains("name") && d["name"].is_string()) basis += "|" + d["name"].get<std::string>();
    }
  }
  return stable_hash(basis);
}

}  // namespace perflab::reports
