// The fixed perf arrays of the fake libcudnn.so.9 (fake_cudnn.cc), shared
// with the tests that check what comes back: Find and FindEx return
// kFindList ("measured" order), Get_v7 returns kHeuristicList (cuDNN's
// heuristic order, the last entry not supported). The same lists serve all
// three passes; algorithm ids 0..5 are valid for each.
//
// The backend (graph) API half: the engine catalog (global indices
// 0..kEngineCount-1; the simulated finder's graph records use 100 + algo),
// the numerical notes a finalized engine reports (by index), and the engine
// list an engine-heuristics descriptor's CUDNN_ATTR_ENGINEHEUR_RESULTS gives
// per mode (each a config without knobs).
//
// Thread safety: constants.
#ifndef TUNEDB_TESTS_PRELOAD_FAKE_CUDNN_LISTS_H_
#define TUNEDB_TESTS_PRELOAD_FAKE_CUDNN_LISTS_H_

#include <cudnn.h>

#include <cstddef>
#include <cstdint>

namespace fake_cudnn {

struct Entry {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  bool deterministic;
  cudnnMathType_t math;
};

inline constexpr int kListSize = 6;

inline constexpr Entry kFindList[kListSize] = {
    {3, CUDNN_STATUS_SUCCESS, 0.5f, 0, false, CUDNN_DEFAULT_MATH},
    {1, CUDNN_STATUS_SUCCESS, 0.7f, 1000, true, CUDNN_DEFAULT_MATH},
    {0, CUDNN_STATUS_SUCCESS, 0.9f, 0, true, CUDNN_DEFAULT_MATH},
    {2, CUDNN_STATUS_SUCCESS, 1.1f, 4000, true, CUDNN_TENSOR_OP_MATH},
    {4, CUDNN_STATUS_SUCCESS, 1.3f, 8000, true, CUDNN_DEFAULT_MATH},
    {5, CUDNN_STATUS_NOT_SUPPORTED, -1.0f, 0, true, CUDNN_DEFAULT_MATH},
};

inline constexpr Entry kHeuristicList[kListSize] = {
    {1, CUDNN_STATUS_SUCCESS, -1.0f, 1000, true, CUDNN_DEFAULT_MATH},
    {0, CUDNN_STATUS_SUCCESS, -1.0f, 0, true, CUDNN_DEFAULT_MATH},
    {2, CUDNN_STATUS_SUCCESS, -1.0f, 4000, true, CUDNN_TENSOR_OP_MATH},
    {3, CUDNN_STATUS_SUCCESS, -1.0f, 0, false, CUDNN_DEFAULT_MATH},
    {4, CUDNN_STATUS_SUCCESS, -1.0f, 8000, true, CUDNN_DEFAULT_MATH},
    {5, CUDNN_STATUS_NOT_SUPPORTED, -1.0f, 0, true, CUDNN_DEFAULT_MATH},
};

inline constexpr int kEngineCount = 128;

// The CUDNN_ATTR_ENGINE_NUMERICAL_NOTE values of engine `index`: odd ones
// use tensor cores, those with index % 4 == 2 are nondeterministic.
inline constexpr bool EngineUsesTensorCores(int64_t index) {
  return index % 2 == 1;
}
inline constexpr bool EngineIsNondeterministic(int64_t index) {
  return index % 4 == 2;
}

// cuDNN's heuristic engine lists, by cudnnBackendHeurMode_t.
inline constexpr int kInstantEngines[] = {7, 3, 0, 1};  // INSTANT and A
inline constexpr int kModeBEngines[] = {3, 7, 0};
inline constexpr int kFallbackEngines[] = {0, 1};

struct EngineList {
  const int* engines;
  int size;
};
inline constexpr EngineList HeuristicEngines(int mode) {
  return mode == CUDNN_HEUR_MODE_B          ? EngineList{kModeBEngines, 3}
         : mode == CUDNN_HEUR_MODE_FALLBACK ? EngineList{kFallbackEngines, 2}
                                            : EngineList{kInstantEngines, 4};
}

}  // namespace fake_cudnn

#endif  // TUNEDB_TESTS_PRELOAD_FAKE_CUDNN_LISTS_H_
