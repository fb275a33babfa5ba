// ActivatedListener: serves listening sockets that tunedbd did not open
// itself — the Unix stream sockets systemd passes with socket activation
// (tunedbd.socket) — by accepting their connections on one thread and handing
// each to the gRPC server through an external connection acceptor.
//
// Usage:
//   grpc::ServerBuilder builder;
//   auto listener = ActivatedListener::Register(fds, builder);
//   ... builder.BuildAndStart() ...
//   listener->Start();   // connections queued since systemd bound the
//   ...                  // socket are served now
//   listener->Stop();    // before shutting the gRPC server down
//
// The descriptors are closed by the destructor (systemd keeps its own copy
// and the socket file).
//
// Thread safety: Start() and Stop() from one thread; the accept loop runs on
// its own.
#ifndef TUNEDB_SERVER_SERVICE_ACTIVATED_LISTENER_H_
#define TUNEDB_SERVER_SERVICE_ACTIVATED_LISTENER_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/server_builder.h"

namespace tunedb {

class ActivatedListener {
 public:
  // Registers one acceptor per descriptor on `builder` (plain credentials:
  // these are Unix sockets, whose file mode is the access control).
  static std::unique_ptr<ActivatedListener> Register(
      const std::vector<int>& fds, grpc::ServerBuilder& builder);
  ~ActivatedListener();

  // Starts accepting; call once the gRPC server has started.
  void Start();
  // Stops accepting (idempotent); connections already handed over go on.
  void Stop();

  // The path of the first socket ("" if it has none).
  std::string path() const;

 private:
  ActivatedListener() = default;
  void AcceptLoop();

  std::vector<int> fds_;
  std::vector<std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>>
      acceptors_;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_ACTIVATED_LISTENER_H_
