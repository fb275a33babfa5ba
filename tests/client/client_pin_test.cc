// A Client with a pin (ClientOptions::pin): a recording client against the
// real in-process daemon (simulated finder), then followers with no daemon.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "client_test_util.h"
#include "test_server.h"
#include "common/pin_file.h"
#include "common/record_results.h"
#include "server/finder/simulated_finder.h"
#include "server/service/server.h"
#include "tunedb/client.h"

namespace tunedb {
namespace {

using testing_util::TempDir;

using client_test::StartServer;

// Never the simulated finder's best, so a pinned heuristic answer and a
// tuned one differ.
int HeuristicAlgo(const ConvProblem& p) {
  return (SimulatedFinder::Model(p).at(0).algo + 1) % 6;
}

HeuristicFn Heuristic() {
  return [](const ProblemKey& key, const Constraints&) {
    return std::optional<AlgoResult>(
        testing_util::OkResult(HeuristicAlgo(key.problem)));
  };
}

class ClientPinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartServer(dir_.File("d.sock"));
    ASSERT_NE(server_, nullptr);
    device_ = server_->core().devices().at(0).key;
    address_ = server_->address();
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::Seconds(1));
  }
  ProblemKey Key(int64_t n, ConvApi api = ConvApi::kLegacy) {
    ProblemKey key = testing_util::TestKey(n, 64, 64, device_);
    if (api == ConvApi::kGraph) {
      key.problem.api = ConvApi::kGraph;
      key.problem.alignment = 16;
    }
    return key;
  }
  ClientOptions Options(PinMode mode) {
    ClientOptions o;
    o.address = address_;
    o.lookup_deadline = absl::Seconds(2);
    o.heuristic = Heuristic();
    o.pin.path = pin_path_;
    o.pin.mode = mode;
    o.pin.driver_version = 13000;
    return o;
  }
  // A graph key whose tuned choice compiles at run time (the simulated
  // finder's engine 106), so its record holds that config's plan: tuned.
  ProblemKey RuntimeCompiledKey() {
    ClientOptions o;
    o.address = server_->address();
    o.miss_policy = MissPolicy::kTuneAndWait;
    o.tune_deadline = absl::Seconds(20);
    auto c = Client::Create(o).value();
    for (int64_t n = 1; n <= 256; ++n) {
      const ProblemKey key = Key(n, ConvApi::kGraph);
      const EngineAnswer a = c->GetEngine(key);
      if (a.ok() && RuntimeCompiled(a.config) && !a.config.plan.empty()) {
        return key;
      }
    }
    ADD_FAILURE() << "no key of batch 1-256 chose a runtime-compiled config";
    return Key(1, ConvApi::kGraph);
  }
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
  }
  // Tunes `key` through a client without a pin and waits for it.
  void Tune(const ProblemKey& key) {
    ClientOptions o;
    o.address = server_->address();
    o.miss_policy = MissPolicy::kTuneAndWait;
    o.tune_deadline = absl::Seconds(20);
    auto c = Client::Create(o).value();
    if (key.problem.api == ConvApi::kGraph) {
      ASSERT_TRUE(c->GetEngine(key).ok());
    } else {
      ASSERT_TRUE(c->Get(key).tuned());
    }
  }

  TempDir dir_;
  std::string pin_path_ = dir_.File("job.pin");
  std::unique_ptr<Server> server_;
  std::string address_;  // the server's, kept once it is stopped
  DeviceKey device_;
};

