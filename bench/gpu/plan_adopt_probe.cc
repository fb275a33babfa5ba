// tunedb_plan_adopt_probe: how cuDNN takes a stored serialized plan on a
// plan descriptor that a caller made as frameworks do (handle and engine
// config set), so that a program could be handed a stored plan where it
// would build (compile) one. For each plan of PLANS.jsonl (written by
// `tunedb_plan_load_bench build`), in a process that has compiled nothing:
//
//   adopt     a plan descriptor with the handle and the engine config set
//             (as cudnn_frontend sets them), then the serialized form set
//             too, then finalized: status, time, and the output checked
//             against the legacy API;
//   remapped  the serialized form with its tensor ids renumbered
//             (WithTensorIds: 1, 2, 3 to PyTorch's 'x', 'w', 'y'), loaded
//             on a descriptor of its own and run with a variant pack of
//             the new ids;
//   twice     first of all, the blob loaded on two descriptors with only
//             the handle set, one after the other, as the preload's check
//             and then the caller's load do: both times;
//   build     the same config built from scratch in this process (the
//             engine's compile, for the ratio).
//
// Then, on the first plan only, what cuDNN does with a damaged blob on such
// a descriptor (a cuDNN version edited, the blob cut in half), whether that
// same descriptor still builds when the engine config is set on it after
// the refusal (and its output is right), and whether a new descriptor can
// still be finalized the ordinary way afterwards.
//
//   tunedb_plan_adopt_probe --plans=PLANS.jsonl [--dump=DIR] [--max=8]
//
// Writes the first blob to DIR/blob0.json. Needs a GPU; exits 2 without.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cudnn/backend_graph.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_handles.h"
#include "cudnn/plan_blob.h"
#include "nlohmann/json.hpp"
#include "server/search/verify.h"
#include "tunedb/problem.h"

