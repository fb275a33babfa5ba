#include "store/record_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace tunedb {
namespace {

using Json = nlohmann::ordered_json;

absl::Status Invalid(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

// Reads the members of one JSON object, naming each as "<prefix><name>" in
// errors, and refuses members nobody asked for.
// Longest names (host, GPU UUID, driver version, finder) and other texts
// (the key, an error) a line may carry, in bytes.
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxTextBytes = 4096;
// A serialized execution plan (a runtime-compiled engine's is about 60 KB).
constexpr size_t kMaxPlanBytes = 1 << 20;

class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string prefix)
      : object_(object), prefix_(std::move(prefix)) {}

  bool Has(absl::string_view name) const {
    return object_.contains(std::string(name));
  }

  absl::StatusOr<const Json*> Member(absl::string_view name) {
    known_.emplace_back(name);
    auto it = object_.find(std::string(name));
    if (it == object_.end()) return Invalid(Name(name), "missing");
    return &*it;
  }

  // A string of at most `max_bytes` (UTF-8) bytes.
  absl::StatusOr<std::string> String(absl::string_view name,
                                     size_t max_bytes = kMaxTextBytes) {
    ASSIGN_OR_RETURN(const Json* value, Member(name));
    if (!value->is_string()) return Invalid(Name(name), "must be a string");
    std::string text = value->get<std::string>();
    if (text.size() > max_bytes) {
      return Invalid(Name(name), absl::StrCat("is ", text.size(),
                                              " bytes; at most ", max_bytes));
    }
    return text;
  }

  absl::StatusOr<bool> Bool(absl::string_view name) {
    ASSIGN_OR_RETURN(const Json* value, Member(name));
    if (!value->is_boolean())
      return Invalid(Name(name), "must be true or false");
    return value->get<bool>();
  }

  // An integer in [0, max].
  absl::StatusOr<int64_t> Count(
      absl::string_view name,
      int64_t max = std::numeric_limits<int64_t>::max()) {
    ASSIGN_OR_RETURN(const Json* value, Member(name));
    if (!value->is_number_integer()) {
      // 1e30 is a whole number JSON writes as a float: say what is wrong
      // with it.
      if (value->is_number_float()) {
        const double d = value->get<double>();
        if (std::isfinite(d) && d == std::floor(d) &&
            (d < 0 || d > static_cast<double>(max))) {
          return Invalid(Name(name),
                         absl::StrCat("is out of range (0 to ", max, ")"));
        }
      }
      return Invalid(Name(name), "must be an integer");
    }
    if (value->is_number_unsigned()) {
      if (value->get<uint64_t>() > static_cast<uint64_t>(max)) {
        return Invalid(Name(name), absl::StrCat("must be at most ", max));
      }
      return static_cast<int64_t>(value->get<uint64_t>());
    }
    const int64_t v = value->get<int64_t>();
    if (v < 0) return Invalid(Name(name), "must not be negative");
    if (v > max)
      return Invalid(Name(name), absl::StrCat("must be at most ", max));
    return v;
  }

  // A finite number >= 0.
  absl::StatusOr<double> Duration(absl::string_view name) {
    ASSIGN_OR_RETURN(const Json* value, Member(name));
    if (!value->is_number()) return Invalid(Name(name), "must be a number");
    const double v = value->get<double>();
    if (!std::isfinite(v) || v < 0) {
      return Invalid(Name(name), "must be a finite, non-negative number");
    }
    return v;
  }

  // Call after reading every member.
  absl::Status NoOthers() const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      bool known = false;
      for (const std::string& name : known_) known = known || name == it.key();
      if (!known) return Invalid(Name(it.key()), "unknown member");
    }
    return absl::OkStatus();
  }

  std::string Name(absl::string_view name) const {
    return absl::StrCat(prefix_, name);
  }

 private:
  const Json& object_;
  const std::string prefix_;
  std::vector<std::string> known_;
};

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

absl::StatusOr<Timing> TimingFromJson(ObjectReader& reader) {
  Timing timing;
  ASSIGN_OR_RETURN(timing.median_ms, reader.Duration("median_ms"));
  ASSIGN_OR_RETURN(timing.spread_ms, reader.Duration("spread_ms"));
  ASSIGN_OR_RETURN(int64_t samples, reader.Count("samples", kIntMax));
  timing.samples = static_cast<int>(samples);
  return timing;
}

