// libtunedb_preload.so on cuDNN's graph (backend) API: preload_graph_probe,
// linked against the fake libcudnn.so.9, asks an engine-heuristics
// descriptor for its engine configs the way PyTorch's cudnn_frontend path
// does, with the preload in LD_PRELOAD, against a real daemon (in-process,
// simulated finder, over its Unix socket). The expected tuned lists come
// from the daemon's stored record under the constraints the preload
// applies; the pass-through lists are the fake's fixed heuristic lists
// (fake_cudnn_lists.h).
#include <cudnn.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/record_results.h"
#include "common/sealed_plan.h"
#include "fake_cudnn_lists.h"
#include "common/pin_file.h"
#include "nlohmann/json.hpp"
#include "preload_harness.h"
#include "server/service/server.h"
#include "temp_dir.h"
#include "test_values.h"
#include "tunedb/client.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::TempDir;

// One config as the probe prints it: engine global index and knob text.
using Config = std::pair<int64_t, std::string>;

struct ProbeRun : preload_testing::SpawnResult {
  std::vector<Config> configs() const {
    std::vector<Config> c;
    if (!out.is_object()) return c;
    for (const auto& e : out["configs"]) {
      c.emplace_back(e["engine"].get<int64_t>(), e["knobs"].get<std::string>());
    }
    return c;
  }
  int real(const char* counter) const {
    return out.is_object() ? out["real_calls"][counter].get<int>() : -1;
  }
};

// "3=1,9=4": the knobs sorted by type, as the probe prints them.
std::string SortedKnobs(std::vector<Knob> knobs) {
  std::sort(knobs.begin(), knobs.end(),
            [](const Knob& a, const Knob& b) { return a.type < b.type; });
  return KnobsText(knobs);
}

Config ConfigOf(const AlgoResult& r) { return {r.algo, SortedKnobs(r.knobs)}; }

std::vector<Config> ConfigsOf(const std::vector<AlgoResult>& results) {
  std::vector<Config> out;
  for (const AlgoResult& r : results) out.push_back(ConfigOf(r));
  return out;
}

// The fake's heuristic list for `mode` as the probe prints it (no knobs).
std::vector<Config> FakeList(int mode) {
  const fake_cudnn::EngineList list = fake_cudnn::HeuristicEngines(mode);
  std::vector<Config> out;
  for (int i = 0; i < list.size; ++i) out.emplace_back(list.engines[i], "");
  return out;
}

constexpr uint32_t kTensorCore = NoteBit(CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
constexpr uint32_t kDownConvert =
    NoteBit(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS);
constexpr uint32_t kNondeterministic =
    NoteBit(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC);

// An OK engine config: engine `engine` with knob {3, knob}, `ms` per launch,
// `notes` (NONDETERMINISTIC and TENSOR_CORE decide its determinism and math
// type), `workspace` bytes.
AlgoResult EngineConfig(int engine, int64_t knob, double ms, uint32_t notes,
                        int64_t workspace) {
  AlgoResult r = testing_util::OkResult(engine, workspace);
  r.launch = {ms, 0.001, 5};
  r.gpu = {ms, 0.001, 5};
  r.knobs = {Knob{3, knob}};
  r.numerical_notes = notes;
  r.deterministic = (notes & kNondeterministic) == 0;
  r.math_type =
      (notes & kTensorCore) != 0 ? MathType::kTensorOp : MathType::kDefault;
  return r;
}

using preload_testing::kShape;

class PreloadGraphTest : public preload_testing::PreloadDaemonTest {
 protected:
  // `probe` (preload_graph_probe) with kShape then `args`; its environment
  // is this process's plus the preload's settings,
  // unless `preload` is false, and `env` after those.
  ProbeRun Probe(const std::vector<std::string>& args,
                 const std::vector<std::string>& env = {}, bool preload = true,
                 const char* probe = GRAPH_PROBE_PATH) {
    std::vector<std::string> all;
    if (preload) {
      all = {std::string("LD_PRELOAD=") + PRELOAD_PATH,
             "TUNEDB_ADDRESS=" + server_->address(),
             "TUNEDB_DEVICE_KEY=" + device_.ToText(),
             "TUNEDB_PRELOAD_LOG=calls",
             // tunedb's distinct configs only; the repetition of the choice
             // for PyTorch's benchmark limit has its own test.
             "TUNEDB_PRELOAD_GRAPH_CONFIGS=1",
             // A loaded test machine must not turn a first connection into
             // "daemon down"; a missing socket still fails at once.
             "TUNEDB_PRELOAD_LOOKUP_MS=10000"};
    }
    for (const std::string& e : env) {
      std::string value = e;
      const size_t at = value.find("{dir}");
      if (at != std::string::npos) value.replace(at, 5, dir_.path());
      all.push_back(value);
    }
    std::vector<std::string> argv = {probe};
    argv.insert(argv.end(), kShape.begin(), kShape.end());
    argv.insert(argv.end(), args.begin(), args.end());
    ProbeRun run;
    static_cast<preload_testing::SpawnResult&>(run) =
        preload_testing::Spawn(dir_, argv, all);
    EXPECT_TRUE(run.out.is_object()) << "probe printed no JSON; stderr:\n"
                                     << run.err;
    return run;
  }

  // The probe's graph key for `op`: f32, NCHW, alignment 16.
  ProblemKey Key(ConvOp op = ConvOp::kForward) const {
    ProblemKey key = ProbeKey(op);
    key.problem.api = ConvApi::kGraph;
    key.problem.alignment = 16;
    return key;
  }

  // Has the daemon search `key` and store it (waits for it).
  void Tune(const ProblemKey& key) {
    const EngineAnswer a = DaemonClient(/*tune=*/true)->GetEngine(key);
    ASSERT_TRUE(a.ok()) << key.ToText();
    ASSERT_GE(a.config.algo, 100) << "not a simulated graph config";
  }

  // The list the preload answers for stored `key`, as the daemon's client
  // answers each constraint: the fastest config, the fastest without
  // DOWN_CONVERT_INPUTS, then, fastest first, the fastest without it that is
  // deterministic; for fp32 without tensor cores (PyTorch's TF32 off); both;
  // and both with no workspace, each (engine and knobs) once.
  // With `choices_only`, only the fastest and the fastest that does not
  // down-convert.
  std::vector<AlgoResult> Expected(const ProblemKey& key,
                                   bool choices_only = false) {
    auto client = DaemonClient(/*tune=*/false);
    const bool fp32 = key.problem.input_type == DataType::kFloat;
    Constraints no_down_convert;
    no_down_convert.excluded_numerical_notes = kDownConvert;
    Constraints deterministic = no_down_convert;
    deterministic.deterministic_only = true;
    deterministic.excluded_numerical_notes |= kNondeterministic;
    Constraints no_tf32 = no_down_convert;
    no_tf32.excluded_numerical_notes |= kTensorCore;
    Constraints safe = deterministic;
    if (fp32) safe.excluded_numerical_notes |= kTensorCore;
    Constraints safe_no_workspace = safe;
    safe_no_workspace.max_workspace_bytes = 0;
    std::vector<AlgoResult> out;
    std::vector<Constraints> asks = {Constraints{}, no_down_convert};
    if (!choices_only) {
      asks.push_back(deterministic);
      if (fp32) asks.push_back(no_tf32);
      asks.insert(asks.end(), {safe, safe_no_workspace});
    }
    size_t choices = 0;
    for (size_t i = 0; i < asks.size(); ++i) {
      const EngineAnswer a = client->GetEngine(key, asks[i]);
      if (!a.ok()) continue;
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](const AlgoResult& r) {
            return r.algo == a.config.algo && r.knobs == a.config.knobs;
          });
      if (seen) continue;
      out.push_back(a.config);
      if (i < 2) choices = out.size();
    }
    std::stable_sort(out.begin() + choices, out.end(),
                     [](const AlgoResult& a, const AlgoResult& b) {
                       return a.launch.median_ms < b.launch.median_ms;
                     });
    EXPECT_FALSE(out.empty()) << "nothing stored for " << key.ToText();
    return out;
  }

  // Stores a record of `key` ranking `results` (fastest first).
  void Put(const ProblemKey& key, std::vector<AlgoResult> results) {
    Record record = testing_util::GraphTestRecord(1);
    record.key = key;
    record.results = std::move(results);
    SortResults(record.results);
    record.timing_version = TimingVersionOf(record.results);
    ASSERT_TRUE(server_->core().store().Put(record).ok());
  }
};

