// TLS credentials from PEM files, for both ends of a tunedb gRPC connection:
// the daemon's TCP listener (server certificate and key, optionally a client
// CA that makes it require client certificates: mTLS) and the channels of the
// client library and the CLI (CA, optional client certificate and key).
//
// A Unix-socket target ("unix:...") never uses TLS: the daemon's socket is
// plain and protected by its file mode, so client TLS settings apply to TCP
// targets only.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_PROTO_TLS_CREDENTIALS_H_
#define TUNEDB_PROTO_TLS_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/security/server_credentials.h"
#include "tunedb/client_options.h"

namespace tunedb {

// The PEM files of a TLS listener.
struct TlsServerFiles {
  // Certificate chain and private key; both or neither. Default "".
  std::string cert_file;
  std::string key_file;
  // CA bundle that client certificates must chain to; "" (default) accepts
  // clients without certificates.
  std::string client_ca_file;
};

// The contents of a PEM file; FAILED_PRECONDITION naming the file (and
// `what` it is for) if it cannot be read or holds no PEM block.
absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const std::string& what);

// Whether a channel to `address` with `tls` uses TLS: a TCP target with a
// CA or a client certificate set.
bool UsesTls(const std::string& address, const TlsClientOptions& tls);

// A channel to `address` (not yet connected) with `args`, over TLS when
// UsesTls(); INVALID_ARGUMENT for a certificate without its key (or the
// reverse), FAILED_PRECONDITION for an unreadable file.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateDaemonChannel(
    const std::string& address, const TlsClientOptions& tls,
    grpc::ChannelArguments args);

// Credentials for the daemon's TCP listener: TLS with files.cert_file and
// key_file (and client certificates required and verified against
// client_ca_file when set). Plain TCP only with `insecure` (the caller logs
// the warning). INVALID_ARGUMENT when neither a certificate nor `insecure`
// is given, or when they contradict each other.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> TcpServerCredentials(
    const TlsServerFiles& files, bool insecure);

}  // namespace tunedb

#endif  // TUNEDB_PROTO_TLS_CREDENTIALS_H_
