#include "cudnn/cudnn_handles.h"

#include "common/status_macros.h"

namespace tunedb {

absl::StatusOr<CudnnHandle> CreateCudnnHandle() {
  cudnnHandle_t raw = nullptr;
  RETURN_IF_ERROR(CudnnStatusToAbsl(cudnnCreate(&raw), "cudnnCreate"));
  return CudnnHandle(raw);
}

absl::StatusOr<TensorDescriptor> CreateTensorDescriptor() {
  cudnnTensorDescriptor_t raw = nullptr;
  RETURN_IF_ERROR(CudnnStatusToAbsl(cudnnCreateTensorDescriptor(&raw),
                                    "cudnnCreateTensorDescriptor"));
  return TensorDescriptor(raw);
}

absl::StatusOr<FilterDescriptor> CreateFilterDescriptor() {
  cudnnFilterDescriptor_t raw = nullptr;
  RETURN_IF_ERROR(CudnnStatusToAbsl(cudnnCreateFilterDescriptor(&raw),
                                    "cudnnCreateFilterDescriptor"));
  return FilterDescriptor(raw);
}

absl::StatusOr<ConvolutionDescriptor> CreateConvolutionDescriptor() {
  cudnnConvolutionDescriptor_t raw = nullptr;
  RETURN_IF_ERROR(CudnnStatusToAbsl(cudnnCreateConvolutionDescriptor(&raw),
                                    "cudnnCreateConvolutionDescriptor"));
  return ConvolutionDescriptor(raw);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  DeviceBuffer buffer;
  if (bytes == 0) return buffer;
  void* ptr = nullptr;
  cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err != cudaSuccess) {
    // A failed cudaMalloc leaves a non-sticky error behind; clear it.
    cudaGetLastError();
    return CudaStatusToAbsl(err, "cudaMalloc");
  }
  buffer.ptr_ = ptr;
  buffer.bytes_ = bytes;
  return buffer;
}

CudaStream::~CudaStream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

absl::StatusOr<CudaStream> CudaStream::Create() {
  CudaStream s;
  RETURN_IF_ERROR(CudaStatusToAbsl(
      cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking),
      "cudaStreamCreateWithFlags"));
  return s;
}

CudaEvent::~CudaEvent() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

absl::StatusOr<CudaEvent> CudaEvent::Create() {
  CudaEvent e;
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaEventCreate(&e.event_), "cudaEventCreate"));
  return e;
}

}  // namespace tunedb
