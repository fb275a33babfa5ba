// `tunedb query` (list records matching filters) and `tunedb show KEY`
// (one record with its whole ranking and choices under common constraints).
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/filter_flags.h"
#include "tuner/fleet_show.h"
#include "tuner/format.h"
#include "tuner/net_builder.h"
#include "tuner/record_stream.h"
#include "tuner/render.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

struct QueryFlags {
  FilterFlags filter;
  int64_t limit = 0;
  bool csv = false;
  // The caller whose choice the "best" columns show (Choose).
  int64_t compile_horizon = kDefaultCompileHorizonCalls;
  bool loads_plans = false;

  Constraints constraints() const {
    Constraints c;
    c.compile_horizon_calls = compile_horizon;
    c.loads_stored_plans = loads_plans;
    return c;
  }
};

// What `tunedb query` shows: the readable records that match, and those
// that cannot be read (told on stderr).
struct QueryResult {
  std::vector<Record> records;
  std::vector<v1::BadRow> skipped;
  std::string matching;  // DescribeFilter of the filter
  Constraints constraints;  // whose choice the "best" columns show
};

absl::StatusOr<QueryResult> FetchQuery(CliContext& ctx,
                                       const v1::Filter& filter,
                                       int64_t limit) {
  QueryResult result;
  result.matching = DescribeFilter(filter);
  RETURN_IF_ERROR(ForEachParsedRecord(
      ctx, filter, limit,
      [&](Record r) {
        result.records.push_back(std::move(r));
        return true;
      },
      &result.skipped));
  return result;
}

nlohmann::json QueryToJson(const QueryResult& q) {
  nlohmann::json j = nlohmann::json::array();
  for (const Record& r : q.records) j.push_back(RecordToJson(r));
  return j;
}

// One CSV row: every key field on its own, then the best algorithm.
std::vector<std::string> CsvRow(const Record& r, const Constraints& c) {
  const ConvProblem& p = r.key.problem;
  const int d = p.spatial_dims;
  std::optional<AlgoResult> best = Choose(r, c);
  return {absl::StrCat(r.id),
          r.key.HashText(),
          r.key.device.gpu_model,
          CudnnVersionText(r.key.device.cudnn_version),
          std::string(ConvOpName(p.op)),
          absl::StrCat(p.n),
          absl::StrCat(p.c),
          absl::StrCat(p.k),
          DimsToText(p.input, d),
          DimsToText(p.filter, d),
          DimsToText(p.padding, d),
          DimsToText(p.stride, d),
          DimsToText(p.dilation, d),
          absl::StrCat(p.groups),
          std::string(DataTypeName(p.input_type)),
          std::string(DataTypeName(p.compute_type)),
          std::string(LayoutName(p.layout)),
          p.allow_tensor_cores ? "1" : "0",
          p.allow_tf32 ? "1" : "0",
          best ? absl::StrCat(best->algo) : "",
          best ? std::string(MathTypeName(best->math_type)) : "",
          best ? FormatMs(best->cost(LaunchMode::kDirect).median_ms) : "",
          best ? absl::StrCat(best->workspace_bytes) : "",
          best && best->build_ms > 0 ? FormatMs(best->build_ms) : "",
          best ? absl::StrCat(best->heuristic_rank) : "",
          FormatMs(r.search_ms),
          FormatTime(r.measured_at_us),
          r.key.ToText()};
}

Table QueryCsv(const QueryResult& q) {
  Table t({"id",
           "key_hash",
           "gpu",
           "cudnn",
           "op",
           "n",
           "c",
           "k",
           "in",
           "filt",
           "pad",
           "stride",
           "dil",
           "groups",
           "in_type",
           "compute",
           "layout",
           "tc",
           "tf32",
           "best_algo",
           "best_math",
           "best_ms",
           "best_workspace_bytes",
           "best_build_ms",
           "best_heuristic_rank",
           "search_ms",
           "measured_at",
           "key"});
  for (const Record& r : q.records) t.AddRow(CsvRow(r, q.constraints));
  return t;
}

void PrintQuery(const QueryResult& q, std::ostream& out) {
  Table t({"id>", "hash", "gpu", "op", "shape", "type", "layout", "best",
           "best ms>", "search ms>", "measured"});
  for (const Record& r : q.records) {
    const ConvProblem& p = r.key.problem;
    std::optional<AlgoResult> best = Choose(r, q.constraints);
    t.AddRow({absl::StrCat(r.id), r.key.HashText(), r.key.device.gpu_model,
              std::string(ConvOpName(p.op)), ShapeSummary(p), TypeSummary(p),
              std::string(LayoutName(p.layout)),
              best ? AlgoLabel(*best) : "unsupported",
              best ? FormatMs(best->cost(LaunchMode::kDirect).median_ms) : "-",
              FormatMs(r.search_ms), FormatTime(r.measured_at_us)});
  }
  t.Print(out);
  out << q.records.size() << " record(s) matching " << q.matching << "\n";
}

int RunQuery(CliContext& ctx, const QueryFlags& f) {
  auto filter = BuildFilter(f.filter, {}, absl::Now());
  if (!filter.ok()) return ctx.Fail(filter.status());
  auto result = FetchQuery(ctx, *filter, f.limit);
  if (!result.ok()) return ctx.Fail(result.status());
  // The good records are printed; the unreadable ones are told on stderr.
  ReportSkipped(ctx, result->skipped);
  result->constraints = f.constraints();
  Render(ctx, FormOf(ctx, f.csv), *result,
         Renderer<QueryResult>{QueryToJson, PrintQuery, QueryCsv});
  return result->skipped.empty() ? kExitOk : kExitPartial;
}

