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
// A StagedImport attaches a private temporary database to the write
// connection and stages into it through Write, a batch per transaction;
// Commit moves the staged rows into records and results with a few
// INSERT ... SELECT statements per chunk, in one transaction, then
// truncates the WAL.
//
// Query calls `visit` with no lock or connection held, in batches: it may
// call back into the store. Batches are read in separate transactions, so a
// long Query sees records added behind its cursor but never one twice.
//
// The pieces, after LevelDB's db_impl, repair and filename: opening the
// connections (connections.h), the file checks (file_checks.h), option
// checks (store_options.h), reading and writing one record
// (record_rows.h), scans (record_scan.h), repair and quarantine (repair.h),
// the staged import (staged_import.cc) and the file system (env.h).
//
// Thread safety: all methods are thread-safe.
#ifndef TUNEDB_STORE_SQLITE_STORE_H_
#define TUNEDB_STORE_SQLITE_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/env.h"
#include "store/sql/connection_pool.h"
#include "store/sql/database.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

class SqliteStore : public Store {
 public:
  // Store::Open's work. All file-system access outside SQLite (does the
  // file exist, may it be written, how large are it and its WAL) goes
  // through `env`, which must outlive the store.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(
      const Options& options, Env* env = Env::Default());

  ~SqliteStore() override;

  absl::StatusOr<std::optional<Record>> Get(const ProblemKey& key) override;
  absl::StatusOr<int64_t> Put(const Record& record) override;
  absl::StatusOr<int64_t> PutForFleet(const Record& record) override;
  absl::StatusOr<std::vector<OutboxEntry>> ReadOutbox(
      int limit, int64_t* dropped) override;
  absl::Status RemoveFromOutbox(const std::vector<int64_t>& ids) override;
  absl::StatusOr<int64_t> OutboxSize() override;
  absl::Status PutAll(const std::vector<Record>& records) override;
  absl::StatusOr<std::unique_ptr<StagedImport>> BeginImport() override;
  absl::StatusOr<std::optional<ImportReceipt>> FindImport(
      const std::string& id) override;
  absl::StatusOr<std::vector<ProgramTotals>> PutProgramKeys(
      const std::vector<ProgramKey>& rows,
      int64_t max_keys_per_program) override;
  absl::StatusOr<std::vector<ProgramKey>> ReadProgramKeys(
      const std::string& program, const std::string& device,
      int64_t limit) override;
  absl::StatusOr<std::vector<ProgramTotals>> ProgramKeyTotals() override;
  absl::Status ForgetPrograms(const std::vector<std::string>& programs) override;
  using Store::ReportWalk;
  absl::Status ReportWalk(const std::vector<ReportPart>& parts) override;
  using Store::Query;
  absl::Status Query(
      const RecordFilter& filter, int64_t after_id, int limit,
      const std::function<bool(const Record&)>& visit,
      const std::function<bool(const BadRow&)>& bad_row) override;
  absl::StatusOr<std::vector<Record>> FamilyNear(const ProblemKey& key,
                                                 double radius, int limit,
                                                 bool* more) override;
  absl::StatusOr<std::vector<BadRow>> QuarantineBadRows() override;
  absl::StatusOr<int64_t> Delete(const RecordFilter& filter) override;
  absl::Status AddServed(const std::vector<ServedCount>& counts) override;
  absl::StatusOr<std::vector<ServedDayProgram>> ServedDays(
      int64_t since_day) override;
  absl::StatusOr<int64_t> Count() override;
  absl::StatusOr<std::vector<int>> CudnnVersions() override;
  int64_t SizeBytes() const override;
  absl::Status QuickCheck() override;
  absl::Status Checkpoint() override;
  const std::string& path() const override { return options_.path; }

 private:
  using ReadFn = std::function<absl::Status(sql::Database&)>;
  using WriteFn = std::function<absl::Status(sql::Database&)>;

  SqliteStore(Options options, Env* env, std::unique_ptr<sql::Database> writer,
              std::unique_ptr<sql::ConnectionPool> readers);

  // Runs `fn` on a read connection (the write connection, under the write
  // mutex, when there is no pool).
  absl::Status Read(const ReadFn& fn) ABSL_LOCKS_EXCLUDED(write_mu_);
  // The report walk of the ids in (after_id, up_to_id] into `part`, until
  // `stop` is set (report_scan.cc); sets it when a callback returns false.
  absl::Status ReportWalkRange(int64_t after_id, int64_t up_to_id,
                               const ReportPart& part, std::atomic<bool>& stop)
      ABSL_LOCKS_EXCLUDED(write_mu_);
  class Import;  // the StagedImport (staged_import.cc)

  // The transaction policy, in one place. Write runs `fn` in a
  // BEGIN IMMEDIATE transaction on the write connection and commits; then,
  // with `truncate_wal` (after an import) or when the WAL has grown past
  // checkpoint_wal_bytes, it checkpoints and truncates the WAL, and
  // otherwise runs a PASSIVE checkpoint every checkpoint_every_writes
  // commits. Exclusive runs `fn` on the write connection outside any
  // transaction (attaching and detaching staging databases, which SQLite
  // refuses within one).
  absl::Status Write(const WriteFn& fn, bool truncate_wal = false)
      ABSL_LOCKS_EXCLUDED(write_mu_);
  // Write's checkpoint policy after a commit.
  void CheckpointAfterWrite(bool truncate_wal)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Write for an upsert of records (Put, an import's commit): where it meets
  // an index entry that disagrees with its row (a byte flipped in an indexed
  // column of a stored row: SQLITE_CORRUPT_INDEX), the indexes of records
  // (and of results) are rebuilt from the rows once and `fn` runs again, so the
  // write replaces the damaged row instead of failing on it.
  absl::Status WriteRecords(const WriteFn& fn, bool truncate_wal = false)
      ABSL_LOCKS_EXCLUDED(write_mu_);
  absl::Status Exclusive(const WriteFn& fn) ABSL_LOCKS_EXCLUDED(write_mu_);
  // PRAGMA wal_checkpoint(TRUNCATE); UNAVAILABLE if a reader kept it from
  // finishing.
  absl::Status TruncateWal() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Detaches an import's staging database (its destructor;
  // staged_import.cc).
  void EndImport(const std::string& name);

  const Options options_;
  const bool in_memory_;
  Env* const env_;
  // The write connection: one writer (or, without a pool, one user) at a
  // time.
  absl::Mutex write_mu_;
  // Null when read-only.
  const std::unique_ptr<sql::Database> writer_ ABSL_PT_GUARDED_BY(write_mu_);
  int writes_since_checkpoint_ ABSL_GUARDED_BY(write_mu_) = 0;
  // Staging databases attached.
  int imports_ ABSL_GUARDED_BY(write_mu_) = 0;
  int64_t next_import_ ABSL_GUARDED_BY(write_mu_) = 0;
  // Null for ":memory:" and read_connections == 0.
  const std::unique_ptr<sql::ConnectionPool> readers_;
};

}  // namespace tunedb

#endif  // TUNEDB_STORE_SQLITE_STORE_H_
