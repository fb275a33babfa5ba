#include "bench/regret/workspace.h"

#include <utility>

#include "common/status_macros.h"

namespace tunedb::regret {

absl::Status Workspace::Reserve(size_t bytes) {
  if (bytes <= buffer_.bytes()) return absl::OkStatus();
  buffer_ = DeviceBuffer();
  ASSIGN_OR_RETURN(buffer_, DeviceBuffer::Allocate(bytes));
  return absl::OkStatus();
}

}  // namespace tunedb::regret
