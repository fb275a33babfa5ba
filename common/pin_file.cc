#include "common/pin_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/constraints_text.h"
#include "common/enum_names.h"
#include "common/record_results.h"
#include "common/regular_file.h"
#include "common/sealed_plan.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "nlohmann/json.hpp"

namespace tunedb {
namespace {

using json = nlohmann::json;

constexpr EnumNames<PinnedSource, 4> kPinnedSources(
    "pinned source", {{{PinnedSource::kTuned, "tuned"},
                       {PinnedSource::kPredicted, "predicted"},
                       {PinnedSource::kHeuristic, "heuristic"},
                       {PinnedSource::kNone, "none"}}});

// Engine global indexes and legacy algorithm values are small; anything
// past this is damage, not an algorithm.
constexpr int64_t kMaxAlgo = 1 << 16;

std::tuple<std::string, std::string> SortKey(const PinEntry& e) {
  return {e.problem.ToText(), e.slot.ToText()};
}

// A pin's plans, kept once each: a plan's id is its seal's digest
// (sealed_plan.h), which answers for several slots of one key and config
// share.
class PinPlans {
 public:
  // The id of sealed plan `text`, added if new.
  std::string Add(const std::string& text) {
    std::string digest = SealedPlanDigest(text);
    if (digest.empty()) digest = "plan";  // not sealed: refused when read
    std::string id = digest;
    for (int n = 2;; ++n) {
      auto [it, added] = plans_.emplace(id, text);
      if (added || it->second == text) return id;
      id = absl::StrCat(digest, "-", n);  // a digest collision
    }
  }
  const std::map<std::string, std::string>& plans() const { return plans_; }

 private:
  std::map<std::string, std::string> plans_;
};

json EntryJson(const PinEntry& e, PinPlans& plans) {
  json j;
  j["problem"] = e.problem.ToText();
  j["det"] = e.slot.deterministic_only;
  j["launch"] = std::string(LaunchModeName(e.slot.launch_mode));
  j["notes"] = e.slot.excluded_numerical_notes;
  if (e.slot.max_workspace_bytes.has_value()) {
    j["ws"] = *e.slot.max_workspace_bytes;
  } else {
    j["ws"] = nullptr;
  }
  j["source"] = std::string(PinnedSourceName(e.source));
  if (e.source == PinnedSource::kNone) return j;
  const AlgoResult& a = e.answer;
  j["algo"] = a.algo;
  j["math"] = std::string(MathTypeName(a.math_type));
  j["workspace"] = a.workspace_bytes;
  j["deterministic"] = a.deterministic;
  if (e.problem.api == ConvApi::kGraph) {
    j["knobs"] = KnobsText(a.knobs);
    j["numerical_notes"] = a.numerical_notes;
    j["behavior_notes"] = a.behavior_notes;
    j["ms"] = a.launch.median_ms;
    if (!a.plan.empty()) j["plan"] = plans.Add(a.plan);
  }
  return j;
}

// The whole number `v` as T, or INVALID_ARGUMENT naming the field: a
// fraction (1.9) or a number past T's range (2^32 + 13000 for an int) is
// refused, never truncated.
template <typename T>
absl::StatusOr<T> WholeNumber(const json& v, const char* name,
                              const char* where) {
  if (!v.is_number_integer()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": \"", name, "\" is ", v.dump(), ", not a whole number"));
  }
  bool fits;
  if (v.is_number_unsigned()) {
    fits = v.get<uint64_t>() <=
           static_cast<uint64_t>(std::numeric_limits<T>::max());
  } else {
    const int64_t n = v.get<int64_t>();
    fits = n >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           (n < 0 || static_cast<uint64_t>(n) <=
                         static_cast<uint64_t>(std::numeric_limits<T>::max()));
  }
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": \"", name, "\" ", v.dump(), " is out of range"));
  }
  return v.get<T>();
}

// The field `name` of `j` as T, or INVALID_ARGUMENT naming it.
template <typename T>
absl::StatusOr<T> Field(const json& j, const char* name, const char* where) {
  auto it = j.find(name);
  if (it == j.end()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no \"", name,
                                                   "\""));
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return WholeNumber<T>(*it, name, where);
  } else {
    try {
      return it->template get<T>();
    } catch (const json::exception&) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"", name, "\" has the wrong type"));
    }
  }
}

