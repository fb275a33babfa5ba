#include "tests/tuner/cli_test_fixture.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_replace.h"
#include "tuner/cli.h"
#include "tuner/exit_codes.h"
#include "tuner/interrupt.h"

namespace tunedb::tuner {

nlohmann::json CliResult::Json() const {
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

void CliTest::SetUp() {
  ASSERT_FALSE(temp_dir_.path().empty());
  dir_ = temp_dir_.path();
  db_path_ = dir_ + "/tunedb.db";
  ClearInterrupt();
  StartServer();
}

void CliTest::TearDown() {
  StopServer();
  ClearInterrupt();
}

void CliTest::StartServer(const std::string& simulated_options,
                          int queue_capacity) {
  StopServer();
  ServerOptions options;
  options.unix_socket = dir_ + "/d.sock";
  options.store.path = db_path_;
  options.finder = "simulated";
  options.simulated_options = simulated_options;
  if (queue_capacity > 0) options.core.queue_capacity = queue_capacity;
  auto server = Server::BuildAndStart(options);
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = std::move(*server);
}

void CliTest::StopServer() {
  if (server_ == nullptr) return;
  server_->Shutdown(absl::Seconds(5));
  server_.reset();
}

CliResult CliTest::RunRaw(const std::vector<std::string>& args,
                          const std::string& stdin_text, bool stdin_tty) {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  CliIo io;
  io.in = &in;
  io.out = &out;
  io.err = &err;
  io.stdin_is_tty = stdin_tty;
  CliResult r;
  r.code = RunCli(args, io);
  r.out = out.str();
  r.err = err.str();
  return r;
}

CliResult CliTest::Run(const std::vector<std::string>& args,
                       const std::string& stdin_text, bool stdin_tty) {
  std::vector<std::string> full = {"--address", server_->address(), "--timeout",
                                   "20"};
  full.insert(full.end(), args.begin(), args.end());
  return RunRaw(full, stdin_text, stdin_tty);
}

std::string CliTest::WriteFile(const std::string& name,
                               const std::string& text) {
  const std::string path = dir_ + "/" + name;
  std::ofstream(path) << text;
  return path;
}

int64_t CliTest::StoredRecords() {
  auto count = server_->core().store().Count();
  EXPECT_TRUE(count.ok());
  return count.ok() ? *count : -1;
}

int64_t CliTest::SearchesRun() { return server_->core().Stats().searches; }

void CliTest::SlowFirstResult(nlohmann::json& line, double factor) {
  for (const char* t : {"launch", "gpu", "host"}) {
    auto& m = line["results"][0][t]["median_ms"];
    m = m.get<double>() * factor;
  }
}

std::string CliTest::ExportedAsCudnn914(
    const std::function<void(int, nlohmann::json&)>& edit, int* records) {
  CliResult exported = Run({"export"});
  EXPECT_EQ(exported.code, kExitOk) << exported.err;
  std::istringstream lines(exported.out);
  std::string line, out;
  *records = 0;
  while (std::getline(lines, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("key")) continue;
    j["key"] = absl::StrReplaceAll(j["key"].get<std::string>(),
                                   {{"cudnn=9.19.0", "cudnn=9.14.0"}});
    edit((*records)++, j);
    out += j.dump() + "\n";
  }
  return out;
}

}  // namespace tunedb::tuner
