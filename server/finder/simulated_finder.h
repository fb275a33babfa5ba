// SimulatedFinder: a deterministic stand-in for a GPU, for tests without one.
//
// A TEST DOUBLE: it is selected only explicitly (--finder=simulated), its
// devices are named "Simulated GPU", its records carry finder "simulated",
// and its times are a cost model, never GPU performance.
//
// The cost model gives each of 8 algorithms a time that depends on the
// problem's shape, so different algorithms win on different shapes; some need
// workspace, some are non-deterministic, some are unsupported on some shapes
// (e.g. the FFT-like ones for strided or dilated problems), and problems with
// n * c * k > 2^40 are supported by none (a negative result). Like cuDNN 9's
// legacy calls, each algorithm also costs the host a fixed time per call, so
// on small problems the launch time (the slower of host and GPU) ranks the
// algorithms differently from the GPU time.
//
// Fault switches, keyed by the batch size n of the problem, let tests make
// one request misbehave while others succeed:
//   fail_n=N   Search returns INTERNAL for problems with n == N.
//   hang_n=N   Search blocks until options.timeout, then DEADLINE_EXCEEDED.
//   crash_n=N  Search aborts the process (for worker-process tests).
//   slow_ms=M  every search sleeps M ms (queueing and coalescing tests).
//
// Thread safety: thread-safe; searches on one device run one at a time (a
// per-device mutex, as a GPU would).
#ifndef TUNEDB_SERVER_FINDER_SIMULATED_FINDER_H_
#define TUNEDB_SERVER_FINDER_SIMULATED_FINDER_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/string_view.h"
#include "server/finder/finder.h"

namespace tunedb {

class SimulatedFinder final : public Finder {
 public:
  struct Options {
    int devices = 1;                      // simulated GPUs
    std::string model = "Simulated GPU";  // DeviceKey::gpu_model
    int cudnn_version = 91900;            // DeviceKey::cudnn_version
    // DeviceInfo::driver_version of every device ("driver=580.65.06"); the
    // default is no driver version at all, so nothing is ordered by it.
    std::string driver_version = "simulated";
    int slow_ms = 0;                      // sleep per search
    int64_t fail_n = -1;                  // fault switches (see above)
    int64_t hang_n = -1;
    int64_t crash_n = -1;

    // Parses "devices=2;slow_ms=50;fail_n=13" (';' or ',' separated;
    // "model=" and "driver=" take text);
    // INVALID_ARGUMENT naming an unknown or malformed entry.
    static absl::StatusOr<Options> Parse(absl::string_view text);
  };

  explicit SimulatedFinder(Options options);

  std::string Name() const override { return "simulated"; }
  absl::StatusOr<std::vector<DeviceInfo>> Devices() override;
  absl::StatusOr<SearchResult> Search(int device_index,
                                      const ConvProblem& problem,
                                      const SearchOptions& options) override;

  // Searches run so far (all devices).
  int64_t searches() const { return searches_.load(); }

  // The modelled results for a problem, without sleeping or counting.
  static std::vector<AlgoResult> Model(const ConvProblem& problem);
  // For a graph-API problem: the modelled (sorted) results restated as
  // engine configs with knobs, notes and, for the leaders, a plan blob
  // that says it is simulated.
  static void AsGraphResults(std::vector<AlgoResult>& results);

 private:
  const Options options_;
  // One per device, held for a whole search: a device's searches run one
  // at a time, as on a GPU. They guard no data.
  std::vector<std::unique_ptr<absl::Mutex>> device_mu_;
  std::atomic<int64_t> searches_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_FINDER_SIMULATED_FINDER_H_