// The entry's problem and the slot of caller constraints it answers.
absl::Status ParseSlot(const json& j, const std::string& where, PinEntry* e) {
  const char* w = where.c_str();
  std::string problem, launch;
  ASSIGN_OR_RETURN(problem, Field<std::string>(j, "problem", w));
  absl::StatusOr<ConvProblem> parsed = ConvProblem::Parse(problem);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": problem: ", parsed.status().message()));
  }
  e->problem = *std::move(parsed);
  ASSIGN_OR_RETURN(e->slot.deterministic_only, Field<bool>(j, "det", w));
  ASSIGN_OR_RETURN(launch, Field<std::string>(j, "launch", w));
  absl::StatusOr<LaunchMode> mode = ParseLaunchMode(launch);
  if (!mode.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": launch: ", mode.status().message()));
  }
  e->slot.launch_mode = *mode;
  ASSIGN_OR_RETURN(e->slot.excluded_numerical_notes,
                   Field<uint32_t>(j, "notes", w));
  if (auto ws = j.find("ws"); ws == j.end()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no \"ws\""));
  } else if (!ws->is_null()) {
    absl::StatusOr<int64_t> bytes = WholeNumber<int64_t>(*ws, "ws", w);
    if (!bytes.ok() || *bytes < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"ws\" is not a byte count or null"));
    }
    e->slot.max_workspace_bytes = *bytes;
  }
  return absl::OkStatus();
}

// The answer's fields of both APIs: algo, math, workspace, deterministic.
absl::Status ParseAnswer(const json& j, const std::string& where,
                         AlgoResult* a) {
  const char* w = where.c_str();
  int64_t algo = 0;
  ASSIGN_OR_RETURN(algo, Field<int64_t>(j, "algo", w));
  if (algo < 0 || algo > kMaxAlgo) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": algo ", algo, " is out of range"));
  }
  a->algo = static_cast<int>(algo);
  std::string math;
  ASSIGN_OR_RETURN(math, Field<std::string>(j, "math", w));
  absl::StatusOr<MathType> m = ParseMathType(math);
  if (!m.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": math: ", m.status().message()));
  }
  a->math_type = *m;
  ASSIGN_OR_RETURN(a->workspace_bytes, Field<int64_t>(j, "workspace", w));
  if (a->workspace_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": negative workspace"));
  }
  ASSIGN_OR_RETURN(a->deterministic, Field<bool>(j, "deterministic", w));
  return absl::OkStatus();
}

// A graph-API answer's further fields: knobs, notes, the time and its
// sealed plan's id.
absl::Status ParseGraphAnswer(const json& j, const std::string& where,
                              const json& plans, AlgoResult* a) {
  const char* w = where.c_str();
  std::string knobs;
  ASSIGN_OR_RETURN(knobs, Field<std::string>(j, "knobs", w));
  absl::StatusOr<std::vector<Knob>> k = ParseKnobs(knobs);
  if (!k.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": knobs: ", k.status().message()));
  }
  a->knobs = *std::move(k);
  ASSIGN_OR_RETURN(a->numerical_notes,
                   Field<uint32_t>(j, "numerical_notes", w));
  ASSIGN_OR_RETURN(a->behavior_notes, Field<uint32_t>(j, "behavior_notes", w));
  ASSIGN_OR_RETURN(a->launch.median_ms, Field<double>(j, "ms", w));
  if (!(a->launch.median_ms >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": bad \"ms\""));
  }
  a->launch.samples = a->launch.median_ms > 0 ? 1 : 0;
  // The id of a sealed plan in the pin's "plans" (sealed_plan.h), opened by
  // the follower for this key and config; only its form is checked here.
  if (auto it = j.find("plan"); it != j.end()) {
    auto plan = it->is_string() && plans.is_object()
                    ? plans.find(it->get<std::string>())
                    : plans.end();
    if (plan == plans.end() || !plan->is_string() ||
        !absl::StartsWith(plan->get_ref<const std::string&>(),
                          kSealedPlanMagic)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": \"plan\" names no sealed plan of the pin's \"plans\""));
    }
    a->plan = plan->get<std::string>();
  }
  return absl::OkStatus();
}

absl::StatusOr<PinEntry> ParseEntry(const json& j, const std::string& where,
                                    const json& plans) {
  if (!j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": not an object"));
  }
  const char* w = where.c_str();
  PinEntry e;
  RETURN_IF_ERROR(ParseSlot(j, where, &e));
  std::string source;
  ASSIGN_OR_RETURN(source, Field<std::string>(j, "source", w));
  std::optional<PinnedSource> s = kPinnedSources.Find(source);
  if (!s.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": unknown source \"", source, "\""));
  }
  e.source = *s;
  if (e.source == PinnedSource::kNone) return e;
  RETURN_IF_ERROR(ParseAnswer(j, where, &e.answer));
  if (e.problem.api != ConvApi::kGraph) return e;
  RETURN_IF_ERROR(ParseGraphAnswer(j, where, plans, &e.answer));
  return e;
}

absl::StatusOr<PinFile> ParseHeader(const json& j) {
  PinFile pin;
  const char* w = "pin";
  std::string format;
  ASSIGN_OR_RETURN(format, Field<std::string>(j, "format", w));
  if (format != kPinFormatName) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a tunedb pin (format \"", format, "\")"));
  }
  ASSIGN_OR_RETURN(pin.version, Field<int>(j, "version", w));
  if (pin.version != kPinFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("pin format version ", pin.version,
                     " is not this tunedb's (", kPinFormatVersion, ")"));
  }
  std::string device;
  ASSIGN_OR_RETURN(device, Field<std::string>(j, "device", w));
  absl::StatusOr<DeviceKey> d = DeviceKey::Parse(device);
  if (!d.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pin device: ", d.status().message()));
  }
  pin.device = *std::move(d);
  ASSIGN_OR_RETURN(pin.driver_version, Field<int>(j, "driver", w));
  if (pin.driver_version < 0) {
    return absl::InvalidArgumentError("pin driver: negative");
  }
  ASSIGN_OR_RETURN(pin.deterministic, Field<bool>(j, "deterministic", w));
  ASSIGN_OR_RETURN(pin.made_by, Field<std::string>(j, "made_by", w));
  return pin;
}

// The digest of an answer line: its JSON without "digest" (keys sorted,
// so the text is one), hashed.
std::string AnswerDigest(json j) {
  j.erase("digest");
  return KeyHashText(KeyTextHash(j.dump()));
}

// "answer 3 (api=legacy ..., det=0 launch=direct ...: algo 3 tensor_op)",
// naming an answer as the file now reads it.
std::string AnswerName(const std::string& where, const PinEntry& e) {
  std::string name = absl::StrCat(where, " (", e.problem.ToText(), "; ",
                                  e.slot.ToText(), ": ",
                                  PinnedSourceName(e.source));
  if (e.source != PinnedSource::kNone) {
    absl::StrAppend(&name, " algo ", e.answer.algo, " ",
                    MathTypeName(e.answer.math_type), " workspace ",
                    e.answer.workspace_bytes);
  }
  return name + ")";
}

// Whether answer `j` (parsed as `e`) carries its digest: none (a pin made
// before pins had digests), or one that matches; an error naming it when
// the digest does not match (the line was edited) or is missing in a pin
// whose other answers have theirs. `edited`: with kAcceptEdits, such
// answers are listed there instead.
absl::Status CheckDigest(const json& j, const std::string& where,
                         const PinEntry& e, PinDigests digests,
                         std::vector<std::string>* edited, int* with_digest) {
  auto it = j.find("digest");
  if (it == j.end()) return absl::OkStatus();  // judged once all are read
  ++*with_digest;
  if (it->is_string() && it->get_ref<const std::string&>() == AnswerDigest(j)) {
    return absl::OkStatus();
  }
  const std::string name = AnswerName(where, e);
  if (digests == PinDigests::kAcceptEdits) {
    edited->push_back(name);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      name, " was edited after it was recorded: its digest does not match "
            "(`tunedb pin seal FILE` seals a deliberate edit)"));
}

