// Host-side element encodings of tunedb's data types (f32, f64, IEEE half,
// bfloat16): seeded random tensor data to copy to the device, and device
// tensors copied back decoded to floats. Host-only: no CUDA or cuDNN.
//
// Thread safety: pure functions.
#ifndef TUNEDB_CUDNN_HOST_VALUES_H_
#define TUNEDB_CUDNN_HOST_VALUES_H_

#include <cstdint>
#include <vector>

#include "tunedb/problem.h"

namespace tunedb {

// `count` elements of `type`, uniform in [-1, 1) from `seed` (splitmix64),
// never all zero; DataTypeBytes(type) bytes each.
std::vector<unsigned char> RandomElements(DataType type, int64_t count,
                                          uint64_t seed);

// Elements of `type` (DataTypeBytes(type) bytes each) as floats.
std::vector<float> ElementsToFloats(DataType type,
                                    const std::vector<unsigned char>& bytes);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_HOST_VALUES_H_
