// The graph (backend) API on a real GPU: searches of every pass build,
// time, verify and keep plans; a kept plan loads on a fresh handle and
// computes what the legacy API computes; a client obtains plans from a real
// daemon, and a blob cuDNN refuses falls back to the engine config, then to
// the heuristic. Skipped, with the reason, without a GPU.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <memory>
#include <string>
#include <vector>

#include "common/record_results.h"
#include "cudnn/backend_graph.h"
#include "cudnn/cudnn_conv.h"
#include "gtest/gtest.h"
#include "server/search/cudnn_finder.h"
#include "server/search/verify.h"
#include "server/service/server.h"
#include "store/sql/database.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/testing/temp_dir.h"
#include "tunedb/client.h"
#include "tunedb/cudnn_graph_helpers.h"

namespace tunedb {
namespace {

ConvProblem GraphProblem(ConvOp op, Layout layout, DataType type) {
  ConvProblem p = MakeProblem(op, layout, type, /*tf32=*/true, 8, 64, 64, 28, 3,
                              1, 1, 1, 1);
  p.api = ConvApi::kGraph;
  p.alignment = 16;
  return p;
}

std::unique_ptr<CudnnFinder> Finder() {
  absl::StatusOr<std::unique_ptr<CudnnFinder>> f =
      CudnnFinder::Create(CudnnFinder::Options());
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *std::move(f) : nullptr;
}

struct PassCase {
  ConvOp op;
  Layout layout;
  DataType type;
};

class GraphSearchGpuTest : public ::testing::TestWithParam<PassCase> {};

TEST_P(GraphSearchGpuTest, BuildsTimesVerifiesAndKeepsTheLeadersPlans) {
  TUNEDB_SKIP_WITHOUT_GPU();
  const PassCase c = GetParam();
  auto finder = Finder();
  ASSERT_NE(finder, nullptr);
  const ConvProblem p = GraphProblem(c.op, c.layout, c.type);
  absl::StatusOr<SearchResult> r = finder->Search(0, p, SearchOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->results.empty());
  const AlgoResult& best = r->results[0];
  ASSERT_EQ(best.status, AlgoStatus::kOk) << best.error;
  EXPECT_TRUE(r->verified);
  EXPECT_TRUE(best.launch.measured());
  EXPECT_FALSE(best.plan.empty());
  int ok = 0, with_plan = 0, leaders_kept = 0, heuristic_first = 0,
      ranked = 0;
  for (const AlgoResult& a : r->results) {
    if (a.status == AlgoStatus::kOk) {
      ++ok;
      // Every config that ran was built (or loaded), and timed doing so.
      EXPECT_GT(a.build_ms, 0) << a.algo;
      // Every runtime-compiled config that ran keeps its plan (KeepPlans).
      if (RuntimeCompiled(a)) {
        EXPECT_FALSE(a.plan.empty()) << a.algo;
      }
    }
    if (a.heuristic_rank == 1) ++heuristic_first;
    if (a.heuristic_rank > 0) ++ranked;
    if (!a.plan.empty()) ++with_plan;
    // Besides those, only the leaders keep a plan.
    if (!a.plan.empty() && !RuntimeCompiled(a)) ++leaders_kept;
    if (!p.allow_tensor_cores) {
      EXPECT_EQ(a.numerical_notes & NoteBit(kNumericalNoteTensorCore), 0u);
    }
  }
  EXPECT_GE(ok, 2) << "the heuristics offer several engine configs";
  EXPECT_GE(with_plan, 1);
  EXPECT_LE(leaders_kept, CudnnFinder::Options().graph_plans_kept);
  // Heuristic mode A ranks its configs (its first may be one the problem's
  // policy leaves out).
  EXPECT_GE(ranked, 1);
  EXPECT_LE(heuristic_first, 1);
  RecordProperty("engines_ok", ok);
  RecordProperty("best_engine", best.algo);
  RecordProperty("best_knobs", KnobsText(best.knobs));
  RecordProperty("find_ms", std::to_string(r->phases.find_ms));
}

TEST_P(GraphSearchGpuTest, ASearchGivenTheKeptPlansLoadsThemInsteadOfBuilding) {
  TUNEDB_SKIP_WITHOUT_GPU();
  const PassCase c = GetParam();
  auto finder = Finder();
  ASSERT_NE(finder, nullptr);
  const ConvProblem p = GraphProblem(c.op, c.layout, c.type);
  absl::StatusOr<SearchResult> first = finder->Search(0, p, SearchOptions());
  ASSERT_TRUE(first.ok()) << first.status();
  SearchOptions again;
  for (const AlgoResult& r : first->results) {
    if (!r.plan.empty()) again.stored_plans.push_back(r);
  }
  ASSERT_FALSE(again.stored_plans.empty());
  absl::StatusOr<SearchResult> second = finder->Search(0, p, again);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->phases.plans_loaded,
            static_cast<int>(again.stored_plans.size()));
  ASSERT_EQ(second->results.at(0).status, AlgoStatus::kOk);
  EXPECT_TRUE(second->verified);
  RecordProperty("first_find_ms", std::to_string(first->phases.find_ms));
  RecordProperty("second_find_ms", std::to_string(second->phases.find_ms));
}

INSTANTIATE_TEST_SUITE_P(
    Passes, GraphSearchGpuTest,
    ::testing::Values(
        PassCase{ConvOp::kForward, Layout::kNHWC, DataType::kHalf},
        PassCase{ConvOp::kBackwardData, Layout::kNHWC, DataType::kHalf},
        PassCase{ConvOp::kBackwardFilter, Layout::kNHWC, DataType::kHalf},
        PassCase{ConvOp::kForward, Layout::kNCHW, DataType::kFloat},
        PassCase{ConvOp::kBackwardData, Layout::kNCHW, DataType::kFloat},
        PassCase{ConvOp::kBackwardFilter, Layout::kNCHW, DataType::kFloat},
        PassCase{ConvOp::kForward, Layout::kNDHWC, DataType::kHalf}),
    [](const ::testing::TestParamInfo<PassCase>& info) {
      return std::string(ConvOpName(info.param.op)) + "_" +
             std::string(LayoutName(info.param.layout)) + "_" +
             std::string(DataTypeName(info.param.type));
    });

TEST(GraphGpuTest, AKeptPlanLoadsOnAFreshHandleAndMatchesTheLegacyApi) {
  TUNEDB_SKIP_WITHOUT_GPU();
  const ConvProblem p =
      GraphProblem(ConvOp::kForward, Layout::kNHWC, DataType::kHalf);
  std::string plan_json;
  {
    auto finder = Finder();
    ASSERT_NE(finder, nullptr);
    absl::StatusOr<SearchResult> r = finder->Search(0, p, SearchOptions());
    ASSERT_TRUE(r.ok()) << r.status();
    plan_json = r->results.at(0).plan;
  }
  ASSERT_FALSE(plan_json.empty());
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  ASSERT_TRUE(handle.ok()) << handle.status();
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  ASSERT_TRUE(stream.ok());
  ASSERT_EQ(cudnnSetStream(handle->get(), stream->get()), CUDNN_STATUS_SUCCESS);
  absl::StatusOr<BackendDescriptor> plan = LoadPlan(handle->get(), plan_json);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<int64_t> ws_bytes = PlanWorkspaceBytes(plan->get());
  ASSERT_TRUE(ws_bytes.ok());
  absl::StatusOr<DeviceBuffer> ws =
      DeviceBuffer::Allocate(static_cast<size_t>(*ws_bytes) + 256);
  ASSERT_TRUE(ws.ok());

  // The same inputs through the legacy API (implicit GEMM, FMA math).
  absl::StatusOr<std::unique_ptr<CudnnConv>> conv =
      CudnnConv::Create(p, handle->get(), stream->get(), /*seed=*/7);
  ASSERT_TRUE(conv.ok()) << conv.status();
  ASSERT_TRUE((*conv)->Run(0, MathType::kFma, ws->get(), ws->bytes()).ok());
  absl::StatusOr<std::vector<float>> legacy = (*conv)->ReadOutput();
  ASSERT_TRUE(legacy.ok());
  const ConvBuffers b = (*conv)->buffers();
  absl::StatusOr<BackendDescriptor> pack =
      MakeVariantPack({b.x, b.w, b.y, ws->get()});
  ASSERT_TRUE(pack.ok()) << pack.status();
  ASSERT_TRUE(ExecutePlan(handle->get(), plan->get(), pack->get()).ok());
  absl::StatusOr<std::vector<float>> graph = (*conv)->ReadOutput();
  ASSERT_TRUE(graph.ok());
  EXPECT_LE(RelativeL2(*graph, *legacy),
            VerifyTolerance(p, MathType::kTensorOp));
}

TEST(GraphGpuTest, ABlobCudnnRefusesIsReportedNotRun) {
  TUNEDB_SKIP_WITHOUT_GPU();
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  ASSERT_TRUE(handle.ok());
  absl::StatusOr<BackendDescriptor> plan =
      LoadPlan(handle->get(), "{\"not\": \"a cuDNN plan\"}");
  EXPECT_FALSE(plan.ok());
}

// The client side against a real daemon (in process, cuDNN finder).
class GraphClientGpuTest : public ::testing::Test {
 protected:
  void StartServer() {
    ServerOptions options;
    options.unix_socket = dir_.File("d.sock");
    options.store.path = dir_.File("d.db");
    auto finder = Finder();
    ASSERT_NE(finder, nullptr);
    absl::StatusOr<std::unique_ptr<Server>> server =
        Server::BuildAndStart(options, std::move(finder));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  void SetUp() override {
    if (!NoGpuReason().empty()) return;
    StartServer();
    if (server_ == nullptr) return;
    key_.device = server_->core().devices().at(0).key;
    key_.problem =
        GraphProblem(ConvOp::kForward, Layout::kNHWC, DataType::kHalf);
    ClientOptions o;
    o.address = server_->address();
    o.miss_policy = MissPolicy::kTuneAndWait;
    o.tune_deadline = absl::Seconds(60);
    client_ = Client::Create(o).value();
    ASSERT_EQ(cudnnCreate(&handle_), CUDNN_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (handle_ != nullptr) cudnnDestroy(handle_);
    client_.reset();
    if (server_ != nullptr) server_->Shutdown(absl::Seconds(5));
  }

  testing_util::TempDir dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<Client> client_;
  ProblemKey key_;
  cudnnHandle_t handle_ = nullptr;
};

TEST_F(GraphClientGpuTest,
       PlansComeStoredThenFromTheEngineConfigThenTheHeuristic) {
  TUNEDB_SKIP_WITHOUT_GPU();
  // Tune and wait: the first call searches, the plan is the stored one.
  absl::StatusOr<ExecutionPlan> plan =
      GetExecutionPlan(*client_, handle_, key_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->source, PlanSource::kStoredPlan) << plan->fallback;
  const int engine = plan->engine;

  // A blob cuDNN refuses (as after a cuDNN or driver change): the engine
  // config is built instead, and the refusal is reported. The daemon is
  // restarted on the edited file (it caches records in memory).
  client_.reset();
  server_->Shutdown(absl::Seconds(5));
  server_.reset();
  {
    auto db = sql::Database::Open(dir_.File("d.db"),
                                  sql::Database::Mode::kReadWrite, 2000);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)
                    ->Execute("UPDATE results SET plan = '{\"bad\":1}'"
                              " WHERE plan != ''")
                    .ok());
  }
  StartServer();
  ASSERT_NE(server_, nullptr);
  std::unique_ptr<Client> fresh = Client::Create([&] {
                                    ClientOptions o;
                                    o.address = server_->address();
                                    o.lookup_deadline = absl::Seconds(5);
                                    return o;
                                  }())
                                      .value();
  plan = GetExecutionPlan(*fresh, handle_, key_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->source, PlanSource::kEngineConfig);
  EXPECT_EQ(plan->engine, engine);
  EXPECT_NE(plan->fallback.find("stored plan refused"), std::string::npos)
      << plan->fallback;

  // A key nothing is stored for (cache-only client): the heuristic.
  ClientOptions cache_only;
  cache_only.address = server_->address();
  cache_only.miss_policy = MissPolicy::kCacheOnly;
  std::unique_ptr<Client> none = Client::Create(cache_only).value();
  ProblemKey other = key_;
  other.problem.n = 3;
  plan = GetExecutionPlan(*none, handle_, other);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->source, PlanSource::kHeuristic);

  // And the plan runs.
  absl::StatusOr<DeviceBuffer> x =
      DeviceBuffer::Allocate(other.problem.InputElements() * 2);
  absl::StatusOr<DeviceBuffer> w =
      DeviceBuffer::Allocate(other.problem.FilterElements() * 2);
  absl::StatusOr<DeviceBuffer> y =
      DeviceBuffer::Allocate(other.problem.OutputElements() * 2);
  absl::StatusOr<DeviceBuffer> ws =
      DeviceBuffer::Allocate(static_cast<size_t>(plan->workspace_bytes) + 256);
  ASSERT_TRUE(x.ok() && w.ok() && y.ok() && ws.ok());
  EXPECT_TRUE(
      RunPlan(handle_, *plan, x->get(), w->get(), y->get(), ws->get()).ok());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace tunedb
