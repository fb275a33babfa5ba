#include "cudnn/operand_arena.h"

#include "common/status_macros.h"

namespace tunedb {

absl::StatusOr<DeviceSpan> OperandArena::Reserve(ConvOperand operand,
                                                 size_t bytes) {
  DeviceBuffer& buffer = buffers_[static_cast<int>(operand)];
  if (buffer.bytes() < bytes) {
    buffer = DeviceBuffer();  // its memory may be needed for the new one
    ASSIGN_OR_RETURN(buffer, DeviceBuffer::Allocate(bytes));
  }
  return DeviceSpan{buffer.get(), bytes};
}

void OperandArena::Release() {
  for (DeviceBuffer& b : buffers_) b = DeviceBuffer();
}

}  // namespace tunedb
