// tunedbd's Prometheus endpoint, from a scraper's side: a real daemon with
// --metrics-address on a free loopback port, a few Tunes and Lookups over
// its socket, then GET /metrics over HTTP. The values must match what was
// done, promtool must accept the exposition, and every tunedb_ metric the
// Grafana dashboard queries must be exposed. The jobs' answers are read
// from a daemon in process, whose bounds a test can set.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"
#include "server/service/server.h"
#include "tests/server/daemon_process.h"
#include "tests/server/test_util.h"
#include "tests/testing/free_port.h"

namespace tunedb {
namespace {

using testing_util::DaemonProcess;
using testing_util::FreeLoopbackPort;
using testing_util::ProtoProblem;
using testing_util::TempDir;
using testing_util::Tune;

// GET `path` from 127.0.0.1:port; the whole response, "" if it cannot
// connect.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  const std::string request =
      absl::StrCat("GET ", path,
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(write(fd, request.data(), request.size()),
            static_cast<ssize_t>(request.size()));
  std::string response;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) response.append(buf, n);
  close(fd);
  return response;
}

// The body of a successful scrape (retried while the daemon starts).
std::string Scrape(int port) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string response = HttpGet(port, "/metrics");
    if (response.rfind("HTTP/1.1 200", 0) == 0) {
      return response.substr(response.find("\r\n\r\n") + 4);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "no successful scrape of port " << port;
  return "";
}

// Sample lines of an exposition: "name{labels}" -> value.
std::map<std::string, double> Samples(const std::string& body) {
  std::map<std::string, double> out;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    double value = 0;
    if (absl::SimpleAtod(line.substr(space + 1), &value)) {
      out[line.substr(0, space)] = value;
    }
  }
  return out;
}

// Tunes and looks up over the daemon's socket, then scrapes it.
class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = FreeLoopbackPort();
    // A bare port: the daemon listens on 127.0.0.1:port.
    daemon_ = std::make_unique<DaemonProcess>(
        dir_, std::vector<std::string>{
                  "--finder", "simulated-workers", "--simulated", "slow_ms=5",
                  "--metrics-address", absl::StrCat(port_)});
    stub_ = daemon_->Connect();
    v1::TuneResponse resp;
    ASSERT_TRUE(Tune(stub_.get(), 1, &resp).ok());  // searched
    ASSERT_TRUE(Tune(stub_.get(), 1, &resp).ok());  // hit
    ASSERT_TRUE(Tune(stub_.get(), 2, &resp).ok());  // searched
    {
      grpc::ClientContext ctx;
      v1::DevicesRequest req;
      v1::DevicesResponse devices;
      ASSERT_TRUE(stub_->Devices(&ctx, req, &devices).ok());
      device_ = devices.devices(0).key();
    }
    EXPECT_TRUE(Lookup(1).ok());                         // hit
    EXPECT_EQ(Lookup(3).error_code(), grpc::NOT_FOUND);  // miss
    WaitUntilQueuesEmpty();
    body_ = Scrape(port_);
    samples_ = Samples(body_);
  }

  // Waits (at most 20 s) until the daemon's Stats has every device's queue
  // empty. A device's worker counts a search in its queue depth until it
  // has left it, which may be just after the search's callers are answered.
  void WaitUntilQueuesEmpty() {
    for (int attempt = 0; attempt < 2000; ++attempt) {
      grpc::ClientContext ctx;
      v1::StatsRequest req;
      v1::StatsResponse stats;
      ASSERT_TRUE(stub_->Stats(&ctx, req, &stats).ok());
      bool empty = true;
      for (const auto& [device, depth] : stats.queue_depths()) {
        if (depth != 0) empty = false;
      }
      if (empty) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "a device's queue is not empty after 20 s";
  }

  grpc::Status Lookup(int64_t n) {
    grpc::ClientContext ctx;
    v1::LookupRequest req;
    *req.mutable_problem() = ProtoProblem(n);
    *req.mutable_device() = device_;
    v1::LookupResponse resp;
    return stub_->Lookup(&ctx, req, &resp);
  }

  double Value(const std::string& sample) {
    auto it = samples_.find(sample);
    EXPECT_NE(it, samples_.end()) << sample << " not in\n" << body_;
    return it == samples_.end() ? -1 : it->second;
  }

  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<v1::TuneDb::Stub> stub_;
  v1::DeviceKey device_;
  std::string body_;
  std::map<std::string, double> samples_;
};

