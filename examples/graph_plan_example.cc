// graph_plan_example: one cuDNN graph-API (backend) forward convolution run
// from tunedb's stored execution plan, checked against the legacy API's
// implicit GEMM in FMA math on the same inputs.
//
//   graph_plan_example [--address=unix:/run/tunedb/tunedb.sock] [--n=32
//                      --c=64 --k=128 --hw=56 --r=3] [--wait_ms=60000]
//
// It asks the daemon for the tuned engine config of the fp16 NHWC problem
// (api=graph, 16-byte alignment), waiting up to --wait_ms for a search if
// nothing is stored, and gets a ready plan: the stored serialized plan
// loaded (nothing compiled), else one built from the tuned engine id and
// knobs, else from cuDNN's heuristic (no daemon). It prints which, how long
// obtaining the plan took, and whether the outputs match.
//
// Exit status: 0 outputs match, 1 they do not, 2 an error, 77 no GPU.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tunedb/client.h"
#include "tunedb/cudnn_graph_helpers.h"
#include "tunedb/cudnn_helpers.h"

namespace {

constexpr int kSkip = 77;

struct Flags {
  std::string address = "unix:/run/tunedb/tunedb.sock";
  int64_t n = 32, c = 64, k = 128, hw = 56, r = 3;
  int64_t wait_ms = 60000;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "graph_plan_example: a graph-API convolution run from tunedb's "
          "stored plan,\nchecked against the legacy API.\n\n"
          "  graph_plan_example [--address=ADDR] [--n=32 --c=64 --k=128 "
          "--hw=56 --r=3]\n                     [--wait_ms=60000]\n\n"
          "Exit status: 0 outputs match, 1 they do not, 2 an error, 77 no "
          "GPU.\n");
      std::exit(0);
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq), value = a.substr(eq + 1);
    if (eq == std::string::npos) {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return false;
    }
    if (name == "--address") {
      f->address = value;
    } else if (name == "--n") {
      f->n = std::atoll(value.c_str());
    } else if (name == "--c") {
      f->c = std::atoll(value.c_str());
    } else if (name == "--k") {
      f->k = std::atoll(value.c_str());
    } else if (name == "--hw") {
      f->hw = std::atoll(value.c_str());
    } else if (name == "--r") {
      f->r = std::atoll(value.c_str());
    } else if (name == "--wait_ms") {
      f->wait_ms = std::atoll(value.c_str());
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

// Device memory freed at scope exit.
struct Buffer {
  void* ptr = nullptr;
  explicit Buffer(size_t bytes) {
    if (cudaMalloc(&ptr, bytes == 0 ? 1 : bytes) != cudaSuccess) ptr = nullptr;
  }
  ~Buffer() {
    if (ptr != nullptr) cudaFree(ptr);
  }
};

std::vector<__half> RandomHalves(int64_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<__half> v(static_cast<size_t>(count));
  for (__half& x : v) x = __float2half(dist(gen));
  return v;
}

int Run(const Flags& flags) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("graph_plan_example: no GPU here; nothing to run (skipped)\n");
    return kSkip;
  }
  cudnnHandle_t handle = nullptr;
  if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS) return 2;
  absl::StatusOr<tunedb::DeviceKey> device = tunedb::CurrentDeviceKey();
  if (!device.ok()) {
    std::fprintf(stderr, "%s\n", device.status().ToString().c_str());
    return 2;
  }
  tunedb::ConvProblem p;
  p.n = flags.n;
  p.c = flags.c;
  p.k = flags.k;
  p.input = {flags.hw, flags.hw, 0};
  p.filter = {flags.r, flags.r, 0};
  p.padding = {flags.r / 2, flags.r / 2, 0};
  p.stride = {1, 1, 0};
  p.dilation = {1, 1, 0};
  p.input_type = p.output_type = tunedb::DataType::kHalf;
  p.compute_type = tunedb::DataType::kFloat;
  p.layout = tunedb::Layout::kNHWC;
  p.allow_tf32 = false;
  p.api = tunedb::ConvApi::kGraph;
  p.alignment = 16;  // cudaMalloc'd buffers are 256-byte aligned
  const tunedb::ProblemKey key{*device, p};
  if (absl::Status s = key.Validate(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }

  tunedb::ClientOptions options;
  options.address = flags.address;
  options.miss_policy = tunedb::MissPolicy::kTuneAndWait;
  options.tune_deadline = absl::Milliseconds(flags.wait_ms);
  auto client = tunedb::Client::Create(options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 2;
  }
  std::printf("device : %s\n", device->ToText().c_str());
  std::printf("problem: %s\n", p.ToText().c_str());
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<tunedb::ExecutionPlan> plan =
      tunedb::GetExecutionPlan(**client, handle, key);
  const double plan_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", plan.status().ToString().c_str());
    return 2;
  }
  std::printf("plan   : %s, engine %d, workspace %lld B, %.2f ms to obtain%s%s\n",
              std::string(tunedb::PlanSourceName(plan->source)).c_str(),
              plan->engine, static_cast<long long>(plan->workspace_bytes),
              plan_ms, plan->fallback.empty() ? "" : "; ",
              plan->fallback.c_str());

  // Inputs, the graph's output and the legacy reference's.
  const int64_t xn = p.InputElements(), wn = p.FilterElements(),
                yn = p.OutputElements();
  Buffer x(xn * 2), w(wn * 2), y(yn * 2), y_ref(yn * 2),
      ws(static_cast<size_t>(plan->workspace_bytes));
  if (!x.ptr || !w.ptr || !y.ptr || !y_ref.ptr || !ws.ptr) return 2;
  const std::vector<__half> hx = RandomHalves(xn, 1), hw = RandomHalves(wn, 2);
  cudaMemcpy(x.ptr, hx.data(), xn * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(w.ptr, hw.data(), wn * 2, cudaMemcpyHostToDevice);
  if (absl::Status s = tunedb::RunPlan(handle, *plan, x.ptr, w.ptr, y.ptr,
                                       ws.ptr);
      !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  tunedb::ConvProblem legacy = p;
  legacy.api = tunedb::ConvApi::kLegacy;
  legacy.alignment = 0;
  auto desc = tunedb::CudnnDescriptors::Create(legacy);
  if (!desc.ok()) return 2;
  cudnnSetConvolutionMathType((*desc)->conv(), CUDNN_FMA_MATH);
  size_t ref_ws_bytes = 0;
  cudnnGetConvolutionForwardWorkspaceSize(
      handle, (*desc)->x(), (*desc)->w(), (*desc)->conv(), (*desc)->y(),
      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &ref_ws_bytes);
  Buffer ref_ws(ref_ws_bytes);
  const float one = 1, zero = 0;
  if (cudnnConvolutionForward(handle, &one, (*desc)->x(), x.ptr, (*desc)->w(),
                              w.ptr, (*desc)->conv(),
                              CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                              ref_ws.ptr, ref_ws_bytes, &zero, (*desc)->y(),
                              y_ref.ptr) != CUDNN_STATUS_SUCCESS) {
    return 2;
  }
  std::vector<__half> out(static_cast<size_t>(yn)), ref(static_cast<size_t>(yn));
  cudaMemcpy(out.data(), y.ptr, yn * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(ref.data(), y_ref.ptr, yn * 2, cudaMemcpyDeviceToHost);
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < yn; ++i) {
    const double a = __half2float(out[i]), b = __half2float(ref[i]);
    diff += (a - b) * (a - b);
    norm += b * b;
  }
  const double rel = std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
  std::printf("check  : relative L2 difference %.3g against implicit GEMM "
              "(FMA): %s\n",
              rel, rel <= 1e-2 ? "match" : "MISMATCH");
  cudnnDestroy(handle);
  return rel <= 1e-2 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  return Run(flags);
}
