// WorkerCommand: the command line of a tunedb-worker process, built by the
// supervisor (WorkerSupervisor) and parsed by the worker's main, and where the
// worker program lives by default.
//
//   tunedb-worker --finder=cudnn --device=0 --fd=3
//   tunedb-worker --finder=simulated --device=-1 --fd=3 --simulated=devices=2
//
// Thread safety: a plain value and stateless functions.
#ifndef TUNEDB_SERVER_WORKER_WORKER_COMMAND_H_
#define TUNEDB_SERVER_WORKER_WORKER_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunedb {

struct WorkerCommand {
  // --finder: "cudnn" or "simulated".
  std::string finder = "cudnn";
  // --simulated: SimulatedFinder options (passed only to simulated workers).
  std::string simulated;
  // --device: the CUDA ordinal searched on; -1 lists every device.
  int device = 0;
  // --fd: the socket to the supervisor.
  int fd = 3;

  // The arguments after the program name.
  std::vector<std::string> ToArgs() const;
  // Parses the arguments after the program name; INVALID_ARGUMENT for an
  // unknown argument or a value that is not a number.
  static absl::StatusOr<WorkerCommand> Parse(
      const std::vector<std::string>& args);
};

// The folder of the running executable ("." if /proc/self/exe cannot be read).
std::string ExecutableDir();

// tunedb-worker in ExecutableDir(): the daemon and its worker are installed
// side by side.
std::string DefaultWorkerPath();

}  // namespace tunedb

#endif  // TUNEDB_SERVER_WORKER_WORKER_COMMAND_H_
