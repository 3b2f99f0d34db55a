// A thin RAII layer over SQLite's C API for the history database (internal
// to reports/history_*.cc): one connection, prepared statements, and every
// failure turned into a perflab error naming the database file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace perflab::reports::sqlite {

class Statement;

/// One connection. Errors throw perflab::Error "PATH: what: sqlite message";
/// a file that is not a database throws UsageError.
class Connection {
 public:
  /// Opens `path`; `create` allows a new file. Sets a busy timeout so that
  /// concurrent writers wait for each other instead of failing.
  Connection(const std::filesystem::path& path, bool create);
  /// Opens `path` read-only. `immutable`: for a read-only mount, where no
  /// one can be writing it (no lock, no -wal or -shm file needed; a -wal
  /// file beside it is not read); otherwise the normal locking read-only
  /// open, which sees a writer's committed transactions.
  static Connection read_only(const std::filesystem::path& path, bool immutable);
  ~Connection();
  Connection(Connection&& o) noexcept : path_(std::move(o.path_)), db_(o.db_) { o.db_ = nullptr; }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs SQL without results (several statements allowed).
  void exec(const std::string& sql);
  /// exec, waiting while another connection holds the lock it needs, up to
  /// the busy timeout: for statements SQLite does not call its busy handler
  /// for (switching the journal mode while another process opens the same
  /// new file).
  void exec_when_unlocked(const std::string& sql);
  Statement prepare(const std::string& sql);
  int64_t last_insert_id() const;
  /// A single integer from a query such as "PRAGMA user_version".
  int64_t integer(const std::string& sql);

  const std::filesystem::path& path() const { return path_; }
  /// Throws the error for result code `rc` of `what`.
  [[noreturn]] void fail(int rc, const std::string& what) const;

 private:
  Connection(const std::filesystem::path& path, const std::string& name, int flags);
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

/// A prepared statement: bind (1-based), step, read columns (0-based).
class Statement {
 public:
  Statement(Connection& c, sqlite3_stmt* s) : conn_(&c), stmt_(s) {}
  ~Statement();
  Statement(Statement&& o) noexcept : conn_(o.conn_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v);
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, double v);
  /// Advances; true while there is a row.
  bool step();
  /// Runs to completion (for statements without rows).
  void run();
  void reset();

  std::string text(int col) const;
  int64_t integer(int col) const;
  double real(int col) const;

 private:
  Connection* conn_;
  sqlite3_stmt* stmt_;
};

/// BEGIN IMMEDIATE ... COMMIT; rolled back when not committed.
class Transaction {
 public:
  explicit Transaction(Connection& c);
  ~Transaction();
  void commit();

 private:
  Connection& conn_;
  bool done_ = false;
};

}  // namespace perflab::reports::sqlite
