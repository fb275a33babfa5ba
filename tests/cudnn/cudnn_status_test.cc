// The cuDNN/CUDA -> absl::Status mapping (needs the libraries, not a GPU).
#include "cudnn/cudnn_status.h"

#include "gtest/gtest.h"

namespace tunedb {
namespace {

TEST(CudnnStatusTest, CategoriesMapToCodes) {
  EXPECT_TRUE(CudnnStatusToAbsl(CUDNN_STATUS_SUCCESS, "x").ok());
  EXPECT_EQ(CudnnStatusToAbsl(CUDNN_STATUS_BAD_PARAM, "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      CudnnStatusToAbsl(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH, "x").code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudnnStatusToAbsl(CUDNN_STATUS_NOT_SUPPORTED, "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudnnStatusToAbsl(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT, "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CudnnStatusToAbsl(
                CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, "x")
                .code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CudnnStatusToAbsl(CUDNN_STATUS_EXECUTION_FAILED, "x").code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(CudnnStatusToAbsl(CUDNN_STATUS_INTERNAL_ERROR, "x").code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(IsCudnnNotSupported(CUDNN_STATUS_NOT_SUPPORTED_SHAPE));
  EXPECT_FALSE(IsCudnnNotSupported(CUDNN_STATUS_BAD_PARAM));
}

TEST(CudnnStatusTest, MessageNamesTheCall) {
  absl::Status s = CudnnStatusToAbsl(CUDNN_STATUS_BAD_PARAM, "cudnnFoo");
  EXPECT_NE(s.message().find("cudnnFoo"), absl::string_view::npos) << s;
}

TEST(CudnnStatusTest, CudaErrors) {
  EXPECT_TRUE(CudaStatusToAbsl(cudaSuccess, "x").ok());
  EXPECT_EQ(CudaStatusToAbsl(cudaErrorMemoryAllocation, "x").code(),
            absl::StatusCode::kResourceExhausted);
  absl::Status sticky = CudaStatusToAbsl(cudaErrorIllegalAddress, "x");
  EXPECT_EQ(sticky.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(IsFatalDeviceError(sticky));
  absl::Status nodev = CudaStatusToAbsl(cudaErrorNoDevice, "x");
  EXPECT_EQ(nodev.code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(IsFatalDeviceError(nodev));
  EXPECT_EQ(CudaStatusToAbsl(cudaErrorInvalidValue, "x").code(),
            absl::StatusCode::kInternal);
  EXPECT_FALSE(IsFatalDeviceError(absl::UnavailableError("other")));
}

}  // namespace
}  // namespace tunedb