// Holds an exclusive lock on the folder of `path` while alive (flock on a
// folder: no lock file is left beside the pin).
class PinLock {
 public:
  explicit PinLock(const std::string& path)
      : fd_(open(FolderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0) {
      while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~PinLock() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

 private:
  static std::string FolderOf(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
  }
  const int fd_;
};

absl::Status LockError(const std::string& path) {
  return absl::InternalError(absl::StrCat(
      "cannot lock the folder of ", path, ": ", std::strerror(errno)));
}

}  // namespace

PinSlot PinSlot::Of(const Constraints& c) {
  PinSlot s;
  s.deterministic_only = c.deterministic_only;
  s.launch_mode = c.launch_mode;
  s.excluded_numerical_notes = c.excluded_numerical_notes;
  s.max_workspace_bytes = c.max_workspace_bytes;
  return s;
}

std::string PinSlot::ToText() const {
  Constraints c;
  c.deterministic_only = deterministic_only;
  c.launch_mode = launch_mode;
  c.excluded_numerical_notes = excluded_numerical_notes;
  c.max_workspace_bytes = max_workspace_bytes;
  return ConstraintsText(c);
}

absl::string_view PinnedSourceName(PinnedSource s) {
  return kPinnedSources.Name(s);
}

AlgoResult PinnedAnswerOf(const AlgoResult& chosen, const ProblemKey& key,
                          LaunchMode mode) {
  const ConvApi api = key.problem.api;
  AlgoResult a;
  a.algo = chosen.algo;
  a.math_type = chosen.math_type;
  a.workspace_bytes = chosen.workspace_bytes;
  a.deterministic = chosen.deterministic;
  if (api == ConvApi::kGraph) {
    a.knobs = chosen.knobs;
    a.numerical_notes = chosen.numerical_notes;
    a.behavior_notes = chosen.behavior_notes;
    a.launch.median_ms = chosen.cost(mode).median_ms;
    a.launch.samples = a.launch.median_ms > 0 ? 1 : 0;
    if (!chosen.plan.empty() && RuntimeCompiled(chosen)) {
      a.plan = absl::StartsWith(chosen.plan, kSealedPlanMagic)
                   ? chosen.plan
                   : SealPlan(key, chosen.algo, chosen.knobs, chosen.plan);
    }
  }
  return a;
}

void NormalizePin(PinFile& pin) {
  std::stable_sort(pin.entries.begin(), pin.entries.end(),
                   [](const PinEntry& a, const PinEntry& b) {
                     return SortKey(a) < SortKey(b);
                   });
  auto last = std::unique(pin.entries.begin(), pin.entries.end(),
                          [](const PinEntry& a, const PinEntry& b) {
                            return SortKey(a) == SortKey(b);
                          });
  pin.entries.erase(last, pin.entries.end());
}

std::string FormatPin(PinFile pin) {
  NormalizePin(pin);
  json header;
  header["format"] = std::string(kPinFormatName);
  header["version"] = pin.version;
  header["device"] = pin.device.ToText();
  header["driver"] = pin.driver_version;
  header["deterministic"] = pin.deterministic;
  header["made_by"] = pin.made_by;
  // The header's fields, then one entry per line: a changed answer is a
  // changed line in a diff.
  std::string out = "{\n";
  for (auto it = header.begin(); it != header.end(); ++it) {
    absl::StrAppend(&out, "  ", json(it.key()).dump(), ": ", it.value().dump(),
                    ",\n");
  }
  out += "  \"answers\": [";
  PinPlans plans;
  for (size_t i = 0; i < pin.entries.size(); ++i) {
    json line = EntryJson(pin.entries[i], plans);
    line["digest"] = AnswerDigest(line);
    absl::StrAppend(&out, i == 0 ? "\n    " : ",\n    ", line.dump());
  }
  out += pin.entries.empty() ? "]" : "\n  ]";
  // The answers' plans after them, one per line.
  if (!plans.plans().empty()) {
    out += ",\n  \"plans\": {";
    bool first = true;
    for (const auto& [id, text] : plans.plans()) {
      absl::StrAppend(&out, first ? "\n    " : ",\n    ", json(id).dump(), ": ",
                      json(text).dump());
      first = false;
    }
    out += "\n  }";
  }
  out += "\n}\n";
  return out;
}

absl::StatusOr<PinFile> ParsePin(absl::string_view text, PinDigests digests) {
  json j = json::parse(text.begin(), text.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::DataLossError(
        "not a whole pin: the text is not JSON (cut short or damaged?)");
  }
  if (!j.is_object()) return absl::InvalidArgumentError("not a tunedb pin");
  absl::StatusOr<PinFile> pin = ParseHeader(j);
  if (!pin.ok()) return pin.status();
  auto answers = j.find("answers");
  if (answers == j.end() || !answers->is_array()) {
    return absl::InvalidArgumentError("pin: no \"answers\" list");
  }
  auto plans = j.find("plans");
  const json no_plans = json::object();
  if (plans != j.end() && !plans->is_object()) {
    return absl::InvalidArgumentError("pin: \"plans\" is not an object");
  }
  int with_digest = 0;
  std::vector<std::string> undigested;
  for (size_t i = 0; i < answers->size(); ++i) {
    const std::string where = absl::StrCat("answer ", i + 1);
    const json& line = (*answers)[i];
    absl::StatusOr<PinEntry> e =
        ParseEntry(line, where, plans != j.end() ? *plans : no_plans);
    if (!e.ok()) return e.status();
    RETURN_IF_ERROR(
        CheckDigest(line, where, *e, digests, &pin->edited, &with_digest));
    if (!line.contains("digest")) undigested.push_back(AnswerName(where, *e));
    pin->entries.push_back(*std::move(e));
  }
  // A pin of before digests has none; one that has some has them all.
  pin->sealed = with_digest > 0 || undigested.empty();
  if (pin->sealed && !undigested.empty()) {
    if (digests == PinDigests::kCheck) {
      return absl::InvalidArgumentError(absl::StrCat(
          undigested[0], " has no digest where the pin's other answers have "
          "theirs: added or edited after it was recorded (`tunedb pin seal "
          "FILE` seals a deliberate edit)"));
    }
    pin->edited.insert(pin->edited.end(), undigested.begin(),
                       undigested.end());
  }
  const size_t n = pin->entries.size();
  NormalizePin(*pin);
  if (pin->entries.size() != n) {
    return absl::InvalidArgumentError(
        "pin: two answers for one problem and slot");
  }
  return pin;
}

absl::StatusOr<PinFile> ReadPinFile(const std::string& path,
                                    PinDigests digests) {
  absl::StatusOr<std::string> text = ReadRegularFile(path, kMaxPinBytes);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrCat("no pin at ", path));
  }
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("cannot read the pin: ",
                                     text.status().message()));
  }
  absl::StatusOr<PinFile> pin = ParsePin(*text, digests);
  if (!pin.ok()) {
    return absl::Status(pin.status().code(),
                        absl::StrCat(path, ": ", pin.status().message()));
  }
  return pin;
}

