// The one function libtunedb_preload_core.so exports (core_api.h), and the
// core's FindRealCudnnSymbol, which asks the shim: lookups relative to the
// shim find cuDNN's definitions, never the shim's own entry points.
//
// Thread safety: the shim calls the init function once, before any other.
#include <atomic>
#include <string>

#include "preload/core_api.h"
#include "preload/interposer.h"
#include "preload/real_cudnn.h"

namespace tunedb::preload {
namespace {

std::atomic<void* (*)(const char*)> shim_find_real{nullptr};

Decision Decide(const ConvCall& call) {
  try {
    return Interposer::Instance().Decide(call);
  } catch (...) {
    Decision d;
    d.outcome = Outcome::kInternalError;
    return d;
  }
}

void Record(const ConvCall& call, Outcome outcome, int first_algo,
            const std::string& key_text) {
  try {
    Interposer::Instance().Record(call, outcome, first_algo, key_text);
  } catch (...) {
  }
}

GraphAnswer AnswerGraph(const GraphCall& call) {
  try {
    return Interposer::Instance().AnswerGraph(call);
  } catch (...) {
    return GraphAnswer{};
  }
}

void PlanEventHappened(PlanEvent event, const char* why) {
  try {
    Interposer::Instance().RecordPlan(event, why != nullptr ? why : "");
  } catch (...) {
  }
}

constexpr CoreApi kApi{kCoreApiVersion, &Decide, &Record, &AnswerGraph,
                       &PlanEventHappened};

}  // namespace

void* FindRealCudnnSymbol(const char* name) {
  auto find = shim_find_real.load(std::memory_order_acquire);
  return find != nullptr ? find(name) : nullptr;
}

}  // namespace tunedb::preload

extern "C" const tunedb::preload::CoreApi* tunedb_preload_core_init(
    void* (*find_real)(const char* name)) {
  tunedb::preload::shim_find_real.store(find_real, std::memory_order_release);
  return &tunedb::preload::kApi;
}
