// conv_example: one cuDNN forward convolution launched with tunedb's choice,
// checked against a reference algorithm.
//
//   conv_example [--address=unix:/run/tunedb/tunedb.sock] [--n=32 --c=64
//                --k=128 --hw=56 --r=3] [--wait_ms=60000] [--db=PATH]
//
// It asks the tunedb daemon for the algorithm (waiting up to --wait_ms for a
// search if nothing is stored); if the daemon is not running it uses cuDNN's
// heuristic instead (or, with --db, the daemon's database file read
// directly), so it works either way. It then runs the convolution
// with that algorithm and with IMPLICIT_GEMM in FMA math (the reference),
// compares the outputs and prints what it did.
//
// Exit status: 0 outputs match, 1 they do not, 2 an error, 77 no GPU (the
// test is skipped).
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tunedb/client.h"
#include "tunedb/conv_shape.h"
#include "tunedb/cudnn_helpers.h"

namespace {

constexpr int kSkip = 77;

struct Flags {
  std::string address = "unix:/run/tunedb/tunedb.sock";
  int64_t n = 32, c = 64, k = 128, hw = 56, r = 3;
  int64_t wait_ms = 60000;
  std::string db;
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      const std::string prefix = std::string("--") + name + "=";
      return a.rfind(prefix, 0) == 0 ? argv[i] + prefix.size() : nullptr;
    };
    if (a == "--help" || a == "-h") {
      std::printf(
          "conv_example: one cuDNN forward convolution launched with "
          "tunedb's choice,\nchecked against a reference algorithm "
          "(IMPLICIT_GEMM, FMA math).\n\n"
          "  conv_example [--address=unix:/run/tunedb/tunedb.sock] [--n=32 "
          "--c=64\n               --k=128 --hw=56 --r=3] [--wait_ms=60000] "
          "[--db=PATH]\n\n"
          "Without a daemon it uses cuDNN's heuristic (or, with --db, the "
          "daemon's\ndatabase file). Exit status: 0 outputs match, 1 they "
          "do not, 2 an error,\n77 no GPU.\n");
      std::exit(0);
    }
    if (const char* v = value("address")) {
      f.address = v;
    } else if (const char* v = value("n")) {
      f.n = std::atoll(v);
    } else if (const char* v = value("c")) {
      f.c = std::atoll(v);
    } else if (const char* v = value("k")) {
      f.k = std::atoll(v);
    } else if (const char* v = value("hw")) {
      f.hw = std::atoll(v);
    } else if (const char* v = value("r")) {
      f.r = std::atoll(v);
    } else if (const char* v = value("wait_ms")) {
      f.wait_ms = std::atoll(v);
    } else if (const char* v = value("db")) {
      f.db = v;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  return f;
}

#define CHECK_CUDA(expr)                                               \
  do {                                                                 \
    cudaError_t e_ = (expr);                                           \
    if (e_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #expr, cudaGetErrorString(e_)); \
      return 2;                                                        \
    }                                                                  \
  } while (0)
#define CHECK_CUDNN(expr)                                               \
  do {                                                                  \
    cudnnStatus_t s_ = (expr);                                          \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                   \
      std::fprintf(stderr, "%s: %s\n", #expr, cudnnGetErrorString(s_)); \
      return 2;                                                         \
    }                                                                   \
  } while (0)

// Device buffer freed at scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  ~DeviceBuffer() {
    if (ptr != nullptr) cudaFree(ptr);
  }
};

// Mean time of `reps` runs of `run`, in ms.
template <typename Fn>
double TimeMs(Fn run, int reps) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  run();  // warm up
  cudaEventRecord(start);
  for (int i = 0; i < reps; ++i) run();
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / reps;
}

