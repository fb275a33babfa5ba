// ConvLauncher: how the search's timing and verification run one candidate
// (an AlgoResult) of a problem once, on the conv's stream. The legacy API
// runs an algorithm with a math type (LegacyLauncher, over a CudnnConv); the
// graph API executes the candidate's execution plan (GraphLauncher,
// graph_search.h). Screening, re-timing and verification are written once
// against this interface.
//
// Thread safety: none; one search at a time. A launcher must not outlive
// what it launches on.
#ifndef TUNEDB_SERVER_SEARCH_CONV_LAUNCHER_H_
#define TUNEDB_SERVER_SEARCH_CONV_LAUNCHER_H_

#include <cstddef>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "cudnn/cudnn_conv.h"
#include "tunedb/record.h"

namespace tunedb {

// What identifies a candidate among a search's results (one RunTimer, one
// re-timing pool member, one plan): its algorithm or engine, math type and
// knobs. An ordered key, for maps.
using CandidateKey = std::tuple<int, MathType, std::string>;
inline CandidateKey CandidateKeyOf(const AlgoResult& r) {
  return {r.algo, r.math_type, KnobsText(r.knobs)};
}

class ConvLauncher {
 public:
  virtual ~ConvLauncher() = default;
  // One run of `r` (asynchronously), offered `workspace_bytes` at
  // `workspace`. Errors are cuDNN's, as cudnn_status.h maps them.
  virtual absl::Status Launch(const AlgoResult& r, void* workspace,
                              size_t workspace_bytes) = 0;
};

// Runs r.algo with r.math_type through CudnnConv::Run.
class LegacyLauncher final : public ConvLauncher {
 public:
  explicit LegacyLauncher(CudnnConv& conv) : conv_(conv) {}
  absl::Status Launch(const AlgoResult& r, void* workspace,
                      size_t workspace_bytes) override {
    return conv_.Run(r.algo, r.math_type, workspace, workspace_bytes);
  }

 private:
  CudnnConv& conv_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_CONV_LAUNCHER_H_
