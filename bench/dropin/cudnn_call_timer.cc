// libtunedb_cudnn_call_timer.so: what a program spends in cuDNN's backend
// API, for finding where a framework's first iteration goes (docs/preload.md,
// "PyTorch's benchmark mode"). Loaded with LD_PRELOAD (after
// libtunedb_preload.so under `tunedb run`), it times every
// cudnnBackendFinalize, by descriptor type (an execution plan's finalize is
// its build), and every cudnnBackendExecute (host time of the launch: the
// GPU runs on), and at exit writes one JSON line to stderr:
//
//   {"cudnn_call_timer":{"finalize":{"execution_plan":{"calls":884,
//    "ms":2210.4},...},"execute":{"calls":1200,"ms":95.2},"first_ms":...,
//    "last_ms":...}}
//
// "first_ms"/"last_ms": when the first and last timed call started, since
// the library was loaded. A process that made no timed call writes nothing.
// The real functions are found as the preload finds them
// (preload/real_cudnn.h: also a cuDNN loaded RTLD_LOCAL, as PyTorch's is).
//
// Thread safety: thread-safe (one mutex around the descriptor-type map and
// the sums).
#include <cudnn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "preload/real_cudnn.h"

namespace {

using Clock = std::chrono::steady_clock;

using tunedb::preload::RealFunction;

RealFunction<decltype(&cudnnBackendCreateDescriptor)> real_create(
    "cudnnBackendCreateDescriptor");
RealFunction<decltype(&cudnnBackendFinalize)> real_finalize(
    "cudnnBackendFinalize");
RealFunction<decltype(&cudnnBackendExecute)> real_execute(
    "cudnnBackendExecute");

const char* TypeName(int type) {
  switch (type) {
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
      return "execution_plan";
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
      return "engine_config";
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
      return "engine";
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
      return "engine_heuristics";
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
      return "operation_graph";
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
      return "variant_pack";
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
      return "tensor";
    default:
      return "other";
  }
}

struct Sum {
  long calls = 0;
  double ms = 0;
};

class Timer {
 public:
  Timer() : loaded_(Clock::now()) {}

  // The line, unless nothing was timed (e.g. in a launcher process).
  void Print() {
    std::lock_guard<std::mutex> lock(mu_);
    if (first_ms_ < 0) return;
    std::string out = "{\"cudnn_call_timer\":{\"finalize\":{";
    bool first = true;
    for (const auto& [name, s] : finalize_) {
      char item[160];
      std::snprintf(item, sizeof(item), "%s\"%s\":{\"calls\":%ld,\"ms\":%.1f}",
                    first ? "" : ",", name.c_str(), s.calls, s.ms);
      out += item;
      first = false;
    }
    char rest[200];
    std::snprintf(rest, sizeof(rest),
                  "},\"execute\":{\"calls\":%ld,\"ms\":%.1f},\"first_ms\":%.1f,"
                  "\"last_ms\":%.1f}}\n",
                  execute_.calls, execute_.ms, first_ms_, last_ms_);
    out += rest;
    std::fputs(out.c_str(), stderr);
  }

  void Created(cudnnBackendDescriptor_t d, int type) {
    std::lock_guard<std::mutex> lock(mu_);
    types_[d] = type;
  }
  int TypeOf(cudnnBackendDescriptor_t d) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = types_.find(d);
    return it == types_.end() ? -1 : it->second;
  }
  void Add(const char* finalized_type, Clock::time_point start) {
    const Clock::time_point end = Clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    Sum& s = finalized_type != nullptr ? finalize_[finalized_type] : execute_;
    ++s.calls;
    s.ms += std::chrono::duration<double, std::milli>(end - start).count();
    const double at =
        std::chrono::duration<double, std::milli>(start - loaded_).count();
    if (first_ms_ < 0) first_ms_ = at;
    last_ms_ = at;
  }

 private:
  const Clock::time_point loaded_;
  std::mutex mu_;
  std::unordered_map<cudnnBackendDescriptor_t, int> types_;
  std::map<std::string, Sum> finalize_;
  Sum execute_;
  double first_ms_ = -1, last_ms_ = -1;
};

Timer& TheTimer() {
  // Never destroyed (calls may come while the process exits); the line is
  // written by an exit handler.
  static Timer* const timer = [] {
    auto* t = new Timer();
    std::atexit([] { TheTimer().Print(); });
    return t;
  }();
  return *timer;
}

}  // namespace

extern "C" cudnnStatus_t cudnnBackendCreateDescriptor(
    cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* d) {
  const auto real = real_create.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  const cudnnStatus_t s = real(type, d);
  if (s == CUDNN_STATUS_SUCCESS && d != nullptr) TheTimer().Created(*d, type);
  return s;
}

extern "C" cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d) {
  const auto real = real_finalize.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  const char* type = TypeName(TheTimer().TypeOf(d));
  const Clock::time_point start = Clock::now();
  const cudnnStatus_t s = real(d);
  TheTimer().Add(type, start);
  return s;
}

extern "C" cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                             cudnnBackendDescriptor_t plan,
                                             cudnnBackendDescriptor_t pack) {
  const auto real = real_execute.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  const Clock::time_point start = Clock::now();
  const cudnnStatus_t s = real(handle, plan, pack);
  TheTimer().Add(nullptr, start);
  return s;
}
