// tunedbd under systemd's notify protocol, with the test in systemd's place:
// it binds the AF_UNIX datagram socket that NOTIFY_SOCKET names, sets
// WATCHDOG_USEC, starts a real daemon and reads what it says. READY=1 comes
// only once the workers have reported their GPUs and the socket answers;
// STATUS= follows the searches in flight, at most one line a second;
// WATCHDOG=1 pings arrive well within the interval; SIGTERM brings
// STOPPING=1 before the daemon exits.
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/server/daemon_process.h"
#include "tests/server/test_util.h"

namespace tunedb {
namespace {

using testing_util::DaemonProcess;
using testing_util::TempDir;
using testing_util::Tune;

// One datagram from the daemon: its lines and when it arrived.
struct Notification {
  std::vector<std::string> lines;
  absl::Time at;
  bool Has(const std::string& line) const {
    for (const auto& l : lines) {
      if (l == line) return true;
    }
    return false;
  }
  std::string Status() const {
    for (const auto& l : lines) {
      if (absl::StartsWith(l, "STATUS=")) return l.substr(7);
    }
    return "";
  }
};

// The systemd side of the protocol: a bound datagram socket.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
        << std::strerror(errno);
  }
  ~NotifySocket() { close(fd_); }

  // The next datagram, or nullopt after `timeout`.
  std::optional<Notification> Receive(absl::Duration timeout) {
    timeval tv = absl::ToTimeval(timeout);
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return std::nullopt;
    Notification out;
    out.at = absl::Now();
    out.lines = absl::StrSplit(std::string(buf, n), '\n', absl::SkipEmpty());
    return out;
  }

  // Datagrams until one has `line` (included) or `timeout` passes.
  std::vector<Notification> Until(const std::string& line,
                                  absl::Duration timeout) {
    std::vector<Notification> out;
    const absl::Time end = absl::Now() + timeout;
    while (absl::Now() < end) {
      std::optional<Notification> n = Receive(end - absl::Now());
      if (!n) break;
      out.push_back(*n);
      if (n->Has(line)) break;
    }
    return out;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

bool AnyHas(const std::vector<Notification>& ns, const std::string& line) {
  for (const auto& n : ns) {
    if (n.Has(line)) return true;
  }
  return false;
}

TEST(SystemdNotifyTest, ReadyOnceServingThenStatusWatchdogAndStopping) {
  TempDir dir;
  NotifySocket notify(dir.File("notify.sock"));
  // Workers that take a while per search, so one is visibly in flight.
  DaemonProcess daemon(
      dir, {"--finder", "simulated-workers", "--simulated", "slow_ms=2500"}, {},
      {"NOTIFY_SOCKET=" + notify.path(), "WATCHDOG_USEC=400000"});

  // READY=1 arrives, and at that moment the socket already answers with
  // the device the worker reported.
  std::vector<Notification> start = notify.Until("READY=1", absl::Seconds(30));
  ASSERT_TRUE(AnyHas(start, "READY=1")) << "no READY=1";
  EXPECT_FALSE(AnyHas(start, "STOPPING=1"));
  {
    auto channel = grpc::CreateChannel("unix:" + daemon.socket(),
                                       grpc::InsecureChannelCredentials());
    auto stub = v1::TuneDb::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(2));
    v1::DevicesRequest req;
    v1::DevicesResponse resp;
    grpc::Status s = stub->Devices(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << "READY=1 before the socket answers: "
                        << s.error_message();
    EXPECT_EQ(resp.devices_size(), 1);
  }
  EXPECT_NE(start.back().Status().find("no searches in flight"),
            std::string::npos)
      << start.back().Status();

  // A search in flight shows in STATUS=, then its end; watchdog pings
  // keep coming meanwhile.
  std::thread tuner([&] {
    auto stub = daemon.Connect();
    v1::TuneResponse resp;
    EXPECT_TRUE(Tune(stub.get(), 1, &resp).ok());
  });
  std::vector<Notification> busy;
  const absl::Time end = absl::Now() + absl::Seconds(5);
  bool saw_busy = false, saw_idle_again = false;
  while (absl::Now() < end && !saw_idle_again) {
    std::optional<Notification> n = notify.Receive(end - absl::Now());
    if (!n) break;
    busy.push_back(*n);
    const std::string status = n->Status();
    if (absl::StrContains(status, "1 search(es) in flight (device 0: 1)")) {
      saw_busy = true;
    }
    if (saw_busy && absl::StrContains(status, "no searches in flight")) {
      saw_idle_again = true;
    }
  }
  tuner.join();
  EXPECT_TRUE(saw_busy) << "no STATUS= with the search in flight";
  EXPECT_TRUE(saw_idle_again) << "no STATUS= after the search ended";

  std::vector<absl::Time> pings, statuses;
  for (const auto& n : busy) {
    if (n.Has("WATCHDOG=1")) pings.push_back(n.at);
    if (!n.Status().empty()) statuses.push_back(n.at);
  }
  ASSERT_GE(pings.size(), 5u);
  for (size_t i = 1; i < pings.size(); ++i) {
    // Pinged at least twice per 400 ms interval (with scheduling slack).
    EXPECT_LT(pings[i] - pings[i - 1], absl::Milliseconds(300));
  }
  for (size_t i = 1; i < statuses.size(); ++i) {
    // Rate-limited to one STATUS= a second (clock slack: 50 ms).
    EXPECT_GE(statuses[i] - statuses[i - 1], absl::Milliseconds(950));
  }

  // SIGTERM: STOPPING=1, then a clean exit.
  const int status = daemon.Stop(SIGTERM);
  std::vector<Notification> stop = notify.Until("STOPPING=1", absl::Seconds(5));
  EXPECT_TRUE(AnyHas(stop, "STOPPING=1"));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(SystemdNotifyTest, WithoutNotifySocketTheDaemonServesAsBefore) {
  TempDir dir;
  DaemonProcess daemon(dir, {"--finder", "simulated"});
  auto stub = daemon.Connect();
  v1::TuneResponse resp;
  EXPECT_TRUE(Tune(stub.get(), 1, &resp).ok());
  const int status = daemon.Stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace tunedb
