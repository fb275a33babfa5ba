// TLS on tunedbd's TCP listener, end to end with certificates the test makes
// with the openssl command: two CAs (the right one and a stranger), a server
// certificate for localhost/127.0.0.1 and a client certificate from each CA.
// The daemon runs in-process (simulated finder) and as a process (flags and
// the config file); clients are raw gRPC channels, tunedb::Client, the C API
// and the tunedb CLI.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/tls_credentials.h"
#include "server/service/server.h"
#include "tests/server/daemon_process.h"
#include "tests/server/test_util.h"
#include "tests/testing/free_port.h"
#include "tests/testing/test_values.h"
#include "tunedb/client.h"
#include "tunedb/tunedb_c.h"
#include "tuner/cli.h"

namespace tunedb {
namespace {

using testing_util::DaemonProcess;
using testing_util::FreeLoopbackPort;
using testing_util::ReadTextFile;
using testing_util::TempDir;

// Runs a shell command; its exit status (0 = success).
int Shell(const std::string& command) { return std::system(command.c_str()); }

// The certificates of every test, made once per suite.
class Pki {
 public:
  Pki() {
    const std::string d = dir_.path();
    const std::string ec =
        "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    std::ofstream(d + "/server.ext")
        << "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
        << "extendedKeyUsage=serverAuth\n";
    std::ofstream(d + "/client.ext") << "extendedKeyUsage=clientAuth\n";
    std::string script = absl::StrCat("set -e; cd '", d, "'; ");
    for (const char* ca : {"ca", "other-ca"}) {
      absl::StrAppend(&script, "openssl req -x509 ", ec,
                      " -days 2 -subj /CN=", ca, " -keyout ", ca, ".key -out ",
                      ca, ".pem; ");
    }
    // name, signing CA, extensions file.
    for (auto [name, ca, ext] : std::array<std::array<const char*, 3>, 3>{
             {{"server", "ca", "server.ext"},
              {"client", "ca", "client.ext"},
              {"stranger", "other-ca", "client.ext"}}}) {
      absl::StrAppend(&script, "openssl req ", ec, " -subj /CN=", name,
                      " -keyout ", name, ".key -out ", name, ".csr; ",
                      "openssl x509 -req -in ", name, ".csr -CA ", ca,
                      ".pem -CAkey ", ca, ".key -CAcreateserial -days 2 ",
                      "-extfile ", ext, " -out ", name, ".pem; ");
    }
    ok_ = Shell("(" + script + ") >/dev/null 2>&1") == 0;
  }
  bool ok() const { return ok_; }
  std::string File(const std::string& name) const { return dir_.File(name); }

 private:
  TempDir dir_;
  bool ok_ = false;
};

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = new Pki(); }
  static void TearDownTestSuite() {
    delete pki_;
    pki_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(Shell("command -v openssl >/dev/null"), 0)
        << "the openssl command is needed (scripts/install-deps.sh)";
    ASSERT_TRUE(pki_->ok()) << "openssl could not make the certificates";
  }

  // An in-process daemon on 127.0.0.1 (a free port) with the server
  // certificate; `client_ca` makes it require client certificates.
  std::unique_ptr<Server> StartTlsServer(const std::string& client_ca = "") {
    ServerOptions options;
    options.unix_socket = "";
    options.tcp_address = "127.0.0.1:0";
    options.store.path = ":memory:";
    options.finder = "simulated";
    options.tls.cert_file = pki_->File("server.pem");
    options.tls.key_file = pki_->File("server.key");
    options.tls.client_ca_file = client_ca;
    absl::StatusOr<std::unique_ptr<Server>> server =
        Server::BuildAndStart(options);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  // TLS client settings trusting `ca`, with the named client certificate
  // ("" for none).
  static TlsClientOptions ClientTls(const std::string& ca,
                                    const std::string& cert = "") {
    TlsClientOptions tls;
    tls.ca_file = pki_->File(ca + ".pem");
    if (!cert.empty()) {
      tls.cert_file = pki_->File(cert + ".pem");
      tls.key_file = pki_->File(cert + ".key");
    }
    return tls;
  }

  // Devices over a fresh channel to `address` with `tls`; the RPC's status.
  static grpc::Status CallDevices(const std::string& address,
                                  const TlsClientOptions& tls) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        CreateDaemonChannel(address, tls, grpc::ChannelArguments());
    EXPECT_TRUE(channel.ok()) << channel.status();
    if (!channel.ok()) return grpc::Status(grpc::StatusCode::UNKNOWN, "");
    auto stub = v1::TuneDb::NewStub(*channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(5));
    v1::DevicesResponse response;
    grpc::Status status =
        stub->Devices(&context, v1::DevicesRequest(), &response);
    if (status.ok()) {
      EXPECT_EQ(response.devices_size(), 1);
    }
    return status;
  }

