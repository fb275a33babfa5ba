// OperandArena: device memory for the three operands of a CudnnConv (x, w,
// y), kept from one conv to the next and grown on demand, so that a search
// neither allocates nor frees (cudaFree waits for the device) each time.
//
// Thread safety: none. A conv made over the arena must be gone before the
// next one is made over it.
#ifndef TUNEDB_CUDNN_OPERAND_ARENA_H_
#define TUNEDB_CUDNN_OPERAND_ARENA_H_

#include <array>
#include <cstddef>

#include "absl/status/statusor.h"
#include "cudnn/conv_operands.h"
#include "cudnn/cudnn_handles.h"

namespace tunedb {

class OperandArena {
 public:
  // At least `bytes` of device memory for `operand`. Growing frees the old
  // buffer first (its contents are lost). RESOURCE_EXHAUSTED if it does not
  // fit.
  absl::StatusOr<DeviceSpan> Reserve(ConvOperand operand, size_t bytes);
  // Gives all the memory back.
  void Release();

 private:
  std::array<DeviceBuffer, kConvOperandCount> buffers_;
};

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_OPERAND_ARENA_H_
