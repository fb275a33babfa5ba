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
// A plan whose engine config has a stored plan (GraphAnswer::plans) was set
// to that config in the shadow only (GraphShadow::HoldConfig; cuDNN refuses
// a serialized plan on a descriptor with an engine config). Its finalize
// sets the stored plan on the caller's descriptor
// (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION), with the plan's handle
// (or, where that set was not seen, its graph's) where the caller set none
// (cudnn_frontend sets none), and cuDNN's finalize loads it instead of
// compiling the engine. A descriptor on which cuDNN refused a plan stays
// refused (cuDNN keeps loading the refused form, engine config or not), so
// a plan is first loaded on a scratch descriptor of its own (the check;
// each load costs as much as the first, docs/preload.md) while this process
// has not yet loaded one on a caller's, and always once it had one refused
// there: a cuDNN, driver or GPU that takes none of tunedb's plans is found
// on the first, and the caller builds its config as without tunedb. After a
// refusal on the caller's descriptor, the engine config is set there and it
// is finalized again; cuDNN 9.19 still refuses, so the caller gets cuDNN's
// status and goes on to its next config.
// TUNEDB_PRELOAD_PLAN_CHECK=always checks every plan, =off none. A loaded
// plan that then fails to run is replaced by its config's build
// (execute_exports.cc).
//
// Every other descriptor costs two atomic loads (before any offer or plan
// was marked) or a few thread-local reads.
//
// Thread safety: as thread-safe as cuDNN's own function (the window is
// per thread).
#include <cudnn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "preload/core_loader.h"
#include "preload/device_memory.h"
#include "preload/graph_shadow.h"
#include "preload/inside_preload.h"
#include "preload/lead_plan_window.h"
#include "preload/loaded_plans.h"
#include "preload/real_cudnn.h"