TEST_F(PreloadGraphTest, WithoutThePreloadTheProbeSeesTheFakeHeuristicList) {
  for (const auto& [mode, value] : std::vector<std::pair<std::string, int>>{
           {"instant", CUDNN_HEUR_MODE_INSTANT},
           {"a", CUDNN_HEUR_MODE_A},
           {"b", CUDNN_HEUR_MODE_B},
           {"fallback", CUDNN_HEUR_MODE_FALLBACK}}) {
    SCOPED_TRACE(mode);
    ProbeRun run = Probe({"--mode", mode}, {}, /*preload=*/false);
    EXPECT_EQ(run.out["status"], 0);
    EXPECT_EQ(run.out["queried"], FakeList(value).size());
    EXPECT_EQ(run.configs(), FakeList(value));
    for (const auto& c : run.out["configs"]) EXPECT_EQ(c["same_graph"], true);
    EXPECT_EQ(run.real("backend_heur_count"), 1);
    EXPECT_EQ(run.real("backend_heur_results"), 1);
    EXPECT_EQ(run.out["live_descriptors"], 0);
    EXPECT_THAT(run.err, Not(HasSubstr("tunedb preload")));
  }
}

TEST_F(PreloadGraphTest, TheFakeBackendAnswersAsTheRealCudnnDoesOnTheHost) {
  // Without a GPU the real cuDNN answers its host-only checks (tensors,
  // operations); each of those must be the fake's answer too.
  ProbeRun fake = Probe({"--fidelity"}, {}, /*preload=*/false);
  ProbeRun real =
      Probe({"--fidelity"}, {}, /*preload=*/false, REAL_GRAPH_PROBE_PATH);
  ASSERT_TRUE(real.out.contains("fidelity")) << real.err;
  const nlohmann::json& r = real.out["fidelity"];
  ASSERT_GE(r.size(), 8u) << r;
  for (const auto& [check, value] : r.items()) {
    EXPECT_EQ(fake.out["fidelity"][check], value) << check;
  }
}

TEST_F(PreloadGraphTest, AGraphMissPassesThroughAndTheDaemonLearnsItsGraphKey) {
  const ProblemKey key = Key();
  ProbeRun run = Probe({}, {"TUNEDB_PRELOAD_EXIT_WAIT_S=30"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out["status"], 0);
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
  EXPECT_EQ(run.real("backend_heur_count"), 1);
  EXPECT_EQ(run.real("backend_heur_results"), 1);
  EXPECT_THAT(run.err,
              HasSubstr("tunedb preload: graph fwd miss " + key.ToText()));
  // The count query is not a call of its own.
  EXPECT_THAT(run.err, HasSubstr("1 calls: 0 hits, 1 misses"));
  // ... and the daemon was asked to tune that graph key: stored now, and
  // the next process hits.
  std::optional<Record> stored = Stored(key);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->key.problem.api, ConvApi::kGraph);
  ProbeRun next = Probe({});
  EXPECT_EQ(next.real("backend_heur_results"), 0);
  ASSERT_FALSE(next.configs().empty());
  EXPECT_EQ(next.configs()[0], ConfigOf(Expected(key)[0]));
}

TEST_F(PreloadGraphTest,
       AGraphHitPutsTheTunedEngineConfigFirstWithoutAskingCudnn) {
  const ProblemKey key = Key();
  Tune(key);
  const std::vector<AlgoResult> expected = Expected(key);
  ASSERT_GE(expected.size(), 2u);
  // The simulated engines (100 + algo) are none of the fake heuristic's, so
  // this list can only come from tunedb.
  for (const std::string mode : {"instant", "a", "b"}) {
    SCOPED_TRACE(mode);
    ProbeRun run = Probe({"--mode", mode});
    ASSERT_EQ(run.out["status"], 0) << run.err;
    EXPECT_EQ(run.out["queried"], expected.size());
    EXPECT_EQ(run.out["count"], expected.size());
    EXPECT_EQ(run.configs(), ConfigsOf(expected));
    // Finalized on (a copy of) the caller's own graph.
    for (const auto& c : run.out["configs"]) EXPECT_EQ(c["same_graph"], true);
    EXPECT_EQ(run.real("backend_heur_count"), 0);
    EXPECT_EQ(run.real("backend_heur_results"), 0);
    EXPECT_THAT(run.err, HasSubstr("tunedb preload: graph fwd hit engine=" +
                                   std::to_string(expected[0].algo) + " " +
                                   key.ToText()));
    EXPECT_THAT(run.err, HasSubstr("1 calls: 1 hits, 0 misses"));
  }
}

TEST_F(PreloadGraphTest, AKeyNeverTunedIsAnsweredFromItsNearestShapeUnlessPredictIsOff) {
  // Batch 64 of the probe's convolution is tuned; the probe's batch 32 is
  // not, and stays so: the misses go to a file, not to a search.
  ProblemKey neighbour = Key();
  neighbour.problem.n = 64;
  Tune(neighbour);
  const std::vector<AlgoResult> expected = Expected(neighbour);
  ASSERT_FALSE(expected.empty());
  const std::string misses_file = dir_.File("m");
  const std::string misses = "TUNEDB_PRELOAD_MISSES_FILE=" + misses_file;
  // Off: a miss, passed through (PyTorch benchmarks it).
  ProbeRun off = Probe({}, {misses, "TUNEDB_PRELOAD_PREDICT=off"});
  ASSERT_EQ(off.out["status"], 0) << off.err;
  EXPECT_THAT(off.err, HasSubstr("0 hits, 1 misses"));
  ASSERT_EQ(unlink(misses_file.c_str()), 0);
  // On (the default): the neighbour's choice leads, finalized on the
  // caller's graph.
  ProbeRun on = Probe({}, {misses});
  ASSERT_EQ(on.out["status"], 0) << on.err;
  ASSERT_FALSE(on.configs().empty());
  EXPECT_EQ(on.configs()[0], ConfigsOf(expected)[0]);
  EXPECT_THAT(on.err, HasSubstr("1 calls: 1 hits"));
  // Still to be tuned: noted for the search after the run, once.
  EXPECT_EQ(preload_testing::ReadFile(misses_file), Key().ToText() + "\n");
  // It was a prediction: the key itself is still not stored.
  EXPECT_EQ(DaemonClient(/*tune=*/false)->GetEngine(Key()).source,
            Source::kNone);
}

// A record in which every config needs workspace: no universal config.
std::vector<AlgoResult> RankingWithoutUniversal() {
  return {EngineConfig(110, 0, 0.1, kTensorCore, 100),
          EngineConfig(111, 1, 0.2, kDownConvert, 100),
          EngineConfig(112, 2, 0.3, 0, 200),
          EngineConfig(113, 3, 0.4, kNondeterministic, 0)};
}

// A record whose deterministic config without notes needs no workspace.
std::vector<AlgoResult> RankingWithUniversal() {
  return {EngineConfig(110, 0, 0.1, kTensorCore, 100),
          EngineConfig(112, 2, 0.3, 0, 0)};
}

