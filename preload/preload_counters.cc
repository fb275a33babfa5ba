#include "preload/preload_counters.h"

#include "absl/strings/str_cat.h"

namespace tunedb::preload {

absl::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kHit:
      return "hit";
    case Outcome::kMiss:
      return "miss";
    case Outcome::kDaemonDown:
      return "daemon_down";
    case Outcome::kDisabled:
      return "disabled";
    case Outcome::kCudnnVersion:
      return "cudnn_version";
    case Outcome::kUnsupported:
      return "unsupported_problem";
    case Outcome::kNoDevice:
      return "no_device";
    case Outcome::kBadArguments:
      return "bad_arguments";
    case Outcome::kHeuristicFailed:
      return "heuristic_failed";
    case Outcome::kForked:
      return "forked_child";
    case Outcome::kInternalError:
      return "internal_error";
    case Outcome::kNumOutcomes:
      break;
  }
  return "unknown";
}

int64_t PreloadCounters::Total() const {
  int64_t total = 0;
  for (const auto& c : counts_) total += c.load(std::memory_order_relaxed);
  return total;
}

std::string PreloadCounters::Summary(absl::string_view address) const {
  const int64_t hits = Get(Outcome::kHit);
  const int64_t misses = Get(Outcome::kMiss);
  const int64_t total = Total();
  std::string line =
      absl::StrCat("tunedb preload: ", total, " calls: ", hits, " hits, ",
                   misses, " misses (tune asked), ", total - hits - misses,
                   " passed through; daemon ", address);
  for (int i = static_cast<int>(Outcome::kDaemonDown);
       i < static_cast<int>(Outcome::kNumOutcomes); ++i) {
    const int64_t n = counts_[i].load(std::memory_order_relaxed);
    if (n > 0) {
      absl::StrAppend(&line, "; ", OutcomeName(static_cast<Outcome>(i)), "=",
                      n);
    }
  }
  return line;
}

}  // namespace tunedb::preload
