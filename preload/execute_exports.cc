// cudnnBackendExecute and cudnnBackendDestroyDescriptor as
// libtunedb_preload.so defines them (under the libcudnn.so.9 node,
// libcudnn_node.map): cuDNN's own, except for an execution plan the shim
// loaded from a stored plan (LoadedPlans). If cuDNN does not run such a
// plan, the shim builds the program's engine config itself, as cuDNN would
// have without tunedb, and runs that on the program's variant pack instead,
// now and on every later execute of the plan; counted as
// stored_plans_failed_to_run. It does so only for a status of cuDNN's
// NOT_SUPPORTED or EXECUTION_FAILED families, with the execute's handle,
// and only where the built plan needs no more workspace than the loaded one
// said (the program allocated that);
// otherwise, or if the build fails too, the program gets cuDNN's answer to
// its own call. The replacement is destroyed with the program's plan.
//
// Until a plan was loaded, every call costs one atomic load; after, a
// lookup under one mutex (LoadedPlans). Not handled: a failure while the
// program captures a CUDA graph (the build happens inside the capture).
//
// Thread safety: as thread-safe as cuDNN's own functions.
#include <cudnn.h>

#include <cstdint>

#include "preload/core_loader.h"
#include "preload/inside_preload.h"
#include "preload/loaded_plans.h"
#include "preload/real_cudnn.h"

namespace tunedb::preload {
namespace {

RealFunction<decltype(&cudnnBackendExecute)> real_execute(
    "cudnnBackendExecute");
RealFunction<decltype(&cudnnBackendDestroyDescriptor)> real_destroy(
    "cudnnBackendDestroyDescriptor");
RealFunction<decltype(&cudnnBackendCreateDescriptor)> real_create(
    "cudnnBackendCreateDescriptor");
RealFunction<decltype(&cudnnBackendSetAttribute)> real_set(
    "cudnnBackendSetAttribute");
RealFunction<decltype(&cudnnBackendGetAttribute)> real_get(
    "cudnnBackendGetAttribute");
RealFunction<decltype(&cudnnBackendFinalize)> real_finalize(
    "cudnnBackendFinalize");

// cuDNN's build of the program's engine config with `handle` (the
// execute's), if it needs at most the loaded plan's workspace (any, where
// that was not known); null otherwise.
cudnnBackendDescriptor_t BuildReplacement(const LoadedPlans::Plan& p,
                                          cudnnHandle_t handle) {
  const auto create = real_create.get();
  const auto set = real_set.get();
  const auto get = real_get.get();
  const auto finalize = real_finalize.get();
  const auto destroy = real_destroy.get();
  cudnnBackendDescriptor_t plan = nullptr;
  if (p.config == nullptr || handle == nullptr || create == nullptr ||
      set == nullptr || get == nullptr || finalize == nullptr ||
      destroy == nullptr ||
      create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) !=
          CUDNN_STATUS_SUCCESS) {
    return nullptr;
  }
  cudnnBackendDescriptor_t config = p.config;
  int64_t workspace = -1, n = 0;
  const bool built =
      set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
          &handle) == CUDNN_STATUS_SUCCESS &&
      set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config) == CUDNN_STATUS_SUCCESS &&
      finalize(plan) == CUDNN_STATUS_SUCCESS &&
      get(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
          &n, &workspace) == CUDNN_STATUS_SUCCESS &&
      n == 1 && (p.workspace < 0 || workspace <= p.workspace);
  if (!built) {
    destroy(plan);
    return nullptr;
  }
  return plan;
}

// Whether `s` says the plan could not run (cuDNN 9's NOT_SUPPORTED and
// EXECUTION_FAILED families), not that the call itself was wrong (a bad
// variant pack is the program's to hear about).
bool CouldNotRun(cudnnStatus_t s) {
  const int code = static_cast<int>(s);
  return (code >= 3000 && code < 4000) || (code >= 5000 && code < 6000);
}

void Note(PlanEvent event, const char* why) {
  if (const CoreApi* core = LoadedCore()) core->plan_event(event, why);
}

}  // namespace
}  // namespace tunedb::preload

using namespace tunedb::preload;  // NOLINT: the C entry points below

extern "C" cudnnStatus_t cudnnBackendExecute(
    cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
    cudnnBackendDescriptor_t variant_pack) {
  const auto real = real_execute.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  LoadedPlans& loaded = LoadedPlans::Instance();
  if (inside_preload || !loaded.Any()) return real(handle, plan, variant_pack);
  const std::optional<LoadedPlans::Plan> p = loaded.Find(plan);
  if (!p.has_value()) return real(handle, plan, variant_pack);
  if (p->replacement != nullptr) {
    return real(handle, p->replacement, variant_pack);
  }
  const cudnnStatus_t s = real(handle, plan, variant_pack);
  if (s == CUDNN_STATUS_SUCCESS || p->replacement_failed || !CouldNotRun(s)) {
    return s;
  }
  cudnnBackendDescriptor_t use = nullptr;
  bool built_now = false;
  {
    const InsidePreload guard;
    use = loaded.Replace(
        plan,
        [handle](const LoadedPlans::Plan& known) {
          return BuildReplacement(known, handle);
        },
        &built_now);
  }
  if (built_now) {
    Note(PlanEvent::kStoredFailedToRun,
         use != nullptr ? "it did not run: cuDNN's build of its config runs "
                          "instead"
                        : "it did not run, and cuDNN's build of its config "
                          "failed or needs more workspace");
  }
  return use != nullptr ? real(handle, use, variant_pack) : s;
}

extern "C" cudnnStatus_t cudnnBackendDestroyDescriptor(
    cudnnBackendDescriptor_t descriptor) {
  const auto real = real_destroy.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  LoadedPlans& loaded = LoadedPlans::Instance();
  if (!inside_preload && loaded.Any()) {
    if (cudnnBackendDescriptor_t replacement = loaded.Forget(descriptor)) {
      real(replacement);
    }
  }
  return real(descriptor);
}
