// Workspace: one device buffer that grows to the largest workspace asked of
// it, shared by the cudnnFind calls, the heuristic's trial runs and the
// re-timing of one problem.
//
// Thread safety: none; one owner thread.
#ifndef TUNEDB_BENCH_REGRET_WORKSPACE_H_
#define TUNEDB_BENCH_REGRET_WORKSPACE_H_

#include <cstddef>

#include "absl/status/status.h"
#include "cudnn/cudnn_handles.h"

namespace tunedb::regret {

class Workspace {
 public:
  // Makes the buffer at least `bytes` long; a smaller request keeps it. The
  // old buffer is freed before the new one is allocated (its contents are
  // lost), so after RESOURCE_EXHAUSTED (too little device memory) the
  // workspace is empty.
  absl::Status Reserve(size_t bytes);

  void* get() const { return buffer_.get(); }
  size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
};

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_WORKSPACE_H_
