// CliContext: what every subcommand shares — the I/O streams, the global
// flags (--address, --timeout, --json), the connection to the daemon, and
// the mapping from errors to exit codes and messages.
//
// Streams are injected so tests run subcommands in-process with captured
// output; the `tunedb` binary passes std::cin/cout/cerr.
//
// Thread safety: not thread-safe, except Stub(), which returns a stub that
// may be used from several threads once created.
#ifndef TUNEDB_TUNER_CLI_CONTEXT_H_
#define TUNEDB_TUNER_CLI_CONTEXT_H_

#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "proto/grpc_status.h"
#include "tunedb/client_options.h"
#include "tunedb/problem.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb::tuner {

// The process's streams and what they are connected to.
struct CliIo {
  std::istream* in = nullptr;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  bool stdin_is_tty = false;
  bool stderr_is_tty = false;
  // Install a SIGINT handler during long work (the binary; not tests).
  bool handle_signals = false;
};

struct GlobalOptions {
  std::string address = "unix:/run/tunedb/tunedb.sock";
  TlsClientOptions tls;   // --tls-ca, --tls-cert, --tls-key, --tls-server-name
  double timeout_s = 30;  // per rpc (streams: per message gap, see docs)
  bool json = false;
};

class CliContext {
 public:
  explicit CliContext(CliIo io) : io_(io) {}

  std::istream& in() { return *io_.in; }
  std::ostream& out() { return *io_.out; }
  std::ostream& err() { return *io_.err; }
  const CliIo& io() const { return io_; }
  GlobalOptions& options() { return options_; }
  bool json() const { return options_.json; }

  // Connects (waiting at most 5 s, or --timeout if shorter; over TLS for a
  // TCP address with --tls-ca or --tls-cert) and returns the stub;
  // UNAVAILABLE naming the address if the daemon cannot be reached (a TLS
  // handshake that fails is that too), FAILED_PRECONDITION for an unreadable
  // certificate file.
  absl::StatusOr<v1::TuneDb::Stub*> Stub();

  // A client context with the --timeout deadline.
  std::unique_ptr<grpc::ClientContext> NewContext() const;
  // One without a deadline (long streams; cancelled explicitly).
  std::unique_ptr<grpc::ClientContext> NewStreamContext() const;

  // One unary call to the daemon: connects (see Stub()), then calls `method`
  // with `request` under the --timeout deadline, or with none for a call that
  // may take long; a failed call as its absl status (FromGrpcStatus).
  enum class Deadline { kTimeout, kNone };
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (v1::TuneDb::Stub::*method)(grpc::ClientContext*,
                                               const Request&, Response*),
      const Request& request, Deadline deadline = Deadline::kTimeout) {
    absl::StatusOr<v1::TuneDb::Stub*> stub = Stub();
    if (!stub.ok()) return stub.status();
    std::unique_ptr<grpc::ClientContext> context =
        deadline == Deadline::kTimeout ? NewContext() : NewStreamContext();
    Response response;
    absl::Status status =
        FromGrpcStatus(((*stub)->*method)(context.get(), request, &response));
    if (!status.ok()) return status;
    return response;
  }

  // Prints "tunedb: error: <message>" on stderr and returns the exit code
  // for `status` (see exit_codes.h).
  int Fail(const absl::Status& status);

  // The device a KEY or --gpu names: "" = the daemon's first GPU, digits =
  // a CUDA ordinal, otherwise a case-insensitive substring of the model.
  // If `matching` is set, it receives how many of the daemon's GPUs share
  // that key (the daemon spreads searches over all of them). With `accept`,
  // only devices whose key it accepts are considered (e.g. one cuDNN
  // version of several the daemon serves). If `driver_version` is set, it
  // receives the device's driver version as the daemon reports it.
  absl::StatusOr<DeviceKey> ResolveDevice(
      const std::string& gpu, int* matching = nullptr,
      const std::function<bool(const DeviceKey&)>& accept = nullptr,
      std::string* driver_version = nullptr);

  // A KEY argument: a whole canonical key ("kv=1 gpu=... op=..."), or a
  // problem's text ("op=fwd n=...") for the GPU that `gpu` names (see
  // ResolveDevice). INVALID_ARGUMENT naming the bad field otherwise.
  absl::StatusOr<ProblemKey> ResolveKey(const std::string& text,
                                        const std::string& gpu);

 private:
  CliIo io_;
  GlobalOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TuneDb::Stub> stub_;
};

// The exit code for an error status: UNAVAILABLE -> 3, INVALID_ARGUMENT ->
// 2, NOT_FOUND -> 6, DATA_LOSS (a stored record cannot be read) -> 7,
// others -> 1.
int ExitCodeFor(const absl::Status& status);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_CLI_CONTEXT_H_
