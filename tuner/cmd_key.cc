// `tunedb lookup KEY` (database only) and `tunedb tune KEY` (database, or a
// search on the daemon's GPU).
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/format.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

struct KeyFlags {
  std::string key;
  std::string gpu;
  int64_t max_workspace = -1;  // -1 = unlimited
  bool deterministic = false;
  LaunchMode launch_mode = LaunchMode::kDirect;
  bool force = false;  // tune only
  bool details = false;
};

Constraints ToConstraints(const KeyFlags& f) {
  Constraints c;
  if (f.max_workspace >= 0) c.max_workspace_bytes = f.max_workspace;
  c.deterministic_only = f.deterministic;
  c.launch_mode = f.launch_mode;
  return c;
}

int PrintAnswer(CliContext& ctx, const KeyFlags& f, const v1::Record& wire,
                const v1::Choice* choice, std::optional<bool> searched) {
  auto record = FromProto(wire);
  if (!record.ok()) {
    return ctx.Fail(absl::InternalError(absl::StrCat(
        "the daemon's record is malformed: ", record.status().message())));
  }
  std::optional<AlgoResult> chosen;
  if (choice != nullptr) {
    auto a = FromProto(choice->algo());
    if (a.ok()) chosen = *a;
  }
  if (ctx.json()) {
    nlohmann::json j = {
        {"choice", chosen ? AlgoToJson(*chosen) : nlohmann::json(nullptr)},
        {"record", RecordToJson(*record)}};
    if (searched) j["searched"] = *searched;
    ctx.out() << j.dump(2) << "\n";
    return kExitOk;
  }
  if (chosen) {
    ctx.out() << "choice    algo " << chosen->algo << " ("
              << MathTypeName(chosen->math_type) << "), "
              << FormatMs(chosen->cost(f.launch_mode).median_ms) << " ms ("
              << (f.launch_mode == LaunchMode::kGraph ? "GPU time"
                                                      : "launch time")
              << "), workspace " << FormatBytes(chosen->workspace_bytes)
              << (chosen->deterministic ? ", deterministic" : "") << "\n";
  } else {
    ctx.out() << "choice    none: no algorithm meets the constraints"
              << (record->supported() ? ""
                                      : " (no algorithm supports this problem)")
              << "\n";
  }
  if (searched) {
    ctx.out() << "source    "
              << (*searched ? absl::StrCat("searched now (",
                                           FormatMs(record->search_ms), " ms)")
                            : std::string("database"))
              << "\n";
  }
  if (f.details) {
    ctx.out() << "\n";
    PrintRecordDetails(ctx.out(), *record);
  } else {
    ctx.out() << "record    id " << record->id << ", hash "
              << record->key.HashText() << " (tunedb show " << record->id
              << " for the ranking)\n";
  }
  return kExitOk;
}

int RunLookup(CliContext& ctx, const KeyFlags& f) {
  auto key = ctx.ResolveKey(f.key, f.gpu);
  if (!key.ok()) return ctx.Fail(key.status());
  auto stub = ctx.Stub();
  if (!stub.ok()) return ctx.Fail(stub.status());
  v1::LookupRequest request;
  ToProto(key->problem, request.mutable_problem());
  ToProto(key->device, request.mutable_device());
  ToProto(ToConstraints(f), request.mutable_constraints());
  v1::LookupResponse response;
  auto context = ctx.NewContext();
  absl::Status status =
      FromGrpcStatus((*stub)->Lookup(context.get(), request, &response));
  if (status.code() == absl::StatusCode::kNotFound) {
    if (ctx.json()) ctx.out() << "null\n";
    ctx.err() << "not found: nothing stored for " << key->ToText()
              << " (tunedb tune KEY searches)\n";
    return kExitNotFound;
  }
  if (!status.ok()) return ctx.Fail(status);
  return PrintAnswer(ctx, f, response.record(),
                     response.has_choice() ? &response.choice() : nullptr,
                     std::nullopt);
}

int RunTune(CliContext& ctx, const KeyFlags& f) {
  auto key = ctx.ResolveKey(f.key, f.gpu);
  if (!key.ok()) return ctx.Fail(key.status());
  auto stub = ctx.Stub();
  if (!stub.ok()) return ctx.Fail(stub.status());
  v1::TuneRequest request;
  ToProto(key->problem, request.mutable_problem());
  ToProto(key->device, request.mutable_device());
  ToProto(ToConstraints(f), request.mutable_constraints());
  request.set_force(f.force);
  v1::TuneResponse response;
  // A search can take long: no deadline beyond the daemon's own timeout.
  auto context = ctx.NewStreamContext();
  absl::Status status =
      FromGrpcStatus((*stub)->Tune(context.get(), request, &response));
  if (!status.ok()) return ctx.Fail(status);
  return PrintAnswer(ctx, f, response.record(),
                     response.has_choice() ? &response.choice() : nullptr,
                     response.searched());
}

void AddKeyOptions(CLI::App* cmd, KeyFlags* f) {
  cmd->add_option("KEY", f->key,
                  "Canonical key text (kv=1 gpu=... op=...) or a problem's "
                  "text (op=fwd n=... tf32=1) for --gpu")
      ->required();
  cmd->add_option("--gpu", f->gpu,
                  "For a problem's text: CUDA ordinal or model substring "
                  "(default: the daemon's first GPU)");
  cmd->add_option("--max-workspace", f->max_workspace,
                  "Largest workspace you can give, bytes (default unlimited)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--deterministic", f->deterministic,
                "Only deterministic algorithms");
  cmd->add_option("--launch-mode", f->launch_mode,
                  "How you launch: direct (each pass a cuDNN call; ranked by "
                  "launch time, host cost included) or graph (CUDA-graph "
                  "replays; ranked by GPU time)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, LaunchMode>{{"direct", LaunchMode::kDirect},
                                            {"graph", LaunchMode::kGraph}},
          CLI::ignore_case))
      ->default_str("direct");
  cmd->add_flag("--details", f->details, "Also print the whole ranking");
}

}  // namespace

void AddKeyCommands(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto lf = std::make_shared<KeyFlags>();
  CLI::App* lookup = app.add_subcommand(
      "lookup", "The stored choice for one key (never searches)");
  AddKeyOptions(lookup, lf.get());
  lookup->callback([&ctx, lf, exit_code] { *exit_code = RunLookup(ctx, *lf); });

  auto tf = std::make_shared<KeyFlags>();
  CLI::App* tune = app.add_subcommand(
      "tune", "The choice for one key, searching on the GPU if not stored");
  AddKeyOptions(tune, tf.get());
  tune->add_flag("--force", tf->force, "Search again even if stored");
  tune->callback([&ctx, tf, exit_code] { *exit_code = RunTune(ctx, *tf); });
}

}  // namespace tunedb::tuner
