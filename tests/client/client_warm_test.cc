// A Client with a program (ClientOptions::program, warm_at_start): every
// Lookup names the program, and a later run of the same program gets the
// answers to all of its keys from one Warm at its start, against the real
// in-process daemon (simulated finder); a daemon without Warm (FakeTuneDb
// answers it UNIMPLEMENTED) leaves every miss as before.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "client_test_util.h"
#include "server/finder/simulated_finder.h"
#include "server/service/server.h"
#include "test_server.h"
#include "tunedb/client.h"

namespace tunedb {
namespace {

using client_test::FakeDaemon;
using client_test::StartServer;
using testing_util::OkResult;
using testing_util::TempDir;

constexpr int kKeys = 6;

// Never the simulated finder's best, so a heuristic answer and a tuned one
// differ.
HeuristicFn Heuristic() {
  return [](const ProblemKey& key, const Constraints&) {
    return std::optional<AlgoResult>(
        OkResult((SimulatedFinder::Model(key.problem).at(0).algo + 1) % 6));
  };
}

// A client of `address` for `program` whose misses are looked up (2 s) and
// not tuned, answered by Heuristic() when nothing is stored.
ClientOptions ProgramOptions(const std::string& address,
                             const std::string& program) {
  ClientOptions o;
  o.address = address;
  o.program = program;
  o.lookup_deadline = absl::Seconds(2);
  o.heuristic = Heuristic();
  o.tune_misses = false;
  return o;
}

// Gets every key of `keys` once.
std::vector<Answer> GetAll(Client& client, const std::vector<ProblemKey>& keys) {
  std::vector<Answer> answers;
  for (const ProblemKey& key : keys) answers.push_back(client.Get(key));
  return answers;
}

void ExpectSameAnswers(const std::vector<Answer>& a,
                       const std::vector<Answer>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].source, b[i].source) << "key " << i;
    EXPECT_EQ(a[i].algo, b[i].algo) << "key " << i;
    EXPECT_EQ(a[i].math_type, b[i].math_type) << "key " << i;
  }
}

TEST(ClientWarmFakeDaemonTest, ADaemonWithoutWarmAnswersEveryMissAsBefore) {
  TempDir dir;
  FakeDaemon daemon(dir.File("d.sock"));
  ASSERT_TRUE(daemon.ok());
  std::vector<ProblemKey> keys;
  for (int i = 1; i <= kKeys; ++i) {
    keys.push_back(testing_util::TestKey(i));
    if (i % 2 == 0) daemon.service().Put(keys.back(), {OkResult(i % 6)});
  }
  ClientOptions without = ProgramOptions(daemon.address(), "");
  auto before = Client::Create(without).value();
  const std::vector<Answer> expected = GetAll(*before, keys);
  EXPECT_EQ(daemon.service().last_program(), "");

  auto client =
      Client::Create(ProgramOptions(daemon.address(), "train-a")).value();
  ExpectSameAnswers(GetAll(*client, keys), expected);
  const ClientStats s = client->Stats();
  EXPECT_EQ(s.daemon_calls, kKeys);
  EXPECT_EQ(s.daemon_answers, kKeys / 2);
  EXPECT_EQ(s.fallbacks, kKeys - kKeys / 2);
  EXPECT_EQ(s.daemon_errors, 0);
  EXPECT_EQ(s.daemon_skipped, 0);
  EXPECT_EQ(s.warm_keys, 0);
  EXPECT_EQ(s.warm_answers, 0);
  EXPECT_EQ(daemon.service().last_program(), "train-a");
  EXPECT_TRUE(client->DaemonReachable());
}

TEST(ClientWarmFakeDaemonTest, AnInvalidProgramIsRefusedAtCreation) {
  ClientOptions o;
  o.program = "has space";
  absl::StatusOr<std::unique_ptr<Client>> c = Client::Create(o);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("program"), std::string::npos)
      << c.status();
  o.program = std::string(129, 'p');
  EXPECT_EQ(Client::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunedb
