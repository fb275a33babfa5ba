// Internal helpers for absl::Status propagation. Not part of the public API.
#ifndef TUNEDB_COMMON_STATUS_MACROS_H_
#define TUNEDB_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TUNEDB_CONCAT_INNER_(a, b) a##b
#define TUNEDB_CONCAT_(a, b) TUNEDB_CONCAT_INNER_(a, b)

// Returns from the current function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status tunedb_status_ = (expr);          \
    if (!tunedb_status_.ok()) return tunedb_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, StatusOrExpr());` declares/assigns the value or
// returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  TUNEDB_ASSIGN_OR_RETURN_IMPL_(TUNEDB_CONCAT_(tunedb_so_, __LINE__), lhs, expr)
#define TUNEDB_ASSIGN_OR_RETURN_IMPL_(so, lhs, expr) \
  auto so = (expr);                                  \
  if (!so.ok()) return so.status();                  \
  lhs = std::move(so).value()

#endif  // TUNEDB_COMMON_STATUS_MACROS_H_
