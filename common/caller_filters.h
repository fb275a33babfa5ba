// The filters a framework applies to the engine configs it is offered, as
// Constraints. PyTorch's graph-API path (cudnn_frontend) always drops
// configs with cuDNN's DOWN_CONVERT_INPUTS note; deterministic mode drops
// nondeterministic ones; fp32 with TF32 off drops tensor-core ones; and it
// drops a plan whose workspace it cannot allocate. The preload answers a
// graph with the fastest config under each filter (the choices, then the
// alternatives a stricter filter needs); the search keeps the plan of every
// config that compiles at run time, so the answer a program builds loads.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_CALLER_FILTERS_H_
#define TUNEDB_COMMON_CALLER_FILTERS_H_

#include <vector>

#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

struct CallerFilter {
  Constraints constraints;
  // Only a stricter filter than the default needs this config.
  bool alternative = false;
  // Every filter keeps its config, and it needs no workspace.
  bool universal = false;
};

// The filters, in the order an answer holds their configs: none, no
// down-conversion (the choices), deterministic, for TF32 types TF32 off,
// all of them, all of them without workspace (the alternatives).
std::vector<CallerFilter> FrameworkFilters(DataType input_type);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_CALLER_FILTERS_H_