namespace tunedb::preload {
namespace {

constexpr uint64_t kMarginBytes = uint64_t{256} << 20;

RealFunction<decltype(&cudnnBackendFinalize)> real_finalize(
    "cudnnBackendFinalize");
RealFunction<decltype(&cudnnBackendGetAttribute)> real_get_attribute(
    "cudnnBackendGetAttribute");
RealFunction<decltype(&cudnnBackendSetAttribute)> real_set_attribute(
    "cudnnBackendSetAttribute");
RealFunction<decltype(&cudnnGetLastErrorString)> real_last_error(
    "cudnnGetLastErrorString");
RealFunction<decltype(&cudnnBackendCreateDescriptor)> real_create_descriptor(
    "cudnnBackendCreateDescriptor");
RealFunction<decltype(&cudnnBackendDestroyDescriptor)>
    real_destroy_descriptor("cudnnBackendDestroyDescriptor");

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

void Note(PlanEvent event, const char* why = nullptr) {
  if (const CoreApi* core = LoadedCore()) core->plan_event(event, why);
}

// The handle set on plan `d`, or null.
cudnnHandle_t HandleOf(cudnnBackendDescriptor_t d) {
  const auto get = real_get_attribute.get();
  cudnnHandle_t handle = nullptr;
  int64_t n = 0;
  if (get == nullptr ||
      get(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &n,
          &handle) != CUDNN_STATUS_SUCCESS ||
      n != 1) {
    return nullptr;
  }
  return handle;
}

// TUNEDB_PRELOAD_TRACE_PLANS=1: each step of a stored plan's load on stderr.
void Trace(const char* step, const void* d) {
  static const bool on = [] {
    const char* v = std::getenv("TUNEDB_PRELOAD_TRACE_PLANS");
    return v != nullptr && v[0] == '1';
  }();
  if (on) std::fprintf(stderr, "tunedb preload: trace %s %p\n", step, d);
}

// When a stored plan is first loaded on a scratch descriptor
// (TUNEDB_PRELOAD_PLAN_CHECK).
enum class PlanCheck {
  kUntilOneLoads,  // default ("first")
  kAlways,         // "always" (or "on")
  kNever,          // "off"
};

PlanCheck PlanCheckMode() {
  static const PlanCheck mode = [] {
    const char* v = std::getenv("TUNEDB_PRELOAD_PLAN_CHECK");
    if (v == nullptr) return PlanCheck::kUntilOneLoads;
    if (std::strcmp(v, "off") == 0) return PlanCheck::kNever;
    if (std::strcmp(v, "always") == 0 || std::strcmp(v, "on") == 0) {
      return PlanCheck::kAlways;
    }
    return PlanCheck::kUntilOneLoads;
  }();
  return mode;
}

// Whether a caller's descriptor has loaded a stored plan in this process,
// and whether one has refused it.
std::atomic<bool> caller_loaded{false};
std::atomic<bool> caller_refused{false};

bool CheckOnScratch() {
  switch (PlanCheckMode()) {
    case PlanCheck::kAlways:
      return true;
    case PlanCheck::kNever:
      return false;
    case PlanCheck::kUntilOneLoads:
      break;
  }
  return caller_refused.load(std::memory_order_relaxed) ||
         !caller_loaded.load(std::memory_order_relaxed);
}

// Sets serialized plan `stored` on plan descriptor `d` (its handle set) and
// finalizes it.
cudnnStatus_t LoadInto(cudnnBackendDescriptor_t d, const std::string& stored,
                       decltype(&cudnnBackendFinalize) real) {
  const auto set = real_set_attribute.get();
  if (set == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  Trace("set plan", d);
  const cudnnStatus_t s =
      set(d, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
          static_cast<int64_t>(stored.size()), stored.data());
  Trace("finalize", d);
  const cudnnStatus_t f = s == CUDNN_STATUS_SUCCESS ? real(d) : s;
  Trace(f == CUDNN_STATUS_SUCCESS ? "loaded" : "not loaded", d);
  return f;
}

// Sets `handle` on plan `d` where none is set: cudnn_frontend builds a plan
// without one (only a serialized plan's load needs it), and cuDNN 9.19
// crashes loading a serialized plan on a descriptor without a handle.
cudnnStatus_t EnsureHandle(cudnnBackendDescriptor_t d, cudnnHandle_t handle) {
  if (HandleOf(d) != nullptr) return CUDNN_STATUS_SUCCESS;
  const auto set = real_set_attribute.get();
  if (set == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  Trace("set handle on", d);
  return set(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
             &handle);
}

// Whether cuDNN loads `stored` with `handle`, on a plan descriptor of its
// own.
bool LoadsOnScratch(cudnnHandle_t handle, const std::string& stored,
                    decltype(&cudnnBackendFinalize) real) {
  const auto create = real_create_descriptor.get();
  const auto destroy = real_destroy_descriptor.get();
  const auto set = real_set_attribute.get();
  cudnnBackendDescriptor_t scratch = nullptr;
  if (create == nullptr || destroy == nullptr || set == nullptr ||
      create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &scratch) !=
          CUDNN_STATUS_SUCCESS) {
    return false;
  }
  Trace("scratch with handle", handle);
  const bool loads =
      set(scratch, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
          &handle) == CUDNN_STATUS_SUCCESS &&
      LoadInto(scratch, stored, real) == CUDNN_STATUS_SUCCESS;
  destroy(scratch);
  return loads;
}

// `prefix` and cuDNN's last error, in a per-thread buffer.
const char* CudnnSays(const char* prefix) {
  thread_local char text[400];
  std::snprintf(text, sizeof(text), "%s", prefix);
  if (const auto last = real_last_error.get()) {
    const size_t used = std::strlen(text);
    last(text + used, sizeof(text) - used);
  }
  return text;
}

// As without tunedb: engine config `config` set on plan `d`, then cuDNN's
// build.
cudnnStatus_t SetConfigAndBuild(cudnnBackendDescriptor_t d,
                                cudnnBackendDescriptor_t config,
                                decltype(&cudnnBackendFinalize) real) {
  const auto set = real_set_attribute.get();
  const cudnnStatus_t s =
      set == nullptr ? CUDNN_STATUS_NOT_INITIALIZED
                     : set(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config);
  return s == CUDNN_STATUS_SUCCESS ? real(d) : s;
}

// cuDNN's finalize of plan `d`; from its stored plan when it held one.
cudnnStatus_t Build(cudnnBackendDescriptor_t d,
                    decltype(&cudnnBackendFinalize) real,
                    const std::optional<GraphShadow::HeldPlan>& held) {
  if (!held.has_value()) return real(d);
  // cuDNN loads a serialized plan through its own exported functions
  // (setting the plan's engine config, finalizing): those go straight to
  // cuDNN, not through this shim again.
  const InsidePreload guard;
  Trace("plan's handle", held->handle);
  Trace("graph's handle", held->graph_handle);
  cudnnHandle_t handle = held->handle;
  if (handle == nullptr) handle = held->graph_handle;
  if (handle == nullptr) handle = HandleOf(d);
  const char* why = nullptr;
  if (handle == nullptr || held->stored == nullptr) {
    why = "no handle seen on the plan or its graph";
  } else if (CheckOnScratch() &&
             !LoadsOnScratch(handle, *held->stored, real)) {
    why = CudnnSays("cuDNN does not load it: ");
  } else if (EnsureHandle(d, handle) != CUDNN_STATUS_SUCCESS) {
    why = "the caller's plan took no handle";
  } else if (LoadInto(d, *held->stored, real) != CUDNN_STATUS_SUCCESS) {
    // cuDNN 9.19 keeps refusing this descriptor (the refused form stays
    // set; an empty one set over it is refused too), so the build below
    // gets cuDNN's status, or the build where another cuDNN allows it.
    caller_refused.store(true, std::memory_order_relaxed);
    why = CudnnSays("cuDNN does not load it on the caller's plan: ");
  } else {
    caller_loaded.store(true, std::memory_order_relaxed);
    Note(PlanEvent::kStoredLoaded);
    if (cudnnBackendDescriptor_t stale = LoadedPlans::Instance().Add(
            d, held->config, WorkspaceOf(d))) {
      if (const auto destroy = real_destroy_descriptor.get()) destroy(stale);
    }
    return CUDNN_STATUS_SUCCESS;
  }
  Note(PlanEvent::kStoredRefused, why);
  // As without tunedb: the caller's engine config, then cuDNN's build.
  return SetConfigAndBuild(d, held->config, real);
}

}  // namespace
}  // namespace tunedb::preload

using namespace tunedb::preload;  // NOLINT: the C entry point below

extern "C" cudnnStatus_t cudnnBackendFinalize(
    cudnnBackendDescriptor_t descriptor) {
  const auto real = real_finalize.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  if (inside_preload) return real(descriptor);
  GraphShadow& shadow = GraphShadow::Instance();
  if (!shadow.HasOffers() && !shadow.HasPlans()) return real(descriptor);
  std::optional<GraphShadow::HeldPlan> held;
  if (shadow.HasPlans()) {
    try {
      held = shadow.TakeHeld(descriptor);
    } catch (...) {
      // cannot happen without a lock failure; the plan builds as cuDNN's
    }
  }
  LeadPlanWindow& window = LeadPlanWindow::ThisThread();
  switch (window.Before(descriptor)) {
    case LeadPlanWindow::Action::kBuild:
      return Build(descriptor, real, held);
    case LeadPlanWindow::Action::kFollower:
      if (RoomFor(window.lead_workspace())) {
        Note(PlanEvent::kNotBuilt);
        return CUDNN_STATUS_NOT_SUPPORTED;
      }
      return Build(descriptor, real, held);
    case LeadPlanWindow::Action::kLead:
      break;
  }
  const cudnnStatus_t s = Build(descriptor, real, held);
  if (s == CUDNN_STATUS_SUCCESS) {
    // A workspace cuDNN does not report never leaves others unbuilt.
    const int64_t workspace = WorkspaceOf(descriptor);
    if (workspace >= 0) window.LeadBuilt(workspace);
  }
  return s;
}
