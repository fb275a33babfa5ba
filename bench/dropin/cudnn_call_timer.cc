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
// the library was loaded. "plan_by_engine" splits the plan builds that
// succeeded by the engine's global index, with each engine's slowest build
// and whether cuDNN notes it as runtime-compiled ("rtc"):
//
//   "plan_by_engine":{"58":{"calls":3,"ms":210.2,"max_ms":194.1,"rtc":0},...}
//
// A process that made no timed call writes nothing.
// The real functions are found as the preload finds them
// (preload/real_cudnn.h: also a cuDNN loaded RTLD_LOCAL, as PyTorch's is).
//
// Thread safety: thread-safe (one mutex around the descriptor-type map and
// the sums).
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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
RealFunction<decltype(&cudnnBackendGetAttribute)> real_get(
    "cudnnBackendGetAttribute");
RealFunction<decltype(&cudnnBackendDestroyDescriptor)> real_destroy(
    "cudnnBackendDestroyDescriptor");

// A descriptor made to read an attribute into, destroyed with the scope.
class Scratch {
 public:
  explicit Scratch(cudnnBackendDescriptorType_t type) {
    if (const auto create = real_create.get()) {
      if (create(type, &d_) != CUDNN_STATUS_SUCCESS) d_ = nullptr;
    }
  }
  ~Scratch() {
    const auto destroy = real_destroy.get();
    if (d_ != nullptr && destroy != nullptr) destroy(d_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// The engine of a finalized execution plan: its global index (-1 when it
// cannot be read) and whether it is runtime-compiled.
struct PlanEngine {
  int64_t index = -1;
  bool rtc = false;
};

PlanEngine EngineOf(cudnnBackendDescriptor_t plan) {
  PlanEngine out;
  const auto get = real_get.get();
  if (get == nullptr) return out;
  Scratch config(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  Scratch engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t c = config.get(), e = engine.get();
  int64_t n = 0;
  if (c == nullptr || e == nullptr ||
      get(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &c) != CUDNN_STATUS_SUCCESS ||
      n != 1 ||
      get(c, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
          &e) != CUDNN_STATUS_SUCCESS ||
      n != 1 ||
      get(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
          &out.index) != CUDNN_STATUS_SUCCESS ||
      n != 1) {
    return PlanEngine{};
  }
  cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
  if (get(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
          CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, notes) == CUDNN_STATUS_SUCCESS) {
    for (int64_t i = 0; i < n && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; ++i) {
      out.rtc = out.rtc || notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    }
  }
  return out;
}

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

struct EngineSum {
  long calls = 0;
  double ms = 0, max_ms = 0;
  bool rtc = false;
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
    out += "},\"plan_by_engine\":{";
    first = true;
    for (const auto& [index, s] : plans_) {
      char item[160];
      std::snprintf(item, sizeof(item),
                    "%s\"%lld\":{\"calls\":%ld,\"ms\":%.1f,\"max_ms\":%.1f,"
                    "\"rtc\":%d}",
                    first ? "" : ",", static_cast<long long>(index), s.calls,
                    s.ms, s.max_ms, s.rtc ? 1 : 0);
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
  // A call from `start` to `end`; a built plan also counts under its engine.
  void Add(const char* finalized_type, Clock::time_point start,
           Clock::time_point end, const PlanEngine* built = nullptr) {
    const double ms =
        std::chrono::duration<double, std::milli>(end - start).count();
    std::lock_guard<std::mutex> lock(mu_);
    Sum& s = finalized_type != nullptr ? finalize_[finalized_type] : execute_;
    ++s.calls;
    s.ms += ms;
    if (built != nullptr) {
      EngineSum& e = plans_[built->index];
      ++e.calls;
      e.ms += ms;
      e.max_ms = std::max(e.max_ms, ms);
      e.rtc = e.rtc || built->rtc;
    }
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
  std::map<int64_t, EngineSum> plans_;
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
  const int type = TheTimer().TypeOf(d);
  const Clock::time_point start = Clock::now();
  const cudnnStatus_t s = real(d);
  const Clock::time_point end = Clock::now();
  if (type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
      s == CUDNN_STATUS_SUCCESS) {
    const PlanEngine engine = EngineOf(d);  // read after the clock stopped
    TheTimer().Add(TypeName(type), start, end, &engine);
  } else {
    TheTimer().Add(TypeName(type), start, end);
  }
  return s;
}

extern "C" cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                             cudnnBackendDescriptor_t plan,
                                             cudnnBackendDescriptor_t pack) {
  const auto real = real_execute.get();
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  const Clock::time_point start = Clock::now();
  const cudnnStatus_t s = real(handle, plan, pack);
  TheTimer().Add(nullptr, start, Clock::now());
  return s;
}
