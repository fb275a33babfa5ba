// RAII owners for cuDNN and CUDA runtime objects: the cuDNN handle,
// tensor/filter/convolution descriptors, streams, events and device buffers.
//
// Each Create() returns the error as absl::Status (via cudnn_status.h) and the
// destructor releases the object; they are move-only. The destructors ignore
// errors (nothing can be done about them there).
//
// Thread safety: none; one owner thread at a time, as cuDNN requires.
#ifndef TUNEDB_CUDNN_CUDNN_HANDLES_H_
#define TUNEDB_CUDNN_CUDNN_HANDLES_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"
#include "cudnn/cudnn_status.h"

namespace tunedb {

// A move-only owner of a raw handle T released with Destroy(T).
template <typename T, cudnnStatus_t (*Destroy)(T)>
class CudnnObject {
 public:
  CudnnObject() = default;
  explicit CudnnObject(T raw) : raw_(raw) {}
  CudnnObject(CudnnObject&& other) noexcept
      : raw_(std::exchange(other.raw_, nullptr)) {}
  CudnnObject& operator=(CudnnObject&& other) noexcept {
    if (this != &other) {
      Reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  CudnnObject(const CudnnObject&) = delete;
  CudnnObject& operator=(const CudnnObject&) = delete;
  ~CudnnObject() { Reset(); }

  T get() const { return raw_; }
  // Gives up ownership: the caller destroys the returned handle.
  T release() { return std::exchange(raw_, nullptr); }

 private:
  void Reset() {
    if (raw_ != nullptr) Destroy(raw_);
    raw_ = nullptr;
  }
  T raw_ = nullptr;
};

using CudnnHandle = CudnnObject<cudnnHandle_t, cudnnDestroy>;
using TensorDescriptor =
    CudnnObject<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    CudnnObject<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor = CudnnObject<cudnnConvolutionDescriptor_t,
                                          cudnnDestroyConvolutionDescriptor>;

absl::StatusOr<CudnnHandle> CreateCudnnHandle();
absl::StatusOr<TensorDescriptor> CreateTensorDescriptor();
absl::StatusOr<FilterDescriptor> CreateFilterDescriptor();
absl::StatusOr<ConvolutionDescriptor> CreateConvolutionDescriptor();

// Device memory from cudaMalloc.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // RESOURCE_EXHAUSTED when the device has too little memory. Zero bytes
  // gives an empty buffer (null pointer).
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Device memory owned elsewhere (a DeviceBuffer, or a part of one), such as
// the workspace a search offers to cuDNN.
struct DeviceSpan {
  void* ptr = nullptr;
  size_t bytes = 0;
};

// A CUDA stream (non-blocking with respect to the legacy default stream).
class CudaStream {
 public:
  CudaStream() = default;
  CudaStream(CudaStream&& other) noexcept
      : stream_(std::exchange(other.stream_, nullptr)) {}
  CudaStream& operator=(CudaStream&&) = delete;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream();
  static absl::StatusOr<CudaStream> Create();
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// A CUDA event with timing enabled.
class CudaEvent {
 public:
  CudaEvent() = default;
  CudaEvent(CudaEvent&& other) noexcept
      : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent();
  static absl::StatusOr<CudaEvent> Create();
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CUDNN_HANDLES_H_
