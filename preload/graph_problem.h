// ProblemFromShadow: the graph-API ConvProblem of what a program set on the
// descriptors behind an engine-heuristics descriptor (GraphShadow's record),
// in the terms the daemon keys graph searches: api=graph, the smallest byte
// alignment set on x, w and y (capped at 16), tensor cores and TF32 allowed
// (what PyTorch's default allows; it filters the answer by its own settings).
//
// INVALID_ARGUMENT (naming what) for what tunedb does not key: a graph of
// more or other than one convolution node, virtual or vectorized tensors,
// strides that are neither packed channels-first nor channels-last (strides
// of size-1 dimensions are ignored, as frameworks rewrite them), asymmetric
// padding, other data types, or a missing attribute.
//
// Thread safety: a stateless function.
#ifndef TUNEDB_PRELOAD_GRAPH_PROBLEM_H_
#define TUNEDB_PRELOAD_GRAPH_PROBLEM_H_

#include "absl/status/statusor.h"
#include "preload/graph_call.h"
#include "tunedb/problem.h"

namespace tunedb::preload {

absl::StatusOr<ConvProblem> ProblemFromShadow(const ShadowHeuristics& shadow);

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_GRAPH_PROBLEM_H_
