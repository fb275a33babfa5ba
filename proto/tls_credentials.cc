#include "proto/tls_credentials.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunedb {

absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read the ", what, " ", path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (!absl::StrContains(text.str(), "-----BEGIN ")) {
    return absl::FailedPreconditionError(
        absl::StrCat("the ", what, " ", path, " holds no PEM block"));
  }
  return text.str();
}

bool UsesTls(const std::string& address, const TlsClientOptions& tls) {
  if (absl::StartsWith(address, "unix:") ||
      absl::StartsWith(address, "unix-abstract:")) {
    return false;
  }
  return !tls.ca_file.empty() || !tls.cert_file.empty() ||
         !tls.key_file.empty();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateDaemonChannel(
    const std::string& address, const TlsClientOptions& tls,
    grpc::ChannelArguments args) {
  if (!UsesTls(address, tls)) {
    return grpc::CreateCustomChannel(address,
                                     grpc::InsecureChannelCredentials(), args);
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        "a TLS client certificate needs its key and the key its certificate");
  }
  grpc::SslCredentialsOptions ssl;
  if (!tls.ca_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPemFile(tls.ca_file, "TLS CA"));
  }
  if (!tls.cert_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_cert_chain,
                     ReadPemFile(tls.cert_file, "TLS client certificate"));
    ASSIGN_OR_RETURN(ssl.pem_private_key,
                     ReadPemFile(tls.key_file, "TLS client key"));
  }
  if (!tls.server_name.empty()) args.SetSslTargetNameOverride(tls.server_name);
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(ssl), args);
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> TcpServerCredentials(
    const TlsServerFiles& files, bool insecure) {
  const bool has_cert = !files.cert_file.empty() || !files.key_file.empty();
  if (insecure) {
    if (has_cert || !files.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--insecure-tcp contradicts --tls-cert, --tls-key and "
          "--tls-client-ca: give one or the other");
    }
    return grpc::InsecureServerCredentials();
  }
  if (!has_cert) {
    return absl::InvalidArgumentError(
        "listening on TCP needs a server certificate and key (--tls-cert, "
        "--tls-key); --insecure-tcp serves plain TCP");
  }
  if (files.cert_file.empty() || files.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together: give both");
  }
  grpc::SslServerCredentialsOptions ssl(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.cert_chain,
                   ReadPemFile(files.cert_file, "TLS server certificate"));
  ASSIGN_OR_RETURN(pair.private_key,
                   ReadPemFile(files.key_file, "TLS server key"));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!files.client_ca_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs,
                     ReadPemFile(files.client_ca_file, "TLS client CA"));
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace tunedb