// Version 2: {"median_ms", "spread_ms", "samples"} under `name`.
absl::StatusOr<Timing> TimingMemberFromJson(ObjectReader& parent,
                                            absl::string_view name) {
  ASSIGN_OR_RETURN(const Json* member, parent.Member(name));
  const std::string field = parent.Name(name);
  if (!member->is_object()) return Invalid(field, "must be an object");
  ObjectReader reader(*member, field + ".");
  ASSIGN_OR_RETURN(Timing timing, TimingFromJson(reader));
  RETURN_IF_ERROR(reader.NoOthers());
  return timing;
}

Json TimingToJson(const Timing& timing) {
  Json object = Json::object();
  object["median_ms"] = timing.median_ms;
  object["spread_ms"] = timing.spread_ms;
  object["samples"] = timing.samples;
  return object;
}

absl::StatusOr<AlgoResult> ResultFromJson(const Json& object,
                                          const std::string& prefix,
                                          int64_t version) {
  if (!object.is_object()) {
    return Invalid(prefix.substr(0, prefix.size() - 1), "must be an object");
  }
  ObjectReader reader(object, prefix);
  AlgoResult result;
  ASSIGN_OR_RETURN(int64_t algo, reader.Count("algo", kIntMax));
  result.algo = static_cast<int>(algo);
  ASSIGN_OR_RETURN(std::string math_type, reader.String("math_type"));
  absl::StatusOr<MathType> parsed_math = ParseMathType(math_type);
  if (!parsed_math.ok()) {
    return Invalid(reader.Name("math_type"),
                   absl::StrCat("unknown math type \"", math_type, "\""));
  }
  result.math_type = *parsed_math;
  ASSIGN_OR_RETURN(std::string status, reader.String("status"));
  absl::StatusOr<AlgoStatus> parsed_status = ParseAlgoStatus(status);
  if (!parsed_status.ok()) {
    return Invalid(reader.Name("status"),
                   absl::StrCat("unknown status \"", status, "\""));
  }
  result.status = *parsed_status;
  if (version == 1) {
    // Version 1 stored one time per result: GPU time.
    ASSIGN_OR_RETURN(result.gpu, TimingFromJson(reader));
  } else {
    ASSIGN_OR_RETURN(result.launch, TimingMemberFromJson(reader, "launch"));
    ASSIGN_OR_RETURN(result.gpu, TimingMemberFromJson(reader, "gpu"));
    ASSIGN_OR_RETURN(result.host, TimingMemberFromJson(reader, "host"));
  }
  ASSIGN_OR_RETURN(result.workspace_bytes, reader.Count("workspace_bytes"));
  ASSIGN_OR_RETURN(result.deterministic, reader.Bool("deterministic"));
  ASSIGN_OR_RETURN(result.retimed, reader.Bool("retimed"));
  ASSIGN_OR_RETURN(result.error, reader.String("error"));
  if (reader.Has("heuristic_rank")) {
    ASSIGN_OR_RETURN(const int64_t rank,
                     reader.Count("heuristic_rank", INT32_MAX));
    result.heuristic_rank = static_cast<int>(rank);
  }
  if (reader.Has("engine")) {
    // Graph-API results only.
    ASSIGN_OR_RETURN(const Json* engine, reader.Member("engine"));
    if (!engine->is_object()) {
      return Invalid(reader.Name("engine"), "must be an object");
    }
    ObjectReader e(*engine, reader.Name("engine."));
    ASSIGN_OR_RETURN(std::string knobs, e.String("knobs"));
    absl::StatusOr<std::vector<Knob>> parsed_knobs = ParseKnobs(knobs);
    if (!parsed_knobs.ok()) {
      return Invalid(e.Name("knobs"), parsed_knobs.status().message());
    }
    result.knobs = std::move(*parsed_knobs);
    ASSIGN_OR_RETURN(int64_t numerical, e.Count("numerical_notes", UINT32_MAX));
    ASSIGN_OR_RETURN(int64_t behavior, e.Count("behavior_notes", UINT32_MAX));
    result.numerical_notes = static_cast<uint32_t>(numerical);
    result.behavior_notes = static_cast<uint32_t>(behavior);
    ASSIGN_OR_RETURN(result.plan, e.String("plan", kMaxPlanBytes));
    if (e.Has("build_ms")) {
      ASSIGN_OR_RETURN(result.build_ms, e.Duration("build_ms"));
    }
    RETURN_IF_ERROR(e.NoOthers());
  }
  RETURN_IF_ERROR(reader.NoOthers());
  return result;
}

}  // namespace

