// Fuzzes the history database reader (reports/history_db.h) on a database
// perflab made and then someone damaged: the input sets the schema version
// (its first 4 bytes, any int32), a series' change-point cache state and
// its samples (the rest, split at the first newline), as a corrupted file or
// a hostile edit would. Properties: opening, reading the series, their
// change points and the dashboard either work or throw perflab's UsageError
// or Error (one line); never a crash, never another exception; a refused
// database is never written.
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/error.h"
#include "reports/change_points.h"
#include "reports/dashboard.h"
#include "reports/history_db.h"
#include "reports/history_report.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace fs = std::filesystem;
using namespace perflab;
using namespace perflab::reports;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A fresh database with one series of a few runs, closed.
void make_database(const fs::path& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix, ec);
  HistoryDb db(path, true);
  for (int i = 0; i < 6; ++i) {
    MetricSamples m{"{\"workload\":\"triad\"}", "triad stream", "throughput", "samples/s", false,
                    {10.0 + i, 10.5 + i, 9.5 + i}, 0};
    db.record({"2026-11-2" + std::to_string(i) + "T00:00:00Z", "rev" + std::to_string(i), "m1", {{"hostname", "h"}},
               {"r"}, {m}});
  }
}

/// Applies the input's edits with SQLite itself, as another program would.
void damage(const fs::path& path, int32_t version, const std::string& state, const std::string& samples) {
  sqlite3* raw = nullptr;
  if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK) {
    sqlite3_close(raw);
    return;
  }
  const std::string pragma = "PRAGMA user_version=" + std::to_string(version);
  sqlite3_exec(raw, pragma.c_str(), nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  const ChangePointOptions options;
  if (sqlite3_prepare_v2(raw,
                         "INSERT OR REPLACE INTO change_point_cache(point, metric, machine, options, state) "
                         "VALUES('{\"workload\":\"triad\"}', 'throughput', 'm1', ?, ?)",
                         -1, &st, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, options.key().c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, state.data(), static_cast<int>(state.size()), SQLITE_TRANSIENT);
    sqlite3_step(st);
  }
  sqlite3_finalize(st);
  st = nullptr;
  if (!samples.empty() &&
      sqlite3_prepare_v2(raw, "UPDATE metrics SET samples = ? WHERE run_id = 3", -1, &st, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, samples.data(), static_cast<int>(samples.size()), SQLITE_TRANSIENT);
    sqlite3_step(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(raw);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using perflab::fuzz::require;
  if (size < 4) return 0;
  int32_t version = 0;
  std::memcpy(&version, data, 4);
  const std::string rest(reinterpret_cast<const char*>(data) + 4, size - 4);
  const size_t newline = rest.find('\n');
  const std::string state = rest.substr(0, newline);
  const std::string samples = newline == std::string::npos ? std::string() : rest.substr(newline + 1);

  static const fs::path path = perflab::fuzz::private_temp_file("history.sqlite");
  make_database(path);
  damage(path, version, state, samples);
  const std::string before = bytes_of(path);
  bool opened = false;
  try {
    HistoryDb db(path, false);
    opened = true;
    const auto series = db.series({});
    Dashboard d;
    d.latest = db.latest_run();
    d.series = series_changes(db, series, ChangePointOptions{});
    for (const SeriesChanges& sc : d.series) {
      for (const ChangePoint& c : sc.changes) require(c.index < sc.series.values.size(), "a change point lies in its series");
    }
    (void)render_dashboard(d);
  } catch (const UsageError&) {
  } catch (const Error&) {
  }
  if (!opened) require(bytes_of(path) == before, "a refused database is not written");
  return 0;
}