TEST_F(MetricsTest, CountsLookupsTunesAndSearchesByOutcome) {
  EXPECT_EQ(Value(R"(tunedb_lookups_total{outcome="hit"})"), 1);
  EXPECT_EQ(Value(R"(tunedb_lookups_total{outcome="miss"})"), 1);
  EXPECT_EQ(Value(R"(tunedb_tunes_total{outcome="hit"})"), 1);
  EXPECT_EQ(Value(R"(tunedb_tunes_total{outcome="miss"})"), 2);
  EXPECT_EQ(Value(R"(tunedb_tunes_total{outcome="coalesced"})"), 0);
  EXPECT_EQ(Value(R"(tunedb_tunes_total{outcome="rejected"})"), 0);
  EXPECT_EQ(Value(R"(tunedb_searches_total{outcome="searched"})"), 2);
  EXPECT_EQ(Value(R"(tunedb_searches_total{outcome="failed"})"), 0);
}

TEST_F(MetricsTest, TimesEachSearchPerDevice) {
  EXPECT_EQ(
      Value(R"(tunedb_search_duration_seconds_count{device="0",pass="total"})"),
      2);
  // The simulated workers sleep slow_ms=5 per search.
  EXPECT_GE(
      Value(R"(tunedb_search_duration_seconds_sum{device="0",pass="total"})"),
      0.010);
  EXPECT_EQ(Value(R"(tunedb_queue_depth{device="0"})"), 0);
}