absl::Status MergePinFile(const std::string& path, const PinFile& pin) {
  // A link to a pin: the file it names is merged into and replaced.
  ASSIGN_OR_RETURN(const std::string target, LinkTarget(path));
  PinLock lock(target);
  if (!lock.ok()) return LockError(target);
  PinFile merged = pin;
  absl::StatusOr<PinFile> old = ReadPinFile(target);
  if (old.ok()) {
    const std::string mismatch =
        PinMismatch(*old, pin.device, pin.driver_version);
    if (!mismatch.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          path, " holds a pin for another device (", mismatch, ")"));
    }
    merged = *old;
    merged.deterministic = old->deterministic && pin.deterministic;
    if (merged.driver_version == 0) merged.driver_version = pin.driver_version;
    // The file's entries first: NormalizePin keeps the first of a slot.
    merged.entries.insert(merged.entries.end(), pin.entries.begin(),
                          pin.entries.end());
  } else if (old.status().code() != absl::StatusCode::kNotFound) {
    return absl::FailedPreconditionError(absl::StrCat(
        "not merging into a pin that cannot be read: ",
        old.status().message()));
  }
  return ReplaceRegularFile(target, FormatPin(std::move(merged)));
}

absl::StatusOr<std::vector<std::string>> SealPinFile(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string target, LinkTarget(path));
  PinLock lock(target);
  if (!lock.ok()) return LockError(target);
  absl::StatusOr<PinFile> pin = ReadPinFile(target, PinDigests::kAcceptEdits);
  if (!pin.ok()) return pin.status();
  std::vector<std::string> sealed = pin->edited;
  if (!pin->sealed) sealed.push_back("every answer (none had a digest)");
  RETURN_IF_ERROR(ReplaceRegularFile(target, FormatPin(*std::move(pin))));
  return sealed;
}

std::string UnsealedPinWarning(const PinFile& pin, const std::string& path) {
  if (pin.sealed) return "";
  return absl::StrCat(
      "the pin ", path, " was written before pins carried digests, so an "
      "edit of its answers cannot be told; it is followed as it reads (`tunedb "
      "pin seal ", path, "` seals it as it reads now)");
}

std::string PinMismatch(const PinFile& pin, const DeviceKey& device,
                        int driver_version) {
  std::vector<std::string> out;
  auto differ = [&](const std::string& what, const std::string& pinned,
                    const std::string& here) {
    if (pinned != here) {
      out.push_back(absl::StrCat(what, " ", pinned, " in the pin, ", here,
                                 " here"));
    }
  };
  const DeviceKey& p = pin.device;
  differ("GPU", p.gpu_model, device.gpu_model);
  differ("compute capability", absl::StrCat(p.cc_major, ".", p.cc_minor),
         absl::StrCat(device.cc_major, ".", device.cc_minor));
  differ("SM count", absl::StrCat(p.sm_count), absl::StrCat(device.sm_count));
  differ("cuDNN", CudnnVersionText(p.cudnn_version),
         CudnnVersionText(device.cudnn_version));
  differ("CUDA runtime", CudaVersionText(p.cuda_runtime_version),
         CudaVersionText(device.cuda_runtime_version));
  if (pin.driver_version != 0 && driver_version != 0) {
    differ("driver (CUDA)", CudaVersionText(pin.driver_version),
           CudaVersionText(driver_version));
  }
  return absl::StrJoin(out, "; ");
}

}  // namespace tunedb
