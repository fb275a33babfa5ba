// The staged import of a SqliteStore (SqliteStore::Import, BeginImport,
// EndImport): a private temporary database attached to the write
// connection, staged into a batch per transaction and moved into records
// and results with a few INSERT ... SELECT statements per chunk.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "store/import_receipts_sql.h"
#include "store/record_columns.h"
#include "store/record_rows.h"
#include "store/sql/record_shapes.h"
#include "store/sql/statement.h"
#include "store/sqlite_store.h"

namespace tunedb {
namespace {

// A staged import writes this many records per staging transaction, and
// Commit moves this many staged records per statement.
constexpr int64_t kStageBatch = 1000;
constexpr int64_t kCommitChunk = 20000;
// The write connection's page cache while an import commits, KiB.
constexpr int64_t kCommitCacheKib = 64 << 10;
// Staging databases attached to the write connection at once (SQLite
// attaches at most 10).
constexpr int kMaxParallelImports = 4;

// The staging database of one import, attached to the write connection as
// `name`: the records as they will be written (stage_id: the order they
// came in; a later one of the same key replaces an earlier one), their
// results and their cells of the shape index (record_shapes.h), keyed by
// stage_id.
std::string StagingSchema(const std::string& name) {
  return absl::StrCat(
      "PRAGMA ", name, ".journal_mode = OFF; PRAGMA ", name,
      ".synchronous = OFF;"
      " CREATE TABLE ",
      name, ".records(stage_id INTEGER PRIMARY KEY, ",
      TUNEDB_RECORD_WRITE_COLUMNS, "); CREATE UNIQUE INDEX ", name,
      ".records_by_key_text ON records(key_text); CREATE TABLE ", name,
      ".results(stage_id INTEGER NOT NULL, ", TUNEDB_RESULT_WRITE_COLUMNS,
      ", PRIMARY KEY(stage_id, rank)) WITHOUT ROWID; CREATE TABLE ", name,
      ".shapes(stage_id INTEGER PRIMARY KEY, family, n_plus_c, n_minus_c,"
      " k_plus_in, k_minus_in);");
}

std::string StageShapeSql(const std::string& name) {
  return absl::StrCat("INSERT INTO ", name,
                      ".shapes(stage_id, family, n_plus_c, n_minus_c,"
                      " k_plus_in, k_minus_in)"
                      " VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
}

std::string StageRecordSql(const std::string& name) {
  return absl::StrCat("INSERT OR REPLACE INTO ", name, ".records(stage_id, ",
                      TUNEDB_RECORD_WRITE_COLUMNS,
                      ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                      " ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,"
                      " ?22)");
}

std::string StageResultSql(const std::string& name) {
  return absl::StrCat("INSERT INTO ", name, ".results(stage_id, ",
                      TUNEDB_RESULT_WRITE_COLUMNS,
                      ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                      " ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,"
                      " ?22, ?23, ?24)");
}

// The four statements that move the staged records with stage_id in
// (?1, ?2] into the store, as Put would: upsert the records (in stage
// order), drop the old results of replaced ones, insert the new results,
// write the records' rows of the shape index.
std::vector<std::string> CommitChunkSql(const std::string& name) {
  const std::string range = " s.stage_id > ?1 AND s.stage_id <= ?2";
  return {
      absl::StrCat("INSERT INTO main.records(", TUNEDB_RECORD_WRITE_COLUMNS,
                   ") SELECT ", TUNEDB_RECORD_WRITE_COLUMNS, " FROM ", name,
                   ".records AS s WHERE", range, " ORDER BY s.stage_id",
                   TUNEDB_RECORD_UPSERT),
      absl::StrCat("DELETE FROM main.results WHERE record_id IN (SELECT r.id"
                   " FROM ",
                   name,
                   ".records AS s JOIN main.records AS r"
                   " ON r.key_text = s.key_text WHERE",
                   range, ")"),
      absl::StrCat("INSERT INTO main.results(record_id, ",
                   TUNEDB_RESULT_WRITE_COLUMNS, ") SELECT r.id, ",
                   TUNEDB_RESULT_WRITE_COLUMNS, " FROM ", name,
                   ".records AS s JOIN ", name,
                   ".results AS sr ON sr.stage_id = s.stage_id"
                   " JOIN main.records AS r ON r.key_text = s.key_text WHERE",
                   range),
      absl::StrCat(TUNEDB_RECORD_SHAPES_INSERT
                   " SELECT r.id, h.family, h.family + 1, h.n_plus_c,"
                   " h.n_plus_c + 1, h.n_minus_c, h.n_minus_c + 1,"
                   " h.k_plus_in, h.k_plus_in + 1, h.k_minus_in,"
                   " h.k_minus_in + 1 FROM ",
                   name, ".records AS s JOIN ", name,
                   ".shapes AS h ON h.stage_id = s.stage_id"
                   " JOIN main.records AS r ON r.key_text = s.key_text WHERE",
                   range),
  };
}

// Stages the cell of the shape index of `key` (none where it has none).
absl::Status StageShape(sql::Statement& stage, int64_t stage_id,
                        const ProblemKey& key) {
  const std::optional<ShapeCell> cell = ShapeCellOf(key);
  if (!cell) return absl::OkStatus();
  stage.Reset();
  stage.BindInt64(1, stage_id);
  BindShapeCell(stage, 2, *cell);
  return stage.Run();
}

// Moves the staged records with stage_id in (0, last] into the store, a
// chunk at a time (CommitChunkSql), in the caller's transaction.
absl::Status MoveStaged(sql::Database& db, const std::string& name,
                        int64_t last) {
  std::vector<sql::Statement> steps;
  for (const std::string& sql : CommitChunkSql(name)) {
    ASSIGN_OR_RETURN(sql::Statement step, db.GetUniqueStatement(sql));
    steps.push_back(std::move(step));
  }
  // The indexes of records take keys in no particular order: a larger page
  // cache for the commit saves most of the rereads of their pages from the
  // WAL. Bounded (kCommitCacheKib), and given back afterwards.
  ASSIGN_OR_RETURN(const int64_t cache,
                   db.QueryInt64("PRAGMA main.cache_size"));
  RETURN_IF_ERROR(db.Execute(
      absl::StrCat("PRAGMA main.cache_size = -", kCommitCacheKib)));
  absl::Status moved = absl::OkStatus();
  for (int64_t low = 0; low < last && moved.ok(); low += kCommitChunk) {
    for (sql::Statement& step : steps) {
      step.Reset();
      step.BindInt64(1, low);
      step.BindInt64(2, low + kCommitChunk);
      moved = step.Run();
      if (!moved.ok()) break;
    }
  }
  db.Execute(absl::StrCat("PRAGMA main.cache_size = ", cache)).IgnoreError();
  return moved;
}

}  // namespace

// The StagedImport of a SqliteStore: a private temporary database attached
// to the write connection as `name_` (SQLite deletes its file when it is
// detached, or when the process ends).
class SqliteStore::Import : public Store::StagedImport {
 public:
  Import(SqliteStore* store, std::string name)
      : store_(store), name_(std::move(name)) {}
  Import(const Import&) = delete;
  Import& operator=(const Import&) = delete;
  ~Import() override { store_->EndImport(name_); }

