#include "store/import_receipts_sql.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "store/sql/statement.h"

namespace tunedb {
namespace {

constexpr const char kRead[] =
    "SELECT imported, lines, committed_at_us FROM import_receipts "
    "WHERE import_id = ?1";
constexpr const char kWrite[] =
    "INSERT INTO import_receipts(import_id, imported, lines, committed_at_us)"
    " VALUES(?1, ?2, ?3, ?4)";
constexpr const char kDropOld[] =
    "DELETE FROM import_receipts WHERE committed_at_us < ?1";

}  // namespace

absl::Status ImportAlreadyCommitted(const std::string& id,
                                    const ImportReceipt& receipt) {
  return absl::AlreadyExistsError(absl::StrCat(
      "an import named ", id, " committed already (", receipt.imported,
      " records); nothing was imported again"));
}

absl::StatusOr<std::optional<ImportReceipt>> ReadImportReceipt(
    sql::Database& db, const std::string& id) {
  ASSIGN_OR_RETURN(sql::Statement read, db.GetCachedStatement(kRead));
  read.BindText(1, id);
  ASSIGN_OR_RETURN(bool row, read.Step());
  if (!row) return std::nullopt;
  ImportReceipt receipt;
  receipt.imported = read.ColumnInt64(0);
  receipt.lines = read.ColumnInt64(1);
  receipt.committed_at_us = read.ColumnInt64(2);
  return receipt;
}

absl::Status WriteImportReceipt(sql::Database& db, const ImportTag& tag,
                                int64_t imported) {
  ASSIGN_OR_RETURN(std::optional<ImportReceipt> earlier,
                   ReadImportReceipt(db, tag.id));
  if (earlier.has_value()) return ImportAlreadyCommitted(tag.id, *earlier);
  const absl::Time now = absl::Now();
  ASSIGN_OR_RETURN(sql::Statement drop, db.GetCachedStatement(kDropOld));
  drop.BindInt64(1, absl::ToUnixMicros(now - absl::Hours(24) *
                                                 kImportReceiptDays));
  RETURN_IF_ERROR(drop.Run());
  ASSIGN_OR_RETURN(sql::Statement write, db.GetCachedStatement(kWrite));
  write.BindText(1, tag.id);
  write.BindInt64(2, imported);
  write.BindInt64(3, tag.lines);
  write.BindInt64(4, absl::ToUnixMicros(now));
  return write.Run();
}

}  // namespace tunedb
