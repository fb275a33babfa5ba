// CudnnFinder on a real GPU: every pass x type (fp32, fp32 without TF32,
// fp16, bf16) x layout (NCHW, NHWC, NCDHW, NDHWC) on small dense, strided,
// grouped, depthwise and dilated shapes. For each, the search must succeed,
// re-time its leaders and verify its choice; then the chosen algorithm is run
// again here, independently (own handle, own buffers, exactly the workspace
// the record says it needs) and its output compared with another algorithm's.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_handles.h"
#include "gtest/gtest.h"
#include "server/search/cudnn_finder.h"
#include "server/search/run_timer.h"
#include "server/search/sample_stats.h"
#include "server/search/verify.h"
#include "tests/gpu/gpu_test_util.h"

namespace tunedb {
namespace {

struct Shape {
  const char* name;
  int64_t n, c, k, in, filt, pad, stride, dil, groups;
};

// 2-D shapes (used with NCHW/NHWC); 3-D ones with NCDHW/NDHWC.
const Shape k2dShapes[] = {
    {"dense", 4, 32, 64, 16, 3, 1, 1, 1, 1},
    {"strided", 4, 32, 32, 17, 3, 1, 2, 1, 1},
    {"grouped", 2, 32, 64, 12, 3, 1, 1, 1, 4},
    {"depthwise", 2, 32, 32, 14, 3, 1, 1, 1, 32},
    {"dilated", 2, 16, 32, 16, 3, 2, 1, 2, 1},
};
const Shape k3dShapes[] = {
    {"dense3d", 2, 16, 32, 8, 3, 1, 1, 1, 1},
    {"strided3d", 2, 8, 16, 9, 3, 1, 2, 1, 1},
};

struct TypeCase {
  const char* name;
  DataType type;
  bool tf32;
};
const TypeCase kTypes[] = {{"f32", DataType::kFloat, true},
                           {"f32notf32", DataType::kFloat, false},
                           {"f16", DataType::kHalf, false},
                           {"bf16", DataType::kBFloat16, false}};

struct Case {
  ConvOp op;
  TypeCase type;
  Layout layout;
  Shape shape;
};

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (ConvOp op :
       {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardFilter}) {
    for (const TypeCase& t : kTypes) {
      for (Layout l : {Layout::kNCHW, Layout::kNHWC}) {
        for (const Shape& s : k2dShapes) cases.push_back({op, t, l, s});
      }
      for (Layout l : {Layout::kNCDHW, Layout::kNDHWC}) {
        for (const Shape& s : k3dShapes) cases.push_back({op, t, l, s});
      }
    }
  }
  return cases;
}

// Short gtest/ctest display of a case (instead of its bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << ConvOpName(c.op) << " " << c.type.name << " " << LayoutName(c.layout)
      << " " << c.shape.name;
}

ConvProblem ToProblem(const Case& c) {
  const Shape& s = c.shape;
  return MakeProblem(c.op, c.layout, c.type.type, c.type.tf32, s.n, s.c, s.k,
                     s.in, s.filt, s.pad, s.stride, s.dil, s.groups);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return absl::StrCat(ConvOpName(c.op), "_", c.type.name, "_",
                      LayoutName(c.layout), "_", c.shape.name);
}

class CudnnFinderGpuTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    if (!NoGpuReason().empty()) return;
    CudnnFinder::Options options;
    // A budget large enough that re-timing runs its full course (min_rounds
    // at least) whatever Find cost, and no leader clear enough to be
    // re-timed alone for one round.
    options.min_rounds = 5;
    options.clear_lead = 1e9;
    options.max_rounds = 20;
    options.search_budget_factor = 1000;
    options.max_search_budget = absl::Seconds(1);
    absl::StatusOr<std::unique_ptr<CudnnFinder>> f =
        CudnnFinder::Create(options);
    if (f.ok()) {
      finder_ = f->release();
    } else {
      create_error_ = new std::string(f.status().ToString());
    }
  }
  static void TearDownTestSuite() {
    if (finder_ != nullptr) {
      std::printf(
          "[ summary  ] %d searches: %d with a verified choice, %d "
          "negative (no algorithm supports the problem)\n",
          searched_, verified_, negative_);
    }
    delete finder_;
    finder_ = nullptr;
  }

  static CudnnFinder* finder_;
  static std::string* create_error_;
  static int searched_, verified_, negative_;
};

