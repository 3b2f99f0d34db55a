// SQLite wrapper: errors carry the file and SQLite's own message.
#include "reports/sqlite.h"

#include <sqlite3.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab::reports::sqlite {

namespace fs = std::filesystem;
namespace {

/// How long a connection waits for another's lock before it gives up.
constexpr int kBusyTimeoutMs = 30000;

}  // namespace

Connection::Connection(const std::filesystem::path& path, bool create)
    : Connection(path, path.string(), SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX) {}

Connection Connection::read_only(const std::filesystem::path& path, bool immutable) {
  // A URI, so that immutable=1 applies: its path percent-encoded where a
  // character would end or change the path part.
  std::string uri = "file:";
  for (const char c : fs::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  uri += immutable ? "?mode=ro&immutable=1" : "?mode=ro";
  return Connection(path, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX);
}

Connection::Connection(const std::filesystem::path& path, const std::string& name, int flags) : path_(path) {
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(fmt::format("{}: cannot open the history database: {}", path.string(), msg));
  }
  sqlite3_extended_result_codes(db_, 0);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

Connection::~Connection() { sqlite3_close(db_); }

void Connection::fail(int rc, const std::string& what) const {
  const std::string msg = sqlite3_errmsg(db_);
  if (rc == SQLITE_NOTADB) {
    throw UsageError(fmt::format("{}: not a perflab history database ({})", path_.string(), msg));
  }
  if (rc == SQLITE_CORRUPT) {
    throw Error(fmt::format("{}: the history database is damaged ({}); restore it from a backup",
                            path_.string(), msg));
  }
  throw Error(fmt::format("{}: {}: {}", path_.string(), what, msg));
}

void Connection::exec(const std::string& sql) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, "cannot " + sql.substr(0, sql.find_first_of(" (")));
}

void Connection::exec_when_unlocked(const std::string& sql) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || std::chrono::steady_clock::now() >= deadline) {
      fail(rc, "cannot " + sql.substr(0, sql.find_first_of(" (")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Statement Connection::prepare(const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr);
  if (rc != SQLITE_OK) fail(rc, "cannot prepare a query");
  return Statement(*this, s);
}

int64_t Connection::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

int64_t Connection::integer(const std::string& sql) {
  Statement s = prepare(sql);
  return s.step() ? s.integer(0) : 0;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int i, const std::string& v) {
  const int rc = sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) conn_->fail(rc, "cannot bind a value");
  return *this;
}

Statement& Statement::bind(int i, int64_t v) {
  const int rc = sqlite3_bind_int64(stmt_, i, v);
  if (rc != SQLITE_OK) conn_->fail(rc, "cannot bind a value");
  return *this;
}

Statement& Statement::bind(int i, double v) {
  const int rc = sqlite3_bind_double(stmt_, i, v);
  if (rc != SQLITE_OK) conn_->fail(rc, "cannot bind a value");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  conn_->fail(rc, "query failed");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_, col);
  return t != nullptr ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
                      : std::string();
}

int64_t Statement::integer(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }

Transaction::Transaction(Connection& c) : conn_(c) { conn_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  try {
    conn_.exec("ROLLBACK");
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the first error is the one to report
  }
}

void Transaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

}  // namespace perflab::reports::sqlite
