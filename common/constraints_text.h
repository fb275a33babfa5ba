// ConstraintsText: the one text of a caller's constraints set, e.g.
// "det=0 launch=direct notes=0 ws=any". Pin files persist it (PinSlot's
// text), so its format must never change; everything else that names a
// constraints set (job names, logs) uses the same text.
//
// The text carries the caller's limits: deterministic_only, launch_mode,
// excluded_numerical_notes and max_workspace_bytes. The graph API's cost
// settings, compile_horizon_calls and loads_stored_plans, are not part of
// it (one program runs under one setting of them); a text that must tell
// them apart adds them.
//
// Thread safety: a pure function.
#ifndef TUNEDB_COMMON_CONSTRAINTS_TEXT_H_
#define TUNEDB_COMMON_CONSTRAINTS_TEXT_H_

#include <string>

#include "tunedb/record.h"

namespace tunedb {

// "det=<0|1> launch=<direct|graph> notes=<n> ws=<bytes|any>".
std::string ConstraintsText(const Constraints& c);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_CONSTRAINTS_TEXT_H_
