// CoreApi: what libtunedb_preload.so (the shim every process of a `tunedb
// run` loads: the nine legacy cuDNN entry points and two of the backend API)
// asks of libtunedb_preload_core.so (the Interposer, the tunedb client and
// gRPC), which the shim loads with dlopen(RTLD_LOCAL) on the first intercepted
// call. So a process that never calls cuDNN's algorithm functions pays for
// the shim alone, and the client's gRPC, protobuf and abseil symbols never
// enter the program's global scope.
//
// Both libraries come from one build; kCoreApiVersion guards against a
// core from another.
//
// Thread safety: the table is immutable; its functions are thread-safe.
#ifndef TUNEDB_PRELOAD_CORE_API_H_
#define TUNEDB_PRELOAD_CORE_API_H_

#include <string>

#include "preload/conv_call.h"
#include "preload/graph_call.h"
#include "preload/preload_counters.h"

namespace tunedb::preload {

inline constexpr int kCoreApiVersion = 5;
inline constexpr const char* kCoreFileName = "libtunedb_preload_core.so";
inline constexpr const char* kCoreInitSymbol = "tunedb_preload_core_init";

struct CoreApi {
  int version = kCoreApiVersion;
  // Interposer::Decide and Interposer::Record of the process's Interposer;
  // neither throws.
  Decision (*decide)(const ConvCall& call) = nullptr;
  void (*record)(const ConvCall& call, Outcome outcome, int first_algo,
                 const std::string& key_text) = nullptr;
  // Interposer::AnswerGraph: answers a heuristics descriptor's results from
  // tunedb, or says to pass the call through; never throws.
  GraphAnswer (*answer_graph)(const GraphCall& call) = nullptr;
  // Interposer::RecordPlan: what became of a plan the shim had a part in;
  // never throws.
  // `why`: for kStoredRefused and kStoredFailedToRun, the reason (logged),
  // else null.
  void (*plan_event)(PlanEvent event, const char* why) = nullptr;
};

// The core's one exported function: takes the shim's FindRealCudnnSymbol
// (lookups relative to the shim, which skip it) and returns the table.
using CoreInitFn = const CoreApi* (*)(void* (*find_real)(const char* name));

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_CORE_API_H_
