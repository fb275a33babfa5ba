#include "tunedb/record.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/driver_version.h"
#include "common/enum_names.h"
#include "common/record_results.h"

namespace tunedb {
namespace {

constexpr EnumNames<MathType, 4> kMathNames(
    "math type",
    {{{MathType::kDefault, "default"},
      {MathType::kTensorOp, "tensor_op"},
      {MathType::kTensorOpAllowConversion, "tensor_op_allow_conversion"},
      {MathType::kFma, "fma"}}});
constexpr EnumNames<AlgoStatus, 3> kStatusNames(
    "algorithm status", {{{AlgoStatus::kOk, "ok"},
                          {AlgoStatus::kNotSupported, "not_supported"},
                          {AlgoStatus::kFailed, "failed"}}});
constexpr EnumNames<LaunchMode, 2> kLaunchModeNames(
    "launch mode",
    {{{LaunchMode::kDirect, "direct"}, {LaunchMode::kGraph, "graph"}}});

}  // namespace

absl::string_view MathTypeName(MathType m) { return kMathNames.Name(m); }
absl::StatusOr<MathType> ParseMathType(absl::string_view s) {
  return kMathNames.Parse(s);
}
absl::string_view AlgoStatusName(AlgoStatus s) { return kStatusNames.Name(s); }
absl::StatusOr<AlgoStatus> ParseAlgoStatus(absl::string_view s) {
  return kStatusNames.Parse(s);
}

absl::string_view LaunchModeName(LaunchMode m) {
  return kLaunchModeNames.Name(m);
}
absl::StatusOr<LaunchMode> ParseLaunchMode(absl::string_view s) {
  return kLaunchModeNames.Parse(s);
}

bool operator==(const Timing& a, const Timing& b) {
  return std::tie(a.median_ms, a.spread_ms, a.samples) ==
         std::tie(b.median_ms, b.spread_ms, b.samples);
}

const Timing& AlgoResult::cost(LaunchMode mode) const {
  const Timing& wanted = mode == LaunchMode::kGraph ? gpu : launch;
  const Timing& other = mode == LaunchMode::kGraph ? launch : gpu;
  return wanted.measured() || !other.measured() ? wanted : other;
}

bool operator==(const AlgoResult& a, const AlgoResult& b) {
  return std::tie(a.algo, a.math_type, a.status, a.launch, a.gpu, a.host,
                  a.workspace_bytes, a.deterministic, a.retimed, a.error,
                  a.knobs, a.numerical_notes, a.behavior_notes, a.plan,
                  a.build_ms, a.heuristic_rank) ==
         std::tie(b.algo, b.math_type, b.status, b.launch, b.gpu, b.host,
                  b.workspace_bytes, b.deterministic, b.retimed, b.error,
                  b.knobs, b.numerical_notes, b.behavior_notes, b.plan,
                  b.build_ms, b.heuristic_rank);
}

std::string KnobsText(const std::vector<Knob>& knobs) {
  std::string out;
  for (const Knob& k : knobs) {
    if (!out.empty()) out += ',';
    absl::StrAppend(&out, k.type, "=", k.value);
  }
  return out;
}

absl::StatusOr<std::vector<Knob>> ParseKnobs(absl::string_view text) {
  std::vector<Knob> out;
  if (text.empty()) return out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    Knob k;
    if (!absl::SimpleAtoi(kv.first, &k.type) || k.type < 0 ||
        !absl::SimpleAtoi(kv.second, &k.value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "knobs: '", item, "' is not type=value (as in \"3=1,9=4\")"));
    }
    out.push_back(k);
  }
  return out;
}

namespace {

// Names of the note bits, from cuDNN 9's cudnn_graph.h.
constexpr const char* kNumericalNoteNames[] = {
    "tensor_core",         "down_convert_inputs", "reduced_precision_reduction",
    "fft",                 "nondeterministic",    "winograd",
    "winograd_tile_4x4",   "winograd_tile_6x6",   "winograd_tile_13x13",
    "strict_nan_prop"};
constexpr const char* kBehaviorNoteNames[] = {
    "runtime_compilation", "requires_filter_int8x32_reorder",
    "requires_bias_int8x32_reorder", "supports_cuda_graph_native_api",
    "cublaslt_dependency"};

template <size_t N>
std::string NotesText(uint32_t notes, const char* const (&names)[N]) {
  std::string out;
  for (int bit = 0; bit < 32; ++bit) {
    if ((notes & (uint32_t{1} << bit)) == 0) continue;
    if (!out.empty()) out += ',';
    if (static_cast<size_t>(bit) < N) {
      out += names[bit];
    } else {
      absl::StrAppend(&out, "bit", bit);
    }
  }
  return out;
}

}  // namespace

std::string NumericalNotesText(uint32_t notes) {
  return NotesText(notes, kNumericalNoteNames);
}

std::string BehaviorNotesText(uint32_t notes) {
  return NotesText(notes, kBehaviorNoteNames);
}