TEST_F(MetricsTest, ReportsTheStoreWorkersAndDevices) {
  EXPECT_EQ(Value("tunedb_records"), 2);
  EXPECT_GT(Value("tunedb_database_bytes"), 0);
  EXPECT_GE(Value("tunedb_database_wal_bytes"), 0);
  const double now = static_cast<double>(time(nullptr));
  EXPECT_NEAR(Value("tunedb_last_write_timestamp_seconds"), now, 60);
  EXPECT_EQ(Value(R"(tunedb_worker_starts_total{device="0"})"), 1);
  EXPECT_EQ(Value(R"(tunedb_worker_exits_total{device="0",reason="died"})"), 0);
  EXPECT_NE(body_.find(R"(gpu_model="Simulated GPU")"), std::string::npos)
      << body_;
  EXPECT_NE(body_.find(R"(cudnn_version="9.19.0")"), std::string::npos);
  EXPECT_NE(body_.find("# HELP tunedb_tunes_total "), std::string::npos);
  EXPECT_NE(body_.find(R"(tunedb_build_info{version=")"), std::string::npos);
}

TEST_F(MetricsTest, PromtoolAcceptsTheExposition) {
  if (system("command -v promtool > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  }
  const std::string file = dir_.File("metrics.txt");
  std::ofstream(file) << body_;
  const std::string output = dir_.File("promtool.txt");
  const int rc = system(
      absl::StrCat("promtool check metrics < ", file, " > ", output, " 2>&1")
          .c_str());
  EXPECT_EQ(rc, 0) << testing_util::ReadTextFile(output);
}

TEST_F(MetricsTest, ExposesEveryMetricTheDashboardQueries) {
  std::ifstream in(std::string(TUNEDB_SOURCE_DIR) +
                   "/deploy/grafana/tunedb.json");
  ASSERT_TRUE(in) << "deploy/grafana/tunedb.json missing";
  const nlohmann::json dashboard = nlohmann::json::parse(in);
  std::set<std::string> queried;
  const std::regex name(R"(tunedb_[a-z_]+)");
  for (const auto& panel : dashboard.at("panels")) {
    if (!panel.contains("targets")) continue;
    for (const auto& target : panel.at("targets")) {
      const std::string expr = target.at("expr");
      for (std::sregex_iterator it(expr.begin(), expr.end(), name), end;
           it != end; ++it) {
        std::string metric = it->str();
        for (const char* suffix : {"_bucket", "_count", "_sum"}) {
          const std::string s = suffix;
          if (metric.size() > s.size() &&
              metric.compare(metric.size() - s.size(), s.size(), s) == 0) {
            metric.resize(metric.size() - s.size());
          }
        }
        queried.insert(metric);
      }
    }
  }
  EXPECT_GE(queried.size(), 10u);
  for (const std::string& metric : queried) {
    EXPECT_NE(body_.find(absl::StrCat("# TYPE ", metric, " ")),
              std::string::npos)
        << "the dashboard queries " << metric << ", which is not exposed";
  }
}

// A daemon that keeps two job answers: a job's first three keys keep two
// answers and give the third without fixing it.
TEST(JobAnswerMetricsTest, CountKeptAnswersTheirBytesAndThoseNotFixed) {
  TempDir dir;
  const int port = FreeLoopbackPort();
  ServerOptions options;
  options.unix_socket = dir.File("d.sock");
  options.store.path = ":memory:";
  options.finder = "simulated";
  options.metrics_address = absl::StrCat(port);
  options.job_answers.max_entries = 2;
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::BuildAndStart(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::unique_ptr<v1::TuneDb::Stub> stub = v1::TuneDb::NewStub(
      grpc::CreateChannel((*server)->address(),
                          grpc::InsecureChannelCredentials()));
  v1::LookupRequest req;
  ToProto((*server)->core().devices().at(0).key, req.mutable_device());
  req.set_job("job-1");
  for (int64_t n : {1, 2, 3, 1}) {
    grpc::ClientContext ctx;
    *req.mutable_problem() = ProtoProblem(n);
    v1::LookupResponse resp;
    EXPECT_EQ(stub->Lookup(&ctx, req, &resp).error_code(), grpc::NOT_FOUND);
  }
  const std::string body = Scrape(port);
  const std::map<std::string, double> samples = Samples(body);
  auto value = [&](const std::string& name) {
    auto it = samples.find(name);
    EXPECT_NE(it, samples.end()) << name << " not in\n" << body;
    return it == samples.end() ? -1 : it->second;
  };
  EXPECT_EQ(value("tunedb_job_answers"), 2);
  // An answer costs under 1 KiB (docs/reliability.md, "Job answers").
  EXPECT_GT(value("tunedb_job_answers_bytes"), 0);
  EXPECT_LT(value("tunedb_job_answers_bytes"), 2 * 1024);
  EXPECT_EQ(value("tunedb_job_answers_not_fixed_total"), 1);
  EXPECT_NE(body.find("# TYPE tunedb_job_answers_not_fixed_total counter"),
            std::string::npos);
  EXPECT_NE(body.find("# TYPE tunedb_job_answers_bytes gauge"),
            std::string::npos);
}

TEST(MetricsConfigTest, MetricsAddressComesFromTheConfigFile) {
  TempDir dir;
  const int port = FreeLoopbackPort();
  std::ofstream(dir.File("tunedbd.conf"))
      << "finder = simulated\nmetrics-address = 127.0.0.1:" << port << "\n";
  DaemonProcess daemon(dir, {"--config", dir.File("tunedbd.conf")});
  daemon.Connect();
  EXPECT_NE(Scrape(port).find("# TYPE tunedb_tunes_total counter"),
            std::string::npos);
}

TEST(MetricsConfigTest, BusyMetricsPortFailsTheStartWithAMessage) {
  TempDir dir;
  // Hold a listening socket on the port.
  int port = 0;
  const int fd = testing_util::LoopbackSocket(true, &port);
  const std::string log = dir.File("tunedbd.log");
  const std::string command = absl::StrCat(
      TUNEDBD_PATH, " --finder simulated --db ", dir.File("d.db"), " --socket ",
      dir.File("d.sock"), " --metrics-address ", port, " > ", log, " 2>&1");
  const int status = system(command.c_str());
  close(fd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  const std::string said = testing_util::ReadTextFile(log);
  EXPECT_NE(said.find("cannot serve metrics on 127.0.0.1:"), std::string::npos)
      << said;
}

}  // namespace
}  // namespace tunedb