TEST_F(PreloadGraphTest,
       WithoutAUniversalConfigTheChoiceIsRepeatedToTheConfiguredNumber) {
  const ProblemKey key = Key();
  Put(key, RankingWithoutUniversal());
  const std::vector<AlgoResult> expected = Expected(key);
  ASSERT_EQ(ConfigsOf(expected),
            (std::vector<Config>{{110, "3=0"}, {112, "3=2"}}));
  for (int configs : {10, 3}) {
    SCOPED_TRACE(configs);
    std::vector<std::string> env;
    if (configs != 10) {  // 10 is the default
      env.push_back("TUNEDB_PRELOAD_GRAPH_CONFIGS=" + std::to_string(configs));
    } else {
      // The fixture's setting is overridden by an empty one: the default.
      env.push_back("TUNEDB_PRELOAD_GRAPH_CONFIGS=");
    }
    ProbeRun run = Probe({"--mode", "instant", "--then-fallback"}, env);
    ASSERT_EQ(run.out["status"], 0) << run.err;
    // The choice repeated to `configs`, then the deterministic alternative.
    std::vector<Config> list(configs, {110, "3=0"});
    list.push_back({112, "3=2"});
    EXPECT_EQ(run.out["count"], list.size());
    EXPECT_EQ(run.configs(), list);
    // The same graph's fallback list is cuDNN's: after the limit.
    EXPECT_EQ(run.out["fallback"]["configs"].size(),
              FakeList(CUDNN_HEUR_MODE_FALLBACK).size());
    EXPECT_EQ(run.real("backend_heur_count"), 1);
    EXPECT_THAT(run.err, HasSubstr("1 calls: 1 hits, 0 misses (tune asked), "
                                   "0 passed through"));
  }
}

TEST_F(PreloadGraphTest,
       WithAUniversalConfigTheSameGraphsFallbackListIsAnsweredEmpty) {
  const ProblemKey key = Key();
  Put(key, RankingWithUniversal());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--then-fallback"},
        std::vector<std::string>{"--then-fallback", "--requested", "2"}}) {
    SCOPED_TRACE(args.size());
    // The default GRAPH_CONFIGS of 10: nothing is repeated.
    ProbeRun run = Probe(args, {"TUNEDB_PRELOAD_GRAPH_CONFIGS="});
    ASSERT_EQ(run.out["status"], 0) << run.err;
    EXPECT_EQ(run.configs(), (std::vector<Config>{{110, "3=0"}, {112, "3=2"}}));
    EXPECT_EQ(run.configs(), ConfigsOf(Expected(key)));
    ASSERT_TRUE(run.out.contains("fallback")) << run.err;
    EXPECT_EQ(run.out["fallback"]["status"], 0);
    EXPECT_EQ(run.out["fallback"]["count"], 0);
    EXPECT_TRUE(run.out["fallback"]["configs"].empty());
    // cuDNN was asked for neither list.
    EXPECT_EQ(run.real("backend_heur_count"), 0);
    EXPECT_EQ(run.real("backend_heur_results"), 0);
    EXPECT_THAT(run.err, HasSubstr("tunedb preload: graph fallback_empty"));
    // The fallback list's count and fill queries count once.
    EXPECT_THAT(run.err,
                HasSubstr("2 calls: 1 hits, 0 misses (tune asked), 1 fallback "
                          "lists answered empty, 0 passed through"));
  }
  // A fallback query on a graph of its own (PyTorch's retry after every
  // config of a heuristics list failed) is cuDNN's.
  ProbeRun run = Probe({"--mode", "fallback"});
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_FALLBACK));
  EXPECT_EQ(run.real("backend_heur_results"), 1);
}

// What the probe's --build-plans printed: each plan's engine and status.
std::vector<std::pair<int64_t, int>> PlansOf(const ProbeRun& run) {
  std::vector<std::pair<int64_t, int>> out;
  if (!run.out.is_object() || !run.out.contains("plans")) return out;
  for (const auto& p : run.out["plans"]) {
    out.emplace_back(p["engine"].get<int64_t>(), p["status"].get<int>());
  }
  return out;
}

constexpr int kBuilt = CUDNN_STATUS_SUCCESS;
constexpr int kNotBuilt = CUDNN_STATUS_NOT_SUPPORTED;

TEST_F(PreloadGraphTest, OnceOnePlanOfAnAnswerBuiltItsOtherConfigsDoNotBuild) {
  Put(Key(), RankingWithUniversal());
  ProbeRun run = Probe({"--then-fallback", "--build-plans"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  // The choice builds; the universal alternative fails without cuDNN.
  EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                              {110, kBuilt}, {112, kNotBuilt}}));
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_THAT(run.err, HasSubstr("tunedb preload: graph plan_not_built"));
  EXPECT_THAT(run.err, HasSubstr("; 1 alternative plans not built"));
}

TEST_F(PreloadGraphTest, WhenTheCallersFilterDropsTheChoiceItsFirstKeptBuilds) {
  Put(Key(), RankingWithUniversal());
  // As PyTorch with TF32 off drops the tensor-core choice.
  ProbeRun run =
      Probe({"--then-fallback", "--build-plans", "--drop-engine", "110"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(PlansOf(run),
            (std::vector<std::pair<int64_t, int>>{{112, kBuilt}}));
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_THAT(run.err, Not(HasSubstr("plans not built")));
}

TEST_F(PreloadGraphTest,
       WithoutRoomForTwiceTheBuiltPlansWorkspaceEveryPlanBuilds) {
  Put(Key(), RankingWithUniversal());
  // 1 GiB plans: 2 GiB + 256 MiB must be free to leave one unbuilt.
  const std::string gib = std::to_string(int64_t{1} << 30);
  for (const char* free : {"2147483648", "fail"}) {
    SCOPED_TRACE(free);
    ProbeRun run = Probe({"--then-fallback", "--build-plans"},
                         {"FAKE_CUDNN_PLAN_WORKSPACE=" + gib,
                          std::string("FAKE_CUDA_FREE_BYTES=") + free});
    ASSERT_EQ(run.out["status"], 0) << run.err;
    EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                                {110, kBuilt}, {112, kBuilt}}));
    EXPECT_EQ(run.real("backend_plan_finalize"), 2);
  }
  // With room enough, the alternative is left unbuilt again.
  ProbeRun run = Probe(
      {"--then-fallback", "--build-plans"},
      {"FAKE_CUDNN_PLAN_WORKSPACE=" + gib, "FAKE_CUDA_FREE_BYTES=2415919104"});
  EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                              {110, kBuilt}, {112, kNotBuilt}}));
}

