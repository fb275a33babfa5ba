// cudnnBackendFinalize as libtunedb_preload.so defines it (under the
// libcudnn.so.9 node, libcudnn_node.map): cuDNN's own, except for an
// execution plan of a lead-only answer (GraphAnswer::lead_only): the
// answer's configs are one offer (GraphShadow::MarkOffer), and once one
// plan of the offer has built on this thread, the offer's later plans on
// this thread fail with CUDNN_STATUS_NOT_SUPPORTED without calling cuDNN,
// until anything else is finalized (lead_plan_window.h), as long as the GPU
// has at least twice that plan's workspace free plus kMarginBytes.
//
// Why: PyTorch's benchmark mode (cudnn_frontend's cudnnGetPlan, then
// time_sorted_plan) builds a plan of every config its filter keeps, then
// runs each once to warm up and once timed. tunedb's answer holds its
// choice and alternatives that only a stricter filter needs (deterministic,
// no TF32, no workspace); building and running those cost more than the
// rest of the first iteration (runtime-compiled engines in fp16, fp32
// engines without tensor cores 50-100x slower than the choice). The first
// plan that builds is the first config the caller's filter kept, and with
// its workspace free twice over the caller can allocate it for the
// benchmark and again for the run that follows. A caller whose filter kept
// nothing of the offer builds nothing of it, and so builds the rest; one
// that runs a plan (finalizing a variant pack) or finalizes anything else
// before it builds the next builds that one too.
//
// Every other descriptor costs one atomic load (before any offer was
// marked) or a few thread-local reads.
//
// Thread safety: as thread-safe as cuDNN's own function (the window is
// per thread).
#include <cudnn.h>

#include <cstdint>
#include <optional>

#include "preload/core_loader.h"
#include "preload/device_memory.h"
#include "preload/graph_shadow.h"
#include "preload/lead_plan_window.h"
#include "preload/real_cudnn.h"

namespace tunedb::preload {
namespace {

constexpr uint64_t kMarginBytes = uint64_t{256} << 20;

RealFunction<decltype(&cudnnBackendFinalize)> real_finalize(
    "cudnnBackendFinalize");
RealFunction<decltype(&cudnnBackendGetAttribute)> real_get_attribute(
    "cudnnBackendGetAttribute");

// Whether the GPU could give a plan of `workspace` bytes twice over.
bool RoomFor(int64_t workspace) {
  const std::optional<uint64_t> free = FreeDeviceMemory();
  const uint64_t need = 2 * static_cast<uint64_t>(workspace) + kMarginBytes;
  return workspace >= 0 && free.has_value() && *free >= need;
}

// The built plan's workspace, -1 if cuDNN does not say.
int64_t WorkspaceOf(cudnnBackendDescriptor_t plan) {
  const auto get = real_get_attribute.get();
  int64_t size = -1, n = 0;
  if (get == nullptr ||
      get(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
          &n, &size) != CUDNN_STATUS_SUCCESS ||
      n != 1) {
    return -1;
  }
  return size;
}

}  // namespace
}  // namespace tunedb::preload

using namespace tunedb::preload;  // NOLINT: the C entry point below

extern "C" cudnnStatus_t cudnnBackendFinalize(
    cudnnBackendDescriptor_t descriptor) {
  const auto real = real_finalize.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  if (!GraphShadow::Instance().HasOffers()) return real(descriptor);
  LeadPlanWindow& window = LeadPlanWindow::ThisThread();
  switch (window.Before(descriptor)) {
    case LeadPlanWindow::Action::kBuild:
      return real(descriptor);
    case LeadPlanWindow::Action::kFollower:
      if (RoomFor(window.lead_workspace())) {
        if (const CoreApi* core = LoadedCore()) core->plan_not_built();
        return CUDNN_STATUS_NOT_SUPPORTED;
      }
      return real(descriptor);
    case LeadPlanWindow::Action::kLead:
      break;
  }
  const cudnnStatus_t s = real(descriptor);
  if (s == CUDNN_STATUS_SUCCESS) {
    // A workspace cuDNN does not report never leaves others unbuilt.
    const int64_t workspace = WorkspaceOf(descriptor);
    if (workspace >= 0) window.LeadBuilt(workspace);
  }
  return s;
}