TEST_F(ClientPinTest, AFollowerGetsTheRecordedAnswersWithoutADaemon) {
  const ProblemKey tuned = Key(8), untuned = Key(16), graph = Key(8, ConvApi::kGraph);
  Tune(tuned);
  Tune(graph);
  Answer tuned_answer, untuned_answer;
  EngineAnswer graph_answer;
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    tuned_answer = recorder->Get(tuned);
    EXPECT_EQ(tuned_answer.source, Source::kDaemon);
    untuned_answer = recorder->Get(untuned);
    EXPECT_EQ(untuned_answer.source, Source::kHeuristic);
    graph_answer = recorder->GetEngine(graph);
    EXPECT_EQ(graph_answer.source, Source::kDaemon);
    ASSERT_TRUE(recorder->WritePin().ok());
  }
  server_->Shutdown(absl::Seconds(1));
  server_.reset();

  auto follower = Client::Create(Options(PinMode::kFollow)).value();
  ASSERT_TRUE(follower->CheckPin(device_).ok());
  Answer a = follower->Get(tuned);
  EXPECT_EQ(a.source, Source::kPinned);
  EXPECT_EQ(a.algo, tuned_answer.algo);
  EXPECT_EQ(a.math_type, tuned_answer.math_type);
  // The heuristic answer the recording run got is pinned too.
  a = follower->Get(untuned);
  EXPECT_EQ(a.source, Source::kPinned);
  EXPECT_EQ(a.algo, untuned_answer.algo);
  EngineAnswer e = follower->GetEngine(graph);
  EXPECT_EQ(e.source, Source::kPinned);
  EXPECT_EQ(e.config.algo, graph_answer.config.algo);
  EXPECT_EQ(e.config.knobs, graph_answer.config.knobs);
  EXPECT_EQ(e.config.numerical_notes, graph_answer.config.numerical_notes);
  // A problem the pin lacks: none, counted; the daemon is never asked.
  EXPECT_EQ(follower->Get(Key(32)).source, Source::kNone);
  EXPECT_FALSE(follower->Prefetch(Key(32), {}));
  const ClientStats s = follower->Stats();
  EXPECT_EQ(s.pinned_answers, 3);
  EXPECT_EQ(s.pin_misses, 1);
  EXPECT_EQ(s.daemon_calls, 0);
}

TEST_F(ClientPinTest, ARecordingClientKeepsItsFirstAnswerWhenATuneFinishes) {
  const ProblemKey key = Key(8);
  auto recorder = Client::Create(Options(PinMode::kRecord)).value();
  const Answer first = recorder->Get(key);
  ASSERT_EQ(first.source, Source::kHeuristic);
  ASSERT_TRUE(recorder->WaitForBackground(absl::Seconds(20)));
  // The tune has stored the record; an unpinned client gets it ...
  ClientOptions plain = Options(PinMode::kOff);
  plain.pin = PinOptions{};
  const Answer tuned = Client::Create(plain).value()->Get(key);
  ASSERT_EQ(tuned.source, Source::kDaemon);
  ASSERT_NE(tuned.algo, first.algo);
  // ... and the recording client still gives its first answer.
  const Answer again = recorder->Get(key);
  EXPECT_EQ(again.source, Source::kPinned);
  EXPECT_EQ(again.algo, first.algo);
}

TEST_F(ClientPinTest, ProcessesRecordingOnePinMergeAndTheFirstAnswerStays) {
  {
    auto a = Client::Create(Options(PinMode::kRecord)).value();
    a->Get(Key(8));  // the heuristic's
  }
  Tune(Key(8));
  {
    auto b = Client::Create(Options(PinMode::kRecord)).value();
    EXPECT_EQ(b->Get(Key(8)).source, Source::kDaemon);
    b->Get(Key(16));
  }
  absl::StatusOr<PinFile> pin = ReadPinFile(pin_path_);
  ASSERT_TRUE(pin.ok()) << pin.status();
  ASSERT_EQ(pin->entries.size(), 2u);
  EXPECT_EQ(pin->driver_version, 13000);
  for (const PinEntry& e : pin->entries) {
    if (e.problem == Key(8).problem) {
      EXPECT_EQ(e.source, PinnedSource::kHeuristic);
      EXPECT_EQ(e.answer.algo, HeuristicAlgo(e.problem));
    }
  }
}