TEST_F(PreloadGraphTest, EveryPlanBuildsWhenTheAnswerIsNotLeadOnly) {
  // Off by the option, off with cudnn_frontend's errata file (which may drop
  // a plan after it built), and without a universal config (the fallback
  // list is then cuDNN's).
  Put(Key(), RankingWithUniversal());
  for (const char* env : {"TUNEDB_PRELOAD_LEAD_PLAN_ONLY=off",
                          "CUDNN_ERRATA_JSON_FILE=/nonexistent.json"}) {
    SCOPED_TRACE(env);
    ProbeRun run = Probe({"--then-fallback", "--build-plans"}, {env});
    ASSERT_EQ(run.out["status"], 0) << run.err;
    EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                                {110, kBuilt}, {112, kBuilt}}));
  }
  Put(Key(ConvOp::kBackwardData), RankingWithoutUniversal());
  ProbeRun run =
      Probe({"--op", "bwd_data", "--then-fallback", "--build-plans"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  const int64_t plans = static_cast<int64_t>(PlansOf(run).size());
  EXPECT_EQ(plans, 2 + static_cast<int64_t>(
                           FakeList(CUDNN_HEUR_MODE_FALLBACK).size()));
  EXPECT_EQ(run.real("backend_plan_finalize"), plans);
  for (const auto& [engine, status] : PlansOf(run)) {
    EXPECT_EQ(status, kBuilt) << engine;
  }
  // And on a miss (nothing stored for bwd_filter), cuDNN's lists build.
  ProbeRun miss =
      Probe({"--op", "bwd_filter", "--then-fallback", "--build-plans"});
  ASSERT_EQ(miss.out["status"], 0) << miss.err;
  EXPECT_EQ(miss.real("backend_plan_finalize"),
            static_cast<int64_t>(PlansOf(miss).size()));
  EXPECT_GT(PlansOf(miss).size(), 1u);
  for (const auto& [engine, status] : PlansOf(miss)) {
    EXPECT_EQ(status, kBuilt) << engine;
  }
}

// A serialized plan as cuDNN 9.19 writes one (schema 4), for tunedb's
// tensor ids 1, 2, 3 (x, w, y), trimmed to what the fake reads and what
// renumbering touches.
// A plan of the probe's convolution (Key(): NCHW, x 32x64x56x56, w
// 64x64x3x3, y 32x64x28x28, packed), `x_strides` those of its x.
std::string SerializedPlan(
    int cudnn_version = 91900,
    const std::string& x_strides = "[200704,3136,56,1]") {
  return absl::StrCat(
      R"({"cudnnVersion":)", cudnn_version,
      R"(,"schemaVersion":4,"operationGraph":{"finalizeMode":"CONV_FORWARD",)"
      R"("tensors":[{"name":"1","dim":[32,64,56,56],"stride":)", x_strides,
      R"(},{"name":"2","dim":[64,64,3,3],"stride":[576,9,3,1]},)"
      R"({"name":"3","dim":[32,64,28,28],"stride":[50176,784,28,1]}],)"
      R"("nodes":[{"X":"1","W":"2","Y":"3"}]},"engine":{"engineId":110,)"
      R"("payload":{"kernels":[{"kernelParams":{"offsets":[{"value":0},)"
      R"({"value":320,"uid":3},{"value":384,"uid":1}]}}]}}})");
}

// Loading stored plans is on by default (PreloadOptions::stored_plans); the
// tests that load say so all the same.
constexpr char kStoredPlansOn[] = "TUNEDB_PRELOAD_STORED_PLANS=on";

constexpr uint32_t kRuntimeCompiled =
    NoteBit(CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION);

// RankingWithUniversal whose choice compiles at run time, with its plan
// stored, sealed for `key`.
std::vector<AlgoResult> RankingWithStoredPlan(const ProblemKey& key,
                                              const std::string& plan) {
  std::vector<AlgoResult> ranking = RankingWithUniversal();
  ranking[0].behavior_notes = kRuntimeCompiled;
  ranking[0].plan = SealPlan(key, ranking[0].algo, ranking[0].knobs, plan);
  return ranking;
}

TEST_F(PreloadGraphTest, AStoredPlanLoadsWithTheCallersTensorIdsInsteadOfBuilding) {
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--then-fallback", "--build-plans"}, {kStoredPlansOn});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                              {110, kBuilt}, {112, kNotBuilt}}));
  // Loaded twice (checked on a scratch descriptor, then the caller's),
  // compiled never, and renumbered for the probe's tensors. cuDNN's own
  // calls during each load went straight to it: they did not close the
  // lead-plan window (112 is still not built).
  EXPECT_EQ(run.real("backend_plan_load"), 2);
  EXPECT_EQ(run.real("backend_plan_load_inner"), 2);
  EXPECT_EQ(run.real("backend_plan_load_caller_ids"), 2);
  EXPECT_EQ(run.real("backend_plan_finalize"), 0);
  EXPECT_THAT(run.err, HasSubstr("tunedb preload: graph stored_plan_loaded"));
  EXPECT_THAT(run.err, HasSubstr("; 1 stored plans loaded"));
}

TEST_F(PreloadGraphTest, APlanCudnnRefusesNeverReachesTheCallerWhoBuildsIt) {
  // A plan of another cuDNN: the scratch load fails, the caller's own
  // descriptor gets its engine config and builds it as without tunedb.
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan(91400)));
  ProbeRun run = Probe({"--then-fallback", "--build-plans"}, {kStoredPlansOn});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                              {110, kBuilt}, {112, kNotBuilt}}));
  EXPECT_EQ(run.real("backend_plan_load_refused"), 1);
  EXPECT_EQ(run.real("backend_plan_load"), 0);
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_THAT(run.err, HasSubstr("; 0 stored plans loaded, 1 refused"));
}

TEST_F(PreloadGraphTest, WithoutTheScratchCheckAStoredPlanIsLoadedOnce) {
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--then-fallback", "--build-plans"},
                       {kStoredPlansOn, "TUNEDB_PRELOAD_PLAN_CHECK=off"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                              {110, kBuilt}, {112, kNotBuilt}}));
  EXPECT_EQ(run.real("backend_plan_load"), 1);  // the caller's only
  EXPECT_EQ(run.real("backend_plan_finalize"), 0);
  EXPECT_THAT(run.err, HasSubstr("; 1 stored plans loaded"));
}

TEST_F(PreloadGraphTest, WithoutTheScratchCheckARefusedPlanCostsTheCallerThatConfig) {
  // A plan of another cuDNN, refused on the caller's own descriptor: the
  // held engine config is set there and finalized, and the fake cuDNN, like
  // cuDNN 9.19 on the H200, refuses that too. The program loses the config (it
  // goes on to its next one).
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan(91400)));
  ProbeRun run = Probe({"--then-fallback", "--build-plans"},
                       {kStoredPlansOn, "TUNEDB_PRELOAD_PLAN_CHECK=off"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  const auto plans = PlansOf(run);
  ASSERT_FALSE(plans.empty());
  EXPECT_EQ(plans[0].first, 110);
  EXPECT_NE(plans[0].second, kBuilt);
  EXPECT_EQ(run.real("backend_plan_load_refused"), 1);
  EXPECT_THAT(run.err, HasSubstr("; 0 stored plans loaded, 1 refused"));
  EXPECT_THAT(run.err, HasSubstr("on the caller's plan"));
}

// Whether each plan of `engine` the probe made built, in order.
std::vector<bool> BuiltOf(const ProbeRun& run, int64_t engine) {
  std::vector<bool> built;
  for (const auto& [e, status] : PlansOf(run)) {
    if (e == engine) built.push_back(status == kBuilt);
  }
  return built;
}

TEST_F(PreloadGraphTest, OnceAStoredPlanHasLoadedLaterOnesSkipTheScratchCheck) {
  // Three rounds of the same convolution: the first load is checked on a
  // scratch descriptor, the two after it load on the caller's only.
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--build-plans", "--finalize-between", "--rounds", "3"},
                       {kStoredPlansOn});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(BuiltOf(run, 110), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(run.real("backend_plan_load"), 4);
  EXPECT_EQ(run.real("backend_plan_load_refused"), 0);
  EXPECT_THAT(run.err, HasSubstr("; 3 stored plans loaded"));
}

TEST_F(PreloadGraphTest, WithThePlanCheckAlwaysEveryStoredPlanIsLoadedTwice) {
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--build-plans", "--finalize-between", "--rounds", "3"},
                       {kStoredPlansOn, "TUNEDB_PRELOAD_PLAN_CHECK=always"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(BuiltOf(run, 110), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(run.real("backend_plan_load"), 6);
}

TEST_F(PreloadGraphTest, APlanRefusedOnTheCallersDescriptorTurnsTheScratchCheckBackOn) {
  // The fake takes two loads, then refuses every plan. Round 1: checked and
  // loaded. Round 2: not checked, refused on the caller's descriptor, which
  // stays refused (the config is lost, as with cuDNN). Round 3: checked
  // again, refused there, so the caller builds its config.
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--build-plans", "--finalize-between", "--rounds", "3"},
                       {kStoredPlansOn, "FAKE_CUDNN_PLAN_LOADS=2"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(BuiltOf(run, 110), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(run.real("backend_plan_load"), 2);
  EXPECT_EQ(run.real("backend_plan_load_refused"), 2);
  EXPECT_THAT(run.err, HasSubstr("; 1 stored plans loaded, 2 refused"));
}

TEST_F(PreloadGraphTest, ADamagedOrForeignStoredPlanNeverReachesCudnn) {
  // Each case on a key of its own (batch 33, 34, ...), stored once.
  enum Case { kCutShort, kEdited, kAnotherKeys, kNotSealed };
  for (Case c : {kCutShort, kEdited, kAnotherKeys, kNotSealed}) {
    SCOPED_TRACE(static_cast<int>(c));
    ProblemKey key = Key();
    key.problem.n = 33 + static_cast<int>(c);
    ProblemKey other = key;
    other.problem.k += 1;
    const std::string sealed =
        SealPlan(key, 110, {Knob{3, 0}}, SerializedPlan());
    std::vector<AlgoResult> ranking = RankingWithUniversal();
    ranking[0].behavior_notes = kRuntimeCompiled;
    switch (c) {
      case kCutShort:
        ranking[0].plan = sealed.substr(0, sealed.size() - 10);
        break;
      case kEdited:
        ranking[0].plan =
            absl::StrReplaceAll(sealed, {{"\"uid\":3", "\"uid\":4"}});
        break;
      case kAnotherKeys:
        ranking[0].plan = SealPlan(other, 110, {Knob{3, 0}}, SerializedPlan());
        break;
      case kNotSealed:
        ranking[0].plan = SerializedPlan();
        break;
    }
    Put(key, ranking);
    ProbeRun run = Probe({"--then-fallback", "--build-plans", "--n",
                          std::to_string(key.problem.n)},
                         {kStoredPlansOn});
    ASSERT_EQ(run.out["status"], 0) << run.err;
    EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                                {110, kBuilt}, {112, kNotBuilt}}));
    EXPECT_EQ(run.real("backend_plan_load") +
                  run.real("backend_plan_load_refused"),
              0);
    EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  }
}

TEST_F(PreloadGraphTest, APlanOfOtherTensorIdsIsNotUsedAndIsCounted) {
  // A plan naming a tensor its graph does not hold cannot be renumbered.
  std::string plan = SerializedPlan();
  plan = absl::StrReplaceAll(plan, {{"\"uid\":3", "\"uid\":9"}});
  Put(Key(), RankingWithStoredPlan(Key(), plan));
  ProbeRun run = Probe({"--then-fallback", "--build-plans"}, {kStoredPlansOn});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.real("backend_plan_load"), 0);
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_THAT(run.err, HasSubstr("; 0 stored plans loaded, 1 refused"));
}

TEST_F(PreloadGraphTest, APlanForOtherStridesIsNotUsedAndIsCounted) {
  // Made for x as a channel slice of a 128-channel tensor: on the probe's
  // packed x it would read the wrong elements.
  Put(Key(), RankingWithStoredPlan(
                 Key(), SerializedPlan(91900, "[401408,3136,56,1]")));
  ProbeRun run = Probe({"--then-fallback", "--build-plans"},
                       {kStoredPlansOn, "TUNEDB_PRELOAD_LOG=calls"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.real("backend_plan_load"), 0);
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_THAT(run.err, HasSubstr("strides [401408,3136,56,1]"));
  EXPECT_THAT(run.err, HasSubstr("; 0 stored plans loaded, 1 refused"));
}

TEST_F(PreloadGraphTest, AStoredPlanWhoseKernelsTakeTmaDescriptorsIsBuiltNotLoaded) {
  std::string plan = SerializedPlan();
  plan.replace(plan.find(R"("uid":3)"), 7, R"("uid":3,"update_as":"tma_desc")");
  Put(Key(), RankingWithStoredPlan(Key(), plan));
  ProbeRun run = Probe({"--then-fallback", "--build-plans"},
                       {kStoredPlansOn, "TUNEDB_PRELOAD_LOG=calls"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                              {110, kBuilt}, {112, kNotBuilt}}));
  EXPECT_EQ(run.real("backend_plan_load"), 0);
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_THAT(run.err, HasSubstr("takes a TMA descriptor"));
}

TEST_F(PreloadGraphTest, APrecompiledEnginesStoredPlanIsBuiltNotLoaded) {
  std::vector<AlgoResult> ranking =
      RankingWithStoredPlan(Key(), SerializedPlan());
  ranking[0].behavior_notes = 0;
  Put(Key(), ranking);
  ProbeRun run = Probe({"--then-fallback", "--build-plans"}, {kStoredPlansOn});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.real("backend_plan_load"), 0);
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_THAT(run.err, Not(HasSubstr("stored plans")));
}

