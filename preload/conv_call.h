// ConvCall and Decision: one intercepted legacy call, as the shim
// (preload_exports.cc) hands it to the Interposer, and the answer it gets.
//
// Thread safety: plain values.
#ifndef TUNEDB_PRELOAD_CONV_CALL_H_
#define TUNEDB_PRELOAD_CONV_CALL_H_

#include <cudnn.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "preload/perf_merge.h"
#include "preload/preload_counters.h"
#include "tunedb/problem.h"

namespace tunedb::preload {

// One legacy call's problem, in forward terms (as ProblemFromDescriptors
// takes them: x is dx for backward data, w is dw for backward filter).
struct ConvCall {
  ConvOp op = ConvOp::kForward;
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnTensorDescriptor_t y = nullptr;
  // A FindEx caller's workspace size; nullopt for Find and Get_v7.
  std::optional<size_t> workspace_limit;
};

struct Decision {
  Outcome outcome = Outcome::kInternalError;
  // For kHit: the fastest choice, then the fastest deterministic one if
  // that is another.
  std::vector<TunedChoice> tuned;
  // The key's text, at LogLevel::kCalls only (for the per-call line).
  std::string key_text;
  // Answered: kHit, or kPinMiss (no tuned choices: cuDNN's heuristic list
  // is the answer, in its order).
  bool hit() const {
    return outcome == Outcome::kHit || outcome == Outcome::kPinMiss;
  }
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_CONV_CALL_H_
