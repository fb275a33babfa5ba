#include "cudnn/cudnn_conv.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cudnn/cpu_reference.h"
#include "cudnn/cudnn_status.h"
#include "cudnn/host_values.h"

namespace tunedb {

absl::StatusOr<std::unique_ptr<CudnnConv>> CudnnConv::Create(
    const ConvProblem& problem, cudnnHandle_t handle, cudaStream_t stream,
    uint64_t seed) {
  DeviceValues values(seed);
  return Create(problem, handle, stream, values);
}

absl::StatusOr<std::unique_ptr<CudnnConv>> CudnnConv::Create(
    const ConvProblem& problem, cudnnHandle_t handle, cudaStream_t stream,
    DeviceValues& values, OperandArena* arena) {
  RETURN_IF_ERROR(problem.Validate());
  std::unique_ptr<CudnnConv> conv(new CudnnConv());
  conv->problem_ = problem;
  conv->handle_ = handle;
  conv->stream_ = stream;
  RETURN_IF_ERROR(conv->Init(values, arena));
  return conv;
}

absl::Status CudnnConv::Init(DeviceValues& values, OperandArena* arena) {
  ASSIGN_OR_RETURN(descriptors_, DescribeConv(problem_));
  const int64_t elem = DataTypeBytes(problem_.input_type);
  for (int i = 0; i < kConvOperandCount; ++i) {
    const int64_t elements =
        OperandElements(problem_, static_cast<ConvOperand>(i));
    const size_t bytes = static_cast<size_t>(elements * elem);
    if (arena != nullptr) {
      ASSIGN_OR_RETURN(buffers_[i],
                       arena->Reserve(static_cast<ConvOperand>(i), bytes));
    } else {
      ASSIGN_OR_RETURN(owned_[i], DeviceBuffer::Allocate(bytes));
      buffers_[i] = {owned_[i].get(), owned_[i].bytes()};
    }
    RETURN_IF_ERROR(values.Fill(problem_.input_type, i * kOperandValueStride,
                                elements, buffers_[i].ptr, stream_));
  }
  return CudaStatusToAbsl(cudaStreamSynchronize(stream_),
                          "cudaStreamSynchronize(fill)");
}

ConvBuffers CudnnConv::buffers() const {
  return {buffers_[0].ptr, buffers_[1].ptr, buffers_[2].ptr};
}

absl::Status CudnnConv::PrepareCall(MathType math, bool on_stream) {
  RETURN_IF_ERROR(SetMathType(descriptors_.conv.get(), math));
  if (!on_stream) return absl::OkStatus();
  return CudnnStatusToAbsl(cudnnSetStream(handle_, stream_), "cudnnSetStream");
}

absl::StatusOr<std::vector<CudnnConv::Entry>> CudnnConv::Find(
    MathType math, void* workspace, size_t workspace_bytes) {
  RETURN_IF_ERROR(PrepareCall(math, /*on_stream=*/true));
  return FindAlgorithms(handle_, problem_.op, descriptors_.view(), buffers(),
                        workspace, workspace_bytes);
}

absl::StatusOr<std::vector<CudnnConv::Entry>> CudnnConv::Heuristic(
    MathType math) {
  RETURN_IF_ERROR(PrepareCall(math, /*on_stream=*/false));
  return HeuristicAlgorithms(handle_, problem_.op, descriptors_.view());
}

absl::StatusOr<int64_t> CudnnConv::WorkspaceSize(int algo, MathType math) {
  RETURN_IF_ERROR(PrepareCall(math, /*on_stream=*/false));
  return AlgoWorkspaceSize(handle_, problem_.op, descriptors_.view(), algo);
}

absl::Status CudnnConv::Run(int algo, MathType math, void* workspace,
                            size_t workspace_bytes) {
  RETURN_IF_ERROR(PrepareCall(math, /*on_stream=*/true));
  return RunAlgo(handle_, problem_.op, problem_.input_type, descriptors_.view(),
                 buffers(), algo, workspace, workspace_bytes);
}

absl::StatusOr<std::vector<float>> CudnnConv::ReadOperand(ConvOperand operand) {
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaStreamSynchronize(stream_),
                                   "cudaStreamSynchronize"));
  const DeviceSpan& buffer = buffers_[static_cast<int>(operand)];
  std::vector<unsigned char> raw(buffer.bytes);
  RETURN_IF_ERROR(CudaStatusToAbsl(
      cudaMemcpy(raw.data(), buffer.ptr, raw.size(), cudaMemcpyDeviceToHost),
      "cudaMemcpy(read)"));
  return ElementsToFloats(problem_.input_type, raw);
}

absl::StatusOr<std::vector<float>> CudnnConv::ReadOutput() {
  return ReadOperand(RolesOf(problem_.op).out);
}

int64_t CudnnConv::OutputElements() const {
  return OperandElements(problem_, RolesOf(problem_.op).out);
}

absl::StatusOr<std::vector<float>> CudnnConv::ReadOutputWindows(
    const std::vector<OutputWindow>& windows) {
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaStreamSynchronize(stream_),
                                   "cudaStreamSynchronize"));
  const int64_t elem = DataTypeBytes(problem_.input_type);
  const auto* base = static_cast<const unsigned char*>(
      buffers_[static_cast<int>(RolesOf(problem_.op).out)].ptr);
  int64_t total = 0;
  for (const OutputWindow& w : windows) total += w.count;
  std::vector<unsigned char> raw(static_cast<size_t>(total * elem));
  int64_t stride = 0;
  if (windows.size() > 1 && EvenlyStrided(windows, &stride)) {
    const size_t width = static_cast<size_t>(windows[0].count * elem);
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaMemcpy2D(raw.data(), width, base + windows[0].offset * elem,
                     static_cast<size_t>(stride * elem), width, windows.size(),
                     cudaMemcpyDeviceToHost),
        "cudaMemcpy2D(read windows)"));
    return ElementsToFloats(problem_.input_type, raw);
  }
  int64_t at = 0;
  for (const OutputWindow& w : windows) {
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaMemcpy(raw.data() + at * elem, base + w.offset * elem,
                   static_cast<size_t>(w.count * elem), cudaMemcpyDeviceToHost),
        "cudaMemcpy(read window)"));
    at += w.count;
  }
  return ElementsToFloats(problem_.input_type, raw);
}

absl::StatusOr<std::vector<float>> CudnnConv::CpuReference(int64_t max_macs) {
  const int64_t macs = ConvMultiplyAccumulates(problem_);
  if (macs > max_macs) {
    return absl::FailedPreconditionError(
        absl::StrCat("problem too large for the CPU reference (", macs, " > ",
                     max_macs, " MACs)"));
  }
  // The pass's inputs (never overwritten by it); its output stays empty.
  const PassRoles roles = RolesOf(problem_.op);
  std::array<std::vector<float>, kConvOperandCount> host;
  for (ConvOperand in : {roles.in_a, roles.in_b}) {
    ASSIGN_OR_RETURN(host[static_cast<int>(in)], ReadOperand(in));
  }
  return CpuConvolution(problem_, host[0], host[1], host[2]);
}

}  // namespace tunedb