namespace tunedb {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string Name(cudnnStatus_t s) { return cudnnGetErrorString(s); }

std::string LastError() {
  char why[512] = {};
  cudnnGetLastErrorString(why, sizeof(why));
  return why;
}

// A plan descriptor with only `handle` set, as the preload makes its
// scratch descriptors and leaves the caller's (its engine config held back).
std::optional<BackendDescriptor> HandleOnlyPlan(cudnnHandle_t handle) {
  absl::StatusOr<BackendDescriptor> d =
      CreateBackendDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  if (!d.ok()) return std::nullopt;
  cudnnHandle_t h = handle;
  if (cudnnBackendSetAttribute(d->get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                               CUDNN_TYPE_HANDLE, 1, &h) !=
      CUDNN_STATUS_SUCCESS) {
    return std::nullopt;
  }
  return *std::move(d);
}

// A plan descriptor as a framework leaves it before finalizing: handle and
// engine config set.
std::optional<BackendDescriptor> CallerPlan(cudnnHandle_t handle,
                                            cudnnBackendDescriptor_t config) {
  std::optional<BackendDescriptor> d = HandleOnlyPlan(handle);
  if (!d.has_value() ||
      cudnnBackendSetAttribute(d->get(),
                               CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config) !=
          CUDNN_STATUS_SUCCESS) {
    return std::nullopt;
  }
  return d;
}

cudnnStatus_t SetBlob(cudnnBackendDescriptor_t d, const std::string& blob) {
  return cudnnBackendSetAttribute(d, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                                  CUDNN_TYPE_CHAR,
                                  static_cast<int64_t>(blob.size()),
                                  blob.data());
}

// Runs `plan` with x, w, y bound to `uids` and compares its output with the
// legacy API's algorithm 0.
std::string Check(const ConvProblem& p, CudnnConv& conv, cudnnHandle_t handle,
                  cudnnBackendDescriptor_t plan, const int64_t uids[3]) {
  absl::StatusOr<int64_t> ws_bytes = PlanWorkspaceBytes(plan);
  if (!ws_bytes.ok()) return "no workspace size";
  absl::StatusOr<DeviceBuffer> ws = DeviceBuffer::Allocate(
      static_cast<size_t>(std::max<int64_t>(*ws_bytes, 0)) + 256);
  if (!ws.ok()) return "workspace allocation failed";
  if (!conv.Run(0, MathType::kFma, nullptr, 0).ok()) return "no legacy algo 0";
  absl::StatusOr<std::vector<float>> legacy = conv.ReadOutput();
  if (!legacy.ok()) return "reading the legacy output failed";
  const ConvBuffers b = conv.buffers();
  absl::StatusOr<BackendDescriptor> pack =
      CreateBackendDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  if (!pack.ok()) return "no variant pack";
  void* pointers[] = {b.x, b.w, b.y};
  void* workspace = ws->get();
  if (cudnnBackendSetAttribute(pack->get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                               CUDNN_TYPE_INT64, 3, uids) ||
      cudnnBackendSetAttribute(pack->get(),
                               CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                               CUDNN_TYPE_VOID_PTR, 3, pointers) ||
      cudnnBackendSetAttribute(pack->get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                               CUDNN_TYPE_VOID_PTR, 1, &workspace) ||
      cudnnBackendFinalize(pack->get())) {
    return "variant pack failed";
  }
  const cudnnStatus_t run = cudnnBackendExecute(handle, plan, pack->get());
  if (run != CUDNN_STATUS_SUCCESS) {
    return absl::StrCat("execute: ", Name(run), " ", LastError());
  }
  absl::StatusOr<std::vector<float>> out = conv.ReadOutput();
  if (!out.ok()) return "reading the output failed";
  const double diff = RelativeL2(*out, *legacy);
  const double tol = VerifyTolerance(p, MathType::kTensorOp);
  return diff <= tol ? "ok" : absl::StrCat("mismatch ", diff, " > ", tol);
}

// A damaged blob loaded as the preload checks one: on a plan descriptor of
// its own with only the handle set.
void Damaged(cudnnHandle_t handle, const std::string& name,
             const std::string& blob) {
  std::optional<BackendDescriptor> d = HandleOnlyPlan(handle);
  if (!d.has_value()) return;
  std::printf("damaged blob (%s): set ", name.c_str());
  std::fflush(stdout);
  const cudnnStatus_t set = SetBlob(d->get(), blob);
  std::printf("%s; finalize ", Name(set).c_str());
  std::fflush(stdout);
  const cudnnStatus_t fin = cudnnBackendFinalize(d->get());
  std::printf("%s (%s)\n", Name(fin).c_str(), LastError().c_str());
  std::fflush(stdout);
}

// The caller's descriptor as the preload leaves it without the scratch
// check (handle set, engine config held back): `blob` refused there, then
// the engine config set on the same descriptor and finalized, as the
// preload's fallback does; with `reset`, an empty serialized form (0
// chars) set first, to clear the refused one. Prints the statuses and the
// output check.
void Recovery(const ConvProblem& p, CudnnConv& conv, cudnnHandle_t handle,
              cudnnBackendDescriptor_t config, const std::string& name,
              const std::string& blob, bool reset) {
  std::optional<BackendDescriptor> d = HandleOnlyPlan(handle);
  if (!d.has_value()) return;
  const cudnnStatus_t set = SetBlob(d->get(), blob);
  const cudnnStatus_t load =
      set == CUDNN_STATUS_SUCCESS ? cudnnBackendFinalize(d->get()) : set;
  std::printf("recovery (%s%s): load %s; ", name.c_str(),
              reset ? ", reset" : "", Name(load).c_str());
  if (reset) {
    std::printf("empty form set %s; ", Name(SetBlob(d->get(), "")).c_str());
  }
  std::fflush(stdout);
  const cudnnStatus_t set_config = cudnnBackendSetAttribute(
      d->get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config);
  const cudnnStatus_t build = set_config == CUDNN_STATUS_SUCCESS
                                  ? cudnnBackendFinalize(d->get())
                                  : set_config;
  const int64_t uids[] = {kUidX, kUidW, kUidY};
  std::printf("config set %s, build %s (%s); check: %s\n",
              Name(set_config).c_str(), Name(build).c_str(),
              LastError().c_str(),
              build == CUDNN_STATUS_SUCCESS
                  ? Check(p, conv, handle, d->get(), uids).c_str()
                  : "-");
  std::fflush(stdout);
}

// Loads `blob` on two handle-only descriptors in turn; prints both times.
void Twice(cudnnHandle_t handle, const std::string& blob) {
  double ms[2] = {0, 0};
  cudnnStatus_t fin[2] = {CUDNN_STATUS_INTERNAL_ERROR,
                          CUDNN_STATUS_INTERNAL_ERROR};
  for (int i = 0; i < 2; ++i) {
    std::optional<BackendDescriptor> d = HandleOnlyPlan(handle);
    if (!d.has_value()) return;
    const Clock::time_point t0 = Clock::now();
    const cudnnStatus_t set = SetBlob(d->get(), blob);
    fin[i] = set == CUDNN_STATUS_SUCCESS ? cudnnBackendFinalize(d->get()) : set;
    ms[i] = MsSince(t0);
  }
  std::printf("twice: first load %s in %.2f ms, second %s in %.2f ms\n",
              Name(fin[0]).c_str(), ms[0], Name(fin[1]).c_str(), ms[1]);
}

int Main(int argc, char** argv) {
  std::string plans_path, dump;
  int max = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.rfind("--plans=", 0) == 0) {
      plans_path = std::string(a.substr(8));
    } else if (a.rfind("--dump=", 0) == 0) {
      dump = std::string(a.substr(7));
    } else if (a.rfind("--max=", 0) == 0 &&
               absl::SimpleAtoi(std::string(a.substr(6)), &max)) {
    } else {
      std::printf(
          "usage: tunedb_plan_adopt_probe --plans=PLANS.jsonl [--dump=DIR] "
          "[--max=8]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  std::ifstream in(plans_path);
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  if (!in || !handle.ok()) {
    std::fprintf(stderr, "no plans file or no GPU\n");
    return 2;
  }
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  if (!stream.ok()) return 2;
  cudnnSetStream(handle->get(), stream->get());
  std::string line;
  int n = 0;
  std::optional<std::string> first_blob;
  std::optional<EngineConfig> first_config;
  std::optional<ConvOpGraph> first_graph;
  while (n < max && std::getline(in, line)) {
    const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded()) continue;
    absl::StatusOr<ProblemKey> key = ProblemKey::Parse(row.value("key", ""));
    if (!key.ok()) continue;
    const std::string blob = row.value("plan", "");
    std::vector<Knob> knobs;
    for (const auto& k : row["knobs"]) knobs.push_back({k[0], k[1]});
    absl::StatusOr<ConvOpGraph> graph =
        ConvOpGraph::Create(key->problem, handle->get());
    if (!graph.ok()) continue;
    absl::StatusOr<EngineConfig> config =
        graph->ConfigFor(row.value("engine", -1), knobs);
    if (!config.ok()) {
      std::printf("engine %d: no config: %s\n", row.value("engine", -1),
                  config.status().ToString().c_str());
      continue;
    }
    absl::StatusOr<std::unique_ptr<CudnnConv>> conv = CudnnConv::Create(
        key->problem, handle->get(), stream->get(), /*seed=*/7);
    if (!conv.ok()) continue;
    ++n;
    std::printf("--- engine %d, build in process 1: %.2f ms; %s\n",
                row.value("engine", -1), row.value("build_ms", 0.0),
                key->problem.ToText().c_str());
    Twice(handle->get(), blob);
    // adopt
    {
      std::optional<BackendDescriptor> d =
          CallerPlan(handle->get(), config->descriptor.get());
      const Clock::time_point t0 = Clock::now();
      const cudnnStatus_t set = d ? SetBlob(d->get(), blob)
                                  : CUDNN_STATUS_INTERNAL_ERROR;
      const cudnnStatus_t fin = set == CUDNN_STATUS_SUCCESS
                                    ? cudnnBackendFinalize(d->get())
                                    : set;
      const double ms = MsSince(t0);
      const int64_t uids[] = {kUidX, kUidW, kUidY};
      std::printf("adopt: set %s, finalize %s in %.2f ms (%s); check: %s\n",
                  Name(set).c_str(), Name(fin).c_str(), ms,
                  LastError().c_str(),
                  fin == CUDNN_STATUS_SUCCESS
                      ? Check(key->problem, **conv, handle->get(), d->get(),
                              uids)
                              .c_str()
                      : "-");
    }
    // remapped
    {
      absl::StatusOr<std::string> remapped = WithTensorIds(
          blob, TensorIds{kUidX, kUidW, kUidY}, TensorIds{'x', 'w', 'y'});
      if (!remapped.ok()) {
        std::printf("remapped: %s\n", remapped.status().ToString().c_str());
      } else {
        const Clock::time_point t0 = Clock::now();
        absl::StatusOr<BackendDescriptor> plan =
            LoadPlan(handle->get(), *remapped);
        const double ms = MsSince(t0);
        const int64_t uids[] = {'x', 'w', 'y'};
        std::printf("remapped: load %s in %.2f ms; check: %s\n",
                    plan.ok() ? "ok" : plan.status().ToString().c_str(), ms,
                    plan.ok() ? Check(key->problem, **conv, handle->get(),
                                      plan->get(), uids)
                                    .c_str()
                              : "-");
      }
    }
    // build
    {
      const Clock::time_point t0 = Clock::now();
      absl::StatusOr<BackendDescriptor> plan =
          graph->BuildPlan(config->descriptor.get());
      std::printf("build here: %s in %.2f ms\n",
                  plan.ok() ? "ok" : plan.status().ToString().c_str(),
                  MsSince(t0));
    }
    std::fflush(stdout);
    if (!first_blob.has_value()) {
      first_blob = blob;
      first_config = *std::move(config);
      first_graph = *std::move(graph);
    }
  }
  if (!first_blob.has_value()) return 1;
  if (!dump.empty()) std::ofstream(dump + "/blob0.json") << *first_blob;
  nlohmann::json j = nlohmann::json::parse(*first_blob, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    std::printf("blob keys:");
    for (auto& [k, v] : j.items()) std::printf(" %s", k.c_str());
    std::printf("\n");
  }
  const std::string edited = absl::StrReplaceAll(
      *first_blob, {{"\"cudnnVersion\":", "\"cudnnVersion\":1"}});
  Damaged(handle->get(), "another cuDNN version", edited);
  Damaged(handle->get(), "half", first_blob->substr(0, first_blob->size() / 2));
  std::string flipped = *first_blob;
  flipped[flipped.size() / 3] ^= 0x20;
  Damaged(handle->get(), "a byte flipped", flipped);
  // After all that, the same config still builds on a new graph.
  absl::StatusOr<ConvOpGraph> graph =
      ConvOpGraph::Create(first_graph->problem(), handle->get());
  absl::StatusOr<EngineConfig> config =
      graph.ok() ? graph->ConfigFor(first_config->engine, first_config->knobs)
                 : absl::StatusOr<EngineConfig>(graph.status());
  absl::StatusOr<std::unique_ptr<CudnnConv>> conv =
      CudnnConv::Create(first_graph->problem(), handle->get(), stream->get(),
                        /*seed=*/7);
  if (config.ok() && conv.ok()) {
    Recovery(first_graph->problem(), **conv, handle->get(),
             config->descriptor.get(), "another cuDNN version", edited,
             /*reset=*/false);
    for (bool reset : {false, true}) {
      Recovery(first_graph->problem(), **conv, handle->get(),
               config->descriptor.get(), "half",
               first_blob->substr(0, first_blob->size() / 2), reset);
    }
    Recovery(first_graph->problem(), **conv, handle->get(),
             config->descriptor.get(), "another cuDNN version", edited,
             /*reset=*/true);
  }
  std::optional<BackendDescriptor> d =
      config.ok() ? CallerPlan(handle->get(), config->descriptor.get())
                  : std::nullopt;
  std::printf("ordinary build afterwards: %s\n",
              d ? Name(cudnnBackendFinalize(d->get())).c_str()
                : config.status().ToString().c_str());
  return 0;
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) { return tunedb::Main(argc, argv); }
