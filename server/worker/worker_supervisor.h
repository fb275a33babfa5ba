// WorkerSupervisor: the Finder that starts and supervises tunedb-worker
// processes and runs its searches in them, one worker per (GPU, cuDNN library
// folder), so a crash, a hang or a broken CUDA context in cuDNN never takes
// the daemon down, and one host can serve several cuDNN versions side by
// side (each worker loads the libcudnn of its folder through LD_LIBRARY_PATH
// and reports the version it actually loaded).
//
// Workers are started with posix_spawn (never fork: the daemon has threads,
// SQLite and gRPC running) and talk over a Unix socketpair with the framed
// messages of worker_protocol.h. Create() first starts one listing worker per
// library folder to learn the devices, then one worker per device. A search
// that outlives its timeout gets its worker killed (SIGKILL) and restarted,
// and returns DEADLINE_EXCEEDED; a worker that dies during a search (crash,
// signal, sticky CUDA error) is restarted and the search returns UNAVAILABLE
// naming the signal or exit status. Other workers are unaffected.
//
// Thread safety: thread-safe. Searches on one device index are serialized
// (a per-worker mutex); different indices run in parallel.
#ifndef TUNEDB_SERVER_WORKER_WORKER_SUPERVISOR_H_
#define TUNEDB_SERVER_WORKER_WORKER_SUPERVISOR_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/finder/finder.h"

namespace tunedb {

class WorkerSupervisor final : public Finder {
 public:
  struct Options {
    // The tunedb-worker binary; "" = tunedb-worker next to this executable.
    std::string worker_path;
    // One set of workers per entry, each started with
    // LD_LIBRARY_PATH=<dir>:<inherited>; empty = one set with the inherited
    // environment.
    std::vector<std::string> library_dirs;
    // The workers' finder: "cudnn", or "simulated" for tests.
    std::string worker_finder = "cudnn";
    // Passed to simulated workers as --simulated=...
    std::string simulated_options;
    // How long a worker may take to start and report its device.
    absl::Duration start_timeout = absl::Seconds(120);
  };

  static absl::StatusOr<std::unique_ptr<WorkerSupervisor>> Create(
      const Options& options);
  ~WorkerSupervisor() override;

  std::string Name() const override { return options_.worker_finder; }
  absl::StatusOr<std::vector<DeviceInfo>> Devices() override;
  absl::StatusOr<SearchResult> Search(int device_index,
                                      const ConvProblem& problem,
                                      const SearchOptions& options) override;

  // Process id of the worker serving `device_index` (-1 if none is running);
  // for tests and logs.
  pid_t worker_pid(int device_index) const;
  // How many times that worker was restarted.
  int restarts(int device_index) const;
  // What the supervisor saw of the worker serving `device_index` (metrics).
  struct Supervision {
    int64_t starts = 0;  // the first start and every restart that answered
    // Exits seen during searches, by reason: "timeout" (killed past the
    // search timeout), "died" (crashed, was signalled or exited) and
    // "fatal_error" (reported a fatal device error and exited).
    std::map<std::string, int64_t> exits;
  };
  Supervision supervision(int device_index) const;
  // The library folder of that worker ("" = inherited environment).
  std::string library_dir(int device_index) const;

 private:
  struct Worker;

  explicit WorkerSupervisor(const Options& options);

  const Options options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<DeviceInfo> devices_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_WORKER_WORKER_SUPERVISOR_H_