CudnnFinder* CudnnFinderGpuTest::finder_ = nullptr;
std::string* CudnnFinderGpuTest::create_error_ = nullptr;
int CudnnFinderGpuTest::searched_ = 0;
int CudnnFinderGpuTest::verified_ = 0;
int CudnnFinderGpuTest::negative_ = 0;

TEST_P(CudnnFinderGpuTest, SearchRetimeVerifyAndRunTheChoice) {
  TUNEDB_SKIP_WITHOUT_GPU();
  ASSERT_NE(finder_, nullptr) << (create_error_ ? *create_error_ : "");
  const ConvProblem problem = ToProblem(GetParam());
  ASSERT_TRUE(problem.Validate().ok()) << problem.Validate();

  SearchOptions options;
  options.workspace_cap_bytes = int64_t{256} << 20;
  options.timeout = absl::Seconds(60);
  absl::StatusOr<SearchResult> result = finder_->Search(0, problem, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ++searched_;
  ASSERT_FALSE(result->results.empty());
  EXPECT_EQ(result->workspace_cap_bytes, options.workspace_cap_bytes);

  const AlgoResult& best = result->results[0];
  if (best.status != AlgoStatus::kOk) {
    // A stored negative answer: nothing may be OK.
    for (const AlgoResult& r : result->results) {
      EXPECT_NE(r.status, AlgoStatus::kOk);
    }
    ++negative_;
    // Dense 2-D problems in every type and layout are supported by cuDNN on
    // any GPU this project targets; a negative answer there is a bug.
    EXPECT_TRUE(problem.spatial_dims == 3 || problem.groups > 1)
        << "no algorithm for a dense 2-D problem: " << problem.ToText();
    std::printf("[ negative ] %s\n", problem.ToText().c_str());
    return;
  }
  EXPECT_TRUE(best.retimed);
  // The leader was re-timed three ways: direct launches and host time every
  // round, CUDA-graph replays every other round; the full min_rounds where
  // another algorithm ran. Where only the leader's algorithm ran, the leader
  // is clear (one round) if the others are its twins, so at least one round
  // (NDHWC fp32 without TF32 has a single algorithm on the H200).
  const bool rival =
      std::any_of(result->results.begin(), result->results.end(),
                  [&best](const AlgoResult& r) {
                    return r.status == AlgoStatus::kOk && r.algo != best.algo;
                  });
  const int rounds = rival ? 5 : 1;
  for (const Timing* t : {&best.launch, &best.gpu, &best.host}) {
    EXPECT_GE(t->samples, t == &best.gpu ? (rounds + 1) / 2 : rounds);
    EXPECT_GT(t->median_ms, 0);
    EXPECT_GE(t->spread_ms, 0);
  }
  EXPECT_GE(result->repeats, rounds);
  EXPECT_GT(result->phases.find_ms, 0);
  EXPECT_GT(result->phases.verify_ms, 0);
  EXPECT_LE(best.workspace_bytes, options.workspace_cap_bytes);
  EXPECT_TRUE(result->verified) << problem.ToText();
  ++verified_;
  for (size_t i = 1; i < result->results.size(); ++i) {
    const AlgoResult& r = result->results[i];
    if (r.status != AlgoStatus::kOk) break;
    EXPECT_LE(result->results[i - 1].cost(LaunchMode::kDirect).median_ms,
              r.cost(LaunchMode::kDirect).median_ms);
  }

  // Run the choice independently, with exactly the workspace the record says
  // it needs, and compare it with another algorithm.
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  ASSERT_TRUE(handle.ok()) << handle.status();
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<std::unique_ptr<CudnnConv>> conv =
      CudnnConv::Create(problem, handle->get(), stream->get(), 4242);
  ASSERT_TRUE(conv.ok()) << conv.status();
  absl::StatusOr<DeviceBuffer> ws =
      DeviceBuffer::Allocate(static_cast<size_t>(best.workspace_bytes));
  ASSERT_TRUE(ws.ok()) << ws.status();
  absl::Status run =
      (*conv)->Run(best.algo, best.math_type, ws->get(), ws->bytes());
  ASSERT_TRUE(run.ok()) << "algo " << best.algo << ": " << run;
  absl::StatusOr<std::vector<float>> chosen = (*conv)->ReadOutput();
  ASSERT_TRUE(chosen.ok()) << chosen.status();

  // Reference: implicit GEMM without tensor cores if it runs, else the next
  // OK result, else a CPU computation.
  std::vector<std::pair<int, MathType>> refs = {{0, MathType::kFma},
                                                {1, MathType::kFma}};
  for (const AlgoResult& r : result->results) {
    if (r.status == AlgoStatus::kOk) refs.push_back({r.algo, r.math_type});
  }
  bool compared = false;
  for (const auto& [algo, math] : refs) {
    if (algo == best.algo && math == best.math_type) continue;
    absl::StatusOr<int64_t> need = (*conv)->WorkspaceSize(algo, math);
    if (!need.ok()) continue;
    absl::StatusOr<DeviceBuffer> rws =
        DeviceBuffer::Allocate(static_cast<size_t>(*need));
    ASSERT_TRUE(rws.ok()) << rws.status();
    if (!(*conv)->Run(algo, math, rws->get(), rws->bytes()).ok()) continue;
    absl::StatusOr<std::vector<float>> ref = (*conv)->ReadOutput();
    ASSERT_TRUE(ref.ok()) << ref.status();
    const double err = RelativeL2(*chosen, *ref);
    EXPECT_LE(err, VerifyTolerance(problem, best.math_type))
        << "chosen algo " << best.algo << " (" << MathTypeName(best.math_type)
        << ") vs reference algo " << algo << " (" << MathTypeName(math) << ")";
    compared = true;
    break;
  }
  if (!compared) {
    // Only one algorithm supports the problem: compare with the CPU.
    absl::StatusOr<std::vector<float>> cpu =
        (*conv)->CpuReference(int64_t{1} << 29);
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    const double err = RelativeL2(*chosen, *cpu);
    EXPECT_LE(err, VerifyTolerance(problem, best.math_type))
        << "chosen algo " << best.algo << " vs the CPU reference";
  }
}

TEST(CudnnConvGpuTest, CpuReferenceAgreesWithImplicitGemm) {
  TUNEDB_SKIP_WITHOUT_GPU();
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  ASSERT_TRUE(handle.ok()) << handle.status();
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  int compared = 0;
  for (ConvOp op :
       {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardFilter}) {
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC, Layout::kNCDHW}) {
      for (ConvMode mode :
           {ConvMode::kCrossCorrelation, ConvMode::kConvolution}) {
        ConvProblem p = MakeProblem(op, layout, DataType::kFloat, false, 2, 8,
                                    12, 9, 3, 1, 2, 1, 2);
        p.mode = mode;
        absl::StatusOr<std::unique_ptr<CudnnConv>> conv =
            CudnnConv::Create(p, handle->get(), stream->get(), 7);
        ASSERT_TRUE(conv.ok()) << conv.status();
        absl::StatusOr<int64_t> need =
            (*conv)->WorkspaceSize(0, MathType::kFma);
        if (!need.ok()) continue;
        absl::StatusOr<DeviceBuffer> ws =
            DeviceBuffer::Allocate(static_cast<size_t>(*need));
        ASSERT_TRUE(ws.ok());
        if (!(*conv)->Run(0, MathType::kFma, ws->get(), ws->bytes()).ok()) {
          continue;
        }
        absl::StatusOr<std::vector<float>> gpu = (*conv)->ReadOutput();
        ASSERT_TRUE(gpu.ok()) << gpu.status();
        absl::StatusOr<std::vector<float>> cpu = (*conv)->CpuReference(1 << 26);
        ASSERT_TRUE(cpu.ok()) << cpu.status();
        EXPECT_LE(RelativeL2(*gpu, *cpu), 1e-5) << p.ToText();
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 12);
}

// One convolution on the current device with its own handle and stream, and
// a workspace sized for one (algorithm, math type): what the timer tests use.
struct TimedConv {
  CudnnHandle handle;
  CudaStream stream;
  std::unique_ptr<CudnnConv> conv;
  DeviceBuffer workspace;
};

absl::StatusOr<TimedConv> MakeTimedConv(const ConvProblem& p, int algo,
                                        MathType math, uint64_t seed) {
  ASSIGN_OR_RETURN(CudnnHandle handle, CreateCudnnHandle());
  ASSIGN_OR_RETURN(CudaStream stream, CudaStream::Create());
  ASSIGN_OR_RETURN(std::unique_ptr<CudnnConv> conv,
                   CudnnConv::Create(p, handle.get(), stream.get(), seed));
  ASSIGN_OR_RETURN(const int64_t need, conv->WorkspaceSize(algo, math));
  ASSIGN_OR_RETURN(
      DeviceBuffer workspace,
      DeviceBuffer::Allocate(static_cast<size_t>(std::max<int64_t>(need, 1))));
  return TimedConv{std::move(handle), std::move(stream), std::move(conv),
                   std::move(workspace)};
}

TEST(CudnnConvGpuTest, RunTimerReplaysACudaGraph) {
  TUNEDB_SKIP_WITHOUT_GPU();
  absl::StatusOr<TimedConv> t = MakeTimedConv(
      MakeProblem(ConvOp::kForward, Layout::kNHWC, DataType::kHalf, false, 8,
                  64, 64, 28, 3, 1, 1, 1, 1),
      0, MathType::kTensorOp, 3);
  ASSERT_TRUE(t.ok()) << t.status();
  CudnnConv* conv = t->conv.get();
  const DeviceBuffer& ws = t->workspace;
  absl::StatusOr<std::unique_ptr<RunTimer>> timer = RunTimer::Create(
      conv, t->stream.get(), 0, MathType::kTensorOp, ws.get(), ws.bytes(), 8);
  ASSERT_TRUE(timer.ok()) << timer.status();
  EXPECT_TRUE((*timer)->graphed())
      << "cuDNN's legacy convolution could not be captured in a CUDA graph";
  absl::StatusOr<CudaEvent> e0 = CudaEvent::Create();
  absl::StatusOr<CudaEvent> e1 = CudaEvent::Create();
  ASSERT_TRUE(e0.ok() && e1.ok());
  absl::StatusOr<double> ms = (*timer)->Sample(e0->get(), e1->get());
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GT(*ms, 0);
  // The replayed runs compute the same output as a direct run.
  absl::StatusOr<std::vector<float>> replayed = conv->ReadOutput();
  ASSERT_TRUE(replayed.ok());
  ASSERT_TRUE(conv->Run(0, MathType::kFma, nullptr, 0).ok() ||
              conv->Run(0, MathType::kTensorOp, ws.get(), ws.bytes()).ok());
  absl::StatusOr<std::vector<float>> direct = conv->ReadOutput();
  ASSERT_TRUE(direct.ok());
  EXPECT_LE(RelativeL2(*replayed, *direct), 1e-2);
  std::printf("[ timer    ] graphed=%d, %.4f ms per run (batch 8)\n",
              (*timer)->graphed() ? 1 : 0, *ms);
}

// A case measured on an H200 with cuDNN 9.19 (fp16 NHWC n8 c256 14x14 k256
// 1x1): implicit precomp GEMM with tensor ops took 3.0 us per run in CUDA-
// graph replays but 113.9 us per direct call, almost all of it host time.
// Launch time is what a direct caller waits for, so it must show that cost.
TEST(CudnnConvGpuTest, HostHeavyAlgorithmLaunchTimeExceedsItsGpuTime) {
  TUNEDB_SKIP_WITHOUT_GPU();
  constexpr int kAlgo = 1;  // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
  absl::StatusOr<TimedConv> t = MakeTimedConv(
      MakeProblem(ConvOp::kForward, Layout::kNHWC, DataType::kHalf, false, 8,
                  256, 256, 14, 1, 0, 1, 1, 1),
      kAlgo, MathType::kTensorOp, 5);
  ASSERT_TRUE(t.ok()) << t.status();
  CudnnConv* conv = t->conv.get();
  const DeviceBuffer& ws = t->workspace;
  cudaStream_t stream = t->stream.get();
  absl::StatusOr<CudaEvent> e0 = CudaEvent::Create();
  absl::StatusOr<CudaEvent> e1 = CudaEvent::Create();
  ASSERT_TRUE(e0.ok() && e1.ok());
  constexpr int kBatch = 32;
  absl::StatusOr<std::unique_ptr<RunTimer>> timer = RunTimer::Create(
      conv, stream, kAlgo, MathType::kTensorOp, ws.get(), ws.bytes(), kBatch);
  ASSERT_TRUE(timer.ok()) << timer.status();
  ASSERT_TRUE((*timer)->graphed());
  // Medians of interleaved samples, after the clocks have ramped up.
  std::vector<double> launch, host, gpu;
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(
        conv->Run(kAlgo, MathType::kTensorOp, ws.get(), ws.bytes()).ok());
  }
  for (int round = 0; round < 9; ++round) {
    absl::StatusOr<DirectSample> direct =
        TimeDirectRuns(*conv, stream, kAlgo, MathType::kTensorOp, ws.get(),
                       ws.bytes(), kBatch, e0->get(), e1->get());
    ASSERT_TRUE(direct.ok()) << direct.status();
    absl::StatusOr<double> graphed = (*timer)->Sample(e0->get(), e1->get());
    ASSERT_TRUE(graphed.ok()) << graphed.status();
    launch.push_back(direct->launch_ms);
    host.push_back(direct->host_ms);
    gpu.push_back(*graphed);
  }
  const double launch_ms = Median(launch);
  const double host_ms = Median(host);
  const double gpu_ms = Median(gpu);
  std::printf(
      "[ host-heavy ] algo %d tensor_op: launch %.4f ms, host %.4f ms, "
      "gpu %.4f ms per run\n",
      kAlgo, launch_ms, host_ms, gpu_ms);
  EXPECT_GT(launch_ms, 2 * gpu_ms)
      << "direct calls should wait for the host, not only the GPU";
  EXPECT_GT(host_ms, gpu_ms);
  EXPECT_GE(launch_ms, 0.9 * host_ms)
      << "a caller issuing back to back waits at least for the host";
}

