#include "store/file_checks.h"

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "store/sql/statement.h"

namespace tunedb {
namespace {

// The folder a file name lies in ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// CheckWritable for one file or folder: `what` names it in the message.
absl::Status CheckWritableTarget(Env& env, const std::string& path,
                                 const std::string& target,
                                 const std::string& what) {
  const int error = env.WriteAccess(target);
  if (error == 0) return absl::OkStatus();
  if (error == EROFS) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the tunedb database ", path, " cannot be written: ", what,
        " is on a read-only file system (EROFS). Mount it read-write, or "
        "open the database read-only (tunedb doctor --db, "
        "ClientOptions::db_path)"));
  }
  if (error == EACCES || error == EPERM) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the tunedb database ", path, " cannot be written: ", what,
        " may not be written by this user (", std::strerror(error),
        "). Run as the database's owner, or open it read-only"));
  }
  return absl::OkStatus();  // ENOENT and others: SQLite says it
}

// A b-tree CheckStoreFile reads: the table it reads from ("FROM" text,
// with the index for an index) and the column that orders it.
struct Probe {
  std::string from;
  std::string column;
};

// Every b-tree of the file with the column that orders it: a table's primary
// key (its rowid for a rowid table without one), an index's first column.
// *tables counts the tables named records or results.
absl::StatusOr<std::vector<Probe>> ListProbes(sql::Database& db, int* tables) {
  ASSIGN_OR_RETURN(
      sql::Statement objects,
      db.GetUniqueStatement(
          "SELECT m.type, m.name, m.tbl_name, CASE m.type"
          " WHEN 'table' THEN (SELECT name FROM pragma_table_info(m.name)"
          "   WHERE pk = 1)"
          " ELSE (SELECT name FROM pragma_index_info(m.name) WHERE seqno = 0)"
          " END FROM sqlite_schema AS m"
          " WHERE m.type IN ('table', 'index') AND m.rootpage > 0"
          " ORDER BY m.rootpage"));
  std::vector<Probe> probes;
  while (true) {
    ASSIGN_OR_RETURN(bool row, objects.Step());
    if (!row) return probes;
    const std::string type = objects.ColumnText(0);
    const std::string name = objects.ColumnText(1);
    const std::string table = objects.ColumnText(2);
    std::string column =
        objects.ColumnIsNull(3) ? "rowid" : objects.ColumnText(3);
    if (type == "table" && (name == "records" || name == "results")) {
      ++*tables;
    }
    const std::string from =
        type == "table"
            ? absl::StrCat("\"", table, "\"")
            : absl::StrCat("\"", table, "\" INDEXED BY \"", name, "\"");
    probes.push_back({from, std::move(column)});
  }
}

}  // namespace

bool IsFilePath(const std::string& path) {
  return path != ":memory:" && !absl::StartsWith(path, "file:");
}

absl::Status CheckWritable(Env& env, const std::string& path) {
  if (!IsFilePath(path)) return absl::OkStatus();
  if (env.FileExists(path)) {
    RETURN_IF_ERROR(
        CheckWritableTarget(env, path, path, absl::StrCat("the file ", path)));
  }
  const std::string folder = FolderOf(path);
  return CheckWritableTarget(env, path, folder,
                             absl::StrCat("its folder ", folder));
}

absl::StatusOr<std::string> ReaderName(Env& env, const std::string& path) {
  if (!IsFilePath(path) || !env.IsReadOnlyFileSystem(FolderOf(path))) {
    return path;
  }
  if (env.FileSize(path + "-wal") > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the tunedb database ", path,
                     " is on a read-only file system and its WAL ", path,
                     "-wal holds writes not yet in the database file; mount it "
                     "read-write once (opening it then folds the WAL in)"));
  }
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      absl::StrAppend(&uri, absl::StrFormat("%%%02X", c));
    } else {
      uri += c;
    }
  }
  return absl::StrCat(uri, "?immutable=1");
}

absl::Status CheckStoreFile(sql::Database& db) {
  int tables = 0;
  ASSIGN_OR_RETURN(const std::vector<Probe> probes, ListProbes(db, &tables));
  if (tables != 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        db.path(),
        " is marked as a tunedb database but lacks its records or results "
        "table"));
  }
  for (const auto& [from, column] : probes) {
    for (const char* end : {"min", "max"}) {
      // A lone min() or max() of the ordering column reads one path of the
      // b-tree from its root to its first or last leaf.
      absl::StatusOr<int64_t> probe = db.QueryInt64(absl::StrCat(
          "SELECT ", end, "(\"", column, "\") IS NULL FROM ", from));
      if (!probe.ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat(db.path(), " is damaged (reading ", from,
                         "): ", probe.status().message()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status QuickCheckStoreFile(sql::Database& db) {
  ASSIGN_OR_RETURN(sql::Statement check,
                   db.GetUniqueStatement("PRAGMA quick_check"));
  std::vector<std::string> problems;
  while (true) {
    ASSIGN_OR_RETURN(bool row, check.Step());
    if (!row) break;
    std::string line = check.ColumnText(0);
    if (line != "ok") problems.push_back(std::move(line));
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      db.path(),
      " is corrupt (PRAGMA quick_check: ", absl::StrJoin(problems, "; "), ")"));
}

}  // namespace tunedb
