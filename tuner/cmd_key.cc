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
#include "tuner/render.h"
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

// What `lookup` and `tune` show: the daemon's record of the key and its
// choice under the flags' constraints.
struct Answer {
  Record record;
  std::optional<AlgoResult> chosen;  // none meets the constraints
  std::optional<bool> searched;      // tune: whether it searched now
  bool waited = false;               // tune: it waited for another's search
  LaunchMode launch_mode = LaunchMode::kDirect;
  bool details = false;  // text: the whole ranking
};

absl::StatusOr<Answer> ToAnswer(const KeyFlags& f, const v1::Record& wire,
                                const v1::Choice* choice,
                                std::optional<bool> searched, bool waited) {
  auto record = FromProto(wire);
  if (!record.ok()) {
    return absl::InternalError(absl::StrCat(
        "the daemon's record is malformed: ", record.status().message()));
  }
  Answer answer{*std::move(record), std::nullopt, searched, waited,
                f.launch_mode, f.details};
  if (choice != nullptr) {
    auto a = FromProto(choice->algo());
    if (a.ok()) answer.chosen = *a;
  }
  return answer;
}

nlohmann::json AnswerToJson(const Answer& a) {
  nlohmann::json j = {
      {"choice", a.chosen ? AlgoToJson(*a.chosen) : nlohmann::json(nullptr)},
      {"record", RecordToJson(a.record)}};
  if (a.searched) {
    j["searched"] = *a.searched;
    j["waited_for_search"] = a.waited;
  }
  return j;
}

void PrintChoice(const Answer& a, std::ostream& out) {
  if (!a.chosen) {
    out << "choice    none: no algorithm meets the constraints"
        << (a.record.supported() ? "" : " (no algorithm supports this problem)")
        << "\n";
    return;
  }
  const AlgoResult& c = *a.chosen;
  out << "choice    algo " << c.algo << " (" << MathTypeName(c.math_type)
      << "), " << FormatMs(c.cost(a.launch_mode).median_ms) << " ms ("
      << (a.launch_mode == LaunchMode::kGraph ? "GPU time" : "launch time")
      << "), workspace " << FormatBytes(c.workspace_bytes)
      << (c.deterministic ? ", deterministic" : "") << "\n";
}

void PrintAnswer(const Answer& a, std::ostream& out) {
  PrintChoice(a, out);
  if (a.searched) {
    out << "source    ";
    if (*a.searched) {
      out << "searched now (" << FormatMs(a.record.search_ms) << " ms)";
    } else if (a.waited) {
      out << "another call's search, waited for ("
          << FormatMs(a.record.search_ms) << " ms)";
    } else {
      out << "database";
    }
    out << "\n";
  }
  if (a.details) {
    out << "\n";
    PrintRecordDetails(out, a.record);
  } else {
    out << "record    id " << a.record.id << ", hash "
        << a.record.key.HashText() << " (tunedb show " << a.record.id
        << " for the ranking)\n";
  }
}

// Prints the answer the daemon gave; the exit code.
template <typename Response>
int ShowAnswer(CliContext& ctx, const KeyFlags& f, const Response& response,
               std::optional<bool> searched, bool waited = false) {
  auto answer = ToAnswer(f, response.record(),
                         response.has_choice() ? &response.choice() : nullptr,
                         searched, waited);
  if (!answer.ok()) return ctx.Fail(answer.status());
  Render(ctx, FormOf(ctx), *answer,
         Renderer<Answer>{AnswerToJson, PrintAnswer});
  return kExitOk;
}

// The request fields lookup and tune share.
template <typename Request>
Request KeyRequest(const ProblemKey& key, const KeyFlags& f) {
  Request request;
  ToProto(key.problem, request.mutable_problem());
  ToProto(key.device, request.mutable_device());
  ToProto(ToConstraints(f), request.mutable_constraints());
  return request;
}

int RunLookup(CliContext& ctx, const KeyFlags& f) {
  auto key = ctx.ResolveKey(f.key, f.gpu);
  if (!key.ok()) return ctx.Fail(key.status());
  auto response = ctx.Call(&v1::TuneDb::Stub::Lookup,
                           KeyRequest<v1::LookupRequest>(*key, f));
  if (absl::IsNotFound(response.status())) {
    if (ctx.json()) ctx.out() << "null\n";
    ctx.err() << "not found: nothing stored for " << key->ToText()
              << " (tunedb tune KEY searches)\n";
    return kExitNotFound;
  }
  if (!response.ok()) return ctx.Fail(response.status());
  return ShowAnswer(ctx, f, *response, std::nullopt);
}

int RunTune(CliContext& ctx, const KeyFlags& f) {
  auto key = ctx.ResolveKey(f.key, f.gpu);
  if (!key.ok()) return ctx.Fail(key.status());
  v1::TuneRequest request = KeyRequest<v1::TuneRequest>(*key, f);
  request.set_force(f.force);
  // A search can take long: no deadline beyond the daemon's own timeout.
  auto response =
      ctx.Call(&v1::TuneDb::Stub::Tune, request, CliContext::Deadline::kNone);
  if (!response.ok()) return ctx.Fail(response.status());
  return ShowAnswer(ctx, f, *response, response->searched(),
                    response->waited_for_search());
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
