// tunedb_plan_load_bench: whether a stored serialized execution plan can
// stand in for building a runtime-compiled engine's plan. Two fresh
// processes, so that neither benefits from what the other compiled:
//
//   tunedb_plan_load_bench build --keys KEYS.txt --out PLANS.jsonl
//       [--per-key 2] [--max 64]
//     For each graph-API key (one per line, as `tunedb export` writes them),
//     the configs cuDNN's heuristics (modes A, B, FALLBACK) offer that carry
//     CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION, at most --per-key per key and
//     --max in all: each plan built (timed, wall clock) and serialized.
//     Writes one JSON line per plan: key, engine, knobs, build_ms, plan.
//   tunedb_plan_load_bench load --plans PLANS.jsonl [--json OUT.json]
//     In a new process, each plan loaded from its serialized form (timed),
//     run once, and its output checked against the legacy API's algorithm 0
//     on the same inputs (the search's verification tolerance). Prints per
//     plan and in sum the build time against the load time (a ratio, both
//     measured on this machine by the two processes), the first plan of each
//     process apart (it pays the runtime compiler's or the loader's start).
//
// Needs a GPU; without one it says so and exits 2.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cudnn/backend_graph.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_handles.h"
#include "nlohmann/json.hpp"
#include "server/search/verify.h"
#include "tunedb/problem.h"

namespace tunedb {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool Flag(std::string_view arg, std::string_view name, std::string* value) {
  const std::string prefix = "--" + std::string(name) + "=";
  if (arg.substr(0, prefix.size()) != prefix) return false;
  *value = std::string(arg.substr(prefix.size()));
  return true;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

nlohmann::json KnobsJson(const std::vector<Knob>& knobs) {
  nlohmann::json out = nlohmann::json::array();
  for (const Knob& k : knobs) out.push_back({k.type, k.value});
  return out;
}

constexpr uint32_t kRuntimeCompiled =
    1u << CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;

// Opens `path` into `in` and creates a cuDNN handle; nullopt, after saying
// which is missing, when either fails.
std::optional<CudnnHandle> OpenInputs(const std::string& path,
                                      std::ifstream& in) {
  in.open(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return std::nullopt;
  }
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  if (!handle.ok()) {
    std::fprintf(stderr, "no GPU: %s\n", handle.status().ToString().c_str());
    return std::nullopt;
  }
  return *std::move(handle);
}

int Build(const std::string& keys_path, const std::string& out_path,
          int per_key, int max_plans) {
  std::ifstream keys;
  std::optional<CudnnHandle> handle = OpenInputs(keys_path, keys);
  if (!handle.has_value()) return 2;
  std::ofstream out(out_path);
  int plans = 0, keys_read = 0, keys_without = 0;
  std::string line;
  while (plans < max_plans && std::getline(keys, line)) {
    if (line.empty()) continue;
    absl::StatusOr<ProblemKey> key = ProblemKey::Parse(line);
    if (!key.ok() || key->problem.api != ConvApi::kGraph) continue;
    ++keys_read;
    absl::StatusOr<ConvOpGraph> graph =
        ConvOpGraph::Create(key->problem, handle->get());
    if (!graph.ok()) continue;
    absl::StatusOr<std::vector<EngineConfig>> configs = graph->Configs(
        {HeuristicMode::kA, HeuristicMode::kB, HeuristicMode::kFallback});
    if (!configs.ok()) continue;
    int taken = 0;
    for (const EngineConfig& config : *configs) {
      if (taken >= per_key || plans >= max_plans) break;
      if (!(config.behavior_notes & kRuntimeCompiled)) continue;
      const Clock::time_point t0 = Clock::now();
      absl::StatusOr<BackendDescriptor> plan =
          graph->BuildPlan(config.descriptor.get());
      const double build_ms = MsSince(t0);
      if (!plan.ok()) continue;
      absl::StatusOr<std::string> json = SerializePlan(plan->get());
      if (!json.ok() || json->empty()) {
        std::fprintf(stderr, "engine %d: not serializable: %s\n", config.engine,
                     json.status().ToString().c_str());
        continue;
      }
      out << nlohmann::json{{"key", line},
                            {"engine", config.engine},
                            {"knobs", KnobsJson(config.knobs)},
                            {"build_ms", build_ms},
                            {"first_in_process", plans == 0},
                            {"plan", *json}}
                 .dump()
          << "\n";
      std::printf("built engine %3d (%s) in %8.2f ms: %s\n", config.engine,
                  KnobsText(config.knobs).c_str(), build_ms,
                  key->problem.ToText().c_str());
      ++plans;
      ++taken;
    }
    if (taken == 0) ++keys_without;
  }
  std::printf(
      "%d runtime-compiled plans built from %d keys (%d keys offer "
      "none) -> %s\n",
      plans, keys_read, keys_without, out_path.c_str());
  return plans > 0 ? 0 : 1;
}

// Runs `plan` on `conv`'s buffers and checks its output against the legacy
// API's algorithm 0: "ok", "mismatch (...)", or why it could not be checked.
std::string Check(const ConvProblem& p, CudnnConv& conv, cudnnHandle_t handle,
                  cudnnBackendDescriptor_t plan) {
  absl::StatusOr<int64_t> ws_bytes = PlanWorkspaceBytes(plan);
  if (!ws_bytes.ok()) return "no workspace size";
  absl::StatusOr<DeviceBuffer> ws = DeviceBuffer::Allocate(
      static_cast<size_t>(std::max<int64_t>(*ws_bytes, 0)) + 256);
  if (!ws.ok()) return "workspace allocation failed";
  if (!conv.Run(0, MathType::kFma, nullptr, 0).ok()) {
    return "legacy algorithm 0 unavailable: unchecked";
  }
  absl::StatusOr<std::vector<float>> legacy = conv.ReadOutput();
  if (!legacy.ok()) return "reading the legacy output failed";
  const ConvBuffers b = conv.buffers();
  absl::StatusOr<BackendDescriptor> pack =
      MakeVariantPack({b.x, b.w, b.y, ws->get()});
  if (!pack.ok()) return "variant pack failed";
  absl::Status run = ExecutePlan(handle, plan, pack->get());
  if (!run.ok()) return absl::StrCat("execute failed: ", run.ToString());
  absl::StatusOr<std::vector<float>> loaded = conv.ReadOutput();
  if (!loaded.ok()) return "reading the plan's output failed";
  const double diff = RelativeL2(*loaded, *legacy);
  const double tol = VerifyTolerance(p, MathType::kTensorOp);
  if (diff <= tol) return "ok";
  return absl::StrCat("mismatch (relative L2 ", diff, " > ", tol, ")");
}

int Load(const std::string& plans_path, const std::string& json_path) {
  std::ifstream in;
  std::optional<CudnnHandle> handle = OpenInputs(plans_path, in);
  if (!handle.has_value()) return 2;
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  if (!stream.ok() ||
      cudnnSetStream(handle->get(), stream->get()) != CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr, "no stream\n");
    return 2;
  }
  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> build_rest, load_rest;
  double build_first = -1, load_first = -1;
  int loaded_n = 0, failed = 0, checked_ok = 0, mismatched = 0;
  std::printf("%-7s %10s %10s %7s  %s\n", "engine", "build ms", "load ms",
              "ratio", "output check; key");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded()) continue;
    absl::StatusOr<ProblemKey> key =
        ProblemKey::Parse(row.value("key", std::string()));
    if (!key.ok()) continue;
    const double build_ms = row.value("build_ms", 0.0);
    const Clock::time_point t0 = Clock::now();
    absl::StatusOr<BackendDescriptor> plan =
        LoadPlan(handle->get(), row.value("plan", std::string()));
    const double load_ms = MsSince(t0);
    nlohmann::json out = {{"key", row["key"]},
                          {"engine", row["engine"]},
                          {"knobs", row["knobs"]},
                          {"build_ms", build_ms},
                          {"load_ms", load_ms}};
    std::string check;
    if (!plan.ok()) {
      ++failed;
      check = absl::StrCat("load failed: ", plan.status().ToString());
    } else {
      absl::StatusOr<std::unique_ptr<CudnnConv>> conv = CudnnConv::Create(
          key->problem, handle->get(), stream->get(), /*seed=*/7);
      check = conv.ok()
                  ? Check(key->problem, **conv, handle->get(), plan->get())
                  : "no buffers: unchecked";
      if (check == "ok") ++checked_ok;
      if (check.rfind("mismatch", 0) == 0) ++mismatched;
      if (loaded_n == 0) {
        load_first = load_ms;
      } else {
        load_rest.push_back(load_ms);
      }
      if (row.value("first_in_process", false)) {
        build_first = build_ms;
      } else {
        build_rest.push_back(build_ms);
      }
      ++loaded_n;
    }
    out["check"] = check;
    rows.push_back(out);
    std::printf("%-7d %10.2f %10.2f %7.3f  %s; %s\n", row.value("engine", -1),
                build_ms, load_ms, build_ms > 0 ? load_ms / build_ms : 0.0,
                check.c_str(), key->problem.ToText().c_str());
  }
  const double build_sum =
      std::accumulate(build_rest.begin(), build_rest.end(), 0.0);
  const double load_sum =
      std::accumulate(load_rest.begin(), load_rest.end(), 0.0);
  std::printf(
      "\n%d plans loaded (%d failed to load); outputs: %d match the legacy "
      "API, %d do not, %d unchecked\n",
      loaded_n, failed, checked_ok, mismatched,
      loaded_n - checked_ok - mismatched);
  std::printf("first plan of the process: build %.2f ms, load %.2f ms\n",
              build_first, load_first);
  std::printf(
      "the others: build median %.2f ms (sum %.1f), load median %.3f ms "
      "(sum %.1f); load / build = %.4f by sums\n",
      Median(build_rest), build_sum, Median(load_rest), load_sum,
      build_sum > 0 ? load_sum / build_sum : 0.0);
  if (!json_path.empty()) {
    std::ofstream(json_path)
        << nlohmann::json{{"plans", rows},
                          {"loaded", loaded_n},
                          {"load_failed", failed},
                          {"outputs_match", checked_ok},
                          {"outputs_mismatch", mismatched},
                          {"first_build_ms", build_first},
                          {"first_load_ms", load_first},
                          {"build_median_ms", Median(build_rest)},
                          {"load_median_ms", Median(load_rest)},
                          {"build_sum_ms", build_sum},
                          {"load_sum_ms", load_sum}}
               .dump(1)
        << "\n";
  }
  return failed == 0 && mismatched == 0 && loaded_n > 0 ? 0 : 1;
}

int Main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help") {
    std::printf(
        "usage: tunedb_plan_load_bench build --keys=KEYS.txt "
        "--out=PLANS.jsonl [--per-key=2] [--max=64]\n"
        "       tunedb_plan_load_bench load --plans=PLANS.jsonl "
        "[--json=OUT.json]\n"
        "Times building runtime-compiled engines' plans (build) against "
        "loading their serialized form in a new process (load).\n");
    return argc < 2 ? 2 : 0;
  }
  const std::string_view mode = argv[1];
  std::string keys, out, plans, json, value;
  int per_key = 2, max_plans = 64;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (Flag(a, "keys", &keys) || Flag(a, "out", &out) ||
        Flag(a, "plans", &plans) || Flag(a, "json", &json)) {
      continue;
    }
    if (Flag(a, "per-key", &value) && absl::SimpleAtoi(value, &per_key)) {
      continue;
    }
    if (Flag(a, "max", &value) && absl::SimpleAtoi(value, &max_plans)) {
      continue;
    }
    std::fprintf(stderr, "unknown argument %s (see --help)\n", argv[i]);
    return 2;
  }
  if (mode == "build" && !keys.empty() && !out.empty()) {
    return Build(keys, out, per_key, max_plans);
  }
  if (mode == "load" && !plans.empty()) return Load(plans, json);
  std::fprintf(stderr, "missing arguments (see --help)\n");
  return 2;
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) { return tunedb::Main(argc, argv); }
