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

class ClientWarmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartServer(dir_.File("d.sock"));
    ASSERT_NE(server_, nullptr);
    for (int i = 1; i <= kKeys; ++i) {
      keys_.push_back(testing_util::TestKey(
          i, 64, 64, server_->core().devices().at(0).key));
    }
    // Half of the keys are stored; the rest stay unstored (the program
    // clients do not tune their misses).
    ClientOptions o;
    o.address = server_->address();
    o.miss_policy = MissPolicy::kTuneAndWait;
    o.tune_deadline = absl::Seconds(20);
    auto tuner = Client::Create(o).value();
    for (int i = 0; i < kKeys; i += 2) ASSERT_TRUE(tuner->Get(keys_[i]).tuned());
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::Seconds(1));
  }
  ClientOptions Options(const std::string& program) const {
    return ProgramOptions(server_->address(), program);
  }
  // A run of `o`'s program: every key once; its stats into *stats.
  std::vector<Answer> Run(const ClientOptions& o, ClientStats* stats) {
    auto client = Client::Create(o).value();
    std::vector<Answer> answers = GetAll(*client, keys_);
    *stats = client->Stats();
    return answers;
  }

  TempDir dir_;
  std::unique_ptr<Server> server_;
  std::vector<ProblemKey> keys_;
};

TEST_F(ClientWarmTest, AProgramsSecondRunGetsEveryKeyFromOneWarm) {
  ClientStats first;
  const std::vector<Answer> answers = Run(Options("train-a"), &first);
  EXPECT_EQ(first.daemon_calls, kKeys);
  EXPECT_EQ(first.warm_keys, 0);
  EXPECT_EQ(first.warm_answers, 0);
  EXPECT_EQ(first.daemon_answers, kKeys / 2);

  ClientStats second;
  ExpectSameAnswers(Run(Options("train-a"), &second), answers);
  EXPECT_EQ(second.daemon_calls, 0);
  EXPECT_EQ(second.warm_keys, kKeys);
  EXPECT_EQ(second.warm_answers, kKeys);
  EXPECT_EQ(second.daemon_answers, kKeys / 2);
  EXPECT_EQ(second.fallbacks, kKeys - kKeys / 2);
  EXPECT_GE(second.daemon_wait_us, second.warm_wait_us);
}

TEST_F(ClientWarmTest, AnotherProgramOrOneWithoutItsWarmLooksEveryKeyUp) {
  ClientStats first;
  const std::vector<Answer> answers = Run(Options("train-a"), &first);
  ClientStats other;
  ExpectSameAnswers(Run(Options("train-b"), &other), answers);
  EXPECT_EQ(other.daemon_calls, kKeys);
  EXPECT_EQ(other.warm_keys, 0);
  EXPECT_EQ(other.warm_answers, 0);
  ClientOptions no_warm = Options("train-a");
  no_warm.warm_at_start = false;
  ClientStats without;
  ExpectSameAnswers(Run(no_warm, &without), answers);
  EXPECT_EQ(without.daemon_calls, kKeys);
  EXPECT_EQ(without.warm_answers, 0);
}

TEST_F(ClientWarmTest, AFollowedPinIsAnsweredFromThePinNotTheWarm) {
  const std::string pin = dir_.File("run.pin");
  const ProblemKey& unstored = keys_[1];
  ClientOptions record = Options("train-a");
  record.pin.path = pin;
  record.pin.mode = PinMode::kRecord;
  ClientStats recorded;
  const std::vector<Answer> pinned = Run(record, &recorded);
  ASSERT_EQ(pinned[1].source, Source::kHeuristic);
  // The key is stored now, so the program's Warm would answer it tuned.
  ClientOptions tune;
  tune.address = server_->address();
  tune.miss_policy = MissPolicy::kTuneAndWait;
  tune.tune_deadline = absl::Seconds(20);
  ASSERT_TRUE(Client::Create(tune).value()->Get(unstored).tuned());

  ClientOptions follow = Options("train-a");
  follow.pin.path = pin;
  follow.pin.mode = PinMode::kFollow;
  ClientStats followed;
  const std::vector<Answer> answers = Run(follow, &followed);
  EXPECT_EQ(answers[1].source, Source::kPinned);
  EXPECT_EQ(answers[1].algo, pinned[1].algo);
  EXPECT_EQ(followed.warm_answers, 0);
  EXPECT_EQ(followed.daemon_calls, 0);
}

}  // namespace
}  // namespace tunedb