TEST_F(PreloadGraphTest, StoredPlansLoadByDefaultAndTurnedOffEveryPlanIsBuilt) {
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun off = Probe({"--then-fallback", "--build-plans"},
                       {"TUNEDB_PRELOAD_STORED_PLANS=off"});
  ASSERT_EQ(off.out["status"], 0) << off.err;
  EXPECT_EQ(off.real("backend_plan_load"), 0);
  EXPECT_EQ(off.real("backend_plan_finalize"), 1);
  EXPECT_THAT(off.err, Not(HasSubstr("stored plans")));
  for (const char* env : {"TUNEDB_PRELOAD_LOG=summary", kStoredPlansOn}) {
    SCOPED_TRACE(env);
    ProbeRun on = Probe({"--then-fallback", "--build-plans"}, {env});
    ASSERT_EQ(on.out["status"], 0) << on.err;
    EXPECT_EQ(on.real("backend_plan_load"), 2);  // scratch, then the caller's
    EXPECT_EQ(on.real("backend_plan_finalize"), 0);
  }
}

// The statuses of each plan's two benchmark runs (--run-plans).
std::vector<std::pair<int64_t, std::vector<int>>> RunsOf(const ProbeRun& run) {
  std::vector<std::pair<int64_t, std::vector<int>>> out;
  if (!run.out.is_object() || !run.out.contains("runs")) return out;
  for (const auto& r : run.out["runs"]) {
    out.emplace_back(r["engine"].get<int64_t>(),
                     r["status"].get<std::vector<int>>());
  }
  return out;
}

TEST_F(PreloadGraphTest, ALoadedPlanThatRunsRunsAsLoadedAndIsNeverBuilt) {
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--then-fallback", "--build-plans", "--run-plans"},
                       {kStoredPlansOn});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(RunsOf(run), (std::vector<std::pair<int64_t, std::vector<int>>>{
                             {110, {0, 0}}}));
  EXPECT_EQ(run.out["ran"], 110);
  EXPECT_EQ(run.real("backend_execute"), 3);
  EXPECT_EQ(run.real("backend_plan_finalize"), 0);
  EXPECT_THAT(run.err, Not(HasSubstr("failed to run")));
}

TEST_F(PreloadGraphTest, ALoadedPlanThatDoesNotRunIsReplacedByItsConfigBuiltByCudnn) {
  // PyTorch's benchmark: the alternatives were left unbuilt, so without the
  // replacement the program would have no plan that runs.
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--then-fallback", "--build-plans", "--run-plans"},
                       {kStoredPlansOn, "FAKE_CUDNN_LOADED_PLANS_FAIL=1",
                        "TUNEDB_PRELOAD_LOG=calls"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                              {110, kBuilt}, {112, kNotBuilt}}));
  EXPECT_EQ(RunsOf(run), (std::vector<std::pair<int64_t, std::vector<int>>>{
                             {110, {0, 0}}}));
  EXPECT_EQ(run.out["ran"], 110);
  // The loaded plan failed once; its config was built once, and ran for
  // that execute and the two after it.
  EXPECT_EQ(run.real("backend_execute_failed"), 1);
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_EQ(run.real("backend_execute"), 3);
  // Destroyed with the program's plan: what is left is the hit's graph copy
  // (AHitKeepsOnlyTheGraphCopyItsConfigsWereFinalizedOn).
  EXPECT_EQ(run.out["live_descriptors"], 1);
  EXPECT_THAT(run.err, HasSubstr("graph stored_plan_failed_to_run"));
  EXPECT_THAT(run.err, HasSubstr(
                           "1 stored plans loaded, 1 failed to run (built instead)"));
}

