// tunedb_gpu_bench: for ResNet-50 layers (fp16 NHWC and fp32 NCHW, forward
// and a few backward passes) prints tunedb's chosen algorithm and its
// re-timed median, cuDNN's heuristic choice (first OK entry of
// cudnnGet*Algorithm_v7 that fits the workspace cap), both timed again here
// in the same run, interleaved, with CUDA events after a warm-up (median of
// --repeats samples, each a batch of back-to-back runs of about 1 ms
// replayed as a CUDA graph), their ratio, and what the search cost. It
// compares GPU time, what callers that replay CUDA graphs see; tunedb_regret
// (bench/regret/) evaluates the launch-inclusive choice that direct callers
// get. Writes a table to stdout and everything to --json.
//
//   tunedb_gpu_bench [--json=out.json] [--batch=32] [--repeats=51]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/math_policy.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_device.h"
#include "cudnn/cudnn_handles.h"
#include "nlohmann/json.hpp"
#include "server/search/candidates.h"
#include "server/search/cudnn_finder.h"
#include "server/search/run_timer.h"
#include "server/search/sample_stats.h"

namespace tunedb {
namespace {

struct Layer {
  const char* name;
  ConvOp op;
  DataType type;
  Layout layout;
  int64_t c, k, in, filt, pad, stride;
};

// One layer a row.
// clang-format off
const Layer kLayers[] = {
    // fp16 NHWC forward (tensor cores), ResNet-50 v1.5.
    {"conv1", ConvOp::kForward, DataType::kHalf, Layout::kNHWC, 3, 64, 224, 7, 3, 2},
    {"l1.1x1a", ConvOp::kForward, DataType::kHalf, Layout::kNHWC, 64, 64, 56, 1, 0, 1},
    {"l1.3x3", ConvOp::kForward, DataType::kHalf, Layout::kNHWC, 64, 64, 56, 3, 1, 1},
    {"l1.1x1b", ConvOp::kForward, DataType::kHalf, Layout::kNHWC, 64, 256, 56, 1, 0, 1},
    {"l2.3x3s2", ConvOp::kForward, DataType::kHalf, Layout::kNHWC, 128, 128, 56, 3, 1, 2},
    {"l3.3x3", ConvOp::kForward, DataType::kHalf, Layout::kNHWC, 256, 256, 14, 3, 1, 1},
    {"l4.3x3", ConvOp::kForward, DataType::kHalf, Layout::kNHWC, 512, 512, 7, 3, 1, 1},
    {"l4.1x1b", ConvOp::kForward, DataType::kHalf, Layout::kNHWC, 512, 2048, 7, 1, 0, 1},
    // fp32 NCHW forward (TF32 allowed, as frameworks default).
    {"l1.3x3", ConvOp::kForward, DataType::kFloat, Layout::kNCHW, 64, 64, 56, 3, 1, 1},
    {"l1.1x1b", ConvOp::kForward, DataType::kFloat, Layout::kNCHW, 64, 256, 56, 1, 0, 1},
    {"l3.3x3", ConvOp::kForward, DataType::kFloat, Layout::kNCHW, 256, 256, 14, 3, 1, 1},
    {"l4.3x3", ConvOp::kForward, DataType::kFloat, Layout::kNCHW, 512, 512, 7, 3, 1, 1},
    // Backward passes.
    {"l1.3x3", ConvOp::kBackwardData, DataType::kHalf, Layout::kNHWC, 64, 64, 56, 3, 1, 1},
    {"l1.3x3", ConvOp::kBackwardFilter, DataType::kHalf, Layout::kNHWC, 64, 64, 56, 3, 1, 1},
    {"l3.3x3", ConvOp::kBackwardData, DataType::kHalf, Layout::kNHWC, 256, 256, 14, 3, 1, 1},
    {"l3.3x3", ConvOp::kBackwardFilter, DataType::kHalf, Layout::kNHWC, 256, 256, 14, 3, 1, 1},
    {"l3.3x3", ConvOp::kBackwardFilter, DataType::kFloat, Layout::kNCHW, 256, 256, 14, 3, 1, 1},
    {"l1.3x3", ConvOp::kBackwardData, DataType::kFloat, Layout::kNCHW, 64, 64, 56, 3, 1, 1},
};
// clang-format on

ConvProblem ToProblem(const Layer& l, int64_t batch) {
  ConvProblem p;
  p.op = l.op;
  p.layout = l.layout;
  p.spatial_dims = 2;
  p.n = batch;
  p.c = l.c;
  p.k = l.k;
  p.input = {l.in, l.in, 0};
  p.filter = {l.filt, l.filt, 0};
  p.padding = {l.pad, l.pad, 0};
  p.stride = {l.stride, l.stride, 0};
  p.dilation = {1, 1, 0};
  p.input_type = p.output_type = l.type;
  p.compute_type = DataType::kFloat;
  p.allow_tensor_cores = true;
  p.allow_tf32 = KeyAllowsTf32(l.type, true, true);
  return p;
}

struct Timed {
  double median_ms = 0;
  double spread_ms = 0;
};

// Times a and b interleaved (order alternating each round) after warm-up.
absl::StatusOr<std::pair<Timed, Timed>> TimePair(CudnnConv& conv,
                                                 cudaStream_t stream,
                                                 const AlgoResult& a,
                                                 const AlgoResult& b, void* ws,
                                                 size_t ws_bytes, int repeats,
                                                 bool* graphed) {
  absl::StatusOr<CudaEvent> e0 = CudaEvent::Create();
  absl::StatusOr<CudaEvent> e1 = CudaEvent::Create();
  if (!e0.ok()) return e0.status();
  if (!e1.ok()) return e1.status();
  const AlgoResult* both[2] = {&a, &b};
  const auto warm_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    for (const AlgoResult* r : both) {
      absl::Status s = conv.Run(r->algo, r->math_type, ws, ws_bytes);
      if (!s.ok()) return s;
    }
    if (cudaStreamSynchronize(stream) != cudaSuccess) {
      return absl::InternalError("warm-up failed");
    }
    if (i >= 3 && std::chrono::steady_clock::now() - warm_start >
                      std::chrono::milliseconds(100)) {
      break;
    }
  }
  // Each sample: a batch of back-to-back runs of about 0.5 ms (as the
  // finder times), divided by its length.
  std::unique_ptr<RunTimer> timer[2];
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<DirectSample> one =
        TimeDirectRuns(conv, stream, both[i]->algo, both[i]->math_type, ws,
                       ws_bytes, 1, e0->get(), e1->get());
    if (!one.ok()) return one.status();
    const int batch =
        SampleBatch(one->launch_ms, CudnnFinder::Options().sample_ms,
                    CudnnFinder::Options().max_batch);
    absl::StatusOr<std::unique_ptr<RunTimer>> t = RunTimer::Create(
        &conv, stream, both[i]->algo, both[i]->math_type, ws, ws_bytes, batch);
    if (!t.ok()) return t.status();
    timer[i] = std::move(*t);
  }
  std::vector<double> samples[2];
  for (int round = 0; round < repeats; ++round) {
    for (int j = 0; j < 2; ++j) {
      const int which = (round + j) % 2;
      absl::StatusOr<double> ms = timer[which]->Sample(e0->get(), e1->get());
      if (!ms.ok()) return ms.status();
      samples[which].push_back(*ms);
    }
  }
  *graphed = timer[0]->graphed() && timer[1]->graphed();
  std::pair<Timed, Timed> out;
  Timed* t[2] = {&out.first, &out.second};
  for (int i = 0; i < 2; ++i) {
    t[i]->median_ms = Median(samples[i]);
    t[i]->spread_ms = Spread(samples[i]);
  }
  return out;
}