std::string RecordToJson(const Record& record) {
  Json results = Json::array();
  for (const AlgoResult& r : record.results) {
    Json result = Json::object();
    result["algo"] = r.algo;
    result["math_type"] = std::string(MathTypeName(r.math_type));
    result["status"] = std::string(AlgoStatusName(r.status));
    result["launch"] = TimingToJson(r.launch);
    result["gpu"] = TimingToJson(r.gpu);
    result["host"] = TimingToJson(r.host);
    result["workspace_bytes"] = r.workspace_bytes;
    result["deterministic"] = r.deterministic;
    result["retimed"] = r.retimed;
    result["error"] = r.error;
    if (r.heuristic_rank > 0) result["heuristic_rank"] = r.heuristic_rank;
    if (record.key.problem.api == ConvApi::kGraph) {
      Json engine = Json::object();
      engine["knobs"] = KnobsText(r.knobs);
      engine["numerical_notes"] = r.numerical_notes;
      engine["behavior_notes"] = r.behavior_notes;
      engine["plan"] = r.plan;
      if (r.build_ms > 0) engine["build_ms"] = r.build_ms;
      result["engine"] = std::move(engine);
    }
    results.push_back(std::move(result));
  }
  Json line = Json::object();
  line["format"] = std::string(kRecordJsonFormat);
  line["version"] = kRecordJsonVersion;
  line["key"] = record.key.ToText();
  line["measured_at_us"] = record.measured_at_us;
  line["host"] = record.host;
  line["gpu_uuid"] = record.gpu_uuid;
  line["driver_version"] = record.driver_version;
  line["finder"] = record.finder;
  line["repeats"] = record.repeats;
  line["workspace_cap_bytes"] = record.workspace_cap_bytes;
  line["search_ms"] = record.search_ms;
  line["verified"] = record.verified;
  line["served_count"] = record.served_count;
  line["timing_version"] = record.timing_version;
  if (record.revalidated_from_cudnn != 0) {
    line["revalidated_from_cudnn"] = record.revalidated_from_cudnn;
  }
  if (!record.revalidated_from_driver.empty()) {
    line["revalidated_from_driver"] = record.revalidated_from_driver;
  }
  line["results"] = std::move(results);
  return line.dump(-1, ' ', /*ensure_ascii=*/false,
                   Json::error_handler_t::replace);
}