TEST_F(ClientPinTest, AFollowedPinOfAnotherDeviceIsRefusedUnlessAccepted) {
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    recorder->Get(Key(8));
  }
  DeviceKey upgraded = device_;
  upgraded.cudnn_version = 92000;
  ProblemKey key = Key(8);
  key.device = upgraded;

  auto refusing = Client::Create(Options(PinMode::kFollow)).value();
  absl::Status s = refusing->CheckPin(upgraded);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cuDNN 9.19.0 in the pin, 9.20.0 here"),
            std::string::npos)
      << s;
  EXPECT_EQ(refusing->Get(key).source, Source::kNone);
  EXPECT_EQ(refusing->Stats().pin_refused, 1);

  ClientOptions o = Options(PinMode::kFollow);
  o.pin.accept_mismatch = true;
  auto accepting = Client::Create(o).value();
  EXPECT_FALSE(accepting->CheckPin(upgraded).ok());  // still named
  EXPECT_EQ(accepting->Get(key).source, Source::kPinned);

  o.pin.accept_mismatch = false;
  o.pin.driver_version = 12080;
  auto other_driver = Client::Create(o).value();
  s = other_driver->CheckPin(device_);
  EXPECT_NE(s.message().find("driver (CUDA) 13.0 in the pin, 12.8 here"),
            std::string::npos)
      << s;
}

TEST_F(ClientPinTest, AFollowerWithAnotherWorkspaceLimitGetsTheAnswerIfItFits) {
  Tune(Key(8));
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    Constraints c;
    c.max_workspace_bytes = int64_t{1} << 30;
    ASSERT_EQ(recorder->Get(Key(8), c).source, Source::kDaemon);
  }
  auto follower = Client::Create(Options(PinMode::kFollow)).value();
  Constraints larger;
  larger.max_workspace_bytes = int64_t{2} << 30;
  EXPECT_EQ(follower->Get(Key(8), larger).source, Source::kPinned);
  Constraints none;
  none.max_workspace_bytes = -1;  // smaller than any answer's workspace
  EXPECT_EQ(follower->Get(Key(8), none).source, Source::kNone);
}

TEST_F(ClientPinTest, CreateRefusesAPinThatCannotBeFollowed) {
  ClientOptions o = Options(PinMode::kFollow);
  EXPECT_EQ(Client::Create(o).status().code(), absl::StatusCode::kNotFound);
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    recorder->Get(Key(8));
  }
  std::ifstream in(pin_path_);
  std::ostringstream text;
  text << in.rdbuf();
  std::ofstream(pin_path_) << text.str().substr(0, text.str().size() / 2);
  absl::Status s = Client::Create(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find(pin_path_), std::string::npos) << s;

  o.pin.path = "";
  EXPECT_EQ(Client::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ClientPinTest, AFollowedPinOfBeforeDigestsIsSaidUnsealedInItsStats) {
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    recorder->Get(Key(8));
    EXPECT_FALSE(recorder->Stats().pin_unsealed);
  }
  const Answer pinned =
      Client::Create(Options(PinMode::kFollow)).value()->Get(Key(8));
  EXPECT_FALSE(
      Client::Create(Options(PinMode::kFollow)).value()->Stats().pin_unsealed);
  WriteFile(pin_path_, testing_util::WithoutPinDigests(ReadFile(pin_path_)));
  auto follower = Client::Create(Options(PinMode::kFollow)).value();
  EXPECT_TRUE(follower->Stats().pin_unsealed);
  EXPECT_EQ(follower->Get(Key(8)).algo, pinned.algo);  // as it reads
}

TEST_F(ClientPinTest, ProcessesOfOneJobGetItsFirstAnswerWhileATuneFinishes) {
  const ProblemKey key = Key(8);
  ClientOptions job = Options(PinMode::kOff);
  job.pin = PinOptions{};
  job.job_id = "train-42";
  job.tune_misses = false;
  // Rank 0 asks first: nothing is stored, so the job's answer is none (its
  // caller's heuristic here).
  auto rank0 = Client::Create(job).value();
  const Answer first = rank0->Get(key);
  EXPECT_EQ(first.source, Source::kHeuristic);
  // The search finishes between the ranks' lookups.
  Tune(key);
  // Rank 1, a fresh process of the same job, gets the same answer ...
  auto rank1 = Client::Create(job).value();
  const Answer second = rank1->Get(key);
  EXPECT_EQ(second.source, Source::kHeuristic);
  EXPECT_EQ(second.algo, first.algo);
  // ... and rank 0 keeps its own after the cache would have expired.
  rank0->ClearCache();
  EXPECT_EQ(rank0->Get(key).algo, first.algo);
  // Another job gets the tuned answer.
  job.job_id = "train-43";
  const Answer other = Client::Create(job).value()->Get(key);
  EXPECT_EQ(other.source, Source::kDaemon);
  EXPECT_NE(other.algo, first.algo);
}

