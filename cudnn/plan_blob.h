// cuDNN's serialized execution plan (CUDNN_ATTR_EXECUTION_PLAN_JSON_
// REPRESENTATION) as text, without calling cuDNN. A plan serialized on one
// operation graph names the graph's tensors by their unique ids; a program's
// graph of the same convolution uses its own (tunedb's graphs use kUidX,
// kUidW, kUidY; PyTorch's others). WithTensorIds renumbers a plan for the
// program's graph, so the program's variant pack binds its buffers to it.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_CUDNN_PLAN_BLOB_H_
#define TUNEDB_CUDNN_PLAN_BLOB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunedb {

// The unique ids of one convolution's tensors, in forward terms.
struct TensorIds {
  int64_t x = 0, w = 0, y = 0;
};

// One tensor's dims and strides as its descriptor gives them.
struct TensorLayout {
  std::vector<int64_t> dims, strides;
};
// A convolution's tensors' layouts, in forward terms.
struct TensorLayouts {
  TensorLayout x, w, y;
};

// `plan` with every tensor id of `from` replaced by the same tensor's id of
// `to`: in its operation graph (the tensors' names, the nodes' operands) and
// in its kernels' parameter bindings (each "uid"). INVALID_ARGUMENT when
// `plan` is not a JSON object with an operation graph, names none of
// `from`'s ids, or names a tensor id that is not one of them (a plan of
// another graph). With `layouts` (of `to`'s tensors), also
// FAILED_PRECONDITION, naming the tensor, when the plan's operation graph
// gives one of them other dims, or other strides along a dim longer than 1:
// a plan made for packed tensors reads a strided view (a channel slice) as
// if it were packed, and computes wrong results.
absl::StatusOr<std::string> WithTensorIds(
    absl::string_view plan, const TensorIds& from, const TensorIds& to,
    const TensorLayouts* layouts = nullptr);

// Whether `plan` may be loaded at all (by the daemon's search or a program).
// FAILED_PRECONDITION when one of its kernels takes a tensor as a TMA
// descriptor (a binding with "update_as": "tma_desc"; engines 70 and 78 of
// cuDNN 9.19): cuDNN loads such a plan, and its kernel can then fault on
// the program's buffers, which leaves the process's CUDA context unusable
// (docs/preload.md, "Stored plans"). Such a config is built instead.
// INVALID_ARGUMENT when `plan` is not JSON.
absl::Status CheckLoadable(absl::string_view plan);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_PLAN_BLOB_H_
