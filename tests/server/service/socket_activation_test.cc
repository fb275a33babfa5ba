// Socket activation the way systemd does it (tunedbd.socket): the test binds
// and listens on a Unix socket, then starts tunedbd with it as descriptor 3
// and LISTEN_FDS=1, LISTEN_PID=<the daemon's pid> in its environment. A
// client that connected before the daemon ran is served; the daemon leaves
// the socket file to its owner; a TCP socket is refused.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/server/test_util.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

extern char** environ;

namespace tunedb {
namespace {

using testing_util::ReadTextFile;
using testing_util::TempDir;

int ListeningUnixSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(listen(fd, 16), 0);
  return fd;
}

// tunedbd with `fd` as its descriptor 3 and the activation variables set
// (by a shell that execs it, so LISTEN_PID is the daemon's pid), its output
// in `log`.
pid_t SpawnActivated(const TempDir& dir, int fd, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, 3);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> args = {
      "/bin/sh",
      "-c",
      "export LISTEN_PID=$$ LISTEN_FDS=1; exec \"$0\" \"$@\"",
      TUNEDBD_PATH,
      "--finder",
      "simulated",
      "--db",
      dir.File("d.db"),
      "--socket",
      dir.File("unused.sock"),
      "--worker",
      TUNEDB_WORKER_PATH};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ),
            0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

TEST(SocketActivationTest, ServesTheSocketSystemdPassedFromTheFirstClient) {
  TempDir dir;
  const std::string path = dir.File("activated.sock");
  const int fd = ListeningUnixSocket(path);
  // The client connects before the daemon runs, as one can once systemd
  // listens: its call waits in the socket's backlog.
  auto stub = v1::TuneDb::NewStub(
      grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  v1::DevicesResponse devices;
  grpc::CompletionQueue cq;
  auto call = stub->AsyncDevices(&context, v1::DevicesRequest(), &cq);
  grpc::Status status;
  call->Finish(&devices, &status, reinterpret_cast<void*>(1));

  const std::string log = dir.File("log.txt");
  const pid_t pid = SpawnActivated(dir, fd, log);
  close(fd);  // the daemon has its own copy, as systemd keeps one
  void* tag = nullptr;
  bool ok = false;
  ASSERT_TRUE(cq.Next(&tag, &ok));
  EXPECT_TRUE(status.ok()) << status.error_message() << "\n"
                           << ReadTextFile(log);
  EXPECT_EQ(devices.devices_size(), 1);
  EXPECT_NE(ReadTextFile(log).find("socket activation: serving 1 socket(s)"),
            std::string::npos)
      << ReadTextFile(log);
  EXPECT_NE(access(dir.File("unused.sock").c_str(), F_OK), 0)
      << "--socket is not bound when systemd passes one";

  kill(pid, SIGTERM);
  int wait_status = 0;
  waitpid(pid, &wait_status, 0);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
      << wait_status << "\n"
      << ReadTextFile(log);
  EXPECT_EQ(access(path.c_str(), F_OK), 0)
      << "the socket file belongs to systemd and stays";
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

TEST(SocketActivationTest, RefusesAnActivatedTcpSocket) {
  TempDir dir;
  int port = 0;
  const int fd = testing_util::LoopbackSocket(true, &port);
  const std::string log = dir.File("log.txt");
  const pid_t pid = SpawnActivated(dir, fd, log);
  close(fd);
  int wait_status = 0;
  waitpid(pid, &wait_status, 0);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 1)
      << wait_status;
  EXPECT_NE(ReadTextFile(log).find("not a listening Unix stream socket"),
            std::string::npos)
      << ReadTextFile(log);
}

}  // namespace
}  // namespace tunedb