bool Record::supported() const {
  return std::any_of(results.begin(), results.end(), [](const AlgoResult& r) {
    return r.status == AlgoStatus::kOk;
  });
}

int TimingVersionOf(const std::vector<AlgoResult>& results) {
  for (const AlgoResult& r : results) {
    if (r.status == AlgoStatus::kOk && !r.launch.measured()) return 1;
  }
  return kCurrentTimingVersion;
}

void SortResults(std::vector<AlgoResult>& results) {
  std::stable_sort(results.begin(), results.end(),
                   [](const AlgoResult& a, const AlgoResult& b) {
                     if (a.status != b.status) return a.status < b.status;
                     if (a.status != AlgoStatus::kOk) {
                       return std::tie(a.algo, a.math_type) <
                              std::tie(b.algo, b.math_type);
                     }
                     const double ca = a.cost(LaunchMode::kDirect).median_ms;
                     const double cb = b.cost(LaunchMode::kDirect).median_ms;
                     return std::tie(ca, a.workspace_bytes, a.algo) <
                            std::tie(cb, b.workspace_bytes, b.algo);
                   });
}

std::optional<AlgoResult> Choose(const Record& record,
                                 const Constraints& constraints) {
  const AlgoResult* best = ChooseFrom(record.results, constraints);
  if (best == nullptr) return std::nullopt;
  return *best;
}

bool Meets(const AlgoResult& r, const Constraints& constraints) {
  if (r.status != AlgoStatus::kOk) return false;
  if (constraints.max_workspace_bytes &&
      r.workspace_bytes > *constraints.max_workspace_bytes) {
    return false;
  }
  if (constraints.deterministic_only && !r.deterministic) return false;
  return (r.numerical_notes & constraints.excluded_numerical_notes) == 0;
}

double EffectiveCost(const AlgoResult& r, const Constraints& constraints) {
  const double run = r.cost(constraints.launch_mode).median_ms;
  const bool builds = RuntimeCompiled(r) &&
                      !(constraints.loads_stored_plans && !r.plan.empty());
  if (!builds || constraints.compile_horizon_calls <= 0) return run;
  return run + r.build_ms / static_cast<double>(constraints.compile_horizon_calls);
}

const AlgoResult* ChooseFrom(const std::vector<AlgoResult>& results,
                             const Constraints& constraints) {
  const AlgoResult* best = nullptr;
  const AlgoResult* heuristic = nullptr;
  double best_cost = 0;
  for (const AlgoResult& r : results) {
    if (!Meets(r, constraints)) continue;
    const double cost = EffectiveCost(r, constraints);
    if (best == nullptr || cost < best_cost ||
        (cost == best_cost && r.workspace_bytes < best->workspace_bytes)) {
      best = &r;
      best_cost = cost;
    }
    if (r.heuristic_rank > 0 &&
        (heuristic == nullptr || r.heuristic_rank < heuristic->heuristic_rank)) {
      heuristic = &r;
    }
  }
  if (heuristic == nullptr || heuristic == best) return best;
  const double heuristic_cost = EffectiveCost(*heuristic, constraints);
  return best_cost <= heuristic_cost * (1 - kMinGainOverHeuristic) ? best
                                                                    : heuristic;
}

AlgoResult* FirstChoiceOf(std::vector<AlgoResult>& results) {
  AlgoResult* first = nullptr;
  for (AlgoResult& r : results) {
    if (r.status != AlgoStatus::kOk || r.heuristic_rank <= 0) continue;
    if (first == nullptr || r.heuristic_rank < first->heuristic_rank) {
      first = &r;
    }
  }
  return first;
}

absl::Status CheckRevalidatedFrom(int from, int cudnn_version,
                                  absl::string_view field) {
  if (from < 0 || (from != 0 && from == cudnn_version)) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": ", from,
        " is neither 0 (a full search) nor another cuDNN version than the "
        "key's ",
        cudnn_version));
  }
  return absl::OkStatus();
}

absl::Status CheckRevalidatedFrom(const Record& record) {
  return CheckRevalidatedFrom(record.revalidated_from_cudnn,
                              record.key.device.cudnn_version,
                              "record.revalidated_from_cudnn");
}

absl::Status CheckRevalidatedFromDriver(const Record& record) {
  if (record.revalidated_from_driver.empty()) return absl::OkStatus();
  absl::StatusOr<DriverVersion> from =
      DriverVersion::Parse(record.revalidated_from_driver);
  if (!from.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "record.revalidated_from_driver: ", from.status().message()));
  }
  if (!DriverIsOlder(record.revalidated_from_driver, record.driver_version)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "record.revalidated_from_driver: \"",
        absl::CHexEscape(record.revalidated_from_driver),
        "\" is not an older driver of the same form than the record's "
        "driver_version \"",
        absl::CHexEscape(record.driver_version), "\""));
  }
  return absl::OkStatus();
}

}  // namespace tunedb