INSTANTIATE_TEST_SUITE_P(Matrix, CudnnFinderGpuTest,
                         ::testing::ValuesIn(AllCases()), CaseName);

TEST(CudnnFinderGpuSmokeTest, DeviceIdentityComesFromTheRuntime) {
  TUNEDB_SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<CudnnFinder>> f =
      CudnnFinder::Create(CudnnFinder::Options{});
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<std::vector<DeviceInfo>> devices = (*f)->Devices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  const DeviceInfo& d = (*devices)[0];
  EXPECT_TRUE(d.key.Validate().ok()) << d.key.Validate();
  EXPECT_EQ(d.key.cudnn_version, static_cast<int>(cudnnGetVersion()));
  EXPECT_GT(d.key.sm_count, 0);
  EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u) << d.uuid;
  EXPECT_FALSE(d.driver_version.empty());
  std::printf("[ device   ] %s uuid=%s driver=%s memory=%lld\n",
              d.key.ToText().c_str(), d.uuid.c_str(), d.driver_version.c_str(),
              static_cast<long long>(d.total_memory_bytes));
}

TEST(CudnnFinderGpuSmokeTest, ASmallProblemIsOfferedTheWorkspaceFloor) {
  TUNEDB_SKIP_WITHOUT_GPU();
  CudnnFinder::Options options;
  options.min_rounds = 3;
  absl::StatusOr<std::unique_ptr<CudnnFinder>> f = CudnnFinder::Create(options);
  ASSERT_TRUE(f.ok()) << f.status();
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  const ConvProblem p =
      MakeProblem(ConvOp::kForward, Layout::kNHWC, DataType::kHalf, false, 8,
                  64, 64, 28, 3, 1, 1, 1, 1);
  absl::StatusOr<SearchResult> r = (*f)->Search(0, p, SearchOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  // A small problem: what its algorithms ask for is under the 1 GiB floor.
  EXPECT_EQ(r->workspace_cap_bytes,
            std::min<int64_t>(int64_t{1} << 30,
                              static_cast<int64_t>(free_bytes / 4)));
}

TEST(CudnnFinderGpuSmokeTest, InvalidProblemIsInvalidArgument) {
  TUNEDB_SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<CudnnFinder>> f =
      CudnnFinder::Create(CudnnFinder::Options{});
  ASSERT_TRUE(f.ok()) << f.status();
  ConvProblem p = MakeProblem(ConvOp::kForward, Layout::kNCHW, DataType::kFloat,
                              true, 2, 30, 64, 16, 3, 1, 1, 1, 4);  // 30 % 4
  EXPECT_EQ((*f)->Search(0, p, SearchOptions{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*f)->Search(1, p, SearchOptions{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunedb
