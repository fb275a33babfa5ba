#include "server/finder/simulated_finder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/record_results.h"

namespace tunedb {
namespace {

// The eight modelled algorithms: a cost factor on the FLOP count, a fixed
// overhead, a workspace need and determinism.
struct AlgoModel {
  int algo;
  double flop_factor;  // time per GFLOP, ms
  double overhead_ms;
  double workspace_factor;  // workspace bytes per input byte
  bool deterministic;
  bool needs_unit_stride;   // FFT/Winograd-like: stride and dilation 1
  bool needs_small_filter;  // Winograd-like: filter <= 5
  bool tensor_op;           // uses tensor cores (math type)
  double host_ms;           // host cost of one call (cuDNN 9: 15-440 us)
};

constexpr AlgoModel kAlgos[] = {
    {0, 1.00, 0.010, 0.0, true, false, false, false, 0.018},   // implicit gemm
    {1, 0.70, 0.020, 0.05, true, false, false, false, 0.110},  // precomp gemm
    {2, 0.55, 0.050, 1.0, true, false, false, true, 0.030},    // gemm
    {3, 0.80, 0.005, 0.0, false, false, false, false,
     0.020},                                                  // direct, atomics
    {4, 0.35, 0.120, 3.0, true, true, false, false, 0.060},   // fft
    {5, 0.30, 0.200, 1.5, true, true, false, false, 0.080},   // fft tiling
    {6, 0.25, 0.030, 0.5, true, true, true, true, 0.040},     // winograd
    {7, 0.40, 0.015, 0.2, false, false, false, true, 0.025},  // tensor-op
};

double Gflop(const ConvProblem& p) {
  double v = 2.0 * static_cast<double>(p.n) * static_cast<double>(p.k) *
             static_cast<double>(p.c / p.groups);
  for (int i = 0; i < p.spatial_dims; ++i) {
    v *=
        static_cast<double>(p.OutputSize(i)) * static_cast<double>(p.filter[i]);
  }
  return v / 1e9;
}

bool UnitStrideAndDilation(const ConvProblem& p) {
  for (int i = 0; i < p.spatial_dims; ++i) {
    if (p.stride[i] != 1 || p.dilation[i] != 1) return false;
  }
  return true;
}

bool SmallFilter(const ConvProblem& p) {
  for (int i = 0; i < p.spatial_dims; ++i) {
    if (p.filter[i] > 5 || p.filter[i] < 2) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<SimulatedFinder::Options> SimulatedFinder::Options::Parse(
    absl::string_view text) {
  Options o;
  for (absl::string_view item :
       absl::StrSplit(text, absl::ByAnyChar(";,"), absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    auto bad = [&] {
      return absl::InvalidArgumentError(
          absl::StrCat("simulated finder option '", item, "' is malformed"));
    };
    int64_t v = 0;
    if (kv.first == "model") {
      if (kv.second.empty()) return bad();
      o.model = std::string(kv.second);
      continue;
    }
    if (kv.first == "driver") {
      if (kv.second.empty()) return bad();
      o.driver_version = std::string(kv.second);
      continue;
    }
    if (!absl::SimpleAtoi(kv.second, &v)) return bad();
    if (kv.first == "devices") {
      if (v < 1 || v > 64) return bad();
      o.devices = static_cast<int>(v);
    } else if (kv.first == "cudnn") {
      if (v < 1) return bad();
      o.cudnn_version = static_cast<int>(v);
    } else if (kv.first == "slow_ms") {
      if (v < 0) return bad();
      o.slow_ms = static_cast<int>(v);
    } else if (kv.first == "fail_n") {
      o.fail_n = v;
    } else if (kv.first == "hang_n") {
      o.hang_n = v;
    } else if (kv.first == "crash_n") {
      o.crash_n = v;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown simulated finder option '", kv.first,
                       "' (known: devices, model, driver, cudnn, slow_ms, "
                       "fail_n, hang_n, crash_n)"));
    }
  }
  return o;
}

SimulatedFinder::SimulatedFinder(Options options)
    : options_(std::move(options)) {
  for (int i = 0; i < options_.devices; ++i) {
    device_mu_.push_back(std::make_unique<absl::Mutex>());
  }
}

absl::StatusOr<std::vector<DeviceInfo>> SimulatedFinder::Devices() {
  std::vector<DeviceInfo> out;
  for (int i = 0; i < options_.devices; ++i) {
    DeviceInfo d;
    d.key.gpu_model = options_.model;
    d.key.cc_major = 9;
    d.key.cc_minor = 0;
    d.key.sm_count = 132;
    d.key.cudnn_version = options_.cudnn_version;
    d.key.cuda_runtime_version = 13000;
    d.ordinal = i;
    d.uuid = absl::StrCat("SIM-", i);
    d.driver_version = options_.driver_version;
    d.total_memory_bytes = int64_t{80} << 30;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<AlgoResult> SimulatedFinder::Model(const ConvProblem& p) {
  std::vector<AlgoResult> out;
  const double gflop = Gflop(p);
  const bool none_supported = static_cast<double>(p.n) *
                                  static_cast<double>(p.c) *
                                  static_cast<double>(p.k) >
                              std::ldexp(1.0, 40);
  const double type_factor = p.input_type == DataType::kFloat
                                 ? (p.allow_tf32 ? 0.6 : 1.0)
                             : p.input_type == DataType::kDouble ? 4.0
                                                                 : 0.4;
  const double input_bytes =
      static_cast<double>(p.InputElements()) * DataTypeBytes(p.input_type);
  for (const AlgoModel& m : kAlgos) {
    AlgoResult r;
    r.algo = m.algo;
    r.math_type = m.tensor_op && p.allow_tensor_cores ? MathType::kTensorOp
                                                      : MathType::kDefault;
    r.deterministic = m.deterministic;
    bool supported = !none_supported;
    if (m.needs_unit_stride && !UnitStrideAndDilation(p)) supported = false;
    if (m.needs_small_filter && !SmallFilter(p)) supported = false;
    if (m.tensor_op && !p.allow_tensor_cores) supported = false;
    if (p.groups > 1 && (m.algo == 4 || m.algo == 5)) supported = false;
    if (!supported) {
      r.status = AlgoStatus::kNotSupported;
      out.push_back(r);
      continue;
    }
    // A shape-dependent wobble so that different algorithms win on
    // different shapes: large filters favour FFT, wide channels GEMM.
    double shape = 1.0;
    double f = static_cast<double>(p.filter[0]);
    if (m.algo == 4 || m.algo == 5) shape *= 9.0 / (f * f);
    if (m.algo == 2 || m.algo == 7) {
      shape *= 64.0 /
               std::min<double>(64.0, static_cast<double>(p.c / p.groups) + 1);
    }
    if (p.op != ConvOp::kForward && m.algo == 3) shape *= 0.5;
    double tc = (m.tensor_op && p.allow_tensor_cores) ? type_factor : 1.0;
    r.status = AlgoStatus::kOk;
    const double gpu_ms = m.overhead_ms + gflop * m.flop_factor * shape * tc;
    r.gpu = {gpu_ms, gpu_ms * 0.02, 5};
    r.host = {m.host_ms, m.host_ms * 0.05, 5};
    // Back to back, host and GPU overlap: a call costs the slower of the
    // two, plus a little.
    const double launch_ms = std::max(gpu_ms, m.host_ms) + 0.002;
    r.launch = {launch_ms, launch_ms * 0.03, 5};
    r.workspace_bytes = static_cast<int64_t>(input_bytes * m.workspace_factor);
    out.push_back(r);
  }
  SortResults(out);
  return out;
}

absl::StatusOr<SearchResult> SimulatedFinder::Search(
    int device_index, const ConvProblem& problem,
    const SearchOptions& options) {
  if (device_index < 0 || device_index >= options_.devices) {
    return absl::InvalidArgumentError(
        absl::StrCat("no simulated device ", device_index));
  }
  absl::MutexLock lock(device_mu_[device_index].get());
  searches_.fetch_add(1);
  if (problem.n == options_.crash_n) {
    std::abort();  // Fault switch: worker-process crash tests.
  }
  if (problem.n == options_.hang_n) {
    std::this_thread::sleep_for(
        std::chrono::microseconds(absl::ToInt64Microseconds(options.timeout)));
    return absl::DeadlineExceededError(absl::StrCat(
        "simulated search hung (hang_n=", options_.hang_n, ") past its ",
        absl::FormatDuration(options.timeout), " timeout"));
  }
  if (options_.slow_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.slow_ms));
  }
  if (problem.n == options_.fail_n) {
    return absl::InternalError(absl::StrCat(
        "simulated search failure (fail_n=", options_.fail_n, ")"));
  }
  SearchResult result;
  result.results = Model(problem);
  result.repeats = 5;
  result.workspace_cap_bytes = options.workspace_cap_bytes >= 0
                                   ? options.workspace_cap_bytes
                                   : int64_t{1} << 30;
  result.verified = true;
  // Algorithms needing more workspace than offered fail, as on a GPU.
  for (AlgoResult& r : result.results) {
    if (r.status == AlgoStatus::kOk &&
        r.workspace_bytes > result.workspace_cap_bytes) {
      r.status = AlgoStatus::kFailed;
      r.error = "workspace above the cap";
      r.launch = r.gpu = r.host = Timing{};
    }
  }
  SortResults(result.results);
  if (problem.api == ConvApi::kGraph) AsGraphResults(result.results);
  // A revalidation times only the configs it lists, and a search again
  // skips those far behind (the model has no heuristic ranking: no first
  // choice of cuDNN's joins them).
  result.results.erase(
      std::remove_if(result.results.begin(), result.results.end(),
                     [&](const AlgoResult& r) {
                       return !Retimes(options, r);
                     }),
      result.results.end());
  return result;
}

void SimulatedFinder::AsGraphResults(std::vector<AlgoResult>& results) {
  // Each modelled algorithm stands for one engine config: engine id
  // 100 + algo, one knob (type 3, the algorithm's split), the notes its
  // math type and determinism imply. The leader and runners-up within 10 %
  // (three at most) carry a plan blob that says it is simulated.
  for (AlgoResult& r : results) {
    const int algo = r.algo;
    r.algo = 100 + algo;
    r.knobs = {Knob{3, algo % 4}};
    r.numerical_notes = 0;
    if (r.math_type == MathType::kTensorOp) {
      r.numerical_notes |= NoteBit(kNumericalNoteTensorCore);
    }
    if (!r.deterministic) {
      r.numerical_notes |= NoteBit(kNumericalNoteNondeterministic);
    }
    r.behavior_notes = algo == 6 ? NoteBit(kBehaviorNoteRuntimeCompilation) : 0;
  }
  if (results.empty() || results[0].status != AlgoStatus::kOk) return;
  const double lead = results[0].launch.median_ms;
  for (size_t i = 0; i < results.size() && i < 3; ++i) {
    AlgoResult& r = results[i];
    if (r.status != AlgoStatus::kOk) break;
    if (i > 0 && r.launch.median_ms > lead * 1.10) break;
    r.plan = absl::StrCat("{\"simulated\":true,\"engine\":", r.algo,
                          ",\"knobs\":\"", KnobsText(r.knobs), "\"}");
  }
}

}  // namespace tunedb
