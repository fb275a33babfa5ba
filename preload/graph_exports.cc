// Three of the four backend-API entry points libtunedb_preload.so defines
// (under the libcudnn.so.9 node, libcudnn_node.map; the fourth,
// cudnnBackendFinalize, is plan_exports.cc), for programs that build cuDNN
// graphs (PyTorch's default convolution path):
//   - cudnnBackendCreateDescriptor: cuDNN's own, then the GraphShadow
//     forgets the new descriptor's address (it may be a destroyed one's);
//   - cudnnBackendSetAttribute: cuDNN's own, then, when it succeeded, the
//     attribute recorded in the GraphShadow if it is one it keeps;
//   - cudnnBackendGetAttribute: the results of an engine-heuristics
//     descriptor whose graph the shadow knows are offered to the Interposer
//     (in the core), which answers them with tunedb's engine configs (modes
//     INSTANT, A and B), with none (mode FALLBACK on a graph whose answer
//     held a config every filter keeps: GraphAnswer::universal, which this
//     file marks in the shadow, with the filled configs as one offer when
//     the answer is lead-only) or passes; under a pin or a job, every
//     config any list of a graph gives is one offer of that graph
//     (GraphAnswer::one_offer); everything else is cuDNN's own;
//     and the filled configs' stored plans (GraphAnswer::plans);
//   - and cudnnBackendSetAttribute of an execution plan's engine config
//     tells the thread's LeadPlanWindow which offer the plan is of; a
//     config with a stored plan is held in the shadow instead of set on
//     cuDNN's descriptor, for the finalize to load that plan (cuDNN refuses
//     a serialized plan on a plan descriptor with an engine config).
//
// Thread safety: as thread-safe as cuDNN's own functions.
#include <cudnn.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "preload/core_loader.h"
#include "preload/graph_call.h"
#include "preload/graph_shadow.h"
#include "preload/inside_preload.h"
#include "preload/lead_plan_window.h"
#include "preload/real_cudnn.h"

namespace tunedb::preload {
namespace {

RealFunction<decltype(&cudnnBackendCreateDescriptor)> real_create_descriptor(
    "cudnnBackendCreateDescriptor");
RealFunction<decltype(&cudnnBackendSetAttribute)> real_set_attribute(
    "cudnnBackendSetAttribute");
RealFunction<decltype(&cudnnBackendGetAttribute)> real_get_attribute(
    "cudnnBackendGetAttribute");

bool Answerable(int mode) {
  return mode == CUDNN_HEUR_MODE_INSTANT || mode == CUDNN_HEUR_MODE_A ||
         mode == CUDNN_HEUR_MODE_B || mode == CUDNN_HEUR_MODE_FALLBACK;
}

}  // namespace
}  // namespace tunedb::preload

using namespace tunedb::preload;  // NOLINT: the C entry points below

extern "C" cudnnStatus_t cudnnBackendCreateDescriptor(
    cudnnBackendDescriptorType_t descriptorType,
    cudnnBackendDescriptor_t* descriptor) {
  auto real = real_create_descriptor.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  const cudnnStatus_t s = real(descriptorType, descriptor);
  if (s == CUDNN_STATUS_SUCCESS && descriptor != nullptr) {
    GraphShadow::Instance().Forget(*descriptor);
  }
  return s;
}

