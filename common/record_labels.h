// Short labels of a problem and a result, for tables and reports: a shape
// ("n64 c3 k64 in224x224 f7x7 s2x2 p3x3"), its types ("f32+tf32") and a
// result's algorithm ("1 tensor_op"). The CLI's tables and the report's
// aggregate (common/report_data.h) both label with these.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_RECORD_LABELS_H_
#define TUNEDB_COMMON_RECORD_LABELS_H_

#include <string>

#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// "56x56" for the first `spatial_dims` entries.
std::string DimsToText(const ConvProblem::Dims& d, int spatial_dims);
// Compact shape: "n64 c3 k64 in224x224 f7x7 s2x2 p3x3" (+ " d2x2" if
// dilated, " g32" if grouped).
std::string ShapeSummary(const ConvProblem& p);
// "f32", "f16/f32acc", "f32+tf32", " no-tc" added where tensor cores are
// not allowed.
std::string TypeSummary(const ConvProblem& p);
// "1 tensor_op": the algorithm and its math type.
std::string AlgoLabel(const AlgoResult& r);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_RECORD_LABELS_H_
