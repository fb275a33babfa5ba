// The receipts of committed imports on a SQLite store connection (schema
// version 7, store/sql/store_schema.h): the id a client gave its import,
// written in the import's own commit transaction, so that "did it commit?"
// has an answer after the client's stream broke (ImportStatus). An id is
// taken once: a second import under an id already committed is refused.
//
// Thread safety: free functions on a Database the caller holds exclusively.
#ifndef TUNEDB_STORE_IMPORT_RECEIPTS_SQL_H_
#define TUNEDB_STORE_IMPORT_RECEIPTS_SQL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "store/sql/database.h"
#include "store/store.h"

namespace tunedb {

// The receipt of the import named `id`, or nullopt.
absl::StatusOr<std::optional<ImportReceipt>> ReadImportReceipt(
    sql::Database& db, const std::string& id);

// Writes the receipt of `tag`'s import (in the caller's transaction), and
// drops receipts older than kImportReceiptDays. ALREADY_EXISTS when an
// import of that id committed before.
absl::Status WriteImportReceipt(sql::Database& db, const ImportTag& tag,
                                int64_t imported);

// How long a receipt is kept.
inline constexpr int kImportReceiptDays = 30;

}  // namespace tunedb

#endif  // TUNEDB_STORE_IMPORT_RECEIPTS_SQL_H_
