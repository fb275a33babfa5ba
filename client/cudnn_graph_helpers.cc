#include "tunedb/cudnn_graph_helpers.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cudnn/backend_graph.h"

namespace tunedb {

static_assert(kGraphUidX == kUidX && kGraphUidW == kUidW &&
                  kGraphUidY == kUidY,
              "public uids are the graph layer's");

std::string_view PlanSourceName(PlanSource s) {
  switch (s) {
    case PlanSource::kStoredPlan:
      return "stored_plan";
    case PlanSource::kEngineConfig:
      return "engine_config";
    case PlanSource::kHeuristic:
      return "heuristic";
  }
  return "unknown";
}

ExecutionPlan::ExecutionPlan(ExecutionPlan&& other) noexcept
    : source(other.source),
      engine(other.engine),
      workspace_bytes(other.workspace_bytes),
      fallback(std::move(other.fallback)),
      plan_(std::exchange(other.plan_, nullptr)) {}

ExecutionPlan& ExecutionPlan::operator=(ExecutionPlan&& other) noexcept {
  if (this != &other) {
    if (plan_ != nullptr) cudnnBackendDestroyDescriptor(plan_);
    plan_ = std::exchange(other.plan_, nullptr);
    source = other.source;
    engine = other.engine;
    workspace_bytes = other.workspace_bytes;
    fallback = std::move(other.fallback);
  }
  return *this;
}

ExecutionPlan::~ExecutionPlan() {
  if (plan_ != nullptr) cudnnBackendDestroyDescriptor(plan_);
}

absl::StatusOr<ExecutionPlan> GetExecutionPlan(Client& client,
                                               cudnnHandle_t handle,
                                               const ProblemKey& key,
                                               const Constraints& constraints) {
  RETURN_IF_ERROR(key.Validate());
  if (key.problem.api != ConvApi::kGraph) {
    return absl::InvalidArgumentError(
        "GetExecutionPlan needs a graph-API key (problem.api = kGraph)");
  }
  ExecutionPlan out;
  auto take = [&](BackendDescriptor plan, PlanSource source,
                  int engine) -> absl::StatusOr<ExecutionPlan> {
    ASSIGN_OR_RETURN(out.workspace_bytes, PlanWorkspaceBytes(plan.get()));
    out.plan_ = plan.release();
    out.source = source;
    out.engine = engine;
    return std::move(out);
  };
  auto note = [&](absl::string_view why) {
    if (!out.fallback.empty()) out.fallback += "; ";
    absl::StrAppend(&out.fallback, why);
  };
  const EngineAnswer answer = client.GetEngine(key, constraints);
  if (answer.ok() && !answer.config.plan.empty()) {
    absl::StatusOr<BackendDescriptor> loaded =
        LoadPlan(handle, answer.config.plan);
    if (loaded.ok()) {
      return take(std::move(*loaded), PlanSource::kStoredPlan,
                  answer.config.algo);
    }
    note(absl::StrCat("stored plan refused: ", loaded.status().message()));
  }
  absl::StatusOr<ConvOpGraph> graph = ConvOpGraph::Create(key.problem, handle);
  if (!graph.ok()) return graph.status();
  if (answer.ok()) {
    absl::StatusOr<EngineConfig> config =
        graph->ConfigFor(answer.config.algo, answer.config.knobs);
    absl::StatusOr<BackendDescriptor> plan =
        config.ok() ? graph->BuildPlan(config->descriptor.get())
                    : absl::StatusOr<BackendDescriptor>(config.status());
    if (plan.ok()) {
      return take(std::move(*plan), PlanSource::kEngineConfig,
                  answer.config.algo);
    }
    note(absl::StrCat("engine ", answer.config.algo, " [",
                      KnobsText(answer.config.knobs),
                      "] did not build: ", plan.status().message()));
  } else {
    note("no tuned engine config (a miss)");
  }
  ASSIGN_OR_RETURN(std::vector<EngineConfig> configs,
                   graph->Configs({HeuristicMode::kA}));
  for (EngineConfig& c : configs) {
    absl::StatusOr<BackendDescriptor> plan =
        graph->BuildPlan(c.descriptor.get());
    if (plan.ok()) {
      return take(std::move(*plan), PlanSource::kHeuristic, c.engine);
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "no execution plan could be built for ", key.problem.ToText(), " (",
      out.fallback, ")"));
}

absl::Status RunPlan(cudnnHandle_t handle, const ExecutionPlan& plan, void* x,
                     void* w, void* y, void* workspace) {
  ASSIGN_OR_RETURN(BackendDescriptor pack,
                   MakeVariantPack({x, w, y, workspace}));
  return ExecutePlan(handle, plan.get(), pack.get());
}

absl::StatusOr<cudnnBackendDescriptor_t> TunedEngineConfig(
    Client& client, const ProblemKey& key, cudnnBackendDescriptor_t op_graph,
    const Constraints& constraints) {
  const EngineAnswer answer = client.GetEngine(key, constraints);
  if (!answer.ok()) {
    return absl::NotFoundError(
        absl::StrCat("no tuned engine config for ", key.ToText()));
  }
  ASSIGN_OR_RETURN(
      EngineConfig config,
      EngineConfigFor(op_graph, answer.config.algo, answer.config.knobs));
  return config.descriptor.release();
}

}  // namespace tunedb