namespace {

// The line's format name and version (1 to kRecordJsonVersion).
absl::StatusOr<int64_t> ReadFormatVersion(ObjectReader& reader) {
  ASSIGN_OR_RETURN(std::string format, reader.String("format"));
  if (format != kRecordJsonFormat) {
    return Invalid("format", absl::StrCat("expected \"", kRecordJsonFormat,
                                          "\", got \"", format, "\""));
  }
  ASSIGN_OR_RETURN(int64_t version, reader.Count("version"));
  if (version < 1 || version > kRecordJsonVersion) {
    return Invalid("version", absl::StrCat("unsupported version ", version,
                                           " (this build reads 1 to ",
                                           kRecordJsonVersion, ")"));
  }
  return version;
}

// The record's key, whose canonical text is within kMaxTextBytes.
absl::StatusOr<ProblemKey> ReadKey(ObjectReader& reader) {
  ASSIGN_OR_RETURN(std::string key_text, reader.String("key"));
  absl::StatusOr<ProblemKey> key = ProblemKey::Parse(key_text);
  if (!key.ok()) return Invalid("key", key.status().message());
  // The key is exported in its canonical text, which escapes what the line
  // may have left raw: that text, too, must be within the limit, or the
  // record would export as a line that no import takes.
  if (const size_t canonical = key->ToText().size();
      canonical > kMaxTextBytes) {
    return Invalid("key", absl::StrCat("is ", canonical,
                                       " bytes in its canonical text; at most ",
                                       kMaxTextBytes));
  }
  return *std::move(key);
}

// Where, when and how the record was measured, and its timing version
// (1 for a line of version 1).
absl::Status ReadMeasurement(ObjectReader& reader, int64_t version,
                             Record* record) {
  ASSIGN_OR_RETURN(record->measured_at_us, reader.Count("measured_at_us"));
  ASSIGN_OR_RETURN(record->host, reader.String("host", kMaxNameBytes));
  ASSIGN_OR_RETURN(record->gpu_uuid, reader.String("gpu_uuid", kMaxNameBytes));
  ASSIGN_OR_RETURN(record->driver_version,
                   reader.String("driver_version", kMaxNameBytes));
  ASSIGN_OR_RETURN(record->finder, reader.String("finder", kMaxNameBytes));
  ASSIGN_OR_RETURN(int64_t repeats, reader.Count("repeats", kIntMax));
  record->repeats = static_cast<int>(repeats);
  ASSIGN_OR_RETURN(record->workspace_cap_bytes,
                   reader.Count("workspace_cap_bytes"));
  ASSIGN_OR_RETURN(record->search_ms, reader.Duration("search_ms"));
  ASSIGN_OR_RETURN(record->verified, reader.Bool("verified"));
  ASSIGN_OR_RETURN(record->served_count, reader.Count("served_count"));
  if (version == 1) {
    record->timing_version = 1;  // GPU time only
  } else {
    ASSIGN_OR_RETURN(int64_t timing_version,
                     reader.Count("timing_version", kCurrentTimingVersion));
    if (timing_version < 1) {
      return Invalid("timing_version", "must be at least 1");
    }
    record->timing_version = static_cast<int>(timing_version);
  }
  return absl::OkStatus();
}

// The cuDNN version and driver a revalidated record was made from, where
// the line names them.
absl::Status ReadRevalidatedFrom(ObjectReader& reader, Record* record) {
  if (reader.Has("revalidated_from_cudnn")) {
    ASSIGN_OR_RETURN(int64_t from,
                     reader.Count("revalidated_from_cudnn", kIntMax));
    record->revalidated_from_cudnn = static_cast<int>(from);
    if (!CheckRevalidatedFrom(*record).ok()) {
      return Invalid("revalidated_from_cudnn",
                     "is the key's own cuDNN version");
    }
  }
  if (reader.Has("revalidated_from_driver")) {
    ASSIGN_OR_RETURN(record->revalidated_from_driver,
                     reader.String("revalidated_from_driver", kMaxNameBytes));
    if (!record->revalidated_from_driver.empty() &&
        !CheckRevalidatedFromDriver(*record).ok()) {
      return Invalid("revalidated_from_driver",
                     "is not an older driver of the same form than "
                     "driver_version");
    }
  }
  return absl::OkStatus();
}

// The record's results, each read by ResultFromJson.
absl::Status ReadResults(ObjectReader& reader, int64_t version,
                         Record* record) {
  ASSIGN_OR_RETURN(const Json* results, reader.Member("results"));
  if (!results->is_array()) return Invalid("results", "must be an array");
  for (size_t i = 0; i < results->size(); ++i) {
    ASSIGN_OR_RETURN(
        AlgoResult result,
        ResultFromJson((*results)[i], absl::StrCat("results[", i, "]."),
                       version));
    record->results.push_back(std::move(result));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Record> RecordFromJson(absl::string_view text) {
  const Json line = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                                /*allow_exceptions=*/false);
  if (line.is_discarded()) return Invalid("line", "not valid JSON");
  if (!line.is_object()) return Invalid("line", "not a JSON object");
  ObjectReader reader(line, "");
  ASSIGN_OR_RETURN(const int64_t version, ReadFormatVersion(reader));
  Record record;
  ASSIGN_OR_RETURN(record.key, ReadKey(reader));
  RETURN_IF_ERROR(ReadMeasurement(reader, version, &record));
  RETURN_IF_ERROR(ReadRevalidatedFrom(reader, &record));
  RETURN_IF_ERROR(ReadResults(reader, version, &record));
  RETURN_IF_ERROR(reader.NoOthers());
  return record;
}

}  // namespace tunedb
