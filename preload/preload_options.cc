#include "preload/preload_options.h"

#include <cstdlib>
#include <optional>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/job_id.h"

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

}  // namespace

PreloadOptions PreloadOptionsFromEnv() {
  PreloadOptions o;
  o.client.miss_policy = MissPolicy::kBackground;
  o.client.lookup_deadline = absl::Milliseconds(200);
  // A new input size is answered from the nearest stored ones instead of
  // paying PyTorch's benchmark (docs/graph-api.md, "Keys never tuned").
  o.client.predict_misses = true;
  auto problem = [&](const char* name, const char* value) {
    absl::StrAppend(&o.problems, o.problems.empty() ? "" : ", ", name, "=",
                    value, " ignored");
  };
  if (const char* v = Env("TUNEDB_ADDRESS")) o.client.address = v;
  // An on/off setting: "on"/"1" or "off"/"0", else ignored and reported.
  auto on_off = [&](const char* name, bool* out) {
    const char* v = Env(name);
    if (v == nullptr) return;
    const std::string_view s(v);
    if (s == "on" || s == "1") {
      *out = true;
    } else if (s == "off" || s == "0") {
      *out = false;
    } else {
      problem(name, v);
    }
  };
  on_off("TUNEDB_PRELOAD", &o.enabled);
  if (const char* v = Env("TUNEDB_PRELOAD_LOG")) {
    if (std::optional<LogLevel> level = kLogLevels.Find(v)) {
      o.log = *level;
    } else {
      problem("TUNEDB_PRELOAD_LOG", v);
    }
  }
  if (const char* v = Env("TUNEDB_PRELOAD_LOOKUP_MS")) {
    double ms = 0;
    if (absl::SimpleAtod(v, &ms) && ms >= 0 && ms <= 60000) {
      o.client.lookup_deadline = absl::Milliseconds(ms);
    } else {
      problem("TUNEDB_PRELOAD_LOOKUP_MS", v);
    }
  }
  if (const char* v = Env("TUNEDB_PRELOAD_DB")) o.client.db_path = v;
  if (const char* v = Env("TUNEDB_PRELOAD_MISSES_FILE")) {
    o.misses_file = v;
    o.client.tune_misses = o.misses_file.empty();
  }
  if (const char* v = Env("TUNEDB_PRELOAD_EXIT_WAIT_S")) {
    double s = 0;
    if (absl::SimpleAtod(v, &s) && s >= 0 && s <= 86400) {
      o.exit_wait_s = s;
    } else {
      problem("TUNEDB_PRELOAD_EXIT_WAIT_S", v);
    }
  }
  on_off("TUNEDB_PRELOAD_REPORT", &o.report);
  on_off("TUNEDB_PRELOAD_EMPTY_FALLBACK", &o.empty_fallback);
  on_off("TUNEDB_PRELOAD_LEAD_PLAN_ONLY", &o.lead_plan_only);
  on_off("TUNEDB_PRELOAD_STORED_PLANS", &o.stored_plans);
  on_off("TUNEDB_PRELOAD_PREDICT", &o.client.predict_misses);
  on_off("TUNEDB_PRELOAD_PREDICT_VERSIONS",
         &o.client.predict_from_other_versions);
  if (Env("CUDNN_ERRATA_JSON_FILE") != nullptr) o.lead_plan_only = false;
  ReadPinOptions(o);
  if (const char* v = Env("TUNEDB_PRELOAD_GRAPH_CONFIGS")) {
    int n = 0;
    if (absl::SimpleAtoi(v, &n) && n >= 1 && n <= 64) {
      o.graph_configs = n;
    } else {
      problem("TUNEDB_PRELOAD_GRAPH_CONFIGS", v);
    }
  }
  if (const char* v = Env("TUNEDB_PRELOAD_COMPILE_HORIZON")) {
    int64_t n = 0;
    if (absl::SimpleAtoi(v, &n) && n >= 0) {
      o.compile_horizon_calls = n;
    } else {
      problem("TUNEDB_PRELOAD_COMPILE_HORIZON", v);
    }
  }
  return o;
}

}  // namespace tunedb::preload