  absl::Status Add(const Record& record) override {
    RETURN_IF_ERROR(Usable());
    status_ = record.key.Validate();
    RETURN_IF_ERROR(status_);
    pending_.push_back(record);
    ++added_;
    if (static_cast<int64_t>(pending_.size()) >= kStageBatch) {
      status_ = Flush();
    }
    return status_;
  }

  int64_t added() const override { return added_; }

  absl::StatusOr<int64_t> Commit(const ImportTag& tag) override {
    RETURN_IF_ERROR(Usable());
    status_ = Flush();
    RETURN_IF_ERROR(status_);
    committed_ = true;
    const int64_t last = next_stage_id_;
    RETURN_IF_ERROR(store_->WriteRecords(
        [&](sql::Database& db) -> absl::Status {
          RETURN_IF_ERROR(MoveStaged(db, name_, last));
          if (tag.id.empty()) return absl::OkStatus();
          return WriteImportReceipt(db, tag, added_);
        },
        /*truncate_wal=*/true));
    return added_;
  }

 private:
  absl::Status Usable() const {
    if (committed_) {
      return absl::FailedPreconditionError("the import is committed already");
    }
    return status_;
  }

  // Stages the pending records in one transaction.
  absl::Status Flush() {
    if (pending_.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(store_->Write([&](sql::Database& db) -> absl::Status {
      ASSIGN_OR_RETURN(sql::Statement stage_record,
                       db.GetUniqueStatement(StageRecordSql(name_)));
      ASSIGN_OR_RETURN(sql::Statement stage_result,
                       db.GetUniqueStatement(StageResultSql(name_)));
      ASSIGN_OR_RETURN(sql::Statement stage_shape,
                       db.GetUniqueStatement(StageShapeSql(name_)));
      for (const Record& record : pending_) {
        const int64_t stage_id = ++next_stage_id_;
        stage_record.Reset();
        stage_record.BindInt64(1, stage_id);
        BindRecord(stage_record, 2, record, record.key.ToText());
        RETURN_IF_ERROR(stage_record.Run());
        RETURN_IF_ERROR(InsertResults(stage_result, stage_id, record));
        RETURN_IF_ERROR(StageShape(stage_shape, stage_id, record.key));
      }
      return absl::OkStatus();
    }));
    pending_.clear();
    return absl::OkStatus();
  }

  SqliteStore* const store_;
  const std::string name_;
  std::vector<Record> pending_;  // added, not staged yet
  int64_t added_ = 0;
  int64_t next_stage_id_ = 0;
  bool committed_ = false;
  absl::Status status_;  // the first error; the import is then unusable
};

absl::StatusOr<std::unique_ptr<Store::StagedImport>>
SqliteStore::BeginImport() {
  std::string name;
  // Exclusive runs the lambda with write_mu_ held.
  RETURN_IF_ERROR(Exclusive([&](sql::Database& db)
                                ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_)
                                    -> absl::Status {
    if (imports_ >= kMaxParallelImports) {
      return absl::UnavailableError(
          absl::StrCat(kMaxParallelImports,
                       " imports are running already; try again later"));
    }
    name = absl::StrCat("import_", ++next_import_);
    // '' is a private temporary database: a file in SQLite's temporary
    // folder, deleted when it is detached.
    RETURN_IF_ERROR(db.Execute(absl::StrCat("ATTACH DATABASE '' AS ", name)));
    absl::Status created = db.Execute(StagingSchema(name));
    if (!created.ok()) {
      db.Execute(absl::StrCat("DETACH DATABASE ", name)).IgnoreError();
      return created;
    }
    ++imports_;
    return absl::OkStatus();
  }));
  return std::unique_ptr<Store::StagedImport>(new Import(this, name));
}

void SqliteStore::EndImport(const std::string& name) {
  // Only a statement still running on the staging database stops DETACH,
  // and none runs outside the write mutex.
  Exclusive([&](sql::Database& db) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) {
    --imports_;
    return db.Execute(absl::StrCat("DETACH DATABASE ", name));
  }).IgnoreError();
}

}  // namespace tunedb
