# SQLite store of the daemon: tunedb_store.
#
# server/sql/ is a small RAII layer over sqlite3 (Database, Statement,
# Transaction, a read-connection pool, the one status conversion);
# sqlite_store.cc implements Store on top of it; record_json.cc is the export
# format (docs/export-format.md).
add_library(tunedb_store STATIC
  sql/connection_pool.cc sql/connection_pool.h
  sql/database.cc sql/database.h
  sql/error.cc sql/error.h
  sql/statement.cc sql/statement.h
  sql/store_schema.cc sql/store_schema.h
  sql/transaction.cc sql/transaction.h
  record_filter.cc
  record_json.cc record_json.h
  sqlite_store.cc sqlite_store.h
  store.h)
target_include_directories(tunedb_store PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(tunedb_store
  PUBLIC tunedb_key absl::status absl::statusor absl::strings
  PRIVATE tunedb_internal SQLite::SQLite3 nlohmann_json::nlohmann_json
          absl::str_format absl::time Threads::Threads)
tunedb_target(tunedb_store)
