// A job's id (LookupRequest.job, ClientOptions::job_id, TUNEDB_JOB): what
// the ranks and workers of one job share, so the daemon answers them alike
// (server/service/job_answers.h). The one rule for what an id may be, which
// a program's name (LookupRequest.program, ClientOptions::program,
// TUNEDB_PROGRAM) follows too.
//
// Thread safety: a pure function.
#ifndef TUNEDB_COMMON_JOB_ID_H_
#define TUNEDB_COMMON_JOB_ID_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tunedb {

inline constexpr size_t kMaxJobIdBytes = 128;

// OK for "" (no job) and for 1 to kMaxJobIdBytes of [A-Za-z0-9._:@/-];
// INVALID_ARGUMENT saying which rule failed otherwise.
absl::Status ValidateJobId(absl::string_view job);
// The same rule for a program's name, its errors naming "program".
absl::Status ValidateProgramName(absl::string_view program);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_JOB_ID_H_