TEST_F(ClientPinTest, AJobIdIsCheckedAtCreation) {
  ClientOptions o = Options(PinMode::kOff);
  o.pin = PinOptions{};
  for (const char* bad : {"has space", "semi;colon"}) {
    o.job_id = bad;
    EXPECT_EQ(Client::Create(o).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  o.job_id = std::string(129, 'a');
  EXPECT_EQ(Client::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o.job_id = "slurm/123.4@host:0-a_b";
  EXPECT_TRUE(Client::Create(o).ok());
}

TEST_F(ClientPinTest, APinCarriesItsRuntimeCompiledConfigsPlansForFollowersWithoutADaemon) {
  const ProblemKey graph = RuntimeCompiledKey();
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    ASSERT_TRUE(recorder->GetEngine(graph).ok());
  }
  EXPECT_NE(ReadFile(pin_path_).find("\"plans\": {"),
            std::string::npos);
  server_->Shutdown(absl::Seconds(1));
  server_.reset();
  Constraints loads;
  loads.loads_stored_plans = true;
  auto alone = Client::Create(Options(PinMode::kFollow)).value();
  EngineAnswer a = alone->GetEngine(graph, loads);
  ASSERT_EQ(a.source, Source::kPinned);
  EXPECT_EQ(a.config.plan.find("tunedb-plan/"), std::string::npos);  // opened
  EXPECT_NE(a.config.plan.find("\"simulated\":true"), std::string::npos);
  EXPECT_EQ(alone->Stats().daemon_calls, 0);
  // A caller that builds its plans gets none.
  EXPECT_TRUE(alone->GetEngine(graph).config.plan.empty());
}

TEST_F(ClientPinTest, AnEditedPinnedPlanIsRefusedAndTheConfigStands) {
  const ProblemKey graph = RuntimeCompiledKey();
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    ASSERT_TRUE(recorder->GetEngine(graph).ok());
  }
  std::string text = ReadFile(pin_path_);
  const size_t at = text.find("simulated");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "SIMULATED");
  WriteFile(pin_path_, text);
  server_->Shutdown(absl::Seconds(1));
  server_.reset();
  Constraints loads;
  loads.loads_stored_plans = true;
  auto alone = Client::Create(Options(PinMode::kFollow)).value();
  const EngineAnswer a = alone->GetEngine(graph, loads);
  ASSERT_EQ(a.source, Source::kPinned);
  EXPECT_TRUE(a.config.plan.empty());
  EXPECT_EQ(alone->Stats().plans_refused, 1);
}

TEST_F(ClientPinTest, APinWithoutPlansHasThemFromADaemonOncePerKey) {
  const ProblemKey graph = RuntimeCompiledKey();
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    ASSERT_TRUE(recorder->GetEngine(graph).ok());
  }
  // As pins recorded before they carried plans.
  absl::StatusOr<PinFile> pin = ReadPinFile(pin_path_);
  ASSERT_TRUE(pin.ok()) << pin.status();
  for (PinEntry& e : pin->entries) e.answer.plan.clear();
  WriteFile(pin_path_, FormatPin(*pin));
  Constraints loads;
  loads.loads_stored_plans = true;
  auto follower = Client::Create(Options(PinMode::kFollow)).value();
  EngineAnswer a = follower->GetEngine(graph, loads);
  ASSERT_EQ(a.source, Source::kPinned);
  EXPECT_NE(a.config.plan.find("\"simulated\":true"), std::string::npos);
  // One record lookup per key, whatever the constraints asked.
  Constraints det = loads;
  det.deterministic_only = true;
  follower->GetEngine(graph, det);
  EXPECT_EQ(follower->Stats().daemon_calls, 1);
  // A caller that builds its plans never makes the daemon be asked.
  auto building = Client::Create(Options(PinMode::kFollow)).value();
  EXPECT_TRUE(building->GetEngine(graph).config.plan.empty());
  EXPECT_EQ(building->Stats().daemon_calls, 0);
  // Without a daemon, the pinned answer stands without its plan.
  server_->Shutdown(absl::Seconds(1));
  server_.reset();
  auto alone = Client::Create(Options(PinMode::kFollow)).value();
  a = alone->GetEngine(graph, loads);
  EXPECT_EQ(a.source, Source::kPinned);
  EXPECT_TRUE(a.config.plan.empty());
}