extern "C" cudnnStatus_t cudnnBackendSetAttribute(
    cudnnBackendDescriptor_t descriptor,
    cudnnBackendAttributeName_t attributeName,
    cudnnBackendAttributeType_t attributeType, int64_t elementCount,
    const void* arrayOfElements) {
  auto real = real_set_attribute.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  // cuDNN's own calls while the shim loads a stored plan (plan_exports.cc).
  if (inside_preload) {
    return real(descriptor, attributeName, attributeType, elementCount,
                arrayOfElements);
  }
  GraphShadow& shadow = GraphShadow::Instance();
  // An execution plan's engine config, once any lead-only answer or stored
  // plan was given: which offer the plan is of, and a config with a stored
  // plan is held back for the finalize, which loads the plan
  // (plan_exports.cc).
  if (attributeName == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG &&
      (shadow.HasOffers() || shadow.HasPlans()) &&
      attributeType == CUDNN_TYPE_BACKEND_DESCRIPTOR && elementCount == 1 &&
      arrayOfElements != nullptr) {
    const cudnnBackendDescriptor_t config =
        *static_cast<const cudnnBackendDescriptor_t*>(arrayOfElements);
    GraphShadow::ConfigMarks marks = shadow.MarksOf(config);
    if (marks.plan != nullptr) {
      try {
        const uint64_t offer = marks.offer;
        shadow.HoldConfig(descriptor, config, std::move(marks));
        LeadPlanWindow::ThisThread().PlanConfigSet(descriptor, offer);
        return CUDNN_STATUS_SUCCESS;
      } catch (...) {
        // Out of memory: the config is set on cuDNN's descriptor below.
      }
    }
    const cudnnStatus_t s = real(descriptor, attributeName, attributeType,
                                 elementCount, arrayOfElements);
    if (s == CUDNN_STATUS_SUCCESS) {
      LeadPlanWindow::ThisThread().PlanConfigSet(descriptor, marks.offer);
    }
    return s;
  }
  const cudnnStatus_t s = real(descriptor, attributeName, attributeType,
                               elementCount, arrayOfElements);
  if (s == CUDNN_STATUS_SUCCESS &&
      attributeName == CUDNN_ATTR_EXECUTION_PLAN_HANDLE && shadow.HasPlans() &&
      attributeType == CUDNN_TYPE_HANDLE && elementCount == 1 &&
      arrayOfElements != nullptr) {
    try {
      shadow.PlanHandleSet(descriptor,
                           *static_cast<const cudnnHandle_t*>(arrayOfElements));
    } catch (...) {
      // Out of memory: the plan's stored plan is not loaded (no handle).
    }
  }
  if (s == CUDNN_STATUS_SUCCESS && GraphShadow::Records(attributeName)) {
    try {
      GraphShadow::Instance().RecordAttribute(descriptor, attributeName,
                                              attributeType, elementCount,
                                              arrayOfElements);
    } catch (...) {
      // Out of memory recording: the descriptor is just not known later.
    }
  }
  return s;
}

extern "C" cudnnStatus_t cudnnBackendGetAttribute(
    cudnnBackendDescriptor_t const descriptor,
    cudnnBackendAttributeName_t attributeName,
    cudnnBackendAttributeType_t attributeType, int64_t requestedElementCount,
    int64_t* elementCount, void* arrayOfElements) {
  auto real = real_get_attribute.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  auto pass = [&] {
    return real(descriptor, attributeName, attributeType, requestedElementCount,
                elementCount, arrayOfElements);
  };
  if (attributeName != CUDNN_ATTR_ENGINEHEUR_RESULTS ||
      attributeType != CUDNN_TYPE_BACKEND_DESCRIPTOR || inside_preload ||
      elementCount == nullptr || requestedElementCount < 0 ||
      (requestedElementCount > 0 && arrayOfElements == nullptr)) {
    return pass();
  }
  const InsidePreload guard;
  try {
    std::optional<ShadowHeuristics> shadow =
        GraphShadow::Instance().Heuristics(descriptor);
    if (!shadow.has_value() || !shadow->has_graph ||
        !Answerable(shadow->mode)) {
      return pass();
    }
    const CoreApi* core = LoadedCore();
    if (core == nullptr) return pass();
    GraphCall call;
    call.heuristics = descriptor;
    call.shadow = *std::move(shadow);
    call.requested = requestedElementCount;
    call.count = elementCount;
    call.elements = arrayOfElements;
    const cudnnBackendDescriptor_t graph = call.shadow.graph;
    const GraphAnswer answer = core->answer_graph(call);
    auto* configs = static_cast<cudnnBackendDescriptor_t*>(arrayOfElements);
    // Under a pin or a job, every config any list of this graph gives the
    // caller is one offer: it builds and times the first it keeps, alone.
    auto one_offer = [&](cudnnStatus_t s) {
      if (answer.one_offer && s == CUDNN_STATUS_SUCCESS &&
          requestedElementCount > 0 && *elementCount > 0) {
        GraphShadow::Instance().MarkGraphOffer(
            graph, configs, std::min(*elementCount, requestedElementCount));
      }
      return s;
    };
    if (!answer.answered) return one_offer(pass());
    if (!answer.plans.empty() && requestedElementCount > 0) {
      GraphShadow::Instance().MarkPlans(
          configs, answer.plans, std::min(*elementCount, requestedElementCount),
          call.shadow.graph_handle);
    }
    if (answer.universal && requestedElementCount > 0) {
      GraphShadow::Instance().MarkAnswered(graph);
      if (answer.lead_only && !answer.one_offer && *elementCount > 0) {
        GraphShadow::Instance().MarkOffer(
            configs, std::min(*elementCount, requestedElementCount));
      }
    }
    return one_offer(answer.status);
  } catch (...) {
    return pass();
  }
}
