#include "store/outbox_sql.h"

#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "store/record_json.h"
#include "store/sql/statement.h"

namespace tunedb {
namespace {

constexpr const char kAppend[] =
    "INSERT INTO fleet_outbox(key_text, record_json, enqueued_us) "
    "VALUES (?1, ?2, ?3)";
constexpr const char kOldest[] =
    "SELECT id, record_json FROM fleet_outbox ORDER BY id LIMIT ?1";
constexpr const char kDelete[] = "DELETE FROM fleet_outbox WHERE id = ?1";
constexpr const char kCount[] = "SELECT COUNT(*) FROM fleet_outbox";

}  // namespace

absl::Status AppendToOutbox(sql::Database& db, const Record& record) {
  ASSIGN_OR_RETURN(sql::Statement append, db.GetCachedStatement(kAppend));
  append.BindText(1, record.key.ToText());
  append.BindText(2, RecordToJson(record));
  append.BindInt64(3, absl::ToUnixMicros(absl::Now()));
  return append.Run();
}

absl::StatusOr<std::vector<OutboxEntry>> ReadOutboxRows(
    sql::Database& db, int limit, std::vector<int64_t>* unreadable) {
  std::vector<OutboxEntry> entries;
  ASSIGN_OR_RETURN(sql::Statement oldest, db.GetCachedStatement(kOldest));
  oldest.BindInt64(1, limit);
  while (true) {
    ASSIGN_OR_RETURN(bool row, oldest.Step());
    if (!row) break;
    const int64_t id = oldest.ColumnInt64(0);
    absl::StatusOr<Record> record = RecordFromJson(oldest.ColumnText(1));
    if (!record.ok()) {
      unreadable->push_back(id);
      continue;
    }
    entries.push_back({id, *std::move(record)});
  }
  return entries;
}

absl::Status DeleteOutboxRows(sql::Database& db,
                              const std::vector<int64_t>& ids) {
  ASSIGN_OR_RETURN(sql::Statement erase, db.GetCachedStatement(kDelete));
  for (int64_t id : ids) {
    erase.Reset();
    erase.BindInt64(1, id);
    RETURN_IF_ERROR(erase.Run());
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CountOutboxRows(sql::Database& db) {
  return db.QueryInt64(kCount);
}

}  // namespace tunedb
