// SqliteStore: the Store (store/store.h) on a SQLite file.
//
// One write connection, guarded by a mutex, runs every write in a
// BEGIN IMMEDIATE transaction; a pool of read-only connections serves reads,
// which in WAL mode never wait for the writer. ":memory:" (or
// read_connections == 0) serves reads on the write connection instead, since
// a private in-memory database has only one connection.
//
// Rows: `records` holds one row per key (key_text UNIQUE, key_hash indexed
// for point lookups) and `results` the ranking of each record. A record's
// row id stays the same when Put replaces it. Rows written under an older
// key-format version (records.key_version) are invisible to Get, Query,
// Count and Delete. Every value read is checked (storage class, range, UTF-8,
// enum names, the key text against its hash), so a damaged row is a BadRow,
// never a wrong record; QuarantineBadRows moves such rows, their values
// untouched, into quarantined_records and quarantined_results.
//
// Query calls `visit` with no lock or connection held, in batches: it may
// call back into the store. Batches are read in separate transactions, so a
// long Query sees records added behind its cursor but never one twice.
//
// Thread safety: all methods are thread-safe.
#ifndef TUNEDB_STORE_SQLITE_STORE_H_
#define TUNEDB_STORE_SQLITE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "store/sql/connection_pool.h"
#include "store/sql/database.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

class SqliteStore : public Store {
 public:
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(
      const Options& options);

  ~SqliteStore() override;

  absl::StatusOr<std::optional<Record>> Get(const ProblemKey& key) override;
  absl::StatusOr<int64_t> Put(const Record& record) override;
  absl::Status PutAll(const std::vector<Record>& records) override;
  using Store::Query;
  absl::Status Query(
      const RecordFilter& filter, int64_t after_id, int limit,
      const std::function<bool(const Record&)>& visit,
      const std::function<bool(const BadRow&)>& bad_row) override;
  absl::StatusOr<std::vector<BadRow>> QuarantineBadRows() override;
  absl::StatusOr<int64_t> Delete(const RecordFilter& filter) override;
  absl::Status AddServed(
      const std::vector<std::pair<int64_t, int64_t>>& id_counts) override;
  absl::StatusOr<int64_t> Count() override;
  int64_t SizeBytes() const override;
  absl::Status QuickCheck() override;
  absl::Status Checkpoint() override;
  const std::string& path() const override { return options_.path; }

 private:
  using ReadFn = std::function<absl::Status(sql::Database&)>;
  using WriteFn = std::function<absl::Status(sql::Database&)>;

  SqliteStore(Options options, std::unique_ptr<sql::Database> writer,
              std::unique_ptr<sql::ConnectionPool> readers);

  // Runs `fn` on a read connection (the write connection, under the write
  // mutex, when there is no pool).
  absl::Status Read(const ReadFn& fn);
  // Runs `fn` in a BEGIN IMMEDIATE transaction on the write connection,
  // commits, and checkpoints every checkpoint_every_writes commits.
  absl::Status Write(const WriteFn& fn);

  const Options options_;
  const bool in_memory_;
  std::mutex write_mu_;
  // Null when read-only. Guarded by write_mu_.
  const std::unique_ptr<sql::Database> writer_;
  int writes_since_checkpoint_ = 0;  // guarded by write_mu_
  // Null for ":memory:" and read_connections == 0.
  const std::unique_ptr<sql::ConnectionPool> readers_;
};

}  // namespace tunedb

#endif  // TUNEDB_STORE_SQLITE_STORE_H_