int Main(int argc, char** argv) {
  std::string json_path;
  int64_t batch = 32;
  int repeats = 51;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind("--json=", 0) == 0) {
      json_path = std::string(a.substr(7));
    } else if (a.rfind("--batch=", 0) == 0) {
      if (!absl::SimpleAtoi(std::string(a.substr(8)), &batch)) return 2;
    } else if (a.rfind("--repeats=", 0) == 0) {
      if (!absl::SimpleAtoi(std::string(a.substr(10)), &repeats)) return 2;
    } else {
      std::fprintf(stderr, "usage: %s [--json=F] [--batch=N] [--repeats=R]\n",
                   argv[0]);
      return 2;
    }
  }
  absl::StatusOr<std::unique_ptr<CudnnFinder>> finder =
      CudnnFinder::Create(CudnnFinder::Options{});
  if (!finder.ok()) {
    std::fprintf(stderr, "no cuDNN finder: %s\n",
                 finder.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<DeviceInfo> device = QueryCudaDevice(0);
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  if (!device.ok() || !handle.ok() || !stream.ok()) return 1;

  nlohmann::json out;
  out["device"] = device->key.ToText();
  out["gpu_uuid"] = device->uuid;
  out["driver"] = device->driver_version;
  out["batch"] = batch;
  out["repeats"] = repeats;
  out["rows"] = nlohmann::json::array();
  std::printf("# %s driver %s batch %lld, medians of %d interleaved repeats\n",
              device->key.ToText().c_str(), device->driver_version.c_str(),
              static_cast<long long>(batch), repeats);
  std::printf("%-10s %-10s %-4s %-4s | %-14s %9s | %-14s %9s | %6s | %9s %s\n",
              "layer", "op", "type", "lay", "tunedb algo", "ms", "heuristic",
              "ms", "h/t", "search_ms", "verified");
  std::vector<double> ratios;
  for (const Layer& layer : kLayers) {
    const ConvProblem problem = ToProblem(layer, batch);
    SearchOptions options;
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<SearchResult> result =
        (*finder)->Search(0, problem, options);
    const double search_ms = std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - t0)
                                 .count();
    nlohmann::json row;
    row["layer"] = layer.name;
    row["key"] = problem.ToText();
    if (!result.ok() || result->results.empty() ||
        result->results[0].status != AlgoStatus::kOk) {
      row["error"] =
          result.ok() ? "no algorithm supported" : result.status().ToString();
      std::printf("%-10s %s: %s\n", layer.name, problem.ToText().c_str(),
                  std::string(row["error"]).c_str());
      out["rows"].push_back(row);
      continue;
    }
    const AlgoResult chosen = result->results[0];

    absl::StatusOr<std::unique_ptr<CudnnConv>> conv =
        CudnnConv::Create(problem, handle->get(), stream->get(), 99);
    if (!conv.ok()) return 1;
    const MathType policy_math = SearchMathTypes(problem)[0];
    absl::StatusOr<std::vector<CudnnConv::Entry>> heur =
        (*conv)->Heuristic(policy_math);
    AlgoResult h;
    bool have_h = false;
    if (heur.ok()) {
      for (const CudnnConv::Entry& e : *heur) {
        if (e.status != CUDNN_STATUS_SUCCESS) continue;
        absl::StatusOr<int64_t> need =
            (*conv)->WorkspaceSize(e.algo, policy_math);
        if (!need.ok() || *need > result->workspace_cap_bytes) continue;
        h.algo = e.algo;
        h.math_type = policy_math;
        h.workspace_bytes = *need;
        have_h = true;
        break;
      }
    }
    if (!have_h) {
      row["error"] = "heuristic returned no usable algorithm";
      out["rows"].push_back(row);
      continue;
    }
    const size_t ws_bytes = static_cast<size_t>(
        std::max(chosen.workspace_bytes, h.workspace_bytes));
    absl::StatusOr<DeviceBuffer> ws = DeviceBuffer::Allocate(ws_bytes);
    if (!ws.ok()) return 1;
    bool graphed = false;
    absl::StatusOr<std::pair<Timed, Timed>> timed =
        TimePair(**conv, stream->get(), chosen, h, ws->get(), ws->bytes(),
                 repeats, &graphed);
    if (!timed.ok()) {
      row["error"] = timed.status().ToString();
      out["rows"].push_back(row);
      continue;
    }
    const double ratio = timed->second.median_ms / timed->first.median_ms;
    ratios.push_back(ratio);
    const std::string t_name =
        absl::StrCat(chosen.algo, "/", MathTypeName(chosen.math_type));
    const std::string h_name =
        absl::StrCat(h.algo, "/", MathTypeName(h.math_type));
    std::printf(
        "%-10s %-10s %-4s %-4s | %-14s %9.4f | %-14s %9.4f | %6.3f | %9.1f "
        "%s\n",
        layer.name, std::string(ConvOpName(problem.op)).c_str(),
        std::string(DataTypeName(problem.input_type)).c_str(),
        std::string(LayoutName(problem.layout)).c_str(), t_name.c_str(),
        timed->first.median_ms, h_name.c_str(), timed->second.median_ms, ratio,
        search_ms,
        result->verified ? (graphed ? "yes" : "yes (no graph)") : "NO");
    std::fflush(stdout);
    row["tunedb"] = {{"algo", chosen.algo},
                     {"math", MathTypeName(chosen.math_type)},
                     {"search_gpu_median_ms", chosen.gpu.median_ms},
                     {"search_gpu_spread_ms", chosen.gpu.spread_ms},
                     {"search_gpu_samples", chosen.gpu.samples},
                     {"search_launch_median_ms", chosen.launch.median_ms},
                     {"workspace_bytes", chosen.workspace_bytes},
                     {"median_ms", timed->first.median_ms},
                     {"spread_ms", timed->first.spread_ms}};
    row["heuristic"] = {{"algo", h.algo},
                        {"math", MathTypeName(h.math_type)},
                        {"workspace_bytes", h.workspace_bytes},
                        {"median_ms", timed->second.median_ms},
                        {"spread_ms", timed->second.spread_ms}};
    row["heuristic_over_tunedb"] = ratio;
    nlohmann::json ranking = nlohmann::json::array();
    for (const AlgoResult& r : result->results) {
      ranking.push_back({{"algo", r.algo},
                         {"math", MathTypeName(r.math_type)},
                         {"status", AlgoStatusName(r.status)},
                         {"launch_ms", r.launch.median_ms},
                         {"gpu_ms", r.gpu.median_ms},
                         {"host_ms", r.host.median_ms},
                         {"samples", r.gpu.samples},
                         {"workspace_bytes", r.workspace_bytes},
                         {"error", r.error}});
    }
    row["ranking"] = ranking;
    row["search_ms"] = search_ms;
    row["cuda_graph_timing"] = graphed;
    row["search_repeats"] = result->repeats;
    row["workspace_cap_bytes"] = result->workspace_cap_bytes;
    row["verified"] = result->verified;
    out["rows"].push_back(row);
  }
  if (!ratios.empty()) {
    double log_sum = 0;
    for (double r : ratios) log_sum += std::log(r);
    const double geomean = std::exp(log_sum / ratios.size());
    out["geomean_heuristic_over_tunedb"] = geomean;
    std::printf("geomean heuristic/tunedb time over %zu layers: %.3f\n",
                ratios.size(), geomean);
  }
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) { return tunedb::Main(argc, argv); }