int Run(const Flags& flags) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("conv_example: no GPU here; nothing to run (skipped)\n");
    return kSkip;
  }
  cudnnHandle_t handle;
  CHECK_CUDNN(cudnnCreate(&handle));

  absl::StatusOr<tunedb::DeviceKey> device = tunedb::CurrentDeviceKey();
  if (!device.ok()) {
    std::fprintf(stderr, "%s\n", device.status().ToString().c_str());
    return 2;
  }
  tunedb::ConvShape shape;
  shape.n = flags.n;
  shape.c = flags.c;
  shape.k = flags.k;
  shape.input = {flags.hw, flags.hw};
  shape.filter = {flags.r, flags.r};
  shape.padding = {flags.r / 2, flags.r / 2};
  absl::StatusOr<tunedb::ConvProblem> problem = tunedb::MakeConvProblem(shape);
  if (!problem.ok()) {
    std::fprintf(stderr, "%s\n", problem.status().ToString().c_str());
    return 2;
  }
  auto desc = tunedb::CudnnDescriptors::Create(*problem);
  if (!desc.ok()) {
    std::fprintf(stderr, "%s\n", desc.status().ToString().c_str());
    return 2;
  }
  const tunedb::CudnnDescriptors& d = **desc;

  tunedb::ClientOptions options;
  options.address = flags.address;
  options.miss_policy = tunedb::MissPolicy::kTuneAndWait;
  options.tune_deadline = absl::Milliseconds(flags.wait_ms);
  options.reconnect_backoff_min = absl::Milliseconds(100);
  options.heuristic = tunedb::CudnnHeuristic(handle);
  options.db_path = flags.db;
  auto client = tunedb::Client::Create(options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 2;
  }
  if (!flags.db.empty()) {
    // The client opens the file in the background; give it a moment.
    for (int i = 0; i < 200 && !(*client)->Stats().database_open; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::printf("database: %s %s\n", flags.db.c_str(),
                (*client)->Stats().database_open ? "open" : "not readable");
  }

  std::printf("device : %s\n", device->ToText().c_str());
  std::printf("problem: %s\n", problem->ToText().c_str());
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<tunedb::CudnnAlgo> algo =
      tunedb::ChooseAlgo(**client, handle, *device, tunedb::ConvOp::kForward,
                         d.x(), d.w(), d.conv(), d.y());
  const double choose_ms = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - t0)
                               .count();
  if (!algo.ok()) {
    std::fprintf(stderr, "%s\n", algo.status().ToString().c_str());
    return 2;
  }
  tunedb::Answer again = (*client)->Get(tunedb::ProblemKey{*device, *problem});
  std::printf(
      "choice : algo %d, math type %d, workspace %zu bytes, from %s "
      "(%.2f ms; the next Get: from %s)\n",
      static_cast<int>(algo->fwd_algo), static_cast<int>(algo->math_type),
      algo->workspace_bytes,
      std::string(tunedb::SourceName(algo->source)).c_str(), choose_ms,
      std::string(tunedb::SourceName(again.source)).c_str());

  // Data.
  const int64_t nx = problem->InputElements();
  const int64_t nw = problem->FilterElements();
  const int64_t ny = problem->OutputElements();
  std::vector<float> hx(nx), hw(nw);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : hx) v = dist(rng);
  for (float& v : hw) v = dist(rng);
  DeviceBuffer x, w, y, y_ref, workspace, ref_workspace;
  CHECK_CUDA(cudaMalloc(&x.ptr, nx * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&w.ptr, nw * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y.ptr, ny * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y_ref.ptr, ny * sizeof(float)));
  CHECK_CUDA(
      cudaMemcpy(x.ptr, hx.data(), nx * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(
      cudaMemcpy(w.ptr, hw.data(), nw * sizeof(float), cudaMemcpyHostToDevice));
  if (algo->workspace_bytes > 0) {
    CHECK_CUDA(cudaMalloc(&workspace.ptr, algo->workspace_bytes));
  }
  const float one = 1.0f, zero = 0.0f;

  // tunedb's choice.
  CHECK_CUDNN(cudnnSetConvolutionMathType(d.conv(), algo->math_type));
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  auto run_choice = [&] {
    status = cudnnConvolutionForward(
        handle, &one, d.x(), x.ptr, d.w(), w.ptr, d.conv(), algo->fwd_algo,
        workspace.ptr, algo->workspace_bytes, &zero, d.y(), y.ptr);
  };
  const double choice_ms = TimeMs(run_choice, 10);
  CHECK_CUDNN(status);

  // The reference: implicit GEMM in plain FP32 (FMA) math.
  const cudnnConvolutionFwdAlgo_t ref_algo =
      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  CHECK_CUDNN(cudnnSetConvolutionMathType(d.conv(), CUDNN_FMA_MATH));
  size_t ref_bytes = 0;
  CHECK_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(
      handle, d.x(), d.w(), d.conv(), d.y(), ref_algo, &ref_bytes));
  if (ref_bytes > 0) CHECK_CUDA(cudaMalloc(&ref_workspace.ptr, ref_bytes));
  auto run_ref = [&] {
    status = cudnnConvolutionForward(handle, &one, d.x(), x.ptr, d.w(), w.ptr,
                                     d.conv(), ref_algo, ref_workspace.ptr,
                                     ref_bytes, &zero, d.y(), y_ref.ptr);
  };
  const double ref_ms = TimeMs(run_ref, 10);
  CHECK_CUDNN(status);
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<float> hy(ny), hy_ref(ny);
  CHECK_CUDA(
      cudaMemcpy(hy.data(), y.ptr, ny * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hy_ref.data(), y_ref.ptr, ny * sizeof(float),
                        cudaMemcpyDeviceToHost));
  double max_err = 0, max_ref = 0;
  for (int64_t i = 0; i < ny; ++i) {
    max_err = std::max(max_err, std::fabs(double{hy[i]} - hy_ref[i]));
    max_ref = std::max(max_ref, std::fabs(double{hy_ref[i]}));
  }
  // TF32 / tensor-op math rounds inputs to 10 mantissa bits.
  const bool reduced = algo->math_type != CUDNN_FMA_MATH;
  const double tolerance = (reduced ? 1e-2 : 1e-4) * std::max(1.0, max_ref);
  const bool match = max_err <= tolerance && std::isfinite(max_err);
  std::printf(
      "ran    : tunedb's choice %.3f ms, reference (IMPLICIT_GEMM, FMA) %.3f "
      "ms -> %.2fx\n",
      choice_ms, ref_ms, ref_ms / std::max(choice_ms, 1e-9));
  std::printf(
      "check  : max |y - y_ref| = %.3g (largest |y_ref| %.3g, "
      "tolerance %.3g): %s\n",
      max_err, max_ref, tolerance, match ? "MATCH" : "MISMATCH");
  const tunedb::ClientStats s = (*client)->Stats();
  std::printf(
      "client : gets %lld, hits %lld, daemon answers %lld, daemon "
      "errors %lld, fallbacks %lld\n",
      static_cast<long long>(s.gets), static_cast<long long>(s.hits),
      static_cast<long long>(s.daemon_answers),
      static_cast<long long>(s.daemon_errors),
      static_cast<long long>(s.fallbacks));
  client->reset();
  cudnnDestroy(handle);
  return match ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return Run(ParseFlags(argc, argv)); }
