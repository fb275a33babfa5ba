// tunedb-worker: one search process per (GPU, cuDNN library), started and
// supervised by WorkerSupervisor in tunedbd. It speaks the framed protocol of
// worker_protocol.h on the socket --fd (default 3):
//
//   tunedb-worker --finder=cudnn --device=0 [--fd=3]
//   tunedb-worker --finder=simulated --simulated="devices=2;slow_ms=50" ...
//
// --device=-1 lists every device in its hello message and exits when the
// supervisor closes the socket. It exits when the socket closes, and with
// status 3 after reporting a fatal (sticky) CUDA error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/finder/finder.h"
#include "server/finder/simulated_finder.h"
#include "server/worker/worker_command.h"
#include "proto/convert.h"
#include "server/worker/worker_protocol.h"
#ifdef TUNEDB_HAVE_CUDNN
#include "cudnn/cudnn_device.h"
#include "cudnn/cudnn_status.h"
#include "server/search/cudnn_finder.h"
#endif

namespace tunedb {
namespace {

// The finder of this worker and the index of its device in it.
struct Setup {
  std::unique_ptr<Finder> finder;
  int index = 0;
  std::vector<DeviceInfo> devices;  // reported in the hello
};

absl::StatusOr<Setup> MakeFinder(const WorkerCommand& args) {
  Setup setup;
  if (args.finder == "simulated") {
    absl::StatusOr<SimulatedFinder::Options> options =
        SimulatedFinder::Options::Parse(args.simulated);
    if (!options.ok()) return options.status();
    setup.finder = std::make_unique<SimulatedFinder>(*options);
    absl::StatusOr<std::vector<DeviceInfo>> all = setup.finder->Devices();
    if (!all.ok()) return all.status();
    if (args.device < 0) {
      setup.devices = *all;
      return setup;
    }
    if (args.device >= static_cast<int>(all->size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("simulated device ", args.device, " out of range"));
    }
    setup.index = args.device;
    setup.devices = {(*all)[args.device]};
    return setup;
  }
  if (args.finder == "cudnn") {
#ifdef TUNEDB_HAVE_CUDNN
    if (args.device < 0) {
      absl::StatusOr<int> count = CudaDeviceCount();
      if (!count.ok()) return count.status();
      for (int i = 0; i < *count; ++i) {
        absl::StatusOr<DeviceInfo> info = QueryCudaDevice(i);
        if (!info.ok()) return info.status();
        setup.devices.push_back(*info);
      }
      return setup;
    }
    CudnnFinder::Options options;
    options.ordinal = args.device;
    absl::StatusOr<std::unique_ptr<CudnnFinder>> finder =
        CudnnFinder::Create(options);
    if (!finder.ok()) return finder.status();
    setup.finder = std::move(*finder);
    absl::StatusOr<std::vector<DeviceInfo>> devices = setup.finder->Devices();
    if (!devices.ok()) return devices.status();
    setup.devices = *devices;
    setup.index = 0;
    return setup;
#else
    return absl::FailedPreconditionError(
        "this tunedb-worker was built without cuDNN (TUNEDB_HAVE_CUDNN off); "
        "only --finder=simulated is available");
#endif
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown finder '", args.finder, "' (expected cudnn or simulated)"));
}

bool IsFatal(const absl::Status& s) {
#ifdef TUNEDB_HAVE_CUDNN
  return IsFatalDeviceError(s);
#else
  return false;
#endif
}

// The search options a request carries. A stored plan that does not decode
// is only not loaded, a far-behind config only runs; a config to re-time
// that does not decode fails the request: a revalidation must not quietly
// time fewer configs than asked.
absl::StatusOr<SearchOptions> OptionsOf(const worker::Request& request) {
  SearchOptions options;
  options.workspace_cap_bytes = request.workspace_cap_bytes();
  options.timeout = absl::Milliseconds(request.timeout_ms());
  for (const v1::AlgoResult& wire : request.stored_plans()) {
    absl::StatusOr<AlgoResult> r = FromProto(wire);
    if (r.ok()) options.stored_plans.push_back(*std::move(r));
  }
  for (const v1::AlgoResult& wire : request.retime_only()) {
    absl::StatusOr<AlgoResult> r = FromProto(wire);
    if (!r.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("retime_only: ", r.status().message()));
    }
    options.retime_only.push_back(*std::move(r));
  }
  for (const v1::AlgoResult& wire : request.far_behind()) {
    absl::StatusOr<AlgoResult> r = FromProto(wire);
    if (r.ok()) options.far_behind.push_back(*std::move(r));
  }
  return options;
}

int Main(int argc, char** argv) {
  absl::StatusOr<WorkerCommand> args =
      WorkerCommand::Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (!args.ok()) {
    std::fprintf(stderr, "tunedb-worker: %s\n",
                 std::string(args.status().message()).c_str());
    return 2;
  }
  const int fd = args->fd;
  worker::Response hello;
  hello.set_pid(getpid());
  absl::StatusOr<Setup> setup = MakeFinder(*args);
  if (!setup.ok()) {
    SetStatus(setup.status(), &hello);
    (void)WriteFrame(fd, hello);
    std::fprintf(stderr, "tunedb-worker: %s\n",
                 std::string(setup.status().message()).c_str());
    return 2;
  }
  for (const DeviceInfo& d : setup->devices) ToProto(d, hello.add_devices());
  if (!WriteFrame(fd, hello).ok()) return 1;

  while (true) {
    worker::Request request;
    absl::Status s = ReadFrame(fd, &request, absl::InfiniteFuture());
    if (absl::IsOutOfRange(s)) return 0;  // the supervisor closed the socket
    if (!s.ok()) {
      std::fprintf(stderr, "tunedb-worker: %s\n",
                   std::string(s.message()).c_str());
      return 1;
    }
    worker::Response response;
    response.set_id(request.id());
    absl::StatusOr<ConvProblem> problem = ConvProblem::Parse(request.problem());
    if (!problem.ok()) {
      SetStatus(problem.status(), &response);
    } else if (setup->finder == nullptr) {
      SetStatus(absl::FailedPreconditionError(
                    "a listing worker (--device=-1) does not search"),
                &response);
    } else if (absl::StatusOr<SearchOptions> options = OptionsOf(request);
               !options.ok()) {
      SetStatus(options.status(), &response);
    } else {
      absl::StatusOr<SearchResult> result =
          setup->finder->Search(setup->index, *problem, *options);
      if (result.ok()) {
        ToProto(*result, &response);
      } else {
        SetStatus(result.status(), &response);
        response.set_fatal(IsFatal(result.status()));
      }
    }
    if (!WriteFrame(fd, response).ok()) return 1;
    if (response.fatal()) return 3;
  }
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) { return tunedb::Main(argc, argv); }