TEST_F(ClientPinTest, ARecordingClientsRepeatedAnswerKeepsItsStoredPlan) {
  const ProblemKey graph = Key(8, ConvApi::kGraph);
  Tune(graph);
  auto recorder = Client::Create(Options(PinMode::kRecord)).value();
  const EngineAnswer first = recorder->GetEngine(graph);
  const EngineAnswer again = recorder->GetEngine(graph);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.config.algo, first.config.algo);
  EXPECT_NE(again.config.plan.find("\"simulated\":true"), std::string::npos);
}

TEST_F(ClientPinTest, ALegacyRunPinsTheAnswerItUsedNotTheDaemonsPrediction) {
  const ProblemKey tuned = Key(32), unseen = Key(48);
  Tune(tuned);
  ClientOptions o = Options(PinMode::kRecord);
  o.heuristic = nullptr;  // as the preload: a miss is the caller's own rule
  o.predict_misses = true;
  {
    auto recorder = Client::Create(o).value();
    // The preload launches a legacy answer only if measured: a prediction
    // is passed over for cuDNN's heuristic, so the run used "none".
    EXPECT_EQ(recorder->Get(unseen).source, Source::kNone);
    EXPECT_EQ(recorder->Get(unseen).source, Source::kNone);  // stands
    ASSERT_TRUE(recorder->WritePin().ok());
  }
  absl::StatusOr<PinFile> pin = ReadPinFile(pin_path_);
  ASSERT_TRUE(pin.ok()) << pin.status();
  ASSERT_EQ(pin->entries.size(), 1u);
  EXPECT_EQ(pin->entries[0].source, PinnedSource::kNone);
  auto follower = Client::Create(Options(PinMode::kFollow)).value();
  EXPECT_FALSE(follower->Get(unseen).ok());
}

TEST_F(ClientPinTest, ALegacyAnswerKnownDeterministicIsPinnedAsDeterministic) {
  const ProblemKey key = Key(8);
  Tune(key);
  Constraints det;
  det.deterministic_only = true;
  Answer fastest, deterministic;
  {
    auto recorder = Client::Create(Options(PinMode::kRecord)).value();
    fastest = recorder->Get(key);
    deterministic = recorder->Get(key, det);
    ASSERT_TRUE(fastest.tuned() && deterministic.tuned());
    ASSERT_TRUE(recorder->WritePin().ok());
  }
  absl::StatusOr<PinFile> pin = ReadPinFile(pin_path_);
  ASSERT_TRUE(pin.ok()) << pin.status();
  ASSERT_EQ(pin->entries.size(), 2u);
  for (const PinEntry& e : pin->entries) {
    if (e.slot.deterministic_only) {
      EXPECT_TRUE(e.answer.deterministic) << "a deterministic slot's answer";
    } else {
      // The fastest is deterministic exactly when it is the deterministic
      // slot's algorithm.
      EXPECT_EQ(e.answer.deterministic, fastest.algo == deterministic.algo);
    }
  }
}

TEST_F(ClientPinTest, APinThatCannotBeWrittenSaysSoAndNamesThePath) {
  ClientOptions o = Options(PinMode::kRecord);
  o.pin.path = dir_.File("no/such/folder/job.pin");
  auto recorder = Client::Create(o).value();
  recorder->Get(Key(8));
  absl::Status s = recorder->WritePin();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("no/such/folder"), std::string::npos) << s;
}

}  // namespace
}  // namespace tunedb