  static std::string LocalhostAddress(const Server& server) {
    return absl::StrCat("localhost:", server.tcp_port());
  }

  static Pki* pki_;
};

Pki* TlsTest::pki_ = nullptr;

TEST_F(TlsTest, ClientTrustingTheServersCaIsServed) {
  auto server = StartTlsServer();
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(CallDevices(LocalhostAddress(*server), ClientTls("ca")).ok());
  // By IP: the certificate names 127.0.0.1 too.
  EXPECT_TRUE(CallDevices(server->address(), ClientTls("ca")).ok());
}

TEST_F(TlsTest, ClientTrustingAnotherCaIsRejected) {
  auto server = StartTlsServer();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(CallDevices(LocalhostAddress(*server), ClientTls("other-ca"))
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, PlainClientIsRejectedByATlsListener) {
  auto server = StartTlsServer();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(
      CallDevices(LocalhostAddress(*server), TlsClientOptions()).error_code(),
      grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, ServerNameOverrideChecksTheNameGiven) {
  auto server = StartTlsServer();
  ASSERT_NE(server, nullptr);
  TlsClientOptions tls = ClientTls("ca");
  tls.server_name = "localhost";
  EXPECT_TRUE(CallDevices(server->address(), tls).ok());
  tls.server_name = "not-the-daemon.example";
  EXPECT_EQ(CallDevices(server->address(), tls).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsServesOnlyClientsWithACertificateFromTheClientCa) {
  auto server = StartTlsServer(pki_->File("ca.pem"));
  ASSERT_NE(server, nullptr);
  const std::string address = LocalhostAddress(*server);
  EXPECT_TRUE(CallDevices(address, ClientTls("ca", "client")).ok());
  EXPECT_EQ(CallDevices(address, ClientTls("ca")).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "no client certificate";
  EXPECT_EQ(CallDevices(address, ClientTls("ca", "stranger")).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "a client certificate from another CA";
  EXPECT_EQ(CallDevices(address, TlsClientOptions()).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "plain";
}

TEST_F(TlsTest, TcpWithoutCertificateOrInsecureFlagIsRefused) {
  ServerOptions options;
  options.unix_socket = "";
  options.tcp_address = "127.0.0.1:0";
  options.store.path = ":memory:";
  options.finder = "simulated";
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::BuildAndStart(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(server.status().message().find("--insecure-tcp"), std::string::npos)
      << server.status();
}

TEST_F(TlsTest, BadTlsSettingsAreClearErrors) {
  TlsServerFiles files;
  files.cert_file = pki_->File("server.pem");
  auto no_key = TcpServerCredentials(files, false);
  EXPECT_EQ(no_key.status().code(), absl::StatusCode::kInvalidArgument);
  files.key_file = pki_->File("server.key");
  auto both = TcpServerCredentials(files, true);
  EXPECT_EQ(both.status().code(), absl::StatusCode::kInvalidArgument)
      << "--insecure-tcp with a certificate";
  files.key_file = pki_->File("missing.key");
  auto missing = TcpServerCredentials(files, false);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("missing.key"), std::string::npos);
  files.key_file = pki_->File("server.ext");  // not PEM
  EXPECT_EQ(TcpServerCredentials(files, false).status().code(),
            absl::StatusCode::kFailedPrecondition);

  TlsClientOptions tls = ClientTls("ca");
  tls.cert_file = pki_->File("client.pem");
  EXPECT_EQ(CreateDaemonChannel("localhost:1", tls, grpc::ChannelArguments())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument)
      << "a client certificate without its key";
  ClientOptions client_options;
  client_options.address = "localhost:1";
  client_options.tls.ca_file = pki_->File("missing-ca.pem");
  EXPECT_EQ(Client::Create(client_options).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(TlsTest, UnixAddressesIgnoreClientTlsSettings) {
  EXPECT_FALSE(UsesTls("unix:/run/tunedb/tunedb.sock", ClientTls("ca")));
  EXPECT_TRUE(UsesTls("localhost:7450", ClientTls("ca")));
  EXPECT_FALSE(UsesTls("localhost:7450", TlsClientOptions()));
}

TEST_F(TlsTest, ClientLibraryTunesOverMutualTls) {
  auto server = StartTlsServer(pki_->File("ca.pem"));
  ASSERT_NE(server, nullptr);
  const ProblemKey key =
      testing_util::TestKey(8, 64, 64, server->core().devices().at(0).key);
  ClientOptions o;
  o.address = LocalhostAddress(*server);
  o.miss_policy = MissPolicy::kTuneAndWait;
  o.tune_deadline = absl::Seconds(10);
  o.tls = ClientTls("ca", "client");
  auto client = Client::Create(o);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->Get(key).source, Source::kDaemon);

  // The same client without its certificate gets no answer from the daemon.
  o.tls = ClientTls("ca");
  auto refused = Client::Create(o);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ((*refused)->Get(key).source, Source::kNone);
  EXPECT_GE((*refused)->Stats().daemon_errors, 1);
}

TEST_F(TlsTest, CApiTakesTheTlsFiles) {
  auto server = StartTlsServer(pki_->File("ca.pem"));
  ASSERT_NE(server, nullptr);
  const std::string address = LocalhostAddress(*server);
  const std::string ca = pki_->File("ca.pem");
  const std::string cert = pki_->File("client.pem");
  const std::string key = pki_->File("client.key");
  tunedb_options_t opt;
  tunedb_options_init(&opt);
  opt.address = address.c_str();
  opt.miss_policy = TUNEDB_MISS_TUNE_AND_WAIT;
  opt.tls_ca_file = ca.c_str();
  opt.tls_cert_file = cert.c_str();
  opt.tls_key_file = key.c_str();
  tunedb_client_t* client = nullptr;
  ASSERT_EQ(tunedb_client_create(&opt, &client), TUNEDB_OK);
  tunedb_problem_t p;
  tunedb_problem_init(&p);
  const DeviceKey device = server->core().devices().at(0).key;
  p.gpu_model = device.gpu_model.c_str();
  p.cc_major = device.cc_major;
  p.cc_minor = device.cc_minor;
  p.sm_count = device.sm_count;
  p.cudnn_version = device.cudnn_version;
  p.cuda_runtime_version = device.cuda_runtime_version;
  p.n = 4;
  p.c = 16;
  p.k = 16;
  p.input[0] = p.input[1] = 28;
  p.filter[0] = p.filter[1] = 3;
  p.padding[0] = p.padding[1] = 1;
  tunedb_answer_t answer;
  ASSERT_EQ(tunedb_get(client, &p, nullptr, &answer), TUNEDB_OK)
      << tunedb_last_error();
  EXPECT_EQ(answer.source, TUNEDB_SOURCE_DAEMON);
  tunedb_client_destroy(client);

  opt.tls_key_file = nullptr;  // a certificate without its key
  EXPECT_EQ(tunedb_client_create(&opt, &client), TUNEDB_ERROR_INVALID_ARGUMENT);
}

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

CliRun RunCli(const std::vector<std::string>& args) {
  std::istringstream in;
  std::ostringstream out, err;
  tuner::CliIo io;
  io.in = &in;
  io.out = &out;
  io.err = &err;
  CliRun r;
  r.code = tuner::RunCli(args, io);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST_F(TlsTest, CliConnectsWithTheMatchingCredentials) {
  auto server = StartTlsServer(pki_->File("ca.pem"));
  ASSERT_NE(server, nullptr);
  const std::string address = LocalhostAddress(*server);
  CliRun ok =
      RunCli({"--address", address, "--timeout", "2", "--tls-ca",
              pki_->File("ca.pem"), "--tls-cert", pki_->File("client.pem"),
              "--tls-key", pki_->File("client.key"), "devices"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("Simulated GPU"), std::string::npos) << ok.out;

  CliRun no_cert = RunCli({"--address", address, "--timeout", "2", "--tls-ca",
                           pki_->File("ca.pem"), "devices"});
  EXPECT_EQ(no_cert.code, 3) << "UNAVAILABLE's exit code";
  EXPECT_NE(no_cert.err.find("over TLS"), std::string::npos) << no_cert.err;

  CliRun plain = RunCli({"--address", address, "--timeout", "2", "devices"});
  EXPECT_EQ(plain.code, 3);
  EXPECT_NE(plain.err.find("needs --tls-ca"), std::string::npos) << plain.err;
}

// Polls Devices until it answers or 20 s pass.
grpc::Status DevicesWhenUp(const std::string& address,
                           const TlsClientOptions& tls) {
  grpc::Status status;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    auto channel = CreateDaemonChannel(address, tls, grpc::ChannelArguments());
    if (!channel.ok()) return grpc::Status(grpc::StatusCode::UNKNOWN, "");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(2));
    v1::DevicesResponse response;
    status = v1::TuneDb::NewStub(*channel)->Devices(
        &context, v1::DevicesRequest(), &response);
    if (status.ok()) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < until);
  return status;
}

TEST_F(TlsTest, DaemonRefusesTcpWithoutCertificateOrInsecureFlag) {
  TempDir dir;
  const std::string log = dir.File("log.txt");
  const int rc = Shell(
      absl::StrCat(TUNEDBD_PATH, " --finder simulated --db ", dir.File("d.db"),
                   " --socket '' --listen 127.0.0.1:0 >", log, " 2>&1"));
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1) << rc;
  EXPECT_NE(ReadTextFile(log).find("needs a server certificate and key"),
            std::string::npos)
      << ReadTextFile(log);
}

TEST_F(TlsTest, DaemonServesPlainTcpOnlyWithInsecureTcpAndWarns) {
  TempDir dir;
  const std::string log = dir.File("log.txt");
  const std::string address = absl::StrCat("127.0.0.1:", FreeLoopbackPort());
  DaemonProcess daemon(
      dir, {"--finder", "simulated", "--listen", address, "--insecure-tcp"},
      {"/bin/sh", "-c", absl::StrCat("exec \"$0\" \"$@\" >", log, " 2>&1")});
  EXPECT_TRUE(DevicesWhenUp(address, TlsClientOptions()).ok());
  EXPECT_NE(ReadTextFile(log).find("without TLS (--insecure-tcp)"),
            std::string::npos)
      << ReadTextFile(log);
  EXPECT_NE(ReadTextFile(log).find("warn"), std::string::npos)
      << ReadTextFile(log);
}

TEST_F(TlsTest, DaemonTakesTlsSettingsFromItsConfigFile) {
  TempDir dir;
  const std::string address = absl::StrCat("localhost:", FreeLoopbackPort());
  const std::string config = dir.File("tunedbd.conf");
  std::ofstream(config) << "listen = " << address << "\n"
                        << "tls-cert = " << pki_->File("server.pem") << "\n"
                        << "tls-key = " << pki_->File("server.key") << "\n"
                        << "tls-client-ca = " << pki_->File("ca.pem") << "\n";
  DaemonProcess daemon(dir, {"--finder", "simulated", "--config", config});
  EXPECT_TRUE(DevicesWhenUp(address, ClientTls("ca", "client")).ok());
  EXPECT_EQ(CallDevices(address, ClientTls("ca")).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "mTLS from the config file: no client certificate";
}

}  // namespace
}  // namespace tunedb
