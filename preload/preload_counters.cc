#include "preload/preload_counters.h"

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"

namespace tunedb::preload {

namespace {

constexpr EnumNames<Outcome, 14> kOutcomeNames(
    "outcome", {{{Outcome::kHit, "hit"},
                 {Outcome::kMiss, "miss"},
                 {Outcome::kFallbackEmpty, "fallback_empty"},
                 {Outcome::kPinMiss, "not_pinned"},
                 {Outcome::kDaemonDown, "daemon_down"},
                 {Outcome::kDisabled, "disabled"},
                 {Outcome::kCudnnVersion, "cudnn_version"},
                 {Outcome::kUnsupported, "unsupported_problem"},
                 {Outcome::kNoDevice, "no_device"},
                 {Outcome::kBadArguments, "bad_arguments"},
                 {Outcome::kHeuristicFailed, "heuristic_failed"},
                 {Outcome::kForked, "forked_child"},
                 {Outcome::kConfigFailed, "config_failed"},
                 {Outcome::kInternalError, "internal_error"}}});

constexpr EnumNames<PlanEvent, 4> kPlanEventNames(
    "plan event", {{{PlanEvent::kNotBuilt, "plans_not_built"},
                    {PlanEvent::kStoredLoaded, "stored_plans_loaded"},
                    {PlanEvent::kStoredRefused, "stored_plans_refused"},
                    {PlanEvent::kStoredFailedToRun,
                     "stored_plans_failed_to_run"}}});

}  // namespace

absl::string_view OutcomeName(Outcome o) { return kOutcomeNames.Name(o); }

absl::string_view PlanEventName(PlanEvent e) {
  return kPlanEventNames.Name(e);
}

int64_t PreloadCounters::Total() const {
  int64_t total = 0;
  for (const auto& c : counts_) total += c.load(std::memory_order_relaxed);
  return total;
}

std::map<std::string, int64_t> PreloadCounters::Counts() const {
  std::map<std::string, int64_t> out;
  out["calls"] = Total();
  for (int i = 0; i < static_cast<int>(Outcome::kNumOutcomes); ++i) {
    const int64_t n = counts_[i].load(std::memory_order_relaxed);
    if (n > 0) out[std::string(OutcomeName(static_cast<Outcome>(i)))] = n;
  }
  for (int i = 0; i < static_cast<int>(PlanEvent::kNumPlanEvents); ++i) {
    const PlanEvent e = static_cast<PlanEvent>(i);
    if (Plans(e) > 0) out[std::string(PlanEventName(e))] = Plans(e);
  }
  return out;
}

std::string PreloadCounters::Summary(absl::string_view address,
                                     bool misses_tuned_after) const {
  const int64_t hits = Get(Outcome::kHit);
  const int64_t misses = Get(Outcome::kMiss);
  const int64_t empty = Get(Outcome::kFallbackEmpty);
  const int64_t not_pinned = Get(Outcome::kPinMiss);
  const int64_t total = Total();
  std::string line = absl::StrCat(
      "tunedb preload: ", total, " calls: ", hits, " hits, ", misses,
      misses_tuned_after ? " misses (noted, tuned after), "
                         : " misses (tune asked), ");
  if (empty > 0) {
    absl::StrAppend(&line, empty, " fallback lists answered empty, ");
  }
  if (not_pinned > 0) {
    absl::StrAppend(&line, not_pinned,
                    " not pinned (cuDNN's first heuristic choice), ");
  }
  absl::StrAppend(&line, total - hits - misses - empty - not_pinned,
                  " passed through; daemon ", address);
  for (int i = static_cast<int>(Outcome::kDaemonDown);
       i < static_cast<int>(Outcome::kNumOutcomes); ++i) {
    const int64_t n = counts_[i].load(std::memory_order_relaxed);
    if (n > 0) {
      absl::StrAppend(&line, "; ", OutcomeName(static_cast<Outcome>(i)), "=",
                      n);
    }
  }
  if (Plans(PlanEvent::kNotBuilt) > 0) {
    absl::StrAppend(&line, "; ", Plans(PlanEvent::kNotBuilt),
                    " alternative plans not built");
  }
  const int64_t loaded = Plans(PlanEvent::kStoredLoaded);
  const int64_t refused = Plans(PlanEvent::kStoredRefused);
  if (loaded + refused > 0) {
    absl::StrAppend(&line, "; ", loaded, " stored plans loaded");
    if (refused > 0) absl::StrAppend(&line, ", ", refused, " refused");
    if (const int64_t failed = Plans(PlanEvent::kStoredFailedToRun)) {
      absl::StrAppend(&line, ", ", failed, " failed to run (built instead)");
    }
  }
  return line;
}

}  // namespace tunedb::preload
