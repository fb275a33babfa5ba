// Finder: the interface between the daemon and whatever measures algorithms.
//
// Like LevelDB's Env, it lets the daemon run on real GPUs (CudnnFinder, or
// WorkerSupervisor, which runs it in supervised per-GPU worker processes) or
// on a deterministic model (SimulatedFinder, a test double that is never the
// default and never reported as GPU performance).
//
// Thread safety: Devices() may be called from any thread. Search() may be
// called concurrently for *different* device indices; the caller (the
// TuningCore's per-device worker) serializes searches on one device.
#ifndef TUNEDB_SERVER_FINDER_FINDER_H_
#define TUNEDB_SERVER_FINDER_FINDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config_identity.h"
#include "common/device_info.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

struct SearchOptions {
  // Largest workspace offered to the algorithms; -1 means the finder's
  // default (a share of free memory).
  int64_t workspace_cap_bytes = -1;
  // The search must return by then (DEADLINE_EXCEEDED otherwise); a finder
  // that cannot stop a search in flight must abandon it (kill the worker).
  absl::Duration timeout = absl::Minutes(5);
  // Graph API: engine configs (algo, knobs) whose serialized plans an
  // earlier search of the same key kept (`plan`, opened: sealed_plan.h). A
  // finder that builds plans loads these instead of compiling them; one
  // cuDNN refuses is built. Default: none.
  std::vector<AlgoResult> stored_plans;
  // A revalidation (docs/revalidation.md): time only these configs (legacy:
  // algorithm and math type; graph API: engine and knobs) and cuDNN's own
  // first `first_choices` choices, not every candidate. Their plans are
  // built, never loaded from another cuDNN version. Default: empty, a full
  // search.
  std::vector<AlgoResult> retime_only;
  // With retime_only or far_behind: how many of cuDNN's heuristic choices
  // are timed whatever those say (legacy: cudnnGet*Algorithm_v7's first;
  // graph API: the first mode-A configs the problem's policy allows).
  // Default 3 (why: docs/revalidation.md).
  int first_choices = 3;
  // A search again of a key stored for the same device and cuDNN version
  // (docs/graph-api.md, "Searching again"): configs its stored record has far behind the
  // leader, which a graph-API search does not build or run again; the
  // tuning core carries their stored results into the new record. cuDNN's
  // first choices always run. Default: empty, every config runs.
  std::vector<AlgoResult> far_behind;
};

// Whether `r`'s config is one a search under `options` times, cuDNN's
// first choices aside (each finder adds its own): every config in a full
// search but those options.far_behind lists; in a revalidation, those in
// options.retime_only.
inline bool Retimes(const SearchOptions& options, const AlgoResult& r) {
  if (ListsConfig(options.far_behind, r)) return false;
  if (options.retime_only.empty()) return true;
  return ListsConfig(options.retime_only, r);
}

// Where a search's wall time went, in milliseconds. CudnnFinder fills it;
// other finders leave zeros. Not stored: for benchmarks and logs.
struct SearchPhases {
  double setup_ms = 0;   // descriptors, buffers, workspace, clock warm-up
  double find_ms = 0;    // the cudnnFind calls (graph API: the candidates'
                         // builds and first runs, heuristics_ms included)
  double heuristics_ms = 0;  // graph API: asking cuDNN's heuristics
  double screen_ms = 0;  // screening
  double retime_ms = 0;  // re-timing
  double verify_ms = 0;  // verification
  int plans_loaded = 0;  // graph API: SearchOptions::stored_plans loaded
};

// What a search produced.
struct SearchResult {
  std::vector<AlgoResult> results;  // sorted with SortResults
  int repeats = 0;                  // timed repeats per re-timed candidate
  int64_t workspace_cap_bytes = 0;  // workspace actually offered
  bool verified = false;            // chosen output matched a reference
  SearchPhases phases;
};

class Finder {
 public:
  virtual ~Finder() = default;

  // "cudnn", "simulated", ...; logged by the daemon and shown in Stats.
  virtual std::string Name() const = 0;

  // The devices this finder searches on, index = position in the vector.
  virtual absl::StatusOr<std::vector<DeviceInfo>> Devices() = 0;

  // Measures every algorithm for `problem` on device `device_index`.
  // `problem` has passed Validate() where it entered (the service, or the
  // worker's frame decode); finders do not validate it again. An
  // unsupported problem is an OK result whose entries are all kNotSupported
  // (a stored negative answer), not an error. Errors: INVALID_ARGUMENT (bad
  // index), DEADLINE_EXCEEDED (timeout), UNAVAILABLE (the device or its
  // worker failed), INTERNAL.
  virtual absl::StatusOr<SearchResult> Search(int device_index,
                                              const ConvProblem& problem,
                                              const SearchOptions& options) = 0;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_FINDER_FINDER_H_