TEST_F(PreloadGraphTest, ACallerErrorOnALoadedPlanIsTheCallersAndBuildsNothing) {
  // BAD_PARAM says the call was wrong, not that the plan cannot run.
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--then-fallback", "--build-plans", "--run-plans"},
                       {kStoredPlansOn, "FAKE_CUDNN_LOADED_PLANS_FAIL=bad_param"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  const int bad = static_cast<int>(CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(RunsOf(run), (std::vector<std::pair<int64_t, std::vector<int>>>{
                             {110, {bad, bad}}}));
  EXPECT_EQ(run.real("backend_plan_finalize"), 0);
  EXPECT_THAT(run.err, Not(HasSubstr("failed to run")));
}

TEST_F(PreloadGraphTest, WhenItsConfigDoesNotRunEitherTheProgramGetsCudnnsError) {
  Put(Key(), RankingWithStoredPlan(Key(), SerializedPlan()));
  ProbeRun run = Probe({"--then-fallback", "--build-plans", "--run-plans"},
                       {kStoredPlansOn, "FAKE_CUDNN_LOADED_PLANS_FAIL=1",
                        "FAKE_CUDNN_BUILT_PLANS_FAIL=1"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  const int failed = static_cast<int>(CUDNN_STATUS_EXECUTION_FAILED);
  EXPECT_EQ(RunsOf(run), (std::vector<std::pair<int64_t, std::vector<int>>>{
                             {110, {failed, failed}}}));
  EXPECT_EQ(run.out["ran"], -1);
  // The loaded plan failed, then its config's build; the second execute
  // went to the build alone, which failed as it would without tunedb.
  EXPECT_EQ(run.real("backend_plan_finalize"), 1);
  EXPECT_EQ(run.real("backend_execute_failed"), 3);
  EXPECT_EQ(run.out["live_descriptors"], 1);
  EXPECT_THAT(run.err, HasSubstr("1 failed to run (built instead)"));
}

TEST_F(PreloadGraphTest, TheFillAfterACountQueryDoesNotCheckTheConfigsAgain) {
  const ProblemKey key = Key();
  Put(key, RankingWithUniversal());
  // The count query checks each config on a scratch descriptor (one engine
  // finalize each); the fill query right after it fills the caller's
  // descriptors only (one more each), not the scratch ones again.
  ProbeRun run = Probe({});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  ASSERT_EQ(run.configs().size(), 2u);
  EXPECT_EQ(run.real("backend_engine_finalize"), 2 * 2);
  // A fill query without a count query checks them itself.
  run = Probe({"--requested", "2"});
  ASSERT_EQ(run.configs().size(), 2u);
  EXPECT_EQ(run.real("backend_engine_finalize"), 2 * 2);
}

TEST_F(PreloadGraphTest, WithEmptyFallbackOffTheFallbackListIsAlwaysCudnns) {
  const ProblemKey key = Key();
  Put(key, RankingWithUniversal());
  ProbeRun run = Probe(
      {"--then-fallback"},
      {"TUNEDB_PRELOAD_GRAPH_CONFIGS=3", "TUNEDB_PRELOAD_EMPTY_FALLBACK=off"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  // As without a universal config: the choice repeated, then cuDNN's list.
  EXPECT_EQ(run.configs(),
            (std::vector<Config>{
                {110, "3=0"}, {110, "3=0"}, {110, "3=0"}, {112, "3=2"}}));
  EXPECT_EQ(run.out["fallback"]["configs"].size(),
            FakeList(CUDNN_HEUR_MODE_FALLBACK).size());
  EXPECT_EQ(run.real("backend_heur_count"), 1);
  EXPECT_THAT(run.err, Not(HasSubstr("fallback_empty")));
}

TEST_F(PreloadGraphTest, WithAMissesFileAGraphMissIsWrittenOnceNotTuned) {
  const std::string misses = dir_.File("misses");
  // The count query and the fill query both miss: one line.
  ProbeRun run = Probe({}, {"TUNEDB_PRELOAD_MISSES_FILE=" + misses});
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
  EXPECT_EQ(preload_testing::ReadFile(misses), Key().ToText() + "\n");
  EXPECT_FALSE(Stored(Key()).has_value());
  EXPECT_EQ(server_->core().Stats().searches, 0);
  // The exit line says so.
  EXPECT_THAT(run.err, HasSubstr("0 hits, 1 misses (noted, tuned after), "));
}

TEST_F(PreloadGraphTest, UnderAJobOrAPinOnlyTheFirstKeptConfigOfAGraphBuilds) {
  // Without a universal config the fallback list is cuDNN's: a plain run
  // builds (and would time) every config of both lists (above). Under a job
  // or a pin, answered or missed, every config a graph gives is one offer.
  Put(Key(ConvOp::kBackwardData), RankingWithoutUniversal());
  const std::string pin = dir_.File("empty.pin");
  PinFile empty;
  empty.device = device_;
  empty.made_by = "test";
  ASSERT_TRUE(MergePinFile(pin, empty).ok());
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{"TUNEDB_JOB=train-1"},
        std::vector<std::string>{"TUNEDB_PIN=" + pin,
                                 "TUNEDB_PIN_MODE=follow"}}) {
    SCOPED_TRACE(env[0]);
    for (const char* op : {"bwd_data", "bwd_filter"}) {  // tuned, missed
      SCOPED_TRACE(op);
      ProbeRun run =
          Probe({"--op", op, "--then-fallback", "--build-plans"}, env);
      ASSERT_EQ(run.out["status"], 0) << run.err;
      const auto plans = PlansOf(run);
      ASSERT_GT(plans.size(), 1u);
      EXPECT_EQ(plans[0].second, kBuilt);
      for (size_t i = 1; i < plans.size(); ++i) {
        EXPECT_EQ(plans[i].second, kNotBuilt) << plans[i].first;
      }
      EXPECT_EQ(run.real("backend_plan_finalize"), 1);
    }
  }
}

TEST_F(PreloadGraphTest, AFallbackListAfterAMissIsCudnns) {
  ProbeRun run = Probe({"--then-fallback"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
  std::vector<Config> fallback;
  for (const auto& e : run.out["fallback"]["configs"]) {
    fallback.emplace_back(e["engine"].get<int64_t>(),
                          e["knobs"].get<std::string>());
  }
  EXPECT_EQ(fallback, FakeList(CUDNN_HEUR_MODE_FALLBACK));
  EXPECT_THAT(run.err, HasSubstr("graph fwd miss"));
  EXPECT_THAT(run.err, Not(HasSubstr("fallback_empty")));
}

TEST_F(PreloadGraphTest, WithReportingTheCountersReachTheDaemonsStats) {
  const ProblemKey key = Key();
  Tune(key);
  ProbeRun quiet = Probe({"--mode", "instant"});
  ASSERT_EQ(quiet.out["status"], 0) << quiet.err;
  EXPECT_EQ(server_->core().Stats().reported.reports, 0);  // off by default

  ProbeRun run = Probe({"--mode", "instant"}, {"TUNEDB_PRELOAD_REPORT=1"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("1 hits, 0 misses"));
  EXPECT_THAT(run.err, HasSubstr("; reported to the daemon"));
  const ReportedCounters::Snapshot s = server_->core().Stats().reported;
  EXPECT_EQ(s.reports, 1);
  EXPECT_EQ(s.sums.at("preload.calls"), 1);
  EXPECT_EQ(s.sums.at("preload.hit"), 1);
  EXPECT_EQ(s.sums.count("preload.miss"), 0u);
}

TEST_F(PreloadGraphTest, AFixedRequestBelowTheOfferGetsTheDistinctConfigs) {
  const ProblemKey key = Key();
  Tune(key);
  const std::vector<AlgoResult> expected = Expected(key);
  ASSERT_GE(expected.size(), 3u);
  // The default offer holds ten; a caller that asks for three without a
  // count query gets three distinct configs, not three repeats.
  ProbeRun run = Probe({"--mode", "instant", "--requested", "3"},
                       {"TUNEDB_PRELOAD_GRAPH_CONFIGS="});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  const std::vector<Config> all = ConfigsOf(expected);
  EXPECT_EQ(run.configs(), std::vector<Config>(all.begin(), all.begin() + 3));
}

TEST_F(PreloadGraphTest, AGraphWhoseNodesAreDestroyedIsStillAnswered) {
  const ProblemKey key = Key(ConvOp::kBackwardFilter);
  Tune(key);
  // Tensors, convolution and operation destroyed once the graph is final,
  // and other tensors made (perhaps where they were), before the query.
  ProbeRun run = Probe({"--op", "bwd_filter", "--destroy-early"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.configs(), ConfigsOf(Expected(key)));
  EXPECT_EQ(run.real("backend_heur_results"), 0);
  for (const auto& c : run.out["configs"]) EXPECT_EQ(c["same_graph"], true);
}

TEST_F(PreloadGraphTest, TheTunedListHoldsTheSafeAlternativesOnce) {
  // Fastest: down-converting, tensor cores, nondeterministic. Then the
  // fastest without down-conversion (tensor cores), the fastest
  // deterministic one without tensor cores (workspace), and engine 112
  // again with other knobs and no workspace: four configs.
  const std::vector<AlgoResult> ranking = {
      EngineConfig(110, 0, 0.1, kDownConvert | kTensorCore | kNondeterministic,
                   100),
      EngineConfig(111, 1, 0.2, kTensorCore, 200),
      EngineConfig(112, 1, 0.3, 0, 300),
      EngineConfig(112, 2, 0.4, 0, 0),
      EngineConfig(114, 3, 0.5, kNondeterministic, 0),
  };
  ProblemKey fp32 = Key();
  Put(fp32, ranking);
  ProbeRun run = Probe({});
  EXPECT_EQ(run.configs(),
            (std::vector<Config>{
                {110, "3=0"}, {111, "3=1"}, {112, "3=1"}, {112, "3=2"}}));
  EXPECT_EQ(run.configs(), ConfigsOf(Expected(fp32)));

  // fp16: tensor cores are deterministic enough, so the fastest
  // deterministic config is 111, already given: three configs.
  ProblemKey fp16 = Key();
  fp16.problem.input_type = fp16.problem.output_type = DataType::kHalf;
  fp16.problem.allow_tf32 = false;
  Put(fp16, ranking);
  run = Probe({"--type", "f16"});
  EXPECT_EQ(run.configs(),
            (std::vector<Config>{{110, "3=0"}, {111, "3=1"}, {112, "3=2"}}));
  EXPECT_EQ(run.configs(), ConfigsOf(Expected(fp16)));

  // A fastest config that is safe in every way is the whole list.
  ProblemKey bf16 = Key();
  bf16.problem.input_type = bf16.problem.output_type = DataType::kBFloat16;
  bf16.problem.allow_tf32 = false;
  Put(bf16, {EngineConfig(120, 1, 0.1, 0, 0), EngineConfig(121, 1, 0.2, 0, 0)});
  run = Probe({"--type", "bf16"});
  EXPECT_EQ(run.out["queried"], 1);
  EXPECT_EQ(run.configs(), (std::vector<Config>{{120, "3=1"}}));
  EXPECT_EQ(run.real("backend_heur_results"), 0);
}

TEST_F(PreloadGraphTest, WithTf32OffTheFastestConfigWithoutTensorCoresLeads) {
  // fp32: the choice uses tensor cores; without them the fastest (113) is
  // nondeterministic and faster than the deterministic one (112). A caller
  // with TF32 off but nondeterminism allowed keeps 113 first and builds it.
  Put(Key(), {EngineConfig(110, 0, 0.1, kTensorCore, 100),
              EngineConfig(113, 3, 0.2, kNondeterministic, 0),
              EngineConfig(112, 2, 0.3, 0, 0)});
  ProbeRun run =
      Probe({"--then-fallback", "--build-plans", "--drop-engine", "110"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.configs(),
            (std::vector<Config>{{110, "3=0"}, {113, "3=3"}, {112, "3=2"}}));
  EXPECT_EQ(run.configs(), ConfigsOf(Expected(Key())));
  EXPECT_EQ(PlansOf(run), (std::vector<std::pair<int64_t, int>>{
                              {113, kBuilt}, {112, kNotBuilt}}));
}

TEST_F(PreloadGraphTest, TheDeterministicAlternativesDoNotDownConvertEither) {
  // fp16: the fastest deterministic config (engine 111) down-converts its
  // inputs, which PyTorch never runs: the deterministic alternative is 112,
  // and the one without workspace (113) down-converts too, so there is none.
  ProblemKey fp16 = Key();
  fp16.problem.input_type = fp16.problem.output_type = DataType::kHalf;
  fp16.problem.allow_tf32 = false;
  Put(fp16, {EngineConfig(110, 0, 0.1, kNondeterministic, 0),
             EngineConfig(111, 1, 0.2, kDownConvert, 100),
             EngineConfig(112, 2, 0.3, 0, 100),
             EngineConfig(113, 3, 0.4, kDownConvert, 0)});
  ProbeRun run = Probe({"--type", "f16"});
  EXPECT_EQ(run.configs(), (std::vector<Config>{{110, "3=0"}, {112, "3=2"}}));
  EXPECT_EQ(run.configs(), ConfigsOf(Expected(fp16)));
}

TEST_F(PreloadGraphTest,
       ALargerRequestIsFilledFromCudnnsOwnListAfterTheTunedOnes) {
  const ProblemKey key = Key();
  Tune(key);
  const std::vector<AlgoResult> tuned = Expected(key);
  ASSERT_FALSE(tuned.empty());
  ProbeRun run = Probe({"--requested", "8"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  std::vector<Config> expected = ConfigsOf(tuned);
  for (const Config& c : FakeList(CUDNN_HEUR_MODE_INSTANT)) {
    if (expected.size() < 8) expected.push_back(c);
  }
  EXPECT_EQ(run.configs(), expected);
  EXPECT_EQ(run.out["count"], expected.size());
  EXPECT_EQ(run.real("backend_heur_results"), 1);
  for (const auto& c : run.out["configs"]) EXPECT_EQ(c["same_graph"], true);

  // cuDNN's configs that tunedb already gave (same engine, same knobs) are
  // not given twice: engine 3 without knobs, first in tunedb's list, is
  // left out of the fake's 7, 3, 0, 1.
  ProblemKey other = Key();
  other.problem.n = 16;
  AlgoResult three = EngineConfig(3, 0, 0.1, 0, 0);
  three.knobs.clear();
  Put(other, {three});
  run = Probe({"--n", "16", "--requested", "8"});
  EXPECT_EQ(run.configs(),
            (std::vector<Config>{{3, ""}, {7, ""}, {0, ""}, {1, ""}}))
      << run.err;
  EXPECT_EQ(run.out["count"], 4);
}

TEST_F(PreloadGraphTest, ASmallerRequestGetsTheHeadOfTheTunedList) {
  const ProblemKey key = Key();
  Tune(key);
  const std::vector<AlgoResult> tuned = Expected(key);
  ASSERT_GE(tuned.size(), 2u);
  ProbeRun run = Probe({"--requested", "1"});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.configs(), (std::vector<Config>{ConfigOf(tuned[0])}));
  EXPECT_EQ(run.real("backend_heur_results"), 0);
}

TEST_F(PreloadGraphTest, EachPassIsAnsweredForItsOwnGraphKey) {
  const ProblemKey data = Key(ConvOp::kBackwardData);
  const ProblemKey filter = Key(ConvOp::kBackwardFilter);
  Tune(data);
  // Only backward data is stored: the other passes of the same shape miss.
  ProbeRun run = Probe({"--op", "bwd_filter"});
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
  EXPECT_THAT(run.err, HasSubstr("graph bwd_filter miss " + filter.ToText()));
  run = Probe({"--op", "fwd"});
  EXPECT_THAT(run.err, HasSubstr("graph fwd miss " + Key().ToText()));

  Tune(filter);
  for (const ProblemKey& key : {data, filter}) {
    const std::string name(ConvOpName(key.problem.op));
    SCOPED_TRACE(name);
    const std::vector<AlgoResult> expected = Expected(key);
    ASSERT_FALSE(expected.empty());
    run = Probe({"--op", name});
    ASSERT_EQ(run.out["status"], 0) << run.err;
    EXPECT_EQ(run.configs(), ConfigsOf(expected));
    EXPECT_EQ(run.real("backend_heur_results"), 0);
    EXPECT_THAT(run.err, HasSubstr("graph " + name + " hit engine=" +
                                   std::to_string(expected[0].algo) + " " +
                                   key.ToText()));
  }
}

TEST_F(PreloadGraphTest, TheKeyHoldsTheTensorsTypeAndLayout) {
  for (const auto& [args, type, layout] :
       std::vector<std::tuple<std::vector<std::string>, DataType, Layout>>{
           {{"--type", "f16", "--nhwc"}, DataType::kHalf, Layout::kNHWC},
           {{"--type", "bf16"}, DataType::kBFloat16, Layout::kNCHW}}) {
    ProblemKey key = Key();
    key.problem.input_type = key.problem.output_type = type;
    key.problem.allow_tf32 = false;
    key.problem.layout = layout;
    SCOPED_TRACE(key.ToText());
    ProbeRun run = Probe(args);
    EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
    EXPECT_THAT(run.err, HasSubstr("graph fwd miss " + key.ToText() + "\n"));
  }
}

TEST_F(PreloadGraphTest, AFallbackListOfAGraphNotAnsweredIsCudnns) {
  Tune(Key());
  // The same graph in mode INSTANT is a hit ...
  ASSERT_EQ(Probe({"--mode", "instant"}).real("backend_heur_results"), 0);
  // ... in mode FALLBACK, asked first, it is cuDNN's.
  ProbeRun run = Probe({"--mode", "fallback"});
  EXPECT_EQ(run.out["status"], 0);
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_FALLBACK));
  EXPECT_EQ(run.real("backend_heur_count"), 1);
  EXPECT_EQ(run.real("backend_heur_results"), 1);
  EXPECT_THAT(run.err, Not(HasSubstr("graph fwd hit")));
}

TEST_F(PreloadGraphTest, AGraphOfTwoOperationsPassesThrough) {
  Tune(Key());
  // The convolution alone is a hit ...
  ASSERT_EQ(Probe({"--ops", "1"}).real("backend_heur_results"), 0);
  // ... followed by a ReLU it is cuDNN's.
  ProbeRun run = Probe({"--ops", "2"});
  EXPECT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
  EXPECT_EQ(run.real("backend_heur_count"), 1);
  EXPECT_EQ(run.real("backend_heur_results"), 1);
  EXPECT_THAT(run.err, Not(HasSubstr("graph fwd hit")));
}

TEST_F(PreloadGraphTest, ATunedEngineTheGraphRejectsIsSkipped) {
  const ProblemKey key = Key();
  Tune(key);
  const std::vector<AlgoResult> tuned = Expected(key);
  ASSERT_GE(tuned.size(), 2u);
  const int64_t rejected = tuned[0].algo;
  std::vector<Config> rest;
  for (const AlgoResult& r : tuned) {
    if (r.algo != rejected) rest.push_back(ConfigOf(r));
  }
  ProbeRun run =
      Probe({"--requested", std::to_string(rest.size())},
            {"FAKE_CUDNN_REJECT_ENGINES=" + std::to_string(rejected)});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.configs(), rest);
  EXPECT_EQ(run.real("backend_heur_results"), 0);
  // And whatever a count query's list turns into, never the rejected one.
  run = Probe({}, {"FAKE_CUDNN_REJECT_ENGINES=" + std::to_string(rejected)});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  const std::vector<Config> configs = run.configs();
  ASSERT_GE(configs.size(), rest.size());
  EXPECT_EQ(std::vector<Config>(configs.begin(), configs.begin() + rest.size()),
            rest);
  for (const Config& c : configs) EXPECT_NE(c.first, rejected);
}

TEST_F(PreloadGraphTest, WhenNoTunedEngineFinalizesTheCallPassesThrough) {
  const ProblemKey key = Key();
  Tune(key);
  std::string all;
  for (const AlgoResult& r : Expected(key)) {
    all += (all.empty() ? "" : ",") + std::to_string(r.algo);
  }
  ProbeRun run =
      Probe({"--requested", "4"}, {"FAKE_CUDNN_REJECT_ENGINES=" + all});
  ASSERT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
  EXPECT_EQ(run.real("backend_heur_results"), 1);
  EXPECT_THAT(run.err, HasSubstr("config_failed=1"));
}

// A graph call the preload cannot answer goes to cuDNN unchanged, with the
// reason counted on the exit line.
TEST_F(PreloadGraphTest, CallsItCannotAnswerPassThroughWithTheirReason) {
  struct Case {
    const char* what;
    std::vector<std::string> args;
    std::vector<std::string> env;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"asymmetric padding", {"--post-pad", "0"}, {}, "unsupported_problem=1"},
      {"another cuDNN major version",
       {},
       {"FAKE_CUDNN_VERSION=80907"},
       "cudnn_version=1"},
      {"a bad device key", {}, {"TUNEDB_DEVICE_KEY=gpu=x"}, "no_device=1"},
      {"the preload switched off", {}, {"TUNEDB_PRELOAD=off"}, "disabled=1"},
  };
  // Stored, so that each case's own cause is what passes the call through.
  Tune(Key());
  ASSERT_EQ(Probe({}).real("backend_heur_results"), 0);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ProbeRun run = Probe(c.args, c.env);
    EXPECT_EQ(run.out["status"], 0);
    EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
    EXPECT_EQ(run.real("backend_heur_results"), 1);
    EXPECT_THAT(run.err, HasSubstr(c.reason));
  }
}

TEST_F(PreloadGraphTest, BadArgumentsGetCudnnsOwnErrorOnAHit) {
  Tune(Key());
  for (const std::string bad : {"null_elements", "null_count", "wrong_type"}) {
    SCOPED_TRACE(bad);
    ProbeRun alone =
        Probe({"--requested", "4", "--bad-fill", bad}, {}, /*preload=*/false);
    ProbeRun run = Probe({"--requested", "4", "--bad-fill", bad});
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_EQ(alone.out["status"], static_cast<int>(CUDNN_STATUS_BAD_PARAM));
    EXPECT_EQ(run.out["status"], alone.out["status"]);
    // The heuristic calls that reach cuDNN are those without the preload
    // (the preload may finalize engines of its own first).
    for (const char* call : {"backend_heur_count", "backend_heur_results"}) {
      EXPECT_EQ(run.real(call), alone.real(call)) << call;
    }
    EXPECT_THAT(run.err, Not(HasSubstr("graph fwd hit")));
  }
}

TEST_F(PreloadGraphTest, ADownDaemonPassesThroughUnchanged) {
  ProbeRun run = Probe({}, {"TUNEDB_ADDRESS=unix:{dir}/nobody.sock"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out["status"], 0);
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
  EXPECT_EQ(run.real("backend_heur_count"), 1);
  EXPECT_EQ(run.real("backend_heur_results"), 1);
  EXPECT_THAT(run.err, HasSubstr("daemon_down=1"));
}

TEST_F(PreloadGraphTest, TheAlignmentOfTheTensorsIsPartOfTheKey) {
  const ProblemKey key16 = Key();
  Tune(key16);
  ProblemKey key8 = Key();
  key8.problem.alignment = 8;
  ProbeRun run = Probe({"--align", "8"}, {"TUNEDB_PRELOAD_EXIT_WAIT_S=30"});
  EXPECT_EQ(run.configs(), FakeList(CUDNN_HEUR_MODE_INSTANT));
  EXPECT_THAT(run.err, HasSubstr("graph fwd miss " + key8.ToText() + "\n"));
  EXPECT_TRUE(Stored(key8).has_value());

  // The smallest of x's, w's and y's alignment is the key's.
  ProblemKey key4 = Key();
  key4.problem.alignment = 4;
  run = Probe({"--align-w", "4"});
  EXPECT_THAT(run.err, HasSubstr("graph fwd miss " + key4.ToText() + "\n"));

  // Alignments above 16 are 16 in the key: a hit.
  run = Probe({"--align", "64"});
  EXPECT_EQ(run.real("backend_heur_results"), 0);
  EXPECT_THAT(run.err, HasSubstr("graph fwd hit engine="));
  EXPECT_THAT(run.err, HasSubstr(key16.ToText() + "\n"));
}

TEST_F(PreloadGraphTest, AHitKeepsOnlyTheGraphCopyItsConfigsWereFinalizedOn) {
  Tune(Key());
  // A count query, then a fill query of tuned configs and cuDNN's own list
  // into the preload's descriptors: once the probe destroyed its own, one
  // descriptor is left, the graph copy the answered configs refer to (kept
  // for the life of the process, since cuDNN may refer to it).
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, {"--requested", "8"}}) {
    ProbeRun run = Probe(args);
    ASSERT_EQ(run.out["status"], 0) << run.err;
    ASSERT_THAT(run.err, HasSubstr("graph fwd hit"));
    EXPECT_EQ(run.out["live_descriptors"], 1);
  }
}

}  // namespace
}  // namespace tunedb