// The record a `show` argument names.
absl::StatusOr<Record> FindRecord(CliContext& ctx, const std::string& arg,
                                  const std::string& gpu) {
  const std::string text(absl::StripAsciiWhitespace(arg));
  std::optional<v1::Record> found;
  int64_t id = 0;
  const bool is_hash =
      text.size() == 16 &&
      text.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
  if (is_hash || (absl::SimpleAtoi(text, &id) && id > 0)) {
    // A hash is looked up through the daemon's key-hash index; an id is the
    // first record after id - 1.
    v1::Filter filter;
    if (is_hash) {
      (*filter.mutable_fields())["hash"] = absl::AsciiStrToLower(text);
    }
    absl::Status status = ForEachRecord(ctx, filter, is_hash ? 0 : id - 1, 1,
                                        [&](const v1::Record& r) {
                                          if (is_hash || r.id() == id)
                                            found = r;
                                          return false;
                                        });
    if (!status.ok()) return status;
    if (!found) {
      return absl::NotFoundError(
          absl::StrCat("no record with ", is_hash ? "key hash " : "id ", text));
    }
  } else {
    auto key = ctx.ResolveKey(text, gpu);
    if (!key.ok()) return key.status();
    v1::LookupRequest request;
    ToProto(key->problem, request.mutable_problem());
    ToProto(key->device, request.mutable_device());
    auto response = ctx.Call(&v1::TuneDb::Stub::Lookup, request);
    if (absl::IsNotFound(response.status())) {
      return absl::NotFoundError(
          absl::StrCat("nothing stored for ", key->ToText()));
    }
    if (!response.ok()) return response.status();
    found = response->record();
  }
  auto record = FromProto(*found);
  if (!record.ok()) {
    return absl::InternalError(absl::StrCat(
        "the daemon's record is malformed: ", record.status().message()));
  }
  return *record;
}

// What `tunedb show` shows: one record, and with --fleet every host's
// measurement of its key.
struct ShowResult {
  Record record;
  std::optional<FleetMeasurements> fleet;
};

nlohmann::json ShowToJson(const ShowResult& s) {
  nlohmann::json j = RecordWithChoicesToJson(s.record);
  if (s.fleet) j["fleet"] = FleetMeasurementsToJson(*s.fleet);
  return j;
}

void PrintShow(const ShowResult& s, std::ostream& out) {
  PrintRecordDetails(out, s.record);
  if (s.fleet) PrintFleetMeasurements(*s.fleet, out);
}

struct ShowFlags {
  std::string key;
  std::string gpu;
  std::string fleet;
  std::string fleet_password_file;
};

int RunShow(CliContext& ctx, const ShowFlags& f) {
  ShowResult result;
  auto record = FindRecord(ctx, f.key, f.gpu);
  if (!record.ok()) return ctx.Fail(record.status());
  result.record = *std::move(record);
  if (!f.fleet.empty()) {
    auto measurements = FetchFleetMeasurements(f.fleet, f.fleet_password_file,
                                               result.record.key);
    if (!measurements.ok()) return ctx.Fail(measurements.status());
    result.fleet = *std::move(measurements);
  }
  Render(ctx, FormOf(ctx), result, Renderer<ShowResult>{ShowToJson, PrintShow});
  return kExitOk;
}

}  // namespace

void AddQueryCommands(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto qf = std::make_shared<QueryFlags>();
  CLI::App* query = app.add_subcommand(
      "query", "List stored records matching filters (table, --json, --csv)");
  AddFilterFlags(query, &qf->filter);
  query->add_option("--limit", qf->limit, "At most N records (0 = all)")
      ->check(CLI::NonNegativeNumber);
  query->add_flag("--csv", qf->csv, "CSV with a header row on stdout");
  query
      ->add_option("--compile-horizon", qf->compile_horizon,
                   "The best columns weigh a runtime-compiled engine's build "
                   "time over N calls, as for a program that compiles it "
                   "(0: not weighed)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  query->add_flag("--loads-plans", qf->loads_plans,
                  "The best columns are a program's that loads stored plans "
                  "(no build time for a result with one)");
  query->callback([&ctx, qf, exit_code] { *exit_code = RunQuery(ctx, *qf); });

  auto sf = std::make_shared<ShowFlags>();
  CLI::App* show = app.add_subcommand(
      "show",
      "Show one record: its whole ranking and the choice under common "
      "constraints");
  show->add_option("KEY", sf->key,
                   "Canonical key text, a problem's text (with --gpu), a "
                   "record id or a 16-digit key hash")
      ->required();
  show->add_option("--gpu", sf->gpu,
                   "For a problem's text: CUDA ordinal or model substring");
  show->add_option("--fleet", sf->fleet,
                   "Fleet database URL: also list every host's measurement "
                   "of the key there, the one that answers first");
  show->add_option("--fleet-password-file", sf->fleet_password_file,
                   "libpq password file for --fleet");
  show->callback([&ctx, sf, exit_code] { *exit_code = RunShow(ctx, *sf); });
}

}  // namespace tunedb::tuner
