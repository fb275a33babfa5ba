// CliTest: a fixture that runs an in-process tunedbd (simulated finder, a
// database file in a temporary folder, a Unix socket) and runs CLI
// subcommands against it with captured stdin, stdout and stderr.
//
// Thread safety: Run() may be called from several threads (each call has its
// own streams); Start/Stop from the test thread only.
#ifndef TUNEDB_TESTS_TUNER_CLI_TEST_FIXTURE_H_
#define TUNEDB_TESTS_TUNER_CLI_TEST_FIXTURE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/service/server.h"
#include "tests/testing/temp_dir.h"

namespace tunedb::tuner {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
  // stdout parsed as JSON (null if it is not JSON).
  nlohmann::json Json() const;
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // (Re)starts the daemon with SimulatedFinder options, e.g. "slow_ms=20";
  // `queue_capacity` > 0 sets the searches queued per GPU.
  void StartServer(const std::string& simulated_options = "",
                   int queue_capacity = 0);
  void StopServer();

  // Runs `tunedb --address <daemon> --timeout 20 args...`.
  CliResult Run(const std::vector<std::string>& args,
                const std::string& stdin_text = "", bool stdin_tty = false);
  // Runs without adding --address.
  CliResult RunRaw(const std::vector<std::string>& args,
                   const std::string& stdin_text = "", bool stdin_tty = false);

  // Writes `text` to a file in the temporary folder; returns its path.
  std::string WriteFile(const std::string& name, const std::string& text);

  int64_t StoredRecords();
  int64_t SearchesRun();

  // The daemon's records (cuDNN 9.19.0) as export lines of cuDNN 9.14.0,
  // each line first passed to `edit` with its position; sets *records to
  // how many.
  std::string ExportedAsCudnn914(
      const std::function<void(int, nlohmann::json&)>& edit, int* records);
  // An export line's fastest result made `factor` times slower.
  static void SlowFirstResult(nlohmann::json& line, double factor);

  testing_util::TempDir temp_dir_;
  std::string dir_;  // temp_dir_.path()
  std::string db_path_;
  std::unique_ptr<Server> server_;
};

}  // namespace tunedb::tuner

#endif  // TUNEDB_TESTS_TUNER_CLI_TEST_FIXTURE_H_
