#include "preload/preload_options.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/job_id.h"
#include "common/valid_key.h"

namespace tunedb::preload {
namespace {

constexpr EnumNames<LogLevel, 3> kLogLevels("log level",
                                            {{{LogLevel::kOff, "off"},
                                              {LogLevel::kSummary, "summary"},
                                              {LogLevel::kCalls, "calls"}}});

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// TUNEDB_PIN and its settings into o.client.pin, or o.pin_problem; the job
// id into o.client.job_id.
void ReadPinOptions(PreloadOptions& o) {
  PinOptions& pin = o.client.pin;
  if (const char* v = Env("TUNEDB_PIN")) pin.path = v;
  if (const char* v = Env("TUNEDB_PIN_MODE")) {
    const std::string_view mode(v);
    if (mode == "record") {
      pin.mode = PinMode::kRecord;
    } else if (mode == "follow") {
      pin.mode = PinMode::kFollow;
    } else {
      o.pin_problem = absl::StrCat("TUNEDB_PIN_MODE=", v,
                                   " is neither record nor follow");
    }
  }
  if (const char* v = Env("TUNEDB_PIN_MISMATCH")) {
    const std::string_view m(v);
    if (m == "warn") {
      pin.accept_mismatch = true;
    } else if (m != "refuse") {
      o.pin_problem = absl::StrCat("TUNEDB_PIN_MISMATCH=", v,
                                   " is neither refuse nor warn");
    }
  }
  if (const char* v = Env("TUNEDB_PIN_DETERMINISTIC")) {
    pin.deterministic = std::string_view(v) == "on" || std::string_view(v) == "1";
  }
  const char* job = Env("TUNEDB_JOB");
  if (job == nullptr) {
    // torchrun's rendezvous id names the job; "none" is its default.
    const char* run = Env("TORCHELASTIC_RUN_ID");
    if (run != nullptr && std::string_view(run) != "none") job = run;
  }
  if (job != nullptr) {
    if (ValidateJobId(job).ok()) {
      o.client.job_id = job;
    } else {
      absl::StrAppend(&o.problems, o.problems.empty() ? "" : ", ",
                      "job id ", job, " ignored");
    }
  }
  if (o.pin_problem.empty() && pin.path.empty() != (pin.mode == PinMode::kOff)) {
    o.pin_problem = "TUNEDB_PIN and TUNEDB_PIN_MODE go together";
  }
}

// Appends "NAME=value ignored" to o.problems: a setting not understood.
void Ignore(PreloadOptions& o, const char* name, const char* value) {
  absl::StrAppend(&o.problems, o.problems.empty() ? "" : ", ", name, "=",
                  value, " ignored");
}

// An on/off setting: "on"/"1" or "off"/"0" into *out, else ignored and
// reported.
void ReadOnOff(PreloadOptions& o, const char* name, bool* out) {
  const char* v = Env(name);
  if (v == nullptr) return;
  const std::string_view s(v);
  if (s == "on" || s == "1") {
    *out = true;
  } else if (s == "off" || s == "0") {
    *out = false;
  } else {
    Ignore(o, name, v);
  }
}

bool ParseNumber(const char* text, double* out) {
  return absl::SimpleAtod(text, out);
}
template <typename T>
bool ParseNumber(const char* text, T* out) {
  return absl::SimpleAtoi(text, out);
}

// A number setting from `lo` to `hi` into *out (true), else *out is kept
// and the setting ignored and reported (false, as when it is not set).
template <typename T>
bool ReadNumber(PreloadOptions& o, const char* name, T lo, T hi, T* out) {
  const char* v = Env(name);
  if (v == nullptr) return false;
  T n = 0;
  if (ParseNumber(v, &n) && n >= lo && n <= hi) {
    *out = n;
    return true;
  }
  Ignore(o, name, v);
  return false;
}

// The process's command line as the kernel keeps it: its arguments, each
// ended by a NUL ("" if it cannot be read).
std::string CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// TUNEDB_PROGRAM, if valid, else the command line's digest, into
// o.client.program; TUNEDB_WARM into o.client.warm_at_start.
void ReadProgram(PreloadOptions& o) {
  if (const char* v = Env("TUNEDB_PROGRAM")) {
    if (ValidateProgramName(v).ok()) {
      o.client.program = v;
    } else {
      absl::StrAppend(&o.problems, o.problems.empty() ? "" : ", ",
                      "program ", v, " ignored");
    }
  }
  if (o.client.program.empty()) {
    o.client.program = ProgramOfCommandLine(CommandLine());
  }
  ReadOnOff(o, "TUNEDB_WARM", &o.client.warm_at_start);
}

// The settings of the preload's own behaviour: its log, its report and
// exit wait, the misses file, the fallback and the plans it offers.
void ReadPreloadSettings(PreloadOptions& o) {
  ReadOnOff(o, "TUNEDB_PRELOAD", &o.enabled);
  if (const char* v = Env("TUNEDB_PRELOAD_LOG")) {
    if (std::optional<LogLevel> level = kLogLevels.Find(v)) {
      o.log = *level;
    } else {
      Ignore(o, "TUNEDB_PRELOAD_LOG", v);
    }
  }
  double lookup_ms = 0;
  if (ReadNumber(o, "TUNEDB_PRELOAD_LOOKUP_MS", 0.0, 60000.0, &lookup_ms)) {
    o.client.lookup_deadline = absl::Milliseconds(lookup_ms);
  }
  if (const char* v = Env("TUNEDB_PRELOAD_DB")) o.client.db_path = v;
  if (const char* v = Env("TUNEDB_PRELOAD_MISSES_FILE")) {
    o.misses_file = v;
    o.client.tune_misses = o.misses_file.empty();
  }
  ReadNumber(o, "TUNEDB_PRELOAD_EXIT_WAIT_S", 0.0, 86400.0, &o.exit_wait_s);
  ReadOnOff(o, "TUNEDB_PRELOAD_REPORT", &o.report);
  ReadOnOff(o, "TUNEDB_PRELOAD_EMPTY_FALLBACK", &o.empty_fallback);
  ReadOnOff(o, "TUNEDB_PRELOAD_LEAD_PLAN_ONLY", &o.lead_plan_only);
  ReadOnOff(o, "TUNEDB_PRELOAD_STORED_PLANS", &o.stored_plans);
  ReadOnOff(o, "TUNEDB_PRELOAD_PREDICT", &o.client.predict_misses);
  ReadOnOff(o, "TUNEDB_PRELOAD_PREDICT_VERSIONS",
            &o.client.predict_from_other_versions);
  if (Env("CUDNN_ERRATA_JSON_FILE") != nullptr) o.lead_plan_only = false;
}

}  // namespace

std::string ProgramOfCommandLine(absl::string_view command_line) {
  // FNV-1a's offset basis.
  constexpr uint64_t kFnvBasis = 14695981039346656037ULL;
  return "cmd-" + KeyHashText(Fnv1aExtend(kFnvBasis, command_line));
}

PreloadOptions PreloadOptionsFromEnv() {
  PreloadOptions o;
  o.client.miss_policy = MissPolicy::kBackground;
  o.client.lookup_deadline = absl::Milliseconds(200);
  // A new input size is answered from the nearest stored ones instead of
  // paying PyTorch's benchmark (docs/graph-api.md, "Keys never tuned").
  o.client.predict_misses = true;
  if (const char* v = Env("TUNEDB_ADDRESS")) o.client.address = v;
  ReadPreloadSettings(o);
  ReadPinOptions(o);
  ReadProgram(o);
  ReadNumber(o, "TUNEDB_PRELOAD_GRAPH_CONFIGS", 1, 64, &o.graph_configs);
  ReadNumber(o, "TUNEDB_PRELOAD_COMPILE_HORIZON", int64_t{0},
             std::numeric_limits<int64_t>::max(), &o.compile_horizon_calls);
  return o;
}

}  // namespace tunedb::preload
